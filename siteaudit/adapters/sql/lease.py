"""Audit leases in SQL: every step one conditional statement, so concurrent workers and reapers never both win."""

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import and_, case, delete, exists, or_, select, update

from siteaudit.adapters.sql.dialect import dialect_insert
from siteaudit.adapters.sql.rows import SqlRepository, reader, row_values
from siteaudit.adapters.sql.tables import audit_leases, audits
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId
from siteaudit.domain.lease import Lease, adopted, first_claim

_L = audit_leases


lease_from_row: Final = reader(Lease)


def lease_values(lease: Lease) -> dict[str, Any]:
    """The row of `lease`: its columns are its fields, named and typed alike."""
    return row_values(lease)


def _unchanged(lease: Lease) -> Any:
    """The stored row is exactly `lease` (the version alone could repeat after forget and adopt)."""
    return and_(
        _L.c.audit_id == lease.audit_id,
        _L.c.holder.is_not_distinct_from(lease.holder),
        _L.c.expires_at == lease.expires_at,
        _L.c.attempts == lease.attempts,
        _L.c.version == lease.version,
    )


class SqlLeaseRepository(SqlRepository):
    def get(self, audit_id: AuditId) -> Lease | None:
        row = self._c().execute(select(_L).where(_L.c.audit_id == audit_id)).first()
        return None if row is None else lease_from_row(row)

    def claim(self, audit_id: AuditId, holder: str, *, now: datetime, until: datetime) -> Lease | None:
        conn = self._c()
        statement = dialect_insert(conn, _L).values(lease_values(first_claim(audit_id, holder, until=until)))
        taken_over = and_(_L.c.holder.is_not(None), _L.c.holder != holder)
        row = conn.execute(
            statement.on_conflict_do_update(
                index_elements=[_L.c.audit_id],
                set_={
                    "holder": holder,
                    "expires_at": until,
                    "attempts": _L.c.attempts + case((taken_over, 1), else_=0),
                    "version": _L.c.version + 1,
                },
                where=or_(_L.c.holder.is_(None), _L.c.holder == holder, _L.c.expires_at <= now),
            ).returning(*_L.columns)
        ).first()
        return None if row is None else lease_from_row(row)

    def _move_held(self, audit_id: AuditId, holder: str, values: dict[str, Any]) -> bool:
        written = self._c().execute(
            update(_L)
            .where(_L.c.audit_id == audit_id, _L.c.holder == holder)
            .values(version=_L.c.version + 1, **values)
        )
        return written.rowcount == 1

    def renew(self, audit_id: AuditId, holder: str, *, until: datetime) -> bool:
        return self._move_held(audit_id, holder, {"expires_at": until})

    def release(self, audit_id: AuditId, holder: str, *, until: datetime) -> bool:
        return self._move_held(audit_id, holder, {"expires_at": until, "holder": None})

    def stuck(self, now: datetime, *, grace_s: float, limit: int) -> Sequence[Lease]:
        rows = self._c().execute(
            select(_L)
            .where(_L.c.expires_at < now - timedelta(seconds=grace_s))
            .order_by(_L.c.expires_at, _L.c.audit_id)
            .limit(max(0, limit))
        )
        return [lease_from_row(r) for r in rows]

    def requeue(self, lease: Lease, *, until: datetime) -> Lease | None:
        taken = lease.requeued(until=until)
        written = self._c().execute(update(_L).where(_unchanged(lease)).values(lease_values(taken)))
        return taken if written.rowcount == 1 else None

    def adopt(self, audit_id: AuditId, *, until: datetime) -> Lease | None:
        conn = self._c()
        lease = adopted(audit_id, until=until)
        row = conn.execute(
            dialect_insert(conn, _L)
            .values(lease_values(lease))
            .on_conflict_do_nothing(index_elements=[_L.c.audit_id])
            .returning(_L.c.audit_id)
        ).first()
        return None if row is None else lease

    def forget(self, lease: Lease) -> bool:
        return self._c().execute(delete(_L).where(_unchanged(lease))).rowcount == 1

    def unclaimed(self, *, created_before: datetime, limit: int) -> Sequence[AuditId]:
        rows = self._c().execute(
            select(audits.c.id)
            .where(
                audits.c.status == AuditStatus.QUEUED.value,
                audits.c.created_at < created_before,
                ~exists().where(_L.c.audit_id == audits.c.id),
            )
            .order_by(audits.c.created_at, audits.c.id)
            .limit(max(0, limit))
        )
        return [AuditId(r.id) for r in rows]
