"""The audit-ended webhook (docs/rest-api.md "The audit-ended webhook"): its body and signature, and the
delivery lifecycle with its retries."""

import enum
import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Final, NewType, Self
from urllib.parse import urlsplit

from attrs import evolve, frozen

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.error import Conflict
from siteaudit.domain.ids import AuditId, UserId
from siteaudit.domain.lifecycle import next_state

WebhookDeliveryId = NewType("WebhookDeliveryId", int)

SIGNATURE_HEADER: Final = "X-Audit-Signature"
DELIVERY_HEADER: Final = "X-Audit-Delivery"
ATTEMPT_HEADER: Final = "X-Audit-Attempt"
SIGNATURE_PREFIX: Final = "sha256="

MAX_ATTEMPTS: Final = 5
# Waits after the 1st, 2nd, 3rd and 4th failure: attempts land at about 0, 1, 6, 21, 51 minutes.
RETRY_DELAYS: Final[tuple[timedelta, ...]] = tuple(timedelta(minutes=m) for m in (1, 5, 15, 30))
# A retry lands within ±10 % of its nominal delay, so receivers that failed together do not retry together.
JITTER_SPREAD: Final = 0.1
DEADLINE_S: Final = 10.0
MAX_RESPONSE_BYTES: Final = 4096
MAX_ERROR_LENGTH: Final = 300


# --- the body and the signature ------------------------------------------------------------------------


def event_body(*, crawl_id: int, status: AuditStatus, pages_crawled: int, health_score: int | None) -> bytes:
    """The webhook body as bytes, keys in the documented order, no white space, ASCII only.

    Made once when the event is queued: these bytes are stored, signed and sent as they are.
    """
    if not status.ended:
        raise ValueError(f"an audit that is {status.value} has not ended; there is no event to send")
    fields = {
        "crawl_id": crawl_id,
        "status": status.value,
        "pages_crawled": pages_crawled,
        "health_score": health_score,
    }
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def audit_ended_body(audit: Audit) -> bytes:
    return event_body(
        crawl_id=audit.id,
        status=audit.status,
        pages_crawled=audit.pages_crawled,
        health_score=audit.health_score,
    )


def _key(secret: bytes | str) -> bytes:
    return secret.encode("utf-8") if isinstance(secret, str) else secret


def sign(secret: bytes | str, body: bytes) -> str:
    """`sha256=<lowercase hex HMAC-SHA256 of body>`, the X-Audit-Signature value."""
    return SIGNATURE_PREFIX + hmac.new(_key(secret), body, hashlib.sha256).hexdigest()


def signature_matches(secret: bytes | str, body: bytes, header: str) -> bool:
    """What a receiver does: recompute over the raw bytes, compare in constant time."""
    return hmac.compare_digest(sign(secret, body).encode("ascii"), header.strip().encode("utf-8", "replace"))


def url_refusal(url: str) -> str | None:
    """Why an attempt to `url` fails before any connection (only `https` URLs are called), or None.

    Addresses are judged at connect time by the SSRF guard, not here.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as error:
        return f"invalid URL: {error}"
    if parts.scheme.lower() != "https":
        return f"scheme {parts.scheme or '(none)'!r} is refused: webhooks are delivered over https only"
    if not parts.hostname:
        return "the URL has no host"
    return None


# --- one attempt -------------------------------------------------------------------------------------


@frozen
class SendOutcome:
    """What one POST produced: the answer's status, or the class of failure (`timeout`, `connect`, ...).

    A status that arrived before a failure (a body cut at the deadline) is kept for the record, but the
    failure decides: only a whole answer within the deadline delivers (docs/security.md, "Outbound
    addresses and signatures"). A body read to the 4 KB cap is whole enough (`truncated`, no error).
    """

    status_code: int | None
    error: str | None = None  # FetchError value, or "refused" for a URL refused before connecting
    detail: str | None = None
    duration_ms: int = 0
    response_bytes: int = 0  # how much of the answer's body was read (at most MAX_RESPONSE_BYTES)
    truncated: bool = False

    def __attrs_post_init__(self) -> None:
        if self.status_code is None and self.error is None:
            raise ValueError("an outcome without a status must name its error")


class DeliveryStatus(enum.StrEnum):
    PENDING = "pending"  # waiting for its next attempt (or being attempted, while leased)
    DELIVERED = "delivered"  # a 2xx answer, received whole (or to the cap) within the deadline
    REDIRECTED = "redirected"  # a 3xx answer: redirects are not followed and delivery ends
    DROPPED = "dropped"  # the fifth attempt failed; the receiver polls GET /crawls/{id}

    @property
    def ended(self) -> bool:
        return self is not DeliveryStatus.PENDING


class DeliveryMove(enum.StrEnum):
    SUCCEED = "succeed"  # 2xx
    REDIRECT = "redirect"  # 3xx
    RETRY = "retry"  # 4xx, 5xx, timeout, connection error, refused URL, with attempts left
    GIVE_UP = "give_up"  # the same, on the last attempt


_P = DeliveryStatus.PENDING
DELIVERY_MOVES: Final[Mapping[tuple[DeliveryStatus, DeliveryMove], DeliveryStatus]] = MappingProxyType(
    {
        (_P, DeliveryMove.SUCCEED): DeliveryStatus.DELIVERED,
        (_P, DeliveryMove.REDIRECT): DeliveryStatus.REDIRECTED,
        (_P, DeliveryMove.RETRY): _P,
        (_P, DeliveryMove.GIVE_UP): DeliveryStatus.DROPPED,
    }
)


def judge(outcome: SendOutcome, *, attempt: int) -> DeliveryMove:
    """The move an outcome of attempt number `attempt` (1-based) makes (docs/security.md, webhooks). An answer that did
    not arrive whole (status and headers, then a body that timed out or broke off) is a failure
    whatever its status: the receiver may never have finished handling the event."""
    code = None if outcome.error is not None else outcome.status_code
    if code is not None and 200 <= code < 300:
        return DeliveryMove.SUCCEED
    if code is not None and 300 <= code < 400:
        return DeliveryMove.REDIRECT
    return DeliveryMove.GIVE_UP if attempt >= MAX_ATTEMPTS else DeliveryMove.RETRY


def retry_delay(failures: int, jitter: float) -> timedelta:
    """The wait after the `failures`-th failure, `jitter` in [-1, 1] stretching it by up to ±JITTER_SPREAD."""
    if not 1 <= failures <= len(RETRY_DELAYS):
        raise ValueError(f"no retry follows failure number {failures}")
    if not -1.0 <= jitter <= 1.0:
        raise ValueError(f"jitter {jitter} is outside [-1, 1]")
    return RETRY_DELAYS[failures - 1] * (1.0 + JITTER_SPREAD * jitter)


@frozen
class WebhookAttempt:
    """The record of one attempt, kept for support and for the receiver's questions."""

    delivery_id: WebhookDeliveryId
    audit_id: AuditId
    number: int  # 1-based
    at: datetime  # when the request started
    status_code: int | None
    error: str | None  # failure class (also when a status arrived first); None for a whole answer
    detail: str | None
    duration_ms: int
    move: DeliveryMove


def _short(text: str | None) -> str | None:
    return None if text is None else text[:MAX_ERROR_LENGTH]


# --- the delivery ------------------------------------------------------------------------------------


@frozen
class WebhookDelivery:
    """The audit-ended event of one audit and its way to the receiver. One per audit, ever."""

    id: WebhookDeliveryId
    audit_id: AuditId
    user_id: UserId  # who started the audit: their current secret signs every attempt
    url: str
    body: bytes
    created_at: datetime
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: int = 0
    next_attempt_at: datetime | None = None  # None once ended
    last_status_code: int | None = None
    last_error: str | None = None
    lease_until: datetime | None = None  # a dispatcher holds it until then
    finished_at: datetime | None = None
    version: int = 0

    @classmethod
    def for_audit(cls, audit: Audit, *, now: datetime) -> Self:
        """The event of an ended audit that asked for a webhook; first attempt due at once."""
        if audit.webhook_url is None:
            raise ValueError(f"audit {audit.id} asked for no webhook")
        return cls(
            id=WebhookDeliveryId(0),
            audit_id=audit.id,
            user_id=audit.user_id,
            url=audit.webhook_url,
            body=audit_ended_body(audit),
            created_at=now,
            next_attempt_at=now,
        )

    def is_due(self, now: datetime) -> bool:
        return (
            self.status is DeliveryStatus.PENDING
            and self.next_attempt_at is not None
            and self.next_attempt_at <= now
            and (self.lease_until is None or self.lease_until <= now)
        )

    def lease(self, *, now: datetime, seconds: float) -> Self:
        """Taken by a dispatcher for `seconds`; an expired lease (a dispatcher died) may be taken again."""
        if not self.is_due(now):
            raise Conflict(f"webhook delivery {self.id} is not due for an attempt")
        return evolve(self, lease_until=now + timedelta(seconds=seconds), version=self.version + 1)

    def renew(self, *, now: datetime, seconds: float) -> Self:
        """The holder's lease, extended for `seconds` from `now` (one attempt): the store's version check
        on saving proves the holder still holds it, even if its lease ran out meanwhile."""
        if self.status is not DeliveryStatus.PENDING:
            raise Conflict(f"webhook delivery {self.id} has ended")
        return evolve(self, lease_until=now + timedelta(seconds=seconds), version=self.version + 1)

    def headers(self, *, signature: str) -> tuple[tuple[str, str], ...]:
        """Headers of the next attempt. Only the body is signed; delivery id and attempt number are not."""
        return (
            ("Content-Type", "application/json"),
            (SIGNATURE_HEADER, signature),
            (DELIVERY_HEADER, str(self.id)),
            (ATTEMPT_HEADER, str(self.attempts + 1)),
        )

    def record(
        self, outcome: SendOutcome, *, started_at: datetime, now: datetime, jitter: float
    ) -> tuple[Self, WebhookAttempt]:
        """Apply one attempt's outcome: delivered, ended by a redirect, retried later, or dropped.

        `started_at` is when the request went out, `now` when it ended (retries count from the failure).
        """
        number = self.attempts + 1
        move = judge(outcome, attempt=number)
        status = next_state(DELIVERY_MOVES, self.status, move, entity="webhook delivery")
        retry_at = now + retry_delay(number, jitter) if move is DeliveryMove.RETRY else None
        error = outcome.error
        detail = _short(outcome.detail)
        recorded = evolve(
            self,
            status=status,
            attempts=number,
            next_attempt_at=retry_at,
            last_status_code=outcome.status_code,
            last_error=None if error is None else (f"{error}: {detail}" if detail else error),
            lease_until=None,
            finished_at=now if status.ended else None,
            version=self.version + 1,
        )
        attempt = WebhookAttempt(
            delivery_id=self.id,
            audit_id=self.audit_id,
            number=number,
            at=started_at,
            status_code=outcome.status_code,
            error=error,
            detail=detail,
            duration_ms=outcome.duration_ms,
            move=move,
        )
        return recorded, attempt
