"""What the service does by itself (`Jobs`): crawl slices and finalisation, webhooks, rechecks, the reapers
and the scheduler's passes."""

import asyncio
from datetime import datetime

from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, RecheckId
from siteaudit.ports.application import (
    CrawlProgress,
    ProofRechecks,
    Reaped,
    RecheckReaped,
    RecheckRun,
    ScheduledAudits,
)
from siteaudit.services import crawl as crawl_services
from siteaudit.services import finalize as finalize_services
from siteaudit.services import reaper as reaper_services
from siteaudit.services import schedule as schedule_services
from siteaudit.services import site as site_services
from siteaudit.services import webhook as webhook_services
from siteaudit.services.access import sending as access_sending
from siteaudit.services.application.base import LocalPorts
from siteaudit.services.billing import billing as billing_services
from siteaudit.services.console import source as console_services
from siteaudit.services.impact import impact as impact_services
from siteaudit.services.tasks import recheck as recheck_services
from siteaudit.services.tasks import recheck_run as recheck_run_services


class LocalJobs(LocalPorts):
    """`Jobs` over the application's ports."""

    __slots__ = ()

    def run_crawl_slice(
        self,
        audit_id: AuditId,
        *,
        verify_token: str | None = None,
        sealed_verify_token: str | None = None,
    ) -> CrawlProgress:
        return asyncio.run(
            self.arun_crawl_slice(
                audit_id, verify_token=verify_token, sealed_verify_token=sealed_verify_token
            )
        )

    async def arun_crawl_slice(
        self,
        audit_id: AuditId,
        *,
        verify_token: str | None = None,
        sealed_verify_token: str | None = None,
    ) -> CrawlProgress:
        if sealed_verify_token is not None:
            verify_token = self.sealing.unseal(sealed_verify_token)
        secret = await asyncio.to_thread(lambda: self._call(site_services.crawler_secret, audit_id))
        access = await asyncio.to_thread(lambda: self._call(access_sending.access_for_audit, audit_id))
        outcome = await crawl_services.arun_crawl_slice(
            audit_id, self.crawl_deps, verify_token=verify_token, crawler_secret=secret, access=access
        )
        return CrawlProgress(audit_id, outcome.pages_crawled, outcome.next)

    def finalize_audit(self, audit_id: AuditId) -> Audit:
        return self._call(finalize_services.finalize_audit, audit_id, advice=self.advice, bus=self._events)

    def deliver_webhooks(self, *, limit: int = 50) -> int:
        return self._call(webhook_services.deliver_due_webhooks, sender=self.webhook_sender, limit=limit)

    def reap_stalled_audits(self) -> Reaped:
        return self._call(reaper_services.reap, terms=self.reaping, handover_s=self.crawl_limits.handover_s)

    def dispatch_due_site_audits(self, now: datetime) -> ScheduledAudits:
        started, skipped = self._call(schedule_services.dispatch_due_site_audits, now, terms=self.scheduling)
        return ScheduledAudits(tuple(started), skipped)

    def recheck_site_proofs(self, now: datetime) -> ProofRechecks:
        return ProofRechecks(
            *self._call(
                schedule_services.recheck_site_proofs, now, terms=self.scheduling, console=self._console_proof
            )
        )

    def grant_subscription_months(self, now: datetime) -> int:
        return self._call(billing_services.grant_subscription_months, now)

    def sync_search_consoles(self, now: datetime) -> int:
        return console_services.sync_due_sites(now, self.console_deps)

    def run_recheck(self, recheck_id: RecheckId) -> RecheckRun:
        deps = self._call(
            recheck_run_services.RecheckDeps,
            fetcher_factory=self.fetcher_factory,
            limits=self.crawl_limits,
            terms=self.recheck_terms,
        )
        return recheck_run_services.run_recheck(recheck_id, deps)

    def reap_stalled_rechecks(self) -> RecheckReaped:
        return self._call(
            recheck_services.reap_rechecks, terms=self.reaping, handover_s=self.crawl_limits.handover_s
        )

    def measure_fix_impacts(self, now: datetime) -> int:
        return self._call(impact_services.measure_fix_impacts, now)
