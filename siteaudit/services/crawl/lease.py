"""One slice at a time per audit: a slice claims the audit's lease (`siteaudit.domain.lease`) before
anything else, renews it between batches, and releases it as it hands over (or fails).

A slice that finds its lease taken (it stalled past the deadline and the reaper or a redelivered message
took over) stops without writing progress or queueing anything: the new holder carries on.
"""

import os
import socket
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from attrs import Factory, define, field

from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.ids import AuditId
from siteaudit.ports.clock import Clock
from siteaudit.ports.repository import UnitOfWork


def slice_holder() -> str:
    """A lease holder name unique to one slice run; host and process first, for the operator's eye."""
    return f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


class LeaseLost(Exception):
    """Another slice holds the audit's lease now."""


@define(eq=False)
class SliceLease:
    """This slice's hold on the audit: claimed once, renewed (throttled) between batches, released once.

    `lease_s` and `handover_s` of `limits` are the terms: renewed at least every `lease_s / 3` seconds,
    a released lease waits up to `handover_s` for the next message."""

    audit_id: AuditId
    holder: str
    uow: Callable[[], UnitOfWork] = field(kw_only=True)
    clock: Clock = field(kw_only=True)
    limits: CrawlLimits = field(kw_only=True)
    _renewed_at: datetime = field(
        init=False, default=Factory(lambda lease: lease.clock.now(), takes_self=True)
    )
    held: bool = field(init=False, default=False)

    def _until(self, seconds: float) -> datetime:
        return self.clock.now() + timedelta(seconds=seconds)

    def claim(self) -> bool:
        with self.uow() as uow:
            now = self.clock.now()
            lease = uow.leases.claim(
                self.audit_id, self.holder, now=now, until=now + timedelta(seconds=self.limits.lease_s)
            )
            uow.commit()
        self._renewed_at = now
        self.held = lease is not None
        return self.held

    def beat(self) -> None:
        """The heartbeat between batches. Raises LeaseLost when the lease is no longer this slice's."""
        now = self.clock.now()
        if (now - self._renewed_at).total_seconds() < self.limits.lease_s / 3:
            return
        with self.uow() as uow:
            renewed = uow.leases.renew(self.audit_id, self.holder, until=self._until(self.limits.lease_s))
            if renewed:
                uow.audits.note_progress(self.audit_id, at=now)
            uow.commit()
        if not renewed:
            self.held = False
            raise LeaseLost(self.audit_id)
        self._renewed_at = now

    def release(self) -> bool:
        """Free the lease for the next message; False when it was no longer this slice's."""
        if not self.held:
            return False
        with self.uow() as uow:
            released = uow.leases.release(
                self.audit_id, self.holder, until=self._until(self.limits.handover_s)
            )
            uow.commit()
        self.held = False
        return released

    def stop_crawling(self, *, partial: bool) -> bool:
        """Release the lease and move the audit to finalizing in one transaction (False: lease lost), so a
        slice that lost its lease can never end another slice's crawl."""
        with self.uow() as uow:
            if not uow.leases.release(self.audit_id, self.holder, until=self._until(self.limits.handover_s)):
                self.held = False
                return False
            audit = uow.audits.get_any(self.audit_id).stop_crawling(partial=partial, now=self.clock.now())
            uow.audits.save(audit)
            uow.commit()
        self.held = False
        return True
