"""In-memory webhook deliveries, attempts and signing secrets, in tables with a per-transaction overlay.

Wiring into the application's memory unit of work (one lock for everything a transaction touches):

    webhook_store = MemoryWebhookStore(lock=memory_store.lock)
    # in MemoryUnitOfWork.__init__ (`_guard`: refused outside `with`, as on SQL):
    self.webhooks = self._guard(MemoryWebhookRepository(webhook_store))
    self.webhook_secrets = self._guard(MemoryWebhookSecrets(webhook_store))
    # and _tables() also returns webhook_store.tables()

On its own (tests, embedders without the rest), MemoryWebhookUnitOfWork is the same thing standing alone.
"""

import threading
from collections.abc import Sequence
from datetime import datetime

from attrs import evolve

from siteaudit.adapters.memory.table import Table
from siteaudit.adapters.memory.transaction import MemoryTransaction
from siteaudit.domain.error import ConcurrentUpdate, Conflict
from siteaudit.domain.ids import AuditId, UserId
from siteaudit.domain.webhook import WebhookAttempt, WebhookDelivery, WebhookDeliveryId


class MemoryWebhookStore:
    """The committed tables. `lock` is the lock of the store whose transactions also write these tables."""

    def __init__(self, lock: "threading.RLock | None" = None) -> None:
        self.lock = lock if lock is not None else threading.RLock()
        self.deliveries: Table[WebhookDeliveryId, WebhookDelivery] = Table()
        self.attempts: Table[tuple[WebhookDeliveryId, int], WebhookAttempt] = Table()
        self.secrets: Table[UserId, str] = Table()

    def tables(self) -> Sequence[Table]:  # type: ignore[type-arg]
        return [self.deliveries, self.attempts, self.secrets]


class MemoryWebhookRepository:
    def __init__(self, store: MemoryWebhookStore) -> None:
        self._deliveries = store.deliveries
        self._attempts = store.attempts

    def add(self, delivery: WebhookDelivery) -> WebhookDelivery:
        existing = self.of_audit(delivery.audit_id)
        if existing is not None:
            return existing
        if delivery.id == 0:
            delivery = evolve(delivery, id=WebhookDeliveryId(self._deliveries.next_id()))
        elif self._deliveries.get(delivery.id) is not None:
            raise Conflict(f"webhook delivery {delivery.id} exists")
        self._deliveries.put(delivery.id, delivery)
        return delivery

    def get(self, delivery_id: WebhookDeliveryId) -> WebhookDelivery:
        delivery = self._deliveries.found(delivery_id, "webhook delivery")
        return delivery

    def of_audit(self, audit_id: AuditId) -> WebhookDelivery | None:
        return next(self._deliveries.find(lambda d: d.audit_id == audit_id), None)

    def claim_due(self, now: datetime, limit: int, lease_s: float) -> Sequence[WebhookDelivery]:
        due = sorted(self._deliveries.find(lambda d: d.is_due(now)), key=lambda d: (d.next_attempt_at, d.id))
        claimed = [delivery.lease(now=now, seconds=lease_s) for delivery in due[: max(0, limit)]]
        for delivery in claimed:
            self._deliveries.put(delivery.id, delivery)
        return claimed

    def save(self, delivery: WebhookDelivery) -> None:
        stored = self.get(delivery.id)
        if stored.version != delivery.version - 1:
            raise ConcurrentUpdate("webhook delivery", delivery.id)
        self._deliveries.put(delivery.id, delivery)

    def add_attempt(self, attempt: WebhookAttempt) -> None:
        key = (attempt.delivery_id, attempt.number)
        if self._attempts.get(key) is None:
            self._attempts.put(key, attempt)

    def attempts(self, audit_id: AuditId) -> Sequence[WebhookAttempt]:
        return sorted(self._attempts.find(lambda a: a.audit_id == audit_id), key=lambda a: a.number)


class MemoryWebhookSecrets:
    """Plaintext in memory: nothing here outlives the process, so there is nothing to encrypt."""

    def __init__(self, store: MemoryWebhookStore) -> None:
        self._secrets = store.secrets

    def create(self, user_id: UserId, secret: str) -> None:
        if self._secrets.get(user_id) is not None:
            raise Conflict(f"user {user_id} already has a webhook secret")
        self._secrets.put(user_id, secret)

    def rotate(self, user_id: UserId, secret: str) -> None:
        self.get(user_id)
        self._secrets.put(user_id, secret)

    def get(self, user_id: UserId) -> str:
        secret = self._secrets.found(user_id, "webhook secret")
        return secret


class MemoryWebhookUnitOfWork(MemoryTransaction):
    """A transaction over a MemoryWebhookStore alone: holds its lock from enter to exit. Its repositories,
    `commit` and `rollback` raise RuntimeError outside `with`, as SqlUnitOfWork's do."""

    def __init__(self, store: MemoryWebhookStore) -> None:
        super().__init__(store.lock)
        self.store = store
        self.webhooks = self._guard(MemoryWebhookRepository(store))
        self.webhook_secrets = self._guard(MemoryWebhookSecrets(store))

    def _tables(self) -> Sequence[Table]:  # type: ignore[type-arg]
        return self.store.tables()
