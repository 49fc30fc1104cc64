"""In-memory audit leases, in a table with a per-transaction overlay (the store's lock makes each step atomic)."""

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from siteaudit.adapters.memory.table import Table
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.ids import AuditId
from siteaudit.domain.lease import Lease, adopted, first_claim


class MemoryLeaseRepository:
    def __init__(self, leases: Table[AuditId, Lease], audits: Callable[[], Iterable[Audit]]) -> None:
        self._t = leases
        self._audits = audits  # for `unclaimed`: the audits table as this transaction sees it

    def get(self, audit_id: AuditId) -> Lease | None:
        return self._t.get(audit_id)

    def claim(self, audit_id: AuditId, holder: str, *, now: datetime, until: datetime) -> Lease | None:
        current = self._t.get(audit_id)
        lease = (
            first_claim(audit_id, holder, until=until)
            if current is None
            else current.claimed(holder, now=now, until=until)
        )
        if lease is not None:
            self._t.put(audit_id, lease)
        return lease

    def renew(self, audit_id: AuditId, holder: str, *, until: datetime) -> bool:
        return self._held(audit_id, lambda lease: lease.renewed(holder, until=until))

    def release(self, audit_id: AuditId, holder: str, *, until: datetime) -> bool:
        return self._held(audit_id, lambda lease: lease.released(holder, until=until))

    def _held(self, audit_id: AuditId, move: Callable[[Lease], Lease | None]) -> bool:
        """Stage `move` of the audit's lease, if it has one and `move` allows it (its holder's own)."""
        current = self._t.get(audit_id)
        lease = None if current is None else move(current)
        if lease is not None:
            self._t.put(audit_id, lease)
        return lease is not None

    def stuck(self, now: datetime, *, grace_s: float, limit: int) -> Sequence[Lease]:
        found = sorted(self._t.find(lambda lease: lease.stuck(now, grace_s=grace_s)), key=_oldest)
        return found[: max(0, limit)]

    def requeue(self, lease: Lease, *, until: datetime) -> Lease | None:
        if self._t.get(lease.audit_id) != lease:
            return None
        taken = lease.requeued(until=until)
        self._t.put(lease.audit_id, taken)
        return taken

    def adopt(self, audit_id: AuditId, *, until: datetime) -> Lease | None:
        if self._t.get(audit_id) is not None:
            return None
        lease = adopted(audit_id, until=until)
        self._t.put(audit_id, lease)
        return lease

    def forget(self, lease: Lease) -> bool:
        if self._t.get(lease.audit_id) != lease:
            return False
        self._t.delete(lease.audit_id)
        return True

    def unclaimed(self, *, created_before: datetime, limit: int) -> Sequence[AuditId]:
        waiting = sorted(
            (
                audit
                for audit in self._audits()
                if audit.status is AuditStatus.QUEUED
                and audit.created_at < created_before
                and self._t.get(audit.id) is None
            ),
            key=lambda audit: (audit.created_at, audit.id),
        )
        return [audit.id for audit in waiting[: max(0, limit)]]


def _oldest(lease: Lease) -> tuple[datetime, int]:
    return lease.expires_at, lease.audit_id
