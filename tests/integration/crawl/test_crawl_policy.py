"""The pure crawl policy: scope, pacing arithmetic, Retry-After, stops, followed links and the checkpoint."""

from datetime import UTC, datetime

from siteaudit.domain.crawl import (
    UNLINKED_DEPTH,
    CrawlLimits,
    CrawlState,
    HostPace,
    IdSet,
    Phase,
    Scope,
    StopReason,
    discovered,
    pace_interval,
    pack_ids,
    retry_after_seconds,
    shallowest,
    stop_reason,
)
from siteaudit.domain.facts import HtmlFacts, Link, LinkKind, PageFacts, RobotsFacts, SitemapFacts

LIMITS = CrawlLimits(max_pages=100, max_rps=4.0)


def test_the_scope_is_the_audited_host_on_both_schemes_and_nothing_else() -> None:
    scope = Scope.of("https://retro-clock.example/blog/")
    assert scope.origin == "https://retro-clock.example"
    assert scope.contains("http://retro-clock.example/a") and scope.contains(
        "https://retro-clock.example:443/b"
    )
    assert not scope.contains("https://www.retro-clock.example/")
    assert not scope.contains("https://retro-clock.example:8443/")
    assert not scope.contains("ftp://retro-clock.example/")


def test_a_start_url_redirect_to_the_www_twin_is_adopted_but_not_to_another_site() -> None:
    scope = Scope.of("http://retro-clock.example/")
    assert (
        scope.after_start_redirect("https://www.retro-clock.example/").origin
        == "https://www.retro-clock.example"
    )
    assert scope.after_start_redirect("https://elsewhere.example/") == scope


def test_a_host_pace_spaces_request_starts_by_the_interval_without_bursts() -> None:
    pace = HostPace(interval_s=0.25)
    waits = []
    for _ in range(5):
        pace, wait = pace.reserve(10.0)
        waits.append(wait)
    assert waits == [0.0, 0.25, 0.5, 0.75, 1.0]
    pace, wait = pace.reserve(20.0)  # idle for long: no saved-up burst
    assert wait == 0.0 and pace.reserve(20.0)[1] == 0.25


def test_crawl_delay_is_honoured_but_never_faster_than_max_rps_and_capped() -> None:
    assert pace_interval(LIMITS, None) == 0.25
    assert pace_interval(LIMITS, 0.1) == 0.25
    assert pace_interval(LIMITS, 3.0) == 3.0
    assert pace_interval(LIMITS, 3600.0) == LIMITS.max_crawl_delay_s


def test_rate_limit_answers_back_off_by_retry_after_or_exponentially_within_the_bound() -> None:
    pace = HostPace(interval_s=0.25)
    pace, pause = pace.rate_limited(100.0, 5.0, LIMITS)
    assert pause == 5.0 and pace.next_at == 105.0 and pace.strikes == 1
    pace, pause = pace.rate_limited(105.0, None, LIMITS)
    assert pause == 2.0 and pace.strikes == 2
    _, pause = pace.rate_limited(107.0, 10_000.0, LIMITS)
    assert pause == LIMITS.max_backoff_s
    assert pace.answered().strikes == 0


def test_retry_after_is_read_as_seconds_or_as_a_date() -> None:
    now = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
    assert retry_after_seconds("7", now) == 7.0
    assert retry_after_seconds("Sun, 22 Nov 2026 09:00:30 GMT", now) == 30.0
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None, now) is None


def test_stops_come_in_order_and_only_caps_are_partial() -> None:
    def reason(**kw: object) -> StopReason | None:
        values: dict[str, object] = {"pages_crawled": 5, "queued": 3, "elapsed_s": 1.0, "limits": LIMITS}
        return stop_reason(**{**values, **kw})  # type: ignore[arg-type]

    assert reason() is None
    assert reason(cancelled=True) is StopReason.CANCELLED
    assert reason(queued=0, pages_crawled=100) is StopReason.FRONTIER_EMPTY
    assert reason(pages_crawled=100) is StopReason.PAGE_CAP
    assert reason(elapsed_s=LIMITS.time_cap_s) is StopReason.TIME_CAP
    assert [r.partial for r in StopReason] == [False, True, True, False]


def test_followed_links_skip_nofollow_scripts_and_other_sites_but_keep_declarations() -> None:
    scope = Scope.of("https://retro-clock.example/")
    links = (
        Link("https://retro-clock.example/a"),
        Link("https://retro-clock.example/a"),
        Link("https://retro-clock.example/n", nofollow=True),
        Link("https://elsewhere.example/"),
        Link("https://retro-clock.example/app.js", LinkKind.SCRIPT),
        Link("https://retro-clock.example/c", LinkKind.CANONICAL),
        Link("https://retro-clock.example/de", LinkKind.HREFLANG),
        Link("https://retro-clock.example/i.png", LinkKind.IMG),
    )
    page = PageFacts(url="https://retro-clock.example/", depth=2, html=HtmlFacts(links=links))
    assert list(discovered(page, scope, LIMITS, external_room=0)) == [
        ("https://retro-clock.example/a", 3),
        ("https://retro-clock.example/c", 3),
        ("https://retro-clock.example/de", 3),
        ("https://retro-clock.example/i.png", 3),
    ]
    nofollow_page = PageFacts(url=page.url, html=HtmlFacts(links=links, meta_robots=("nofollow",)))
    assert [url for url, _ in discovered(nofollow_page, scope, LIMITS, external_room=0)] == [
        "https://retro-clock.example/c",
        "https://retro-clock.example/de",
        "https://retro-clock.example/i.png",
    ]
    checking = CrawlLimits(max_pages=10, check_external=True)
    assert ("https://elsewhere.example/", 3) in list(discovered(page, scope, checking, external_room=1))


def test_a_url_found_twice_in_a_batch_keeps_its_shallowest_depth() -> None:
    found = [("/x", 3), ("/x", 2), ("/y", UNLINKED_DEPTH), ("/y", 4)]
    assert shallowest(found) == {"/x": 2, "/y": 4}


def test_the_checkpoint_survives_a_json_round_trip() -> None:
    state = CrawlState(
        scope=Scope.of("https://retro-clock.example/"),
        phase=Phase.LINKS,
        slices=3,
        robots=RobotsFacts(status_code=200, bytes=40, sitemaps=("https://retro-clock.example/s.xml",)),
        robots_text="User-agent: *\nDisallow: /private/\n",
        sitemaps=(
            SitemapFacts(url="https://retro-clock.example/s.xml", url_count=2, problems=("bad_gzip",)),
        ),
        sitemap_ids=pack_ids([9, 3, 3, 120_000]),
        sitemap_hreflangs={9: (("de", "https://retro-clock.example/de/"), ("x-default", "/"))},
        paces={"retro-clock.example": (1_800_000_000.5, 1)},
        stop=StopReason.PAGE_CAP,
    )
    assert CrawlState.from_json(state.as_json()) == state
    ids = IdSet(state.sitemap_ids)
    assert list(ids) == [3, 9, 120_000] and 9 in ids and 10 not in ids and len(ids) == 3
