"""Webhook deliveries and attempts in SQL, and the per-person signing secrets, encrypted at rest.

Claiming is `SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL: two dispatchers claiming at once lock
disjoint rows, and each moves its rows' lease and version before committing. SQLite ignores the clause;
there the transaction already holds the single write lock (BEGIN IMMEDIATE), so claims queue instead.
"""

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

from attrs import evolve
from sqlalchemy import Connection, insert, literal, or_, select, update
from sqlalchemy.exc import IntegrityError

from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql.dialect import dialect_insert, insert_ignoring_conflicts
from siteaudit.adapters.sql.rows import SqlRepository, found, reader, row_values
from siteaudit.adapters.sql.tables import UtcDateTime, webhook_attempts, webhook_deliveries, webhook_secrets
from siteaudit.domain.error import ConcurrentUpdate, Conflict, NotFound
from siteaudit.domain.ids import AuditId, UserId
from siteaudit.domain.webhook import (
    DeliveryStatus,
    WebhookAttempt,
    WebhookDelivery,
    WebhookDeliveryId,
)

delivery_from_row: Final = reader(WebhookDelivery)


def delivery_values(delivery: WebhookDelivery) -> dict[str, Any]:
    return row_values(delivery, leave_out=("id",))


attempt_from_row: Final = reader(WebhookAttempt)


class SqlWebhookRepository(SqlRepository):
    def add(self, delivery: WebhookDelivery) -> WebhookDelivery:
        values = delivery_values(delivery)
        if delivery.id != 0:
            values["id"] = delivery.id
        conn = self._c()
        try:
            with conn.begin_nested():
                new_id = conn.execute(
                    dialect_insert(conn, webhook_deliveries)
                    .values(values)
                    .on_conflict_do_nothing(index_elements=[webhook_deliveries.c.audit_id])
                    .returning(webhook_deliveries.c.id)
                ).scalar_one_or_none()
        except IntegrityError:
            raise Conflict(f"webhook delivery {delivery.id} exists") from None
        if new_id is None:
            existing = self.of_audit(delivery.audit_id)
            assert existing is not None
            return existing
        return evolve(delivery, id=WebhookDeliveryId(new_id))

    def get(self, delivery_id: WebhookDeliveryId) -> WebhookDelivery:
        wanted = webhook_deliveries.c.id == delivery_id
        row = found(self._c(), webhook_deliveries, wanted, entity="webhook delivery", key=delivery_id)
        return delivery_from_row(row)

    def of_audit(self, audit_id: AuditId) -> WebhookDelivery | None:
        query = select(webhook_deliveries).where(webhook_deliveries.c.audit_id == audit_id)
        row = self._c().execute(query).first()
        return None if row is None else delivery_from_row(row)

    def claim_due(self, now: datetime, limit: int, lease_s: float) -> Sequence[WebhookDelivery]:
        if limit <= 0:
            return []
        table = webhook_deliveries
        moment = literal(now, UtcDateTime)
        query = (
            select(table)
            .where(
                table.c.status == DeliveryStatus.PENDING.value,
                table.c.next_attempt_at <= moment,
                or_(table.c.lease_until.is_(None), table.c.lease_until <= moment),
            )
            .order_by(table.c.next_attempt_at, table.c.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        conn = self._c()
        claimed = [delivery_from_row(row).lease(now=now, seconds=lease_s) for row in conn.execute(query)]
        for delivery in claimed:
            conn.execute(
                update(table)
                .where(table.c.id == delivery.id)
                .values(lease_until=delivery.lease_until, version=delivery.version)
            )
        return claimed

    def save(self, delivery: WebhookDelivery) -> None:
        table = webhook_deliveries
        written = self._c().execute(
            update(table)
            .where(table.c.id == delivery.id, table.c.version == delivery.version - 1)
            .values(delivery_values(delivery))
        )
        if written.rowcount != 1:
            self.get(delivery.id)
            raise ConcurrentUpdate("webhook delivery", delivery.id)

    def add_attempt(self, attempt: WebhookAttempt) -> None:
        conn = self._c()
        conn.execute(
            insert_ignoring_conflicts(conn, webhook_attempts).values(
                delivery_id=attempt.delivery_id,
                number=attempt.number,
                audit_id=attempt.audit_id,
                at=attempt.at,
                status_code=attempt.status_code,
                error=attempt.error,
                detail=attempt.detail,
                duration_ms=attempt.duration_ms,
                move=attempt.move.value,
            )
        )

    def attempts(self, audit_id: AuditId) -> Sequence[WebhookAttempt]:
        rows = self._c().execute(
            select(webhook_attempts)
            .where(webhook_attempts.c.audit_id == audit_id)
            .order_by(webhook_attempts.c.number)
        )
        return [attempt_from_row(r) for r in rows]


class SqlWebhookSecrets(SqlRepository):
    """Secrets sealed with SecretBox (SITEAUDIT_SECRET_KEY): a copy of the database alone does not sign.

    `box` is a callable so that a unit of work that never touches secrets never needs the key.
    """

    def __init__(self, connection: Callable[[], Connection], box: Callable[[], SecretBox]) -> None:
        super().__init__(connection)
        self._box = box

    def create(self, user_id: UserId, secret: str) -> None:
        conn = self._c()
        sealed = self._box().encrypt(secret)
        try:
            with conn.begin_nested():
                conn.execute(insert(webhook_secrets).values(user_id=user_id, sealed=sealed))
        except IntegrityError:
            if self._sealed(user_id) is None:
                raise  # not a second secret: the person does not exist
            raise Conflict(f"user {user_id} already has a webhook secret") from None

    def rotate(self, user_id: UserId, secret: str) -> None:
        written = self._c().execute(
            update(webhook_secrets)
            .where(webhook_secrets.c.user_id == user_id)
            .values(sealed=self._box().encrypt(secret))
        )
        if written.rowcount != 1:
            raise NotFound("webhook secret", user_id)

    def _sealed(self, user_id: UserId) -> str | None:
        query = select(webhook_secrets.c.sealed).where(webhook_secrets.c.user_id == user_id)
        sealed: str | None = self._c().execute(query).scalar_one_or_none()
        return sealed

    def get(self, user_id: UserId) -> str:
        sealed = self._sealed(user_id)
        if sealed is None:
            raise NotFound("webhook secret", user_id)
        return self._box().decrypt(sealed)
