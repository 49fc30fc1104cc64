"""The audit lifecycle table and the request rules of SPEC 4.3 and 8."""

from datetime import UTC, datetime, timedelta

import pytest

from siteaudit.domain.account import DEFAULT_PLANS
from siteaudit.domain.audit import (
    AUDIT_MOVES,
    ENDED,
    Audit,
    AuditMove,
    AuditRequest,
    AuditStatus,
    SiteTerms,
    decide_audit_settings,
    dispatch_failed,
    origin_of,
    reaped,
    setup_failed,
)
from siteaudit.domain.error import DomainError, ErrorCode, ValidationFailed
from siteaudit.domain.ids import AuditId, SiteId, TeamId, UserId
from siteaudit.domain.lifecycle import ended_states, reachable

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
GROWTH = DEFAULT_PLANS["growth"]
FREE = DEFAULT_PLANS["free"]


def an_audit(**changes: object) -> Audit:
    base = dict(
        id=AuditId(7),
        team_id=TeamId(1),
        user_id=UserId(1),
        payer_id=UserId(1),
        url="https://retro-clock.example/",
        origin="https://retro-clock.example",
        created_at=NOW,
        max_pages=500,
    )
    base.update(changes)
    return Audit(**base)  # type: ignore[arg-type]


def test_every_audit_state_is_reachable_from_queued() -> None:
    assert reachable(AUDIT_MOVES, AuditStatus.QUEUED) == frozenset(AuditStatus)


def test_ended_audit_states_have_no_exits() -> None:
    assert ended_states(AUDIT_MOVES, AuditStatus) == ENDED


def test_every_audit_move_is_used() -> None:
    assert {move for _, move in AUDIT_MOVES} == set(AuditMove)


def test_an_audit_runs_from_queued_to_done() -> None:
    audit = an_audit().start(now=NOW).stop_crawling(partial=True, now=NOW)
    audit, ended = audit.publish_report(health_score=87, now=NOW)
    assert (audit.status, audit.health_score, audit.partial, audit.version) == (AuditStatus.DONE, 87, True, 3)
    assert ended.status is AuditStatus.DONE


def test_every_batch_and_state_move_records_when_the_audit_last_made_progress() -> None:
    def later(seconds: float) -> datetime:
        return NOW + timedelta(seconds=seconds)

    queued = an_audit()
    assert queued.last_progress_at is None
    running = queued.start(now=later(1))
    assert running.last_progress_at == later(1)
    running = running.record_progress(pages_crawled=3, pages_not_modified=0, now=later(2))
    assert running.last_progress_at == later(2)
    finalizing = running.stop_crawling(partial=False, now=later(3))
    assert finalizing.last_progress_at == later(3)
    done, _ = finalizing.publish_report(health_score=80, now=later(4))
    cancelled, _ = running.cancel(now=later(5))
    failed, _ = finalizing.fail("reaped: stalled", now=later(6))
    assert [a.last_progress_at for a in (done, cancelled, failed)] == [later(4), later(5), later(6)]


@pytest.mark.parametrize("status", sorted(ENDED))
def test_cancelling_an_ended_audit_answers_conflict(status: AuditStatus) -> None:
    with pytest.raises(DomainError) as caught:
        an_audit(status=status).cancel(now=NOW)
    assert (caught.value.code, caught.value.status) == (ErrorCode.CONFLICT, 409)


def test_cancelling_records_the_reason_and_the_end_time() -> None:
    audit, ended = an_audit().start(now=NOW).cancel(now=NOW)
    assert (audit.status, audit.failure_reason, audit.finished_at) == (
        AuditStatus.CANCELLED,
        "cancelled",
        NOW,
    )
    assert ended.status is AuditStatus.CANCELLED


def test_failure_reasons_have_the_spec_shapes() -> None:
    assert dispatch_failed("connection refused") == "dispatch_failed: connection refused"
    assert reaped("lease expired 3 times") == "reaped: lease expired 3 times"
    assert setup_failed("OSError") == "setup_failed: OSError"


def test_progress_never_passes_the_page_cap() -> None:
    running = an_audit(max_pages=10).start(now=NOW)
    with pytest.raises(ValueError):
        running.record_progress(pages_crawled=11, pages_not_modified=0, now=NOW)


def test_only_ended_audits_are_archived() -> None:
    with pytest.raises(DomainError):
        an_audit().archive(now=NOW)
    done = an_audit(status=AuditStatus.DONE).archive(now=NOW)
    assert done.archived_at == NOW


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Retro-Clock.example/blog/first-post", "https://retro-clock.example"),
        ("http://retro-clock.example:80/", "http://retro-clock.example"),
        ("https://retro-clock.example:8443/x", "https://retro-clock.example:8443"),
        ("http://[2001:db8::1]:8080/", "http://[2001:db8::1]:8080"),
    ],
)
def test_origin_of_lowercases_and_drops_default_ports(url: str, origin: str) -> None:
    assert origin_of(url) == origin


@pytest.mark.parametrize(
    "url",
    [
        "ftp://retro-clock.example/",
        "https:///nohost",
        "https://user:pw@retro-clock.example/",
        "x" * 2049,
        "mailto:a@b",
    ],
)
def test_unacceptable_urls_answer_invalid_url(url: str) -> None:
    with pytest.raises(DomainError) as caught:
        origin_of(url)
    assert caught.value.code is ErrorCode.INVALID_URL


def decide(plan=GROWTH, site=None, verified=False, **request: object):  # type: ignore[no-untyped-def]
    request.setdefault("url", "https://retro-clock.example/")
    return decide_audit_settings(AuditRequest(**request), plan=plan, site=site, origin_verified=verified)  # type: ignore[arg-type]


def test_defaults_are_500_pages_two_in_flight_and_two_per_second_without_a_verified_site() -> None:
    settings = decide()
    assert (settings.max_pages, settings.concurrency, settings.max_rps) == (500, 2, 2.0)
    assert settings.estimated_credits == 5000  # tenths: 500 credits


def test_the_default_page_cap_is_ten_thousand_capped_by_the_plan_on_a_verified_origin() -> None:
    assert decide(verified=True).max_pages == 10_000
    assert decide(plan=FREE, verified=True).max_pages == 500


def test_max_pages_above_the_plan_limit_answers_plan_limit_max_pages() -> None:
    with pytest.raises(DomainError) as caught:
        decide(max_pages=100_001, verified=True)
    assert (caught.value.code, caught.value.status) == (ErrorCode.PLAN_LIMIT_MAX_PAGES, 403)


def test_more_than_500_pages_without_a_verified_site_answers_site_not_verified() -> None:
    with pytest.raises(DomainError) as caught:
        decide(max_pages=501)
    assert (caught.value.code, caught.value.status) == (ErrorCode.SITE_NOT_VERIFIED, 409)


def test_max_rps_above_three_needs_a_verified_site() -> None:
    with pytest.raises(DomainError) as caught:
        decide(max_rps=3.5)
    assert (caught.value.code, caught.value.status) == (ErrorCode.MAX_RPS_REQUIRES_VERIFIED_SITE, 422)
    assert decide(max_rps=3.5, verified=True).max_rps == 3.5


@pytest.mark.parametrize(
    ("request_fields", "bad"),
    [
        ({"max_pages": 0}, "max_pages"),
        ({"max_pages": 500_001}, "max_pages"),
        ({"concurrency": 21}, "concurrency"),
        ({"concurrency": 0}, "concurrency"),
        ({"max_rps": 0.4}, "max_rps"),
        ({"max_rps": 10.5}, "max_rps"),
        ({"verify_token": "short"}, "verify_token"),
        ({"verify_token": "has spaces in it, sadly"}, "verify_token"),
        ({"webhook_url": "not a url"}, "webhook_url"),
    ],
)
def test_out_of_range_fields_answer_validation_failed_naming_the_field(
    request_fields: dict, bad: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        decide(**request_fields)
    assert caught.value.code is ErrorCode.VALIDATION_FAILED
    assert bad in caught.value.fields


def test_verify_token_cannot_be_combined_with_site_id() -> None:
    site = SiteTerms(
        SiteId(3), "https://retro-clock.example/", "https://retro-clock.example", True, 1000, 2.0
    )
    with pytest.raises(ValidationFailed) as caught:
        decide(site=site, site_id=SiteId(3), verify_token="a" * 16)
    assert "verify_token" in caught.value.fields


def test_a_url_off_the_sites_origin_answers_site_url_mismatch() -> None:
    site = SiteTerms(
        SiteId(3), "https://retro-clock.example/", "https://retro-clock.example", True, 1000, 2.0
    )
    with pytest.raises(DomainError) as caught:
        decide(site=site, site_id=SiteId(3), url="https://other.example/")
    assert caught.value.code is ErrorCode.SITE_URL_MISMATCH


def test_site_endpoint_caps_max_rps_at_the_sites_and_at_three_when_unverified() -> None:
    unverified = SiteTerms(
        SiteId(3), "https://retro-clock.example/", "https://retro-clock.example", False, 400, 8.0
    )
    settings = decide_audit_settings(
        AuditRequest(max_rps=9.0), plan=GROWTH, site=unverified, origin_verified=False, site_endpoint=True
    )
    assert (settings.max_rps, settings.max_pages) == (3.0, 400)
    verified = SiteTerms(
        SiteId(3), "https://retro-clock.example/", "https://retro-clock.example", True, 400, 5.0
    )
    settings = decide_audit_settings(
        AuditRequest(max_rps=9.0), plan=GROWTH, site=verified, origin_verified=True, site_endpoint=True
    )
    assert settings.max_rps == 5.0
