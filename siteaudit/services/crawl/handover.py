"""Slice hand-over: release the lease, then queue what comes next, the next slice or finalisation
(released first, or the next message could find the lease still held and drop itself)."""

import logging

from attrs import frozen

from siteaudit.domain.crawl import StopReason
from siteaudit.domain.ids import AuditId
from siteaudit.ports.queue import TaskQueue
from siteaudit.services.crawl.lease import SliceLease

log = logging.getLogger("siteaudit.audit")

_STOPPED = {
    StopReason.FRONTIER_EMPTY: "every URL found was visited",
    StopReason.PAGE_CAP: "the page cap was reached",
    StopReason.TIME_CAP: "the time cap was reached",
}


@frozen
class HandedOver:
    """What was queued ("slice", "finalize" or "" when nothing was), and whether the lease was lost."""

    next: str = ""
    lease_lost: bool = False


def hand_over(
    audit_id: AuditId,
    stop: StopReason | None,
    *,
    lease: SliceLease,
    queue: TaskQueue,
    verify_token: str | None,
    pages_crawled: int,
) -> HandedOver:
    """`stop` None: the slice's budget is spent, the next slice carries on. A stop moves the audit to
    finalizing (with the lease's release, one transaction) and queues finalisation; a cancelled audit
    gets nothing more. `pages_crawled` (the audit's so far) is for the hand-over's log line."""
    if stop is StopReason.CANCELLED:
        return HandedOver()
    if stop is None:
        if not lease.release():
            return HandedOver(next="slice", lease_lost=True)  # nothing queued: the new holder goes on
        queue.crawl_slice(audit_id, verify_token=verify_token)
        log.info("audit %s handed over to the next slice: %d pages so far", audit_id, pages_crawled)
        return HandedOver(next="slice")
    if not lease.stop_crawling(partial=stop.partial):
        return HandedOver(lease_lost=True)
    queue.finalize_audit(audit_id)
    log.info("audit %s handed over to finalisation: %d pages, %s", audit_id, pages_crawled, _STOPPED[stop])
    return HandedOver(next="finalize")
