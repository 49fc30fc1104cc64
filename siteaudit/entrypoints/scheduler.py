"""The monitoring scheduler door: due scheduled audits and the daily ownership re-checks, every
SITEAUDIT_SCHEDULER_EVERY_S. `siteaudit serve` runs it in-process; production runs one or more
`siteaudit scheduler` processes (each due audit still starts once: the application claims due sites
under row locks)."""

import logging
import signal
import threading
from collections.abc import Callable
from datetime import datetime

from siteaudit.bootstrap import App
from siteaudit.entrypoints.worker import Periodic
from siteaudit.ports.application import Jobs, ScheduledAudits

log = logging.getLogger("siteaudit.scheduler")


def scheduler_pass(application: Jobs, now: Callable[[], datetime]) -> Callable[[], ScheduledAudits]:
    """One pass: start the scheduled audits that came due, re-check the proofs due a check, then sync
        the search console of the verified sites due a sync, then measure the fix-impact events due, then grant the subscription
    months that began. The
        pass answers what it did with the scheduled audits."""

    def run_scheduler() -> ScheduledAudits:
        at = now()
        dispatched = application.dispatch_due_site_audits(at)
        if dispatched.started or dispatched.skipped:
            log.info(
                "scheduler: %d scheduled audits started, %d skipped %s",
                len(dispatched.started),
                len(dispatched.skipped),
                {int(site): reason.value for site, reason in dispatched.skipped.items()},
            )
        rechecked = application.recheck_site_proofs(at)
        if rechecked.confirmed or rechecked.missing:
            log.info("scheduler: ownership proofs re-checked: %s", rechecked)
        # The search-console daily sync: verified sites not synced for a day.
        synced = application.sync_search_consoles(at)
        if synced:
            log.info("scheduler: search console synced for %d sites", synced)
        # Fix impact (docs/rest-api.md "Fix impact"): events not measured for a day read the figures the sync
        # stored.
        measured = application.measure_fix_impacts(at)
        if measured:
            log.info("scheduler: fix impact measured for %d events", measured)
        # A subscription's tier credits for each month of its paid period (a yearly one's later months).
        granted = application.grant_subscription_months(at)
        if granted:
            log.info("scheduler: subscription credits granted for %d months", granted)
        return dispatched

    return run_scheduler


def start_scheduler(app: App) -> Periodic:
    """The scheduler on a daemon thread of this process (how `serve` runs it)."""
    periodic = Periodic([(app.settings.scheduling.every_s, scheduler_pass(app.application, app.clock.now))])
    periodic.start()
    return periodic


def run_scheduler(app: App) -> None:
    """`siteaudit scheduler`: run until SIGTERM or SIGINT."""
    periodic = start_scheduler(app)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    log.info("scheduler running every %gs", app.settings.scheduling.every_s)
    stop.wait()
    periodic.stop()
