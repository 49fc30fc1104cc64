"""Audit leases: who is working on an audit now, until when, and how often its work had to be taken over.

One lease row per audit that has started moving. A crawl slice claims it before working, renews it between
batches (the heartbeat) and releases it when it hands over to the next message; the reaper finds leases
whose deadline passed (a killed worker, a lost message) and re-dispatches the work a bounded number of
times before ending the audit `failed`.

A lease is *held* (`holder` set: that slice must renew before `expires_at`) or *free* (`holder` None: the
next message must claim it before `expires_at`). Either way a deadline long past means the audit is stuck.
`attempts` counts how often the work was taken over after a deadline passed: by a claimant that found the
previous holder's lease expired, or by the reaper re-dispatching it. Renewing never counts.

Claim rules (one conditional statement in SQL):

| current lease                      | claim by H at `now`                         |
|------------------------------------|---------------------------------------------|
| none                               | taken, attempts 0                           |
| free                               | taken, attempts unchanged                   |
| held by H                          | extended, attempts unchanged                |
| held by another, expires_at > now  | refused                                     |
| held by another, expires_at <= now | taken over, attempts + 1                    |
"""

import enum
from datetime import datetime, timedelta
from typing import Self

from attrs import evolve, frozen

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.ids import AuditId


@frozen
class Lease:
    audit_id: AuditId
    holder: str | None  # None: free, waiting for the next message to claim it
    expires_at: datetime
    attempts: int = 0
    version: int = 0  # every change counts one: the reaper's conditional takeover compares it

    @property
    def free(self) -> bool:
        return self.holder is None

    def live_for_others(self, holder: str, now: datetime) -> bool:
        """Another holder's lease that has not expired: `holder` must keep out."""
        return self.holder is not None and self.holder != holder and now < self.expires_at

    def stuck(self, now: datetime, *, grace_s: float) -> bool:
        """Its deadline passed more than `grace_s` ago: nobody renewed or claimed it in time."""
        return now > self.expires_at + timedelta(seconds=grace_s)

    def claimed(self, holder: str, *, now: datetime, until: datetime) -> Self | None:
        """The lease after `holder` claims it at `now`, or None when another live holder keeps it."""
        if self.live_for_others(holder, now):
            return None
        taken_over = self.holder is not None and self.holder != holder
        return evolve(
            self,
            holder=holder,
            expires_at=until,
            attempts=self.attempts + (1 if taken_over else 0),
            version=self.version + 1,
        )

    def renewed(self, holder: str, *, until: datetime) -> Self | None:
        """Extended for its holder (even past its deadline, as long as nobody took it), else None."""
        if self.holder != holder:
            return None
        return evolve(self, expires_at=until, version=self.version + 1)

    def released(self, holder: str, *, until: datetime) -> Self | None:
        """Freed by its holder for the next message, which must claim it before `until`; else None."""
        if self.holder != holder:
            return None
        return evolve(self, holder=None, expires_at=until, version=self.version + 1)

    def requeued(self, *, until: datetime) -> Self:
        """Taken over by the reaper: free, one more attempt, the re-dispatched work due before `until`."""
        return evolve(
            self, holder=None, expires_at=until, attempts=self.attempts + 1, version=self.version + 1
        )


def first_claim(audit_id: AuditId, holder: str, *, until: datetime) -> Lease:
    """The lease of an audit nobody claimed before."""
    return Lease(audit_id=audit_id, holder=holder, expires_at=until, attempts=0, version=1)


def adopted(audit_id: AuditId, *, until: datetime) -> Lease:
    """The reaper's lease for a queued audit nobody ever claimed: free, counted as one attempt."""
    return Lease(audit_id=audit_id, holder=None, expires_at=until, attempts=1, version=1)


def is_stalled(audit: Audit, lease: Lease | None, now: datetime) -> bool:
    """Whether the audit's work stopped: it has not ended, and its lease's deadline passed with nobody
    taking the audit over (a holder that did not renew in time, or a handed-over or re-dispatched audit
    no message claimed in time). An audit without a lease was promised no deadline yet: not stalled."""
    return not audit.status.ended and lease is not None and lease.expires_at <= now


class ReapAction(enum.StrEnum):
    SLICE = "slice"  # publish a crawl slice again
    FINALIZE = "finalize"  # publish the finalisation again
    FAIL = "fail"  # attempts spent: end the audit `failed` (`reaped: ...`), settling what was fetched
    FORGET = "forget"  # the audit ended: the lease is only clutter


@frozen
class ReapTerms:
    """When the reaper steps in and how often it looks (the SITEAUDIT_REAP_* settings)."""

    grace_s: float  # how long past its deadline a lease may be before the reaper steps in
    max_attempts: int  # takeovers of stalled work before the audit ends `failed` (`reaped: ...`)
    queued_s: float  # how long a queued audit may wait unclaimed before it is dispatched again
    every_s: float  # how often each worker process runs the reaper


def reap_action(status: AuditStatus, lease: Lease, *, max_attempts: int) -> ReapAction:
    """What the reaper does with a stuck lease of an audit in `status`."""
    if status.ended:
        return ReapAction.FORGET
    if lease.attempts >= max_attempts:
        return ReapAction.FAIL
    return ReapAction.FINALIZE if status is AuditStatus.FINALIZING else ReapAction.SLICE


def reap_reason(lease: Lease) -> str:
    """The `reaped: <reason>` detail of an audit the reaper ends."""
    state = "unclaimed" if lease.free else f"held by {lease.holder}"
    return f"work stalled {lease.attempts + 1} times (last {state}, deadline {lease.expires_at.isoformat()})"
