"""IndexNow rules as tables: keys and key locations, key-file judgement, hosts, batches, the answer to a
submission, the daily allowance, and detection candidates."""

from datetime import UTC, date, datetime, timedelta

import pytest
from attrs import evolve

from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.indexnow import (
    DETECT_MAX_REQUESTS,
    BatchResult,
    DetectionSource,
    IndexNowRejected,
    IndexNowSite,
    InvalidIndexNowKey,
    InvalidIndexNowKeyLocation,
    KeyCheckReason,
    Platform,
    SubmitStatus,
    batches,
    detection_candidates,
    error_code_of,
    judge_key_file,
    platform_signal,
    require_key,
    require_key_location,
    root_key_files,
    split_by_host,
    submit_status,
)

NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
ORIGIN, HOST = "https://retro-clock.example", "retro-clock.example"


@pytest.mark.parametrize("key", ["abcdefgh", "A" * 128, "retro-clock-1", "0123456789abcdef0123456789abcdef"])
def test_keys_of_8_to_128_letters_digits_and_dashes_are_accepted(key: str) -> None:
    assert require_key(key) == key


@pytest.mark.parametrize(
    "key", ["abcdefg", "A" * 129, "under_score", "dot.key1", "späte-key", "", None, 12345678]
)
def test_other_keys_are_invalid(key: object) -> None:
    with pytest.raises(InvalidIndexNowKey):
        require_key(key)


@pytest.mark.parametrize(
    ("location", "origin"),
    [
        ("https://retro-clock.example/keys/k.txt", ORIGIN),
        ("https://retro-clock.example:443/k.txt", ORIGIN),  # the default port written out
        ("https://retro-clock.example:8443/k.txt", "https://retro-clock.example:8443"),  # the site's own
        ("https://retro-clock.example/k.txt", "https://retro-clock.example:8443"),  # 443 beside it
        ("http://127.0.0.1:8000/keys/k.txt", "http://127.0.0.1:8000"),  # an http site's own origin
    ],
)
def test_key_locations_on_the_sites_host_ending_in_txt_are_accepted(location: str, origin: str) -> None:
    host = origin.split("//")[1].split(":")[0]
    assert require_key_location(location, origin=origin, host=host) == location


@pytest.mark.parametrize(
    "location",
    [
        "http://retro-clock.example/k.txt",
        "https://www.retro-clock.example/k.txt",
        "https://retro-clock.example/k.html",
        "https://retro-clock.example/k.txt#x",
        "https://user@retro-clock.example/k.txt",
        "https://retro-clock.example:99999/k.txt",
        "https://retro-clock.example:8443/k.txt",  # another port of the site's host
        "https://retro-clock.example:22/k.txt",
        "https://retro-clock.example/a b.txt",
        "",
        "x" * 2_049,
    ],
)
def test_other_key_locations_are_invalid(location: str) -> None:
    with pytest.raises(InvalidIndexNowKeyLocation):
        require_key_location(location, origin=ORIGIN, host=HOST)


@pytest.mark.parametrize(
    ("location", "origin"),
    [
        ("https://retro-clock.example:8443/k.txt", ORIGIN),
        ("https://retro-clock.example:9000/k.txt", "https://retro-clock.example:8443"),
        ("http://127.0.0.1:9000/keys/k.txt", "http://127.0.0.1:8000"),
    ],
)
def test_a_key_location_on_a_port_the_crawler_does_not_use_is_refused(location: str, origin: str) -> None:
    host = origin.split("//")[1].split(":")[0]
    with pytest.raises(InvalidIndexNowKeyLocation, match="port"):
        require_key_location(location, origin=origin, host=host)


@pytest.mark.parametrize(
    ("status", "body", "error", "reason"),
    [
        (200, "retro-clock-1\n", None, None),
        (200, "  retro-clock-1  ", None, None),
        (404, "retro-clock-1", None, KeyCheckReason.NOT_FOUND),
        (301, "", None, KeyCheckReason.NOT_FOUND),
        (None, "", None, KeyCheckReason.NOT_FOUND),
        (200, "retro-clock-2", None, KeyCheckReason.WRONG_CONTENT),
        (200, "retro-clock-1 retro-clock-2", None, KeyCheckReason.WRONG_CONTENT),
        (None, "", "timeout", KeyCheckReason.FETCH_ERROR),
    ],
)
def test_a_key_file_verifies_the_key_when_its_text_is_the_key(
    status: int | None, body: str, error: str | None, reason: KeyCheckReason | None
) -> None:
    check = judge_key_file("retro-clock-1", "u", status=status, body=body, error=error, at=NOW)
    assert (check.verified, check.reason) == (reason is None, reason)


def test_urls_of_other_hosts_are_skipped_and_repeats_sent_once() -> None:
    urls = [
        "https://retro-clock.example/a",
        "http://RETRO-CLOCK.example./b",
        "https://retro-clock.example/a",
        "https://www.retro-clock.example/c",
        "ftp://retro-clock.example/d",
        "not a url",
        "https://retro-clock.example:99999/e",
    ]
    kept, skipped = split_by_host(urls, HOST)
    assert kept == ("https://retro-clock.example/a", "http://RETRO-CLOCK.example./b")
    assert skipped == 4


def test_batches_hold_at_most_the_batch_size() -> None:
    assert [len(b) for b in batches([str(n) for n in range(25_001)])] == [10_000, 10_000, 5_001]
    assert [list(b) for b in batches(["a", "b", "c"], 2)] == [["a", "b"], ["c"]]


@pytest.mark.parametrize(
    ("codes", "status"),
    [
        ((200,), SubmitStatus.OK),
        ((200, 200), SubmitStatus.OK),
        ((202,), SubmitStatus.ACCEPTED),
        ((200, 202), SubmitStatus.ACCEPTED),
        ((200, 400), SubmitStatus.PARTIAL),
        ((429, 202), SubmitStatus.PARTIAL),
        ((200, None), SubmitStatus.PARTIAL),
    ],
)
def test_the_answer_to_a_submission(codes: tuple[int | None, ...], status: SubmitStatus) -> None:
    assert submit_status([BatchResult(1, c, error_code_of(c)) for c in codes]) is status


@pytest.mark.parametrize("codes", [(400,), (403, 422), (429,), (None,), (500,)])
def test_none_accepted_is_rejected(codes: tuple[int | None, ...]) -> None:
    with pytest.raises(IndexNowRejected):
        submit_status([BatchResult(1, c, error_code_of(c)) for c in codes])


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (200, None),
        (202, None),
        (400, "bad_request"),
        (403, "key_not_valid"),
        (422, "urls_not_for_key"),
        (429, "too_many_requests"),
        (None, "network_error"),
        (503, "http_503"),
    ],
)
def test_every_documented_answer_has_its_error_code(code: int | None, name: str | None) -> None:
    assert error_code_of(code) == name


def test_the_allowance_grants_what_is_left_of_the_day_and_starts_again_the_next() -> None:
    state = IndexNowSite.generated(SiteId(1), TeamId(1), "retro-clock-1")
    day = date(2026, 11, 25)
    state, granted = state.reserve(9_000, day=day)
    assert (granted, state.used_on(day)) == (9_000, 9_000)
    state, granted = state.reserve(2_000, day=day)
    assert (granted, state.used_on(day)) == (1_000, 10_000)
    same, granted = state.reserve(5, day=day)
    assert (granted, same) == (0, state)
    tomorrow = date(2026, 11, 26)
    assert state.used_on(tomorrow) == 0
    state, granted = state.reserve(5, day=tomorrow)
    assert (granted, state.used_on(tomorrow), state.used_on(day)) == (5, 5, 0)


def test_auto_submits_after_audits_that_end_while_it_is_on() -> None:
    off = IndexNowSite.generated(SiteId(1), TeamId(1), "retro-clock-1")
    on = off.with_auto(True, NOW)
    assert (on.auto, on.auto_since, on.version) == (True, NOW, off.version + 1)
    assert on.with_auto(True, NOW + timedelta(hours=1)) is on  # turning it on again keeps its start
    assert not off.submits_after(NOW)
    assert on.submits_after(NOW) and on.submits_after(NOW + timedelta(seconds=1))
    # An audit that ended before auto was turned on submits nothing, however late it is finalised.
    assert not on.submits_after(NOW - timedelta(microseconds=1))
    assert not on.submits_after(None)
    again_off = on.with_auto(False, NOW + timedelta(hours=1))
    assert (again_off.auto, again_off.auto_since) == (False, None)
    assert not again_off.submits_after(NOW + timedelta(hours=2))
    # Sites with auto on from before migration 0016 have no start: every audit submits, as before.
    assert evolve(on, auto_since=None).submits_after(NOW - timedelta(days=1))


def test_detection_tries_the_sites_key_then_the_teams_then_the_audits_each_once_at_most_10() -> None:
    team = [f"team-key-{n}" for n in range(6)]
    audit = ["own-key-01", "team-key-1", "audit-key-1", "audit-key-2", "audit-key-3", "audit-key-4"]
    found = detection_candidates("own-key-01", team, audit)
    assert len(found) == DETECT_MAX_REQUESTS == 10
    assert [c.key for c in found] == ["own-key-01", *team, "audit-key-1", "audit-key-2", "audit-key-3"]
    assert [c.source for c in found[:2]] == [DetectionSource.SITE, DetectionSource.TEAM]
    assert found[-1].source is DetectionSource.AUDIT


def test_root_key_files_are_read_from_the_audits_urls() -> None:
    urls = [
        f"{ORIGIN}/",
        f"{ORIGIN}/0f1e2d3c4b5a6978.txt",
        f"{ORIGIN}/robots.txt",  # too short for a key
        f"{ORIGIN}/keys/0f1e2d3c4b5a6979.txt",  # not at the root
        "https://elsewhere.example/0f1e2d3c4b5a6970.txt",
        f"{ORIGIN}/retro-clock-key.txt?v=1",
    ]
    assert list(root_key_files(urls, ORIGIN)) == ["0f1e2d3c4b5a6978"]


@pytest.mark.parametrize(
    ("headers", "metas", "text", "host", "expected"),
    [
        ((), (("generator", "Wix.com Website Builder"),), "", "retro-clock.example", (Platform.WIX, True)),
        ((("x-wix-request-id", "1"),), (), "", "retro-clock.example", (Platform.WIX, True)),
        # A free Wix site (its wixsite.com address): Wix submits only for paid plans with their own domain.
        ((), (("generator", "Wix.com Website Builder"),), "", "clocks.wixsite.com", (Platform.WIX, False)),
        ((), (), "<!-- optimized with the Yoast SEO Premium plugin v22 -->", HOST, (Platform.YOAST, True)),
        ((("server", "cloudflare"),), (), "", HOST, (Platform.CLOUDFLARE, False)),
        ((("cf-ray", "8a1b2c3d4e5f6789-AMS"),), (), "", HOST, (Platform.CLOUDFLARE, False)),
        # Wix behind Cloudflare: Wix decides.
        ((("cf-ray", "1"),), (("Generator", "Wix.com Website Builder"),), "", HOST, (Platform.WIX, True)),
        ((), (), "<!-- optimized with the Yoast SEO plugin v22 -->", HOST, None),  # free Yoast: no IndexNow
        ((), (("generator", "WordPress 6.5"),), "", HOST, None),
        ((("server", "nginx"),), (), "", HOST, None),
    ],
)
def test_the_platform_a_home_page_shows(
    headers: tuple[tuple[str, str], ...],
    metas: tuple[tuple[str, str], ...],
    text: str,
    host: str,
    expected: tuple[Platform, bool] | None,
) -> None:
    signal = platform_signal(headers, metas, text, host=host)
    assert (None if signal is None else (signal.platform, signal.managed)) == expected
