"""Webhook delivery end to end: memory store, dispatcher, HttpxWebhookSender and HTTPS receivers on loopback.

The figures of SECURITY.md section 2 are asserted here; the deadline is test-sized (1 s instead of 10 s).
"""

import hashlib
import hmac
import itertools
import json
import logging
import random
import ssl
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
import trustme
from attrs import define
from webhook_doubles import LOOPBACK_ALLOWED, RECEIVER_NAME, Received, StartReceiver, answering, respond

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.http.webhook import HttpxWebhookSender
from siteaudit.adapters.memory.webhook import MemoryWebhookStore, MemoryWebhookUnitOfWork
from siteaudit.adapters.system import FixedClock
from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.webhook import DeliveryStatus, SendOutcome, WebhookAttempt, WebhookDelivery
from siteaudit.services.webhook import DEFAULT_LEASE_S, deliver_due_webhooks, queue_webhook

STARTER = UserId(7)
SECRET = "whsec_RetroClockSigningSecret0123456789abcd"
DEADLINE_S = 1.0
LOOPBACK = AddressPolicy.from_setting(LOOPBACK_ALLOWED)


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def finished_audit(clock: FixedClock, webhook_url: str | None, audit_id: int = 42) -> Audit:
    audit = Audit(
        id=AuditId(audit_id),
        team_id=TeamId(3),
        user_id=STARTER,
        payer_id=STARTER,
        url="https://retro-clock.example/blog/first-post",
        origin="https://retro-clock.example",
        created_at=clock.now(),
        max_pages=50,
        webhook_url=webhook_url,
    )
    audit = audit.start(now=clock.now()).record_progress(
        pages_crawled=12, pages_not_modified=2, now=clock.now()
    )
    done, _ended = audit.stop_crawling(partial=False, now=clock.now()).publish_report(
        health_score=87, now=clock.now()
    )
    return done


def stdlib_verifies(secret: str, received: Received) -> bool:
    """What a receiver does with nothing but the standard library: HMAC over the raw bytes, constant time."""
    expected = "sha256=" + hmac.new(secret.encode(), received.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), received.headers.get("x-audit-signature", "").encode())


@define
class Dispatch:
    """The memory store, a fake clock, the real sender and the dispatcher, as a worker would run them."""

    clock: FixedClock
    uow: MemoryWebhookUnitOfWork
    sender: HttpxWebhookSender
    jitter: Callable[[], float]

    def queue(self, audit: Audit) -> WebhookDelivery | None:
        with self.uow:
            delivery = queue_webhook(audit, webhooks=self.uow.webhooks, at=self.clock.now())
            self.uow.commit()
        return delivery

    def run_once(self) -> int:
        return deliver_due_webhooks(uow=self.uow, sender=self.sender, clock=self.clock, jitter=self.jitter)

    def run_for(self, minutes: float, *, step_s: float = 10.0) -> int:
        """Run the dispatcher every `step_s` seconds of fake time for `minutes`, as the periodic task does."""
        attempts = self.run_once()
        for _ in range(round(minutes * 60 / step_s)):
            self.clock.advance(step_s)
            attempts += self.run_once()
        return attempts

    def delivery(self, audit_id: int = 42) -> WebhookDelivery:
        with self.uow:
            found = self.uow.webhooks.of_audit(AuditId(audit_id))
        assert found is not None
        return found

    def attempts(self, audit_id: int = 42) -> list[WebhookAttempt]:
        with self.uow:
            return list(self.uow.webhooks.attempts(AuditId(audit_id)))

    def rotate(self, secret: str) -> None:
        with self.uow:
            self.uow.webhook_secrets.rotate(STARTER, secret)
            self.uow.commit()


@pytest.fixture
def dispatch(certificate_authority: trustme.CA) -> Dispatch:
    clock = FixedClock()
    uow = MemoryWebhookUnitOfWork(MemoryWebhookStore())
    with uow:
        uow.webhook_secrets.create(STARTER, SECRET)
        uow.commit()
    sender = HttpxWebhookSender(
        StaticResolver({RECEIVER_NAME: ["127.0.0.1"]}),
        LOOPBACK,
        deadline_s=DEADLINE_S,
        verify=trusting(certificate_authority),
    )
    return Dispatch(clock=clock, uow=uow, sender=sender, jitter=lambda: 0.0)


def minutes_after(start: datetime, received: list[Received]) -> list[float]:
    return [(r.at - start) / timedelta(minutes=1) for r in received if r.at is not None]


# --- signature and body ------------------------------------------------------------------------------


def test_the_receiver_verifies_the_signature_over_the_raw_body_with_the_standard_library(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    hook = receiver(answering(204))
    audit = finished_audit(dispatch.clock, hook.url())
    queued = dispatch.queue(audit)

    assert dispatch.run_once() == 1

    (got,) = hook.requests
    assert stdlib_verifies(SECRET, got)
    assert not stdlib_verifies("whsec_someone-else", got)
    assert queued is not None and got.body == queued.body  # the stored bytes are the bytes sent
    assert list(json.loads(got.body).items()) == [
        ("crawl_id", 42),
        ("status", "done"),
        ("pages_crawled", 12),
        ("health_score", 87),
    ]
    assert got.method == "POST" and got.target == "/hooks/audit-ended"
    assert got.headers["content-type"] == "application/json"
    assert got.headers["accept-encoding"] == "identity"
    assert got.headers["user-agent"].startswith("siteaudit/")
    assert got.headers["x-audit-delivery"] == str(queued.id)
    assert got.headers["x-audit-attempt"] == "1"
    assert got.headers["host"] == f"{RECEIVER_NAME}:{hook.port}"
    delivered = dispatch.delivery()
    assert delivered.status is DeliveryStatus.DELIVERED and delivered.last_status_code == 204


# --- the schedule ------------------------------------------------------------------------------------


def test_a_receiver_failing_four_times_sees_five_attempts_at_0_1_6_21_51_minutes(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    hook = receiver(answering(500, 502, 404, 503, 200), clock=dispatch.clock)
    start = dispatch.clock.now()
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    made = dispatch.run_for(minutes=75)

    assert made == 5 and len(hook.requests) == 5
    assert minutes_after(start, hook.requests) == [0, 1, 6, 21, 51]
    print(f"attempts at {minutes_after(start, hook.requests)} minutes")
    assert [r.headers["x-audit-attempt"] for r in hook.requests] == ["1", "2", "3", "4", "5"]
    assert all(stdlib_verifies(SECRET, r) for r in hook.requests)
    assert len({r.body for r in hook.requests}) == 1
    delivery = dispatch.delivery()
    assert delivery.status is DeliveryStatus.DELIVERED and delivery.attempts == 5
    assert [a.status_code for a in dispatch.attempts()] == [500, 502, 404, 503, 200]


def test_with_jitter_each_retry_lands_within_ten_percent_of_its_delay(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    draws = random.Random(20261122)
    dispatch.jitter = lambda: draws.uniform(-1.0, 1.0)
    hook = receiver(answering(500, 500, 500, 500, 200), clock=dispatch.clock)
    start = dispatch.clock.now()
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    dispatch.run_for(minutes=75, step_s=5)

    times = minutes_after(start, hook.requests)
    print(f"attempts with jitter at {[round(t, 2) for t in times]} minutes")
    assert len(times) == 5 and times[0] == 0
    step = 5 / 60  # the dispatcher runs every 5 s, so an attempt lands up to one step after it is due
    gaps = [current - previous for previous, current in itertools.pairwise(times)]
    for gap, nominal in zip(gaps, (1, 5, 15, 30), strict=True):
        assert 0.9 * nominal <= gap <= 1.1 * nominal + step
    assert [round(gap, 4) for gap in gaps] != [1, 5, 15, 30]  # the jitter moved them


def test_after_the_fifth_failure_the_webhook_is_dropped(dispatch: Dispatch, receiver: StartReceiver) -> None:
    hook = receiver(answering(500), clock=dispatch.clock)
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    assert dispatch.run_for(minutes=120, step_s=30) == 5

    assert len(hook.requests) == 5
    delivery = dispatch.delivery()
    assert delivery.status is DeliveryStatus.DROPPED and delivery.next_attempt_at is None
    assert delivery.finished_at is not None


# --- what each answer means ----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 404, 410, 429, 500, 503])
def test_4xx_and_5xx_answers_are_retried_a_minute_later(
    dispatch: Dispatch, receiver: StartReceiver, status: int
) -> None:
    hook = receiver(answering(status), clock=dispatch.clock)
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    dispatch.run_once()

    delivery = dispatch.delivery()
    assert delivery.status is DeliveryStatus.PENDING and delivery.attempts == 1
    assert delivery.last_status_code == status
    assert delivery.next_attempt_at == dispatch.clock.now() + timedelta(minutes=1)
    dispatch.clock.advance(59)
    assert dispatch.run_once() == 0
    dispatch.clock.advance(1)
    assert dispatch.run_once() == 1 and len(hook.requests) == 2


def never_answers(conn: object, request: Received, number: int) -> None:
    time.sleep(DEADLINE_S + 1.0)


def test_a_receiver_that_never_answers_times_out_at_the_deadline_and_is_retried(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    hook = receiver(never_answers)
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    started = time.perf_counter()
    dispatch.run_once()
    elapsed = time.perf_counter() - started

    (attempt,) = dispatch.attempts()
    assert attempt.error == "timeout" and attempt.status_code is None
    assert DEADLINE_S <= elapsed < DEADLINE_S + 0.75
    assert 1000 <= attempt.duration_ms < 1500
    delivery = dispatch.delivery()
    assert delivery.status is DeliveryStatus.PENDING and delivery.last_error is not None
    assert delivery.last_error.startswith("timeout")


def test_a_redirect_ends_delivery_and_is_not_followed(dispatch: Dispatch, receiver: StartReceiver) -> None:
    elsewhere = receiver(answering(200))
    hook = receiver(
        lambda conn, request, number: conn.sendall(respond(302, headers=(("Location", elsewhere.url()),)))
    )
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    made = dispatch.run_for(minutes=60, step_s=60)

    assert made == 1 and len(hook.requests) == 1
    assert elsewhere.accepted == 0
    delivery = dispatch.delivery()
    assert delivery.status is DeliveryStatus.REDIRECTED and delivery.last_status_code == 302


def drip_head(conn: object, request: Received, number: int) -> None:
    # One byte of the status line every 0.2 s: each read arrives well within httpx's per-phase timeouts.
    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
        time.sleep(0.2)
        conn.sendall(bytes([byte]))  # type: ignore[attr-defined]


def test_a_drip_receiver_is_cut_at_the_wall_clock_deadline(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    hook = receiver(drip_head)
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    started = time.perf_counter()
    dispatch.run_once()
    elapsed = time.perf_counter() - started

    (attempt,) = dispatch.attempts()
    assert attempt.error == "timeout" and attempt.status_code is None
    assert DEADLINE_S <= elapsed < DEADLINE_S + 0.75, elapsed
    print(f"drip receiver cut after {elapsed:.3f} s (deadline {DEADLINE_S} s)")
    assert dispatch.delivery().status is DeliveryStatus.PENDING


def drip_body(conn: object, request: Received, number: int) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")  # type: ignore[attr-defined]
    for _ in range(100):
        time.sleep(0.1)
        conn.sendall(b".")  # type: ignore[attr-defined]


def test_a_2xx_whose_body_drips_past_the_deadline_is_a_timeout_not_a_delivery(
    dispatch: Dispatch, receiver: StartReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    # The status line and headers arrive at once, then the body drips past the deadline: the receiver
    # never finished answering, so the attempt failed and is retried (docs/security.md).
    hook = receiver(drip_body)
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="siteaudit"):
        dispatch.run_once()
    elapsed = time.perf_counter() - started

    assert DEADLINE_S <= elapsed < DEADLINE_S + 0.75
    assert len(hook.requests) == 1
    (attempt,) = dispatch.attempts()
    assert (attempt.status_code, attempt.error) == (200, "timeout")
    delivery = dispatch.delivery()
    assert delivery.status is DeliveryStatus.PENDING and delivery.next_attempt_at is not None
    assert delivery.last_error is not None and delivery.last_error.startswith("timeout")
    assert any("timeout" in record.getMessage() for record in caplog.records)  # the log agrees


def test_a_dripping_2xx_on_every_attempt_is_dropped_not_delivered(
    dispatch: Dispatch, receiver: StartReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    hook = receiver(drip_body)
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    with caplog.at_level(logging.WARNING, logger="siteaudit"):
        made = dispatch.run_for(minutes=60, step_s=60)

    assert made == 5 and len(hook.requests) == 5
    assert dispatch.delivery().status is DeliveryStatus.DROPPED
    assert all((a.status_code, a.error) == (200, "timeout") for a in dispatch.attempts())
    assert any("given up" in r.getMessage() and "timeout" in r.getMessage() for r in caplog.records)


def whole_answer_slowly(conn: object, request: Received, number: int) -> None:
    # The whole answer, in pieces, well within the deadline.
    for piece in (b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n", b"\r\n", b"tha", b"nks"):
        time.sleep(0.1)
        conn.sendall(piece)  # type: ignore[attr-defined]


def test_a_2xx_that_arrives_whole_within_the_deadline_is_delivered(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    hook = receiver(whole_answer_slowly)
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))

    dispatch.run_once()

    (attempt,) = dispatch.attempts()
    assert (attempt.status_code, attempt.error) == (200, None)
    assert dispatch.delivery().status is DeliveryStatus.DELIVERED


@define
class Flood:
    written: int = 0

    def __call__(self, conn: object, request: Received, number: int) -> None:
        size = 5 * 1024 * 1024
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode())  # type: ignore[attr-defined]
        chunk = b"x" * 16384
        while self.written < size:
            conn.sendall(chunk)  # type: ignore[attr-defined]
            self.written += len(chunk)


def test_a_five_megabyte_answer_is_read_to_four_kilobytes(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    flood = Flood()
    hook = receiver(flood)
    audit = finished_audit(dispatch.clock, hook.url())
    headers = WebhookDelivery.for_audit(audit, now=dispatch.clock.now()).headers(signature="sha256=00")

    outcome = dispatch.sender.send(hook.url(), b"{}", headers)
    time.sleep(0.2)

    assert outcome.status_code == 200 and outcome.error is None
    assert outcome.response_bytes == 4096 and outcome.truncated
    assert flood.written < 5 * 1024 * 1024  # the connection was dropped, not drained
    print(f"5 MB answer: {outcome.response_bytes} bytes read; receiver wrote {flood.written} before the cut")


def test_the_production_sender_waits_ten_seconds_and_reads_four_kilobytes() -> None:
    sender = HttpxWebhookSender(StaticResolver({}), AddressPolicy())

    assert (sender.deadline_s, sender.max_bytes) == (10.0, 4096)


# --- URL rules (SPEC 6.5) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        "https://{name}:{port}/hooks",  # a name that resolves to loopback
        "https://127.0.0.1:{port}/hooks",
        "https://127.1:{port}/hooks",
        "https://[::ffff:127.0.0.1]:{port}/hooks",
        "https://[::1]:{port}/hooks",
        "https://10.0.0.7:{port}/hooks",
        "https://169.254.169.254/latest/meta-data",
        "https://0x7f000001:{port}/hooks",
    ],
)
def test_private_and_loopback_targets_are_refused_without_the_allow_setting_and_retried(
    dispatch: Dispatch,
    receiver: StartReceiver,
    certificate_authority: trustme.CA,
    where: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    hook = receiver(answering(200))
    dispatch.sender = HttpxWebhookSender(
        StaticResolver({RECEIVER_NAME: ["127.0.0.1"]}),
        AddressPolicy(),
        deadline_s=DEADLINE_S,
        verify=trusting(certificate_authority),
    )
    dispatch.queue(finished_audit(dispatch.clock, where.format(name=RECEIVER_NAME, port=hook.port)))

    made = dispatch.run_for(minutes=2, step_s=30)

    assert made == 2  # refused, then retried a minute later, refused again
    assert [a.error for a in dispatch.attempts()] == ["refused", "refused"]
    assert dispatch.delivery().status is DeliveryStatus.PENDING
    time.sleep(0.1)
    assert hook.accepted == 0
    # Each refused attempt says why in one line, and names the way out for development.
    lines = [r for r in caplog.records if r.name == "siteaudit.adapters.http.webhook"]
    assert len(lines) == 2 and all(r.levelno == logging.WARNING and r.exc_info is None for r in lines)
    for line in (r.getMessage() for r in lines):
        assert "resolves to a non-public address" in line
        assert "for local development only, SITEAUDIT_ALLOW_NETWORKS=" in line
        # ...with a value the setting takes: the refused address itself
        allow = line.split("SITEAUDIT_ALLOW_NETWORKS=", 1)[1].split()[0]
        assert AddressPolicy.from_setting(allow).permits(allow)
        assert f"{hook.port}/hooks" not in line and "/latest" not in line  # the origin only


def test_an_http_url_fails_every_attempt_without_connecting(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    listener = receiver(answering(200), plain=True)
    queued = dispatch.queue(finished_audit(dispatch.clock, listener.url(scheme="http")))
    assert queued is not None and queued.url.startswith("http://")  # accepted when the audit starts

    made = dispatch.run_for(minutes=75, step_s=60)

    assert made == 5
    attempts = dispatch.attempts()
    assert [a.error for a in attempts] == ["refused"] * 5
    assert attempts[0].detail is not None and "https" in attempts[0].detail
    assert dispatch.delivery().status is DeliveryStatus.DROPPED
    time.sleep(0.1)
    assert listener.accepted == 0


# --- secrets -----------------------------------------------------------------------------------------


def test_a_rotated_secret_signs_the_next_retry(dispatch: Dispatch, receiver: StartReceiver) -> None:
    hook = receiver(answering(500, 200), clock=dispatch.clock)
    dispatch.queue(finished_audit(dispatch.clock, hook.url()))
    dispatch.run_once()

    rotated = "whsec_RotatedAfterTheFirstAttempt0123456789"
    dispatch.rotate(rotated)
    dispatch.clock.advance(minutes=1)
    dispatch.run_once()

    first, second = hook.requests
    assert first.body == second.body
    assert stdlib_verifies(SECRET, first) and not stdlib_verifies(rotated, first)
    assert stdlib_verifies(rotated, second) and not stdlib_verifies(SECRET, second)
    assert dispatch.delivery().status is DeliveryStatus.DELIVERED


def test_nothing_unsigned_is_sent_when_the_starter_has_no_secret(
    dispatch: Dispatch, receiver: StartReceiver
) -> None:
    hook = receiver(answering(200))
    audit = finished_audit(dispatch.clock, hook.url())
    with dispatch.uow:
        dispatch.uow.store.secrets.delete(STARTER)
        dispatch.uow.commit()
    dispatch.queue(audit)

    assert dispatch.run_once() == 1

    assert [a.error for a in dispatch.attempts()] == ["unsigned"]
    assert hook.accepted == 0


def test_one_dispatcher_run_sends_each_due_delivery_once(dispatch: Dispatch, receiver: StartReceiver) -> None:
    hook = receiver(answering(200))
    for audit_id in (42, 43, 44):
        dispatch.queue(finished_audit(dispatch.clock, hook.url(f"/hooks/{audit_id}"), audit_id=audit_id))

    assert dispatch.run_once() == 3
    assert dispatch.run_once() == 0

    assert sorted(r.target for r in hook.requests) == ["/hooks/42", "/hooks/43", "/hooks/44"]
    assert all(dispatch.delivery(i).status is DeliveryStatus.DELIVERED for i in (42, 43, 44))


@define
class SlowReceivers:
    """A sender whose every attempt takes the whole 10 s deadline (on the fake clock) and is answered 200;
    on one chosen attempt a second worker's dispatcher runs, as it would while this one waits."""

    clock: FixedClock
    sent: list[str]
    second_dispatcher: Callable[[], int]
    second_runs_at_attempt: int

    def send(self, url: str, body: bytes, headers: object) -> SendOutcome:
        self.sent.append(url)
        if len(self.sent) == self.second_runs_at_attempt:
            self.second_dispatcher()
        self.clock.advance(10.0)
        return SendOutcome(200)


def test_a_batch_of_slow_receivers_is_sent_once_each_while_another_dispatcher_runs(
    dispatch: Dispatch,
) -> None:
    audits = range(100, 110)
    for audit_id in audits:
        dispatch.queue(finished_audit(dispatch.clock, f"https://hooks.example/{audit_id}", audit_id=audit_id))
    sent: list[str] = []

    def second() -> int:
        return deliver_due_webhooks(uow=dispatch.uow, sender=slow, clock=dispatch.clock, jitter=lambda: 0.0)

    # The first dispatcher claims all ten; at its 8th attempt (70 s in) the claims of the last ones have
    # run out, and the second dispatcher takes them over: each receiver still hears exactly once.
    slow = SlowReceivers(dispatch.clock, sent, second, second_runs_at_attempt=8)
    first = deliver_due_webhooks(uow=dispatch.uow, sender=slow, clock=dispatch.clock, jitter=lambda: 0.0)

    assert sorted(sent) == [f"https://hooks.example/{a}" for a in audits]
    assert first < len(audits)  # it left the deliveries the second dispatcher took
    for audit_id in audits:
        assert dispatch.delivery(audit_id).status is DeliveryStatus.DELIVERED
        assert len(dispatch.attempts(audit_id)) == 1


def test_a_dispatcher_that_died_mid_batch_frees_its_deliveries_within_half_a_minute(
    dispatch: Dispatch,
) -> None:
    for audit_id in (100, 101):
        dispatch.queue(finished_audit(dispatch.clock, f"https://hooks.example/{audit_id}", audit_id=audit_id))
    with dispatch.uow:
        claimed = dispatch.uow.webhooks.claim_due(dispatch.clock.now(), 50, DEFAULT_LEASE_S)
        dispatch.uow.commit()  # ...and the worker is killed before sending anything
    assert len(claimed) == 2
    sent: list[str] = []
    slow = SlowReceivers(dispatch.clock, sent, lambda: 0, second_runs_at_attempt=0)

    dispatch.clock.advance(DEFAULT_LEASE_S - 1)
    assert deliver_due_webhooks(uow=dispatch.uow, sender=slow, clock=dispatch.clock) == 0
    dispatch.clock.advance(1)
    assert deliver_due_webhooks(uow=dispatch.uow, sender=slow, clock=dispatch.clock) == 2
    assert DEFAULT_LEASE_S <= 30 and len(sent) == 2
