"""The webhook's values and decisions: body bytes, the signature, the delivery table and the retry schedule."""

import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.error import Conflict, InvalidTransition
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.lifecycle import ended_states, reachable
from siteaudit.domain.webhook import (
    DELIVERY_MOVES,
    MAX_ATTEMPTS,
    DeliveryMove,
    DeliveryStatus,
    SendOutcome,
    WebhookDelivery,
    event_body,
    judge,
    retry_delay,
    sign,
    signature_matches,
    url_refusal,
)

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
HOOK = "https://hooks.retro-clock.example/audit-ended"


def audit(webhook_url: str | None = HOOK) -> Audit:
    return Audit(
        id=AuditId(42),
        team_id=TeamId(3),
        user_id=UserId(7),
        payer_id=UserId(8),
        url="https://retro-clock.example/",
        origin="https://retro-clock.example",
        created_at=T0,
        max_pages=50,
        webhook_url=webhook_url,
    )


def failed_audit() -> Audit:
    running = audit().start(now=T0).record_progress(pages_crawled=3, pages_not_modified=0, now=T0)
    failed, _ = running.fail("reaped: lease expired", now=T0)
    return failed


def delivery() -> WebhookDelivery:
    return WebhookDelivery.for_audit(failed_audit(), now=T0)


# --- signature ---------------------------------------------------------------------------------------


def test_the_signer_reproduces_githubs_published_vector() -> None:
    assert (
        sign("It's a Secret to Everybody", b"Hello, World!")
        == "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    )
    assert sign(b"It's a Secret to Everybody", b"Hello, World!") == sign(
        "It's a Secret to Everybody", b"Hello, World!"
    )


@given(secret=st.text(min_size=1, max_size=60), body=st.binary(max_size=300))
def test_the_signature_is_hmac_sha256_in_lowercase_hex_and_checks_in_constant_time(
    secret: str, body: bytes
) -> None:
    signature = sign(secret, body)

    assert signature == "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert signature == signature.lower()
    assert signature_matches(secret, body, signature)
    assert not signature_matches(secret, body + b" ", signature)
    assert not signature_matches(secret + "x", body, signature)


# --- body --------------------------------------------------------------------------------------------


def test_the_body_has_exactly_the_four_fields_in_the_specs_order() -> None:
    body = event_body(crawl_id=42, status=AuditStatus.DONE, pages_crawled=120, health_score=87)

    assert body == b'{"crawl_id":42,"status":"done","pages_crawled":120,"health_score":87}'


def test_a_failed_audit_sends_a_null_health_score() -> None:
    assert json.loads(delivery().body) == {
        "crawl_id": 42,
        "status": "failed",
        "pages_crawled": 3,
        "health_score": None,
    }


def test_an_audit_that_has_not_ended_has_no_body() -> None:
    with pytest.raises(ValueError, match="not ended"):
        event_body(crawl_id=42, status=AuditStatus.RUNNING, pages_crawled=1, health_score=None)


def test_the_delivery_belongs_to_the_starter_not_the_payer_and_is_due_at_once() -> None:
    queued = delivery()

    assert queued.user_id == UserId(7)
    assert queued.url == HOOK and queued.status is DeliveryStatus.PENDING
    assert queued.next_attempt_at == T0 and queued.is_due(T0) and not queued.is_due(T0 - timedelta(seconds=1))


def test_an_audit_without_a_webhook_url_has_no_delivery() -> None:
    with pytest.raises(ValueError, match="no webhook"):
        WebhookDelivery.for_audit(audit(webhook_url=None), now=T0)


# --- the table ---------------------------------------------------------------------------------------


def test_every_delivery_state_is_reachable_and_only_pending_has_exits() -> None:
    assert reachable(DELIVERY_MOVES, DeliveryStatus.PENDING) == set(DeliveryStatus)
    assert ended_states(DELIVERY_MOVES, DeliveryStatus) == {s for s in DeliveryStatus if s.ended}
    assert {move for _, move in DELIVERY_MOVES} == set(DeliveryMove)


@pytest.mark.parametrize(
    ("outcome", "attempt", "move"),
    [
        (SendOutcome(200), 1, DeliveryMove.SUCCEED),
        (SendOutcome(204), 5, DeliveryMove.SUCCEED),
        (SendOutcome(299), 1, DeliveryMove.SUCCEED),
        (SendOutcome(301), 1, DeliveryMove.REDIRECT),
        (SendOutcome(304), 2, DeliveryMove.REDIRECT),
        (SendOutcome(308), 5, DeliveryMove.REDIRECT),
        (SendOutcome(400), 1, DeliveryMove.RETRY),
        (SendOutcome(429), 4, DeliveryMove.RETRY),
        (SendOutcome(500), 1, DeliveryMove.RETRY),
        (SendOutcome(503), 5, DeliveryMove.GIVE_UP),
        (SendOutcome(None, error="timeout"), 1, DeliveryMove.RETRY),
        (SendOutcome(None, error="connect"), 2, DeliveryMove.RETRY),
        (SendOutcome(None, error="refused"), 5, DeliveryMove.GIVE_UP),
        (SendOutcome(200, error="timeout"), 1, DeliveryMove.RETRY),  # the status arrived, the body was cut
        (SendOutcome(204, error="connect"), 5, DeliveryMove.GIVE_UP),  # the connection broke mid-answer
        (SendOutcome(302, error="timeout"), 1, DeliveryMove.RETRY),
        (SendOutcome(200, response_bytes=4096, truncated=True), 1, DeliveryMove.SUCCEED),  # read to the cap
        (SendOutcome(101), 1, DeliveryMove.RETRY),
    ],
)
def test_each_answer_makes_its_move(outcome: SendOutcome, attempt: int, move: DeliveryMove) -> None:
    assert judge(outcome, attempt=attempt) is move


def test_an_outcome_without_status_must_name_its_error() -> None:
    with pytest.raises(ValueError, match="error"):
        SendOutcome(None)


# --- the schedule ------------------------------------------------------------------------------------


def fail(d: WebhookDelivery, at: datetime, jitter: float = 0.0) -> WebhookDelivery:
    leased = d.lease(now=at, seconds=60)
    failed, _ = leased.record(SendOutcome(500), started_at=at, now=at, jitter=jitter)
    return failed


def test_without_jitter_attempts_fall_at_0_1_6_21_and_51_minutes_then_the_delivery_drops() -> None:
    d, at, times = delivery(), T0, []
    while d.status is DeliveryStatus.PENDING:
        assert d.next_attempt_at is not None
        at = d.next_attempt_at
        times.append((at - T0) / timedelta(minutes=1))
        d = fail(d, at)

    assert times == [0, 1, 6, 21, 51]
    assert d.status is DeliveryStatus.DROPPED and d.attempts == MAX_ATTEMPTS
    assert d.next_attempt_at is None and d.finished_at == at


@given(jitter=st.floats(min_value=-1.0, max_value=1.0), failures=st.integers(min_value=1, max_value=4))
def test_jitter_keeps_each_retry_within_ten_percent_of_its_delay(jitter: float, failures: int) -> None:
    nominal = (None, 1, 5, 15, 30)[failures]
    assert nominal is not None
    delay = retry_delay(failures, jitter) / timedelta(minutes=1)

    assert 0.9 * nominal - 1e-9 <= delay <= 1.1 * nominal + 1e-9


@pytest.mark.parametrize(("failures", "jitter"), [(0, 0.0), (5, 0.0), (1, 1.5), (1, -1.01)])
def test_the_schedule_refuses_what_it_does_not_know(failures: int, jitter: float) -> None:
    with pytest.raises(ValueError):
        retry_delay(failures, jitter)


def test_a_retry_counts_from_the_end_of_the_failed_attempt() -> None:
    leased = delivery().lease(now=T0, seconds=60)
    ended = T0 + timedelta(seconds=10)

    failed, attempt = leased.record(
        SendOutcome(None, error="timeout", detail="no answer", duration_ms=10_000),
        started_at=T0,
        now=ended,
        jitter=0.0,
    )

    assert failed.next_attempt_at == ended + timedelta(minutes=1)
    assert attempt.at == T0 and attempt.duration_ms == 10_000 and attempt.number == 1
    assert attempt.error == "timeout" and failed.last_error == "timeout: no answer"
    assert failed.lease_until is None and failed.version == leased.version + 1


def test_a_redirect_ends_the_delivery_on_the_first_attempt() -> None:
    leased = delivery().lease(now=T0, seconds=60)

    ended, attempt = leased.record(SendOutcome(302), started_at=T0, now=T0, jitter=0.0)

    assert ended.status is DeliveryStatus.REDIRECTED and ended.next_attempt_at is None
    assert attempt.move is DeliveryMove.REDIRECT and attempt.error is None


def test_an_ended_delivery_records_no_more_attempts() -> None:
    delivered, _ = (
        delivery().lease(now=T0, seconds=60).record(SendOutcome(200), started_at=T0, now=T0, jitter=0)
    )

    with pytest.raises(InvalidTransition):
        delivered.record(SendOutcome(200), started_at=T0, now=T0, jitter=0.0)
    assert not delivered.is_due(T0 + timedelta(days=1))


def test_a_leased_delivery_is_not_due_until_its_lease_runs_out() -> None:
    leased = delivery().lease(now=T0, seconds=60)

    assert not leased.is_due(T0 + timedelta(seconds=59))
    with pytest.raises(Conflict):
        leased.lease(now=T0 + timedelta(seconds=30), seconds=60)
    assert leased.lease(now=T0 + timedelta(seconds=60), seconds=60).version == leased.version + 1


def test_headers_carry_the_signature_and_the_unsigned_delivery_id_and_attempt_number() -> None:
    d = fail(delivery(), T0)

    headers = dict(d.headers(signature="sha256=ab"))

    assert headers == {
        "Content-Type": "application/json",
        "X-Audit-Signature": "sha256=ab",
        "X-Audit-Delivery": str(d.id),
        "X-Audit-Attempt": "2",
    }


# --- URL rules ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("https://hooks.retro-clock.example/x", False),
        ("https://hooks.retro-clock.example:8443/x", False),
        ("HTTPS://hooks.retro-clock.example/", False),
        ("http://hooks.retro-clock.example/x", True),
        ("ftp://hooks.retro-clock.example/x", True),
        ("https:///nohost", True),
        ("https://hooks.retro-clock.example:99999/", True),
    ],
)
def test_only_https_urls_are_attempted(url: str, refused: bool) -> None:
    assert (url_refusal(url) is not None) is refused


def test_the_holder_renews_its_lease_for_one_attempt_even_after_it_ran_out() -> None:
    leased = delivery().lease(now=T0, seconds=30)
    renewed = leased.renew(now=T0 + timedelta(seconds=45), seconds=30)

    assert renewed.lease_until == T0 + timedelta(seconds=75) and renewed.version == leased.version + 1
    assert not renewed.is_due(T0 + timedelta(seconds=74))
    delivered, _ = renewed.record(SendOutcome(200), started_at=T0, now=T0, jitter=0.0)
    with pytest.raises(Conflict):
        delivered.renew(now=T0, seconds=30)
