"""What the service does by itself (`Jobs`): the Dramatiq actors, the reapers and the scheduler's
periodic passes, with what each pass reports."""

from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from attrs import field, frozen

from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, RecheckId, SiteId
from siteaudit.domain.site import MonitoringSkip


@frozen
class CrawlProgress:
    """What one crawl slice left behind: the audit's pages so far, and what it queued next ("slice",
    "finalize", or "" when it queued nothing: the audit ended, or another slice holds the audit)."""

    audit_id: AuditId
    pages_crawled: int
    next: str


@frozen
class ScheduledAudits:
    """What one pass over due scheduled audits did: the audits started, the sites skipped and why
    (`last_skip_reason`)."""

    started: tuple[AuditId, ...] = ()
    skipped: Mapping[SiteId, MonitoringSkip] = field(factory=dict)


@frozen
class ProofRechecks:
    """What one pass of the daily ownership re-checks found: proofs still there, proofs missing (the
    site keeps its verification during the grace period), and sites that lost it."""

    confirmed: int = 0
    missing: int = 0
    lost: int = 0


@frozen
class Reaped:
    """What one reaper pass did."""

    slices: int = 0
    finalizations: int = 0
    failed: int = 0
    forgotten: int = 0
    dispatch_errors: int = 0

    @property
    def total(self) -> int:
        return self.slices + self.finalizations + self.failed + self.forgotten


@frozen
class RecheckRun:
    """What one run of a recheck did: `ended` when it ended (or had), `lease_lost` when another runner
    held it."""

    recheck_id: RecheckId
    fetched: int = 0
    ended: bool = False
    lease_lost: bool = False


@frozen
class RecheckReaped:
    redispatched: int = 0
    failed: int = 0
    dispatch_errors: int = 0

    @property
    def total(self) -> int:
        return self.redispatched + self.failed + self.dispatch_errors


class Jobs(Protocol):
    """What the service does by itself: the Dramatiq actors (crawl slices, finalisation, webhooks, rechecks),
    the reapers and the scheduler's periodic passes."""

    def run_crawl_slice(
        self,
        audit_id: AuditId,
        *,
        verify_token: str | None = None,
        sealed_verify_token: str | None = None,
    ) -> CrawlProgress:
        """One bounded slice of the audit's crawl, then the next slice or the finalisation queued. The
        verify token comes as the caller gave it, or sealed as it travelled in a queue message."""
        ...

    async def arun_crawl_slice(
        self,
        audit_id: AuditId,
        *,
        verify_token: str | None = None,
        sealed_verify_token: str | None = None,
    ) -> CrawlProgress:
        """`run_crawl_slice` on the caller's event loop (the worker's slice loop carries many at once)."""
        ...

    def finalize_audit(self, audit_id: AuditId) -> Audit:
        """Site-wide checks, report, settlement; idempotent on the audit's status. Then, once the audit is
        done, a scheduled audit's alert mail and, for a site with IndexNow auto-submit on, the submission
        of its new and changed pages (each once per audit)."""
        ...

    def deliver_webhooks(self, *, limit: int = 50) -> int:
        """Send the webhook deliveries that came due; how many attempts were recorded."""
        ...

    def reap_stalled_audits(self) -> Reaped:
        """Re-dispatch stalled work (or end its audit `failed`) as the reaper settings say."""
        ...

    def run_recheck(self, recheck_id: RecheckId) -> RecheckRun:
        """The worker's job: fetch the recheck's remaining URLs under its lease, then end it, settle its
        credits and its tasks. Idempotent under redelivery."""
        ...

    def reap_stalled_rechecks(self) -> RecheckReaped:
        """Re-dispatch stalled rechecks (or end them `failed`) as the reaper settings say."""
        ...

    def dispatch_due_site_audits(self, now: datetime) -> ScheduledAudits:
        """Start each scheduled audit due at `now` once, even with several schedulers running (trigger
        `schedule`, charged to the team owner, no webhook); skipped sites say why in `last_skip_reason`."""
        ...

    def recheck_site_proofs(self, now: datetime) -> ProofRechecks:
        """Read again the ownership proof of verified sites not checked for a day; a proof gone past
        the grace period (SITEAUDIT_PROOF_GRACE_DAYS) loses the verification and pauses monitoring."""
        ...

    def grant_subscription_months(self, now: datetime) -> int:
        """The scheduler's pass granting every begun month of every paid subscription period once (a
        yearly subscription's later months); the number of months granted."""
        ...

    def sync_search_consoles(self, now: datetime) -> int:
        """The daily sync (run by the scheduler): every verified site not synced for a day gets 28 days
        of page figures and sampled inspections. How many sites were synced."""
        ...

    def measure_fix_impacts(self, now: datetime) -> int:
        """The scheduler's daily pass: fix-impact events not looked at for a day are brought up to date
        with the stored console figures. How many were measured."""
        ...
