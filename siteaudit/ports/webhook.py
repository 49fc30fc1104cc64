"""The audit-ended webhook: stored deliveries and attempts, per-person signing secrets, the sender."""

from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from siteaudit.domain.ids import AuditId, UserId
from siteaudit.domain.webhook import SendOutcome, WebhookAttempt, WebhookDelivery, WebhookDeliveryId


class WebhookRepository(Protocol):
    """Deliveries and their attempts, inside the caller's unit of work (staged until commit)."""

    def add(self, delivery: WebhookDelivery) -> WebhookDelivery:
        """Stage the audit's delivery (an id of 0 gets a fresh one) and return it.

        Unique per audit: when the audit already has a delivery, nothing changes and the stored one is
        returned (a redelivered "audit ended" message queues nothing twice).
        """
        ...

    def get(self, delivery_id: WebhookDeliveryId) -> WebhookDelivery:
        """Raises NotFound."""
        ...

    def of_audit(self, audit_id: AuditId) -> WebhookDelivery | None:
        """The audit's delivery, or None when it sends no webhook (or has not ended)."""
        ...

    def claim_due(self, now: datetime, limit: int, lease_s: float) -> Sequence[WebhookDelivery]:
        """Lease up to `limit` due deliveries for `lease_s` seconds and return them, earliest due first.

        Due: pending, `next_attempt_at <= now`, and no lease running at `now`. Two dispatchers never get
        the same delivery while its lease runs (`FOR UPDATE SKIP LOCKED` in PostgreSQL); a lease that ran
        out (its dispatcher died) makes the delivery claimable again. Commit to publish the leases.
        """
        ...

    def save(self, delivery: WebhookDelivery) -> None:
        """Stage an update. Raises NotFound, or ConcurrentUpdate when the stored version is not
        `delivery.version - 1` (another dispatcher took the delivery after this one's lease ran out)."""
        ...

    def add_attempt(self, attempt: WebhookAttempt) -> None:
        """Stage the record of one attempt; recording the same (delivery, number) again changes nothing."""
        ...

    def attempts(self, audit_id: AuditId) -> Sequence[WebhookAttempt]:
        """The attempts made for the audit's webhook, in order."""
        ...


class WebhookSecrets(Protocol):
    """One signing secret per person, in plaintext here; adapters keep it encrypted at rest.

    New values come from the services (the Secrets port), never from the adapter.
    """

    def create(self, user_id: UserId, secret: str) -> None:
        """Stage the person's first secret, with their account. Raises Conflict when they have one."""
        ...

    def rotate(self, user_id: UserId, secret: str) -> None:
        """Stage a replacement. It signs every attempt from commit on, retries of earlier events
        included; the old secret is forgotten. Raises NotFound when the person has no secret."""
        ...

    def get(self, user_id: UserId) -> str:
        """The person's current secret. Raises NotFound."""
        ...


class WebhookUnitOfWork(Protocol):
    """The part of the unit of work the dispatcher needs: `with uow: ...; uow.commit()`.

    Read-only members, so a unit of work whose attributes are the concrete repositories conforms.
    """

    @property
    def webhooks(self) -> WebhookRepository: ...

    @property
    def webhook_secrets(self) -> WebhookSecrets: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def commit(self) -> None: ...


class WebhookSender(Protocol):
    def send(self, url: str, body: bytes, headers: Sequence[tuple[str, str]]) -> SendOutcome:
        """POST `body` exactly as given, with `headers` added to the sender's own, once.

        Within the wall-clock deadline (10 s in production) for the whole exchange, DNS included, however
        slowly the receiver drips; at most 4 KB of the answer read (`Accept-Encoding: identity`);
        redirects returned, never followed. An `http` URL fails without connecting; the
        host must resolve only to addresses the SSRF guard permits, and the checked address is the one
        connected to. Never raises for network outcomes: they come back as `error` with a detail.
        """
        ...
