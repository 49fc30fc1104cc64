"""Audit leases: which worker holds an audit's work, with a deadline (see `siteaudit.domain.lease`)."""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from siteaudit.domain.ids import AuditId
from siteaudit.domain.lease import Lease


class LeaseRepository(Protocol):
    """Every method is one conditional step (one statement in SQL), safe between concurrent workers, and
    takes effect with the unit of work's commit."""

    def get(self, audit_id: AuditId) -> Lease | None:
        """The audit's lease, or None when nobody has claimed it yet."""
        ...

    def claim(self, audit_id: AuditId, holder: str, *, now: datetime, until: datetime) -> Lease | None:
        """Take the lease for `holder` until `until` when there is none, it is free, it is `holder`'s
        already, or another holder's expired at `now` (a takeover: attempts + 1). Returns the lease now
        held, or None, changing nothing, while another holder's lease is live."""
        ...

    def renew(self, audit_id: AuditId, holder: str, *, until: datetime) -> bool:
        """Move `holder`'s deadline to `until`. False, changing nothing, when `holder` no longer holds it
        (released, taken over after expiring, or requeued by the reaper)."""
        ...

    def release(self, audit_id: AuditId, holder: str, *, until: datetime) -> bool:
        """Free `holder`'s lease for the next message, which must claim it before `until`. False,
        changing nothing, when `holder` no longer holds it."""
        ...

    def stuck(self, now: datetime, *, grace_s: float, limit: int) -> Sequence[Lease]:
        """Leases (held or free) whose deadline passed more than `grace_s` before `now`, oldest first."""
        ...

    def requeue(self, lease: Lease, *, until: datetime) -> Lease | None:
        """The reaper's takeover of `lease` as it was read: free, attempts + 1, due before `until`.
        None, changing nothing, when the stored lease moved on since (claimed, renewed, another reaper)."""
        ...

    def adopt(self, audit_id: AuditId, *, until: datetime) -> Lease | None:
        """Create a free lease (one attempt) for an audit that has none. None when it has one already."""
        ...

    def forget(self, lease: Lease) -> bool:
        """Delete `lease` if it is stored unchanged. False when it moved on or is gone."""
        ...

    def unclaimed(self, *, created_before: datetime, limit: int) -> Sequence[AuditId]:
        """Queued audits created before `created_before` that have no lease: their first message was
        never consumed (lost, or a process died between commit and publish). Oldest first."""
        ...
