"""The reaper: audits whose work stalled (a killed worker, a lost message) are re-dispatched, a bounded
number of times, then ended `failed` (`reaped: ...`) with what they fetched charged and the rest refunded.

It runs periodically in every worker process; two reapers racing over one lease are harmless, because
each takeover is one conditional step on the lease as it was read (`requeue`, `adopt`, `forget`), and
only the reaper whose step succeeded publishes.
"""

import logging
from datetime import datetime, timedelta

from attrs import frozen

from siteaudit.domain.audit import Audit, reaped
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import AuditId
from siteaudit.domain.lease import Lease, ReapAction, ReapTerms, reap_action, reap_reason
from siteaudit.ports.application import Reaped
from siteaudit.ports.clock import Clock
from siteaudit.ports.metrics import NO_METRICS, Metrics
from siteaudit.ports.queue import DispatchError, TaskQueue
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.audit import fail_audit

log = logging.getLogger("siteaudit.reaper")


def reap(
    *,
    uow: UnitOfWork,
    queue: TaskQueue,
    clock: Clock,
    terms: ReapTerms,
    handover_s: float,
    batch: int = 100,
    metrics: Metrics = NO_METRICS,
) -> Reaped:
    """One pass: leases stuck for more than `terms.grace_s` past their deadline are re-dispatched (a
    crawl slice, or the finalisation of a `finalizing` audit) while fewer than `terms.max_attempts`
    takeovers were counted, else their audit ends `failed` (`reaped: ...`) and settles; then queued
    audits nobody claimed for `terms.queued_s` are dispatched again. Re-dispatched work must be claimed
    (or a finalisation finished) within `handover_s`. A publish that fails is logged and counted: the
    lease it took expires again and a later pass retries (one more attempt).
    """
    grace_s, queued_s = terms.grace_s, terms.queued_s
    policy = _Policy(grace_s, terms.max_attempts, handover_s, metrics)
    now = clock.now()
    counts = {"slices": 0, "finalizations": 0, "failed": 0, "forgotten": 0, "dispatch_errors": 0}
    with uow:
        stuck = list(uow.leases.stuck(now, grace_s=grace_s, limit=batch))
    for lease in stuck:
        outcome = _reap_lease(lease, uow=uow, queue=queue, clock=clock, policy=policy)
        if outcome:
            counts[outcome] += 1
    with uow:
        waiting = list(uow.leases.unclaimed(created_before=now - timedelta(seconds=queued_s), limit=batch))
    for audit_id in waiting:
        with uow:
            adopted = uow.leases.adopt(audit_id, until=_after(clock, handover_s))
            uow.commit()
        if adopted is not None:
            log.warning("audit %s waited %s s unclaimed: dispatching it again", audit_id, queued_s)
            counts["slices" if _publish(queue, ReapAction.SLICE, audit_id) else "dispatch_errors"] += 1
    return Reaped(**counts)


@frozen
class _Policy:
    grace_s: float
    max_attempts: int
    handover_s: float
    metrics: Metrics  # counts the credits of the audits it fails


def _after(clock: Clock, seconds: float) -> datetime:
    return clock.now() + timedelta(seconds=seconds)


def _reap_lease(
    lease: Lease, *, uow: UnitOfWork, queue: TaskQueue, clock: Clock, policy: _Policy
) -> str | None:
    """Handle one stuck lease; the name of the count it adds to, or None when another step won."""
    with uow:
        try:
            audit: Audit | None = uow.audits.get_any(lease.audit_id)
        except NotFound:
            audit = None
        if audit is None:
            return "forgotten" if _forget(lease, uow) else None
        action = reap_action(audit.status, lease, max_attempts=policy.max_attempts)
        if action is ReapAction.FORGET:
            return "forgotten" if _forget(lease, uow) else None
        # Taken first (also before failing), so a concurrent reaper cannot act on the same lease too.
        taken = uow.leases.requeue(lease, until=_after(clock, policy.handover_s))
        if taken is None:
            return None
        uow.commit()
    if action is ReapAction.FAIL:
        ended = fail_audit(
            lease.audit_id, reaped(reap_reason(lease)), uow=uow, clock=clock, metrics=policy.metrics
        )
        log.warning("audit %s reaped: %s", lease.audit_id, ended.failure_reason)
        with uow:
            _forget(taken, uow)
        return "failed"
    log.warning(
        "audit %s stalled (lease %s, attempt %s): dispatching its %s again",
        lease.audit_id,
        lease.holder or "free",
        lease.attempts + 1,
        action.value,
    )
    if not _publish(queue, action, lease.audit_id):
        return "dispatch_errors"
    return "finalizations" if action is ReapAction.FINALIZE else "slices"


def _forget(lease: Lease, uow: UnitOfWork) -> bool:
    forgotten = uow.leases.forget(lease)
    uow.commit()
    return forgotten


def _publish(queue: TaskQueue, action: ReapAction, audit_id: AuditId) -> bool:
    try:
        if action is ReapAction.FINALIZE:
            queue.finalize_audit(audit_id)
        else:
            # The caller's verify token travelled only in the lost message: the re-dispatched slice
            # crawls without it (a firewall that needed it may block the rest of the crawl).
            queue.crawl_slice(audit_id)
    except DispatchError as error:
        log.error("audit %s could not be dispatched again: %s", audit_id, error)
        return False
    return True
