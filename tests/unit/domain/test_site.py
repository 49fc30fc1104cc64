"""Sites: URL rules, the ownership table, monitoring, saved settings and the limits of a site's audits."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.domain.error import Conflict, ErrorCode, InvalidTransition, ValidationFailed
from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.lifecycle import ended_states, reachable
from siteaudit.domain.site import (
    SITE_MOVES,
    UNVERIFIED_MAX_PAGES,
    VERIFY_ORDER,
    InvalidUrl,
    Monitoring,
    MonitoringSkip,
    PlanLimitMaxPages,
    PlanLimitMonitoring,
    PlanLimitSites,
    Site,
    SiteExists,
    SiteMove,
    SiteNotVerified,
    SiteStatus,
    VerifiedOnly,
    VerifyMethod,
    check_site_count,
    monitoring_time_of_day,
    parse_site_url,
)

NOW = datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)
TOKEN = "tok_retro_clock_0123456789"
PLAN_PAGES = 50_000


def a_site(url: str = "https://retro-clock.example/", **overrides: object) -> Site:
    settings: dict[str, object] = {"plan_page_limit": PLAN_PAGES} | overrides
    return Site.register(
        site_id=SiteId(7),
        team_id=TeamId(3),
        url=url,
        verify_token=TOKEN,
        crawler_secret_ref="secret/site/7",
        now=NOW,
        **settings,  # type: ignore[arg-type]
    )


def a_verified_site() -> Site:
    site, _ = a_site().verify(VerifyMethod.DNS, now=NOW)
    return site


# --- the table ---------------------------------------------------------------------------------------


def test_every_site_state_is_reachable_from_unverified() -> None:
    assert reachable(SITE_MOVES, SiteStatus.UNVERIFIED) == frozenset(SiteStatus)


def test_no_site_state_is_a_dead_end_and_ended_states_have_no_exits() -> None:
    ended = ended_states(SITE_MOVES, SiteStatus)
    assert ended == frozenset()
    assert not any(source in ended for source, _ in SITE_MOVES)


def test_every_site_move_is_used() -> None:
    assert {move for _, move in SITE_MOVES} == set(SiteMove)


# --- URL rules ---------------------------------------------------------------------------------------


def test_a_site_url_is_normalised_to_scheme_host_and_path_without_default_port_or_fragment() -> None:
    address = parse_site_url("HTTPS://Retro-Clock.Example:443/blog?page=2#top")
    assert address.url == "https://retro-clock.example/blog?page=2"
    assert address.host == "retro-clock.example"
    assert address.origin == "https://retro-clock.example"


def test_a_site_url_keeps_a_non_default_port_in_its_origin() -> None:
    address = parse_site_url("http://retro-clock.example:8080")
    assert address.origin == "http://retro-clock.example:8080"
    assert address.url == "http://retro-clock.example:8080/"


def test_an_internationalised_host_is_stored_in_its_ascii_form() -> None:
    assert parse_site_url("https://bücher.example/").host == "xn--bcher-kva.example"


def test_an_ipv6_host_is_bracketed_in_the_origin() -> None:
    address = parse_site_url("http://[2001:DB8::1]:8443/x")
    assert address.host == "2001:db8::1"
    assert address.origin == "http://[2001:db8::1]:8443"


@pytest.mark.parametrize(
    "url",
    [
        "",
        "ftp://retro-clock.example/",
        "javascript:alert(1)",
        "https:///no-host",
        "https://user:pw@retro-clock.example/",
        "https://user@retro-clock.example/",
        "https://retro clock.example/",
        "https://retro-clock.example:99999/",
        "https://retro-clock.example:port/",
        "https://[not-v6]/",
        "https://-bad-.example/",
        "https://a..b.example/",
        "https://retro-clock.example\\@evil.example/",
        "https://retro-clock.example/" + "a" * 2_030,
    ],
)
def test_an_unacceptable_site_url_answers_invalid_url(url: str) -> None:
    with pytest.raises(InvalidUrl) as raised:
        a_site(url)
    assert raised.value.code is ErrorCode.INVALID_URL
    assert raised.value.status == 422


def test_a_url_of_exactly_2048_characters_is_accepted() -> None:
    url = "https://retro-clock.example/" + "a" * (2_048 - len("https://retro-clock.example/"))
    assert len(url) == 2_048
    assert parse_site_url(url).url == url


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)


@given(
    scheme=st.sampled_from(["http", "https", "HTTP", "HtTpS"]),
    labels=st.lists(_LABEL, min_size=1, max_size=4),
    port=st.none() | st.integers(1, 65535),
    path=st.from_regex(r"(/[A-Za-z0-9._~-]{0,12}){0,4}", fullmatch=True),
    query=st.from_regex(r"([a-z]{1,5}=[a-z0-9]{0,5})?", fullmatch=True),
)
def test_normalising_a_site_url_twice_changes_nothing(
    scheme: str, labels: list[str], port: int | None, path: str, query: str
) -> None:
    host = ".".join(labels)
    url = f"{scheme}://{host.upper()}{'' if port is None else f':{port}'}{path}{'?' + query if query else ''}"
    once = parse_site_url(url)
    assert parse_site_url(once.url) == once
    assert once.host == host
    assert once.url.startswith(once.origin + "/")


# --- ownership ---------------------------------------------------------------------------------------


def test_a_new_site_is_unverified_with_default_settings() -> None:
    site = a_site()
    assert site.status is SiteStatus.UNVERIFIED and not site.verified
    assert (site.max_pages, site.max_rps, site.alert_email, site.monitoring) == (
        10_000,
        2.0,
        True,
        Monitoring.OFF,
    )
    assert site.version == 0


def test_the_default_page_cap_of_a_new_site_is_capped_by_the_plan() -> None:
    assert a_site(plan_page_limit=2_000).max_pages == 2_000


def test_verifying_a_site_records_method_and_time() -> None:
    site, event = a_site().verify(VerifyMethod.META, now=NOW)
    assert site.verified and site.verified_via is VerifyMethod.META
    assert site.verified_at == NOW == site.checked_at
    assert event.first and site.version == 1


def test_a_periodic_reconfirmation_keeps_the_start_of_the_verified_stretch() -> None:
    later = NOW + timedelta(days=30)
    site, event = a_verified_site().verify(VerifyMethod.FILE, now=later)
    assert site.verified_at == NOW and site.checked_at == later
    assert site.verified_via is VerifyMethod.FILE and not event.first


def test_a_missing_proof_keeps_the_site_verified_for_the_grace_period_then_loses_it() -> None:
    grace = timedelta(days=7)
    daily = a_verified_site().set_monitoring(Monitoring.DAILY, plan_allows_monitoring=True, now=NOW)
    missed, lost_event = daily.proof_missing(now=NOW + timedelta(days=1), grace=grace)
    assert missed.verified and missed.lost_at == NOW + timedelta(days=1) and lost_event is None
    again, lost_event = missed.proof_missing(now=NOW + timedelta(days=7), grace=grace)
    assert again.verified and again.lost_at == NOW + timedelta(days=1) and lost_event is None
    back, _ = again.verify(VerifyMethod.DNS, now=NOW + timedelta(days=7, hours=1))
    assert back.verified and back.lost_at is None and back.verified_at == NOW
    gone, lost_event = again.proof_missing(now=NOW + timedelta(days=8), grace=grace)
    assert gone.status is SiteStatus.LOST and not gone.verified and lost_event is not None
    assert gone.lost_at == NOW + timedelta(days=1) and gone.last_skip_reason == "site_not_verified"
    assert gone.monitoring is Monitoring.DAILY


def test_a_failed_periodic_reverification_loses_the_site_and_a_new_proof_wins_it_back() -> None:
    lost_at = NOW + timedelta(days=1)
    lost, event = a_verified_site().lose(now=lost_at)
    assert lost.status is SiteStatus.LOST and not lost.verified
    assert lost.lost_at == lost_at == event.at
    regained, event2 = lost.verify(VerifyMethod.SC, now=lost_at + timedelta(hours=1))
    assert regained.verified and regained.lost_at is None and event2.first
    assert regained.verified_at == lost_at + timedelta(hours=1)
    assert regained.version == 3


def test_losing_a_site_that_was_never_verified_answers_conflict() -> None:
    with pytest.raises(InvalidTransition) as raised:
        a_site().lose(now=NOW)
    assert raised.value.code is ErrorCode.CONFLICT


def test_verification_without_a_method_tries_console_dns_meta_then_file() -> None:
    assert VERIFY_ORDER == (VerifyMethod.SC, VerifyMethod.DNS, VerifyMethod.META, VerifyMethod.FILE)


def test_a_failed_verification_answers_verification_failed_and_says_what_to_publish() -> None:
    site = a_site()
    error = site.verification_failed([VerifyMethod.DNS, VerifyMethod.FILE])
    assert error.code is ErrorCode.VERIFICATION_FAILED and error.status == 422
    proofs = site.proofs
    for wanted in (proofs.dns.name, proofs.dns.value, proofs.meta.tag, proofs.file.url, "dns, file"):
        assert wanted in error.message


def test_ownership_proofs_are_derived_from_the_token_and_the_origin() -> None:
    proofs = a_site("https://retro-clock.example/blog/first-post").proofs
    assert proofs.file.url == f"https://retro-clock.example{proofs.file.path}"
    assert proofs.file.path == "/.well-known/siteaudit-site-verification.txt"
    assert proofs.file.content.strip() == TOKEN
    assert proofs.file.content_type == "text/plain"
    assert proofs.meta.url == "https://retro-clock.example/"
    assert f'content="{TOKEN}"' in proofs.meta.tag
    assert proofs.dns.name.endswith(".retro-clock.example") and TOKEN in proofs.dns.value
    assert proofs.dns.name in proofs.agent_prompt and proofs.file.url in proofs.agent_prompt


def test_ownership_proofs_match_only_the_published_token() -> None:
    proofs = a_site().proofs
    assert proofs.file.matches("\n" + proofs.file.content + "  \n")
    assert not proofs.file.matches(proofs.file.content.replace(TOKEN, "tok_someone_else_987654"))
    assert proofs.meta.matches([("viewport", "x"), ("Siteaudit-Site-Verification", TOKEN)])
    assert not proofs.meta.matches([("siteaudit-site-verification", "tok_someone_else_987654")])
    assert proofs.dns.matches(["v=spf1 -all", f'"{proofs.dns.value}"'])
    assert not proofs.dns.matches(["v=spf1 -all"])


def test_a_malformed_token_is_a_wiring_bug() -> None:
    with pytest.raises(ValueError, match="verify_token"):
        Site.register(
            site_id=SiteId(1),
            team_id=TeamId(1),
            url="https://retro-clock.example/",
            verify_token='"><script>',
            crawler_secret_ref="s",
            plan_page_limit=PLAN_PAGES,
            now=NOW,
        )


def test_secrets_do_not_show_in_a_sites_repr() -> None:
    assert TOKEN not in repr(a_site()) and "secret/site/7" not in repr(a_site())


# --- monitoring --------------------------------------------------------------------------------------


def test_monitoring_without_a_plan_that_includes_it_answers_plan_limit_monitoring() -> None:
    with pytest.raises(PlanLimitMonitoring) as raised:
        a_verified_site().set_monitoring(Monitoring.WEEKLY, plan_allows_monitoring=False, now=NOW)
    assert raised.value.code is ErrorCode.PLAN_LIMIT_MONITORING and raised.value.status == 403


def test_monitoring_an_unverified_site_answers_site_not_verified() -> None:
    with pytest.raises(SiteNotVerified) as raised:
        a_site().set_monitoring(Monitoring.DAILY, plan_allows_monitoring=True, now=NOW)
    assert raised.value.code is ErrorCode.SITE_NOT_VERIFIED and raised.value.status == 409


@given(
    now=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
    mode=st.sampled_from([Monitoring.WEEKLY, Monitoring.DAILY]),
)
def test_turning_monitoring_on_schedules_the_first_audit_at_the_sites_time_of_day_within_a_day(
    now: datetime, mode: Monitoring
) -> None:
    site = a_verified_site().set_monitoring(mode, plan_allows_monitoring=True, now=now)
    assert site.monitoring is mode and site.next_crawl_at is not None
    assert now < site.next_crawl_at <= now + timedelta(days=1)
    midnight = site.next_crawl_at.replace(hour=0, minute=0, second=0, microsecond=0)
    assert site.next_crawl_at - midnight == monitoring_time_of_day(site.id)
    assert not site.is_due(site.next_crawl_at - timedelta(microseconds=1)) and site.is_due(site.next_crawl_at)


def test_monitored_sites_come_due_spread_over_the_day() -> None:
    offsets = {monitoring_time_of_day(SiteId(i)) for i in range(1, 1001)}
    hours = {int(o.total_seconds()) // 3600 for o in offsets}
    assert len(offsets) > 990 and hours == set(range(24))
    assert monitoring_time_of_day(SiteId(42)) == monitoring_time_of_day(SiteId(42))


def test_repeating_the_current_monitoring_mode_does_not_push_the_next_audit_back() -> None:
    weekly = a_verified_site().set_monitoring(Monitoring.WEEKLY, plan_allows_monitoring=True, now=NOW)
    again = weekly.set_monitoring(Monitoring.WEEKLY, plan_allows_monitoring=True, now=NOW + timedelta(days=3))
    assert again is weekly


def test_turning_monitoring_off_needs_neither_plan_nor_verification_and_clears_the_schedule() -> None:
    weekly = a_verified_site().set_monitoring(Monitoring.WEEKLY, plan_allows_monitoring=True, now=NOW)
    lost, _ = weekly.lose(now=NOW)
    off = lost.set_monitoring(Monitoring.OFF, plan_allows_monitoring=False, now=NOW)
    assert off.monitoring is Monitoring.OFF and off.next_crawl_at is None and not off.is_due(NOW)


def test_a_claimed_scheduled_audit_moves_the_next_one_whole_intervals_on_keeping_the_time_of_day() -> None:
    daily = a_verified_site().set_monitoring(Monitoring.DAILY, plan_allows_monitoring=True, now=NOW)
    due = daily.next_crawl_at
    assert due is not None
    claimed = daily.claimed(now=due + timedelta(minutes=5))
    assert claimed.next_crawl_at == due + timedelta(days=1)
    late = claimed.claimed(now=due + timedelta(days=4, hours=1))
    assert late.next_crawl_at == due + timedelta(days=5)
    skipped = late.skipped(MonitoringSkip.INSUFFICIENT_CREDITS)
    assert skipped.last_skip_reason == "insufficient_credits" and skipped.next_crawl_at == late.next_crawl_at
    dispatched = skipped.dispatched(now=due + timedelta(days=5))
    assert dispatched.last_dispatched_at == due + timedelta(days=5) and dispatched.last_skip_reason is None
    assert dispatched.next_crawl_at == late.next_crawl_at


def test_a_site_without_monitoring_has_nothing_to_dispatch() -> None:
    with pytest.raises(Conflict) as raised:
        a_verified_site().dispatched(now=NOW)
    assert raised.value.code is ErrorCode.CONFLICT


def test_a_scheduled_audit_is_skipped_for_a_lost_site_or_a_plan_without_monitoring() -> None:
    lost, _ = a_verified_site().lose(now=NOW)
    assert lost.monitoring_skip_reason(plan_allows_monitoring=True) == "site_not_verified"
    running = a_verified_site().monitoring_skip_reason(plan_allows_monitoring=True, previous_running=True)
    assert running == "previous_audit_running"
    assert a_verified_site().monitoring_skip_reason(plan_allows_monitoring=False) == "plan_limit_monitoring"
    assert a_verified_site().monitoring_skip_reason(plan_allows_monitoring=True) is None


# --- settings and limits -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "bad"),
    [
        ({"max_pages": 0}, {"max_pages"}),
        ({"max_pages": 500_001}, {"max_pages"}),
        ({"max_pages": True}, {"max_pages"}),
        ({"max_rps": 0.4}, {"max_rps"}),
        ({"max_rps": 10.01}, {"max_rps"}),
        ({"max_rps": float("nan")}, {"max_rps"}),
        ({"max_pages": -1, "max_rps": 11}, {"max_pages", "max_rps"}),
    ],
)
def test_out_of_range_settings_answer_validation_failed_naming_each_field(
    changes: dict[str, object], bad: set[str]
) -> None:
    with pytest.raises(ValidationFailed) as raised:
        a_site().update(plan_page_limit=PLAN_PAGES, **changes)  # type: ignore[arg-type]
    assert raised.value.code is ErrorCode.VALIDATION_FAILED and set(raised.value.fields) == bad


def test_a_page_cap_above_the_plan_answers_plan_limit_max_pages() -> None:
    with pytest.raises(PlanLimitMaxPages) as raised:
        a_site().update(plan_page_limit=PLAN_PAGES, max_pages=PLAN_PAGES + 1)
    assert raised.value.code is ErrorCode.PLAN_LIMIT_MAX_PAGES and raised.value.status == 403
    with pytest.raises(PlanLimitMaxPages):
        a_site(max_pages=PLAN_PAGES + 1)


def test_updating_settings_changes_only_what_is_given_and_counts_a_version() -> None:
    site = a_site().update(plan_page_limit=PLAN_PAGES, max_rps=0.5, alert_email=False)
    assert (site.max_pages, site.max_rps, site.alert_email, site.version) == (10_000, 0.5, False, 1)
    assert site.update(plan_page_limit=PLAN_PAGES, max_rps=0.5) is site


def test_registering_one_site_more_than_the_plan_allows_answers_plan_limit_sites() -> None:
    check_site_count(2, 3)
    check_site_count(10_000, None)
    with pytest.raises(PlanLimitSites) as raised:
        check_site_count(3, 3)
    assert raised.value.code is ErrorCode.PLAN_LIMIT_SITES and raised.value.status == 403


def test_a_duplicate_site_answers_site_exists() -> None:
    error = SiteExists("https://retro-clock.example/")
    assert error.code is ErrorCode.SITE_EXISTS and error.status == 409
    assert "retro-clock.example" in error.message


@pytest.mark.parametrize("operation", list(VerifiedOnly))
def test_each_verified_only_operation_answers_site_not_verified_on_an_unverified_site(
    operation: VerifiedOnly,
) -> None:
    with pytest.raises(SiteNotVerified) as raised:
        a_site().require_verified(operation)
    assert operation.value in raised.value.message
    a_verified_site().require_verified(operation)


def test_an_audit_of_an_unverified_site_defaults_to_500_pages_and_3_requests_per_second() -> None:
    site = a_site(max_rps=8)
    settings = site.audit_settings(plan_page_limit=PLAN_PAGES)
    assert (settings.max_pages, settings.max_rps, settings.send_crawler_secret) == (
        UNVERIFIED_MAX_PAGES,
        3.0,
        False,
    )


def test_an_audit_of_more_than_500_pages_of_an_unverified_site_answers_site_not_verified() -> None:
    with pytest.raises(SiteNotVerified):
        a_site().audit_settings(plan_page_limit=PLAN_PAGES, max_pages=501)
    assert a_site().audit_settings(plan_page_limit=PLAN_PAGES, max_pages=500).max_pages == 500


def test_an_audit_of_a_verified_site_uses_saved_settings_capped_by_plan_and_site_speed() -> None:
    site = a_verified_site().update(plan_page_limit=PLAN_PAGES, max_pages=40_000, max_rps=5)
    settings = site.audit_settings(plan_page_limit=20_000, max_rps=9)
    assert (settings.max_pages, settings.max_rps, settings.send_crawler_secret) == (20_000, 5.0, True)
    with pytest.raises(PlanLimitMaxPages):
        site.audit_settings(plan_page_limit=20_000, max_pages=20_001)


def test_the_console_and_cdn_methods_answer_to_their_vendor_and_spec_names() -> None:
    from siteaudit.domain.site import VERIFY_METHOD_NAMES

    assert VerifyMethod("gsc") is VerifyMethod("sc") is VerifyMethod.SC
    assert VerifyMethod("cloudflare") is VerifyMethod("cdn") is VerifyMethod.CDN
    assert VerifyMethod.SC.value == "gsc" and VerifyMethod.CDN.value == "cloudflare"
    assert set(VERIFY_METHOD_NAMES) == {"gsc", "sc", "dns", "meta", "file", "cloudflare", "cdn"}
    with pytest.raises(ValueError, match="email"):
        VerifyMethod("email")


def test_a_failed_verification_says_why_each_method_failed() -> None:
    from siteaudit.domain.site import ProofCheck, ProofOutcome

    checked = [
        ProofCheck(VerifyMethod.SC, ProofOutcome.NOT_CONNECTED, "no console"),
        ProofCheck(VerifyMethod.DNS, ProofOutcome.DNS_ERROR),
    ]
    error = a_site().verification_failed([c.method for c in checked], checked)
    assert error.checked == tuple(checked) and not any(c.matched for c in checked)
    assert "gsc: not_connected (no console)" in error.message and "dns: dns_error)" in error.message


def test_dns_steps_name_the_record_relative_to_the_host_for_common_dns_hosts() -> None:
    from siteaudit.domain.site import dns_steps

    site = a_site("https://shop.retro-clock.example/")
    steps = dns_steps(site.proofs.dns, site.host)
    assert {"cloudflare", "route53", "godaddy", "namecheap", "other"} <= set(steps)
    assert "name _siteaudit-challenge," in steps["cloudflare"]
    assert site.proofs.dns.value in steps["other"] and site.proofs.dns.name in steps["route53"]


@pytest.mark.parametrize(
    ("max_pages", "plan_limit", "last_pages", "cap"),
    [
        (10_000, 500_000, None, 10_000),  # no done audit yet: the saved max_pages
        (10_000, 500, None, 500),  # ... within the plan
        (10_000, 500_000, 3, 103),  # at least 100 pages of headroom
        (10_000, 500_000, 2_000, 2_500),  # a quarter more than the last audit found
        (10_000, 500_000, 9_000, 10_000),  # never above the saved max_pages
        (10_000, 2_000, 1_900, 2_000),  # nor above the plan
    ],
)
def test_a_scheduled_audit_is_capped_at_the_last_audits_pages_plus_headroom(
    max_pages: int, plan_limit: int, last_pages: int | None, cap: int
) -> None:
    site = a_site(max_pages=max_pages)
    assert site.scheduled_max_pages(plan_page_limit=plan_limit, last_pages=last_pages) == cap
