"""The monitoring scheduler: start the scheduled audits that came due, and re-check ownership proofs.

Several schedulers may run at once. A due site is claimed, and its next slot written, in one transaction
over rows no other scheduler holds (the site repository's `due`), so each due audit starts once. A
scheduler that dies between the claim and the start loses that one run; the next slot comes as usual.
"""

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from siteaudit.domain.account import Caller, plan_named
from siteaudit.domain.audit import AuditRequest, AuditTrigger
from siteaudit.domain.error import ConcurrentUpdate, DomainError, InsufficientCredits, NotFound
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.site import VERIFY_ORDER, MonitoringSkip, ProofCheck, SchedulerTerms, Site, VerifyMethod
from siteaudit.ports.clock import Clock
from siteaudit.ports.network import HostResolver
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.repository import TeamAuditQuery, UnitOfWork
from siteaudit.ports.site import ProofReader
from siteaudit.services.audit import start_audit
from siteaudit.services.site import check_proof, scheduled_max_pages

log = logging.getLogger(__name__)


def _claim_due(
    now: datetime, *, uow: UnitOfWork, limit: int
) -> tuple[list[tuple[Site, Caller, int]], dict[SiteId, MonitoringSkip]]:
    """One transaction: take the due sites, move each to its next slot, record the skips decided here.
    Each site to start comes with its owner and the page cap of its scheduled audit."""
    to_start: list[tuple[Site, Caller, int]] = []
    skipped: dict[SiteId, MonitoringSkip] = {}
    with uow:
        for site in uow.sites.due(now, limit=limit):
            if site.monitoring.interval is None:
                continue
            team = uow.teams.get(site.team_id)
            plan = plan_named(uow.users.get(team.owner_id).plan)
            latest, _ = uow.audits.list(TeamAuditQuery(team=site.team_id, site=site.id, offset=0, limit=1))
            reason = site.monitoring_skip_reason(
                plan_allows_monitoring=plan.monitoring,
                previous_running=bool(latest) and not latest[0].status.ended,
            )
            claimed = site.claimed(now=now)
            if reason is not None:
                claimed = claimed.skipped(reason)
                skipped[site.id] = reason
            else:
                owner = Caller(user_id=team.owner_id, team_id=site.team_id)
                to_start.append((claimed, owner, scheduled_max_pages(site, plan, uow=uow)))
            uow.sites.save(claimed)
        uow.commit()
    return to_start, skipped


def _record(site_id: SiteId, team: TeamId, change: Callable[[Site], Site], *, uow: UnitOfWork) -> None:
    """Save `change` of the site as stored now; a site deleted meanwhile is left alone."""
    for attempt in range(3):
        with uow:
            try:
                uow.sites.save(change(uow.sites.get(site_id, team=team)))
                uow.commit()
                return
            except NotFound:
                return
            except ConcurrentUpdate:
                if attempt == 2:
                    raise


def _skipped_for_credits(site: Site) -> Site:
    return site.skipped(MonitoringSkip.INSUFFICIENT_CREDITS) if site.monitoring.interval else site


def dispatch_due_site_audits(
    now: datetime,
    *,
    uow: Callable[[], UnitOfWork],
    clock: Clock,
    queue: TaskQueue,
    terms: SchedulerTerms,
    public_only: tuple[HostResolver, AddressPolicy] | None = None,
) -> tuple[Sequence[AuditId], dict[SiteId, MonitoringSkip]]:
    """Start every scheduled audit due at `now` (trigger `schedule`, the site's saved settings, charged
    to the team owner, no webhook); the audits started and the sites skipped, with why (also on the
    site, `last_skip_reason`, and in a warning line each).

    A scheduled audit reserves what it will need, not the whole `max_pages`: its page cap is the last
    done audit's pages plus headroom (`Site.scheduled_max_pages`); settling at its end charges the pages
    fetched and refunds the rest, as for every audit."""
    started: list[AuditId] = []
    skipped: dict[SiteId, MonitoringSkip] = {}
    while True:
        to_start, skips = _claim_due(now, uow=uow(), limit=terms.batch)
        skipped.update(skips)
        for site_id, reason in skips.items():
            log.warning("scheduled audit of site %s skipped: %s", site_id, reason.value)
        for site, owner, max_pages in to_start:
            request = AuditRequest(site_id=site.id, trigger=AuditTrigger.SCHEDULE, max_pages=max_pages)
            try:
                audit = start_audit(
                    request,
                    owner,
                    uow=uow(),
                    clock=clock,
                    queue=queue,
                    site_endpoint=True,
                    public_only=public_only,
                ).audit
            except InsufficientCredits as exc:
                log.warning(
                    "scheduled audit of site %s skipped: insufficient_credits (%s)", site.id, exc.message
                )
                skipped[site.id] = MonitoringSkip.INSUFFICIENT_CREDITS
                _record(site.id, site.team_id, _skipped_for_credits, uow=uow())
                continue
            except DomainError as exc:
                log.warning("scheduled audit of site %s not started: %s", site.id, exc)
                continue
            started.append(audit.id)
            _record(
                site.id,
                site.team_id,
                lambda s: s.dispatched(now=now) if s.monitoring.interval else s,
                uow=uow(),
            )
        if len(to_start) + len(skips) < terms.batch:
            return started, skipped


def _proof_found(method: VerifyMethod, now: datetime) -> Callable[[Site], Site]:
    return lambda site: site.verify(method, now=now)[0]


def _checked_by_hand(now: datetime) -> Callable[[Site], Site]:
    return lambda site: site.verify_by_hand(now=now)[0] if site.verified else site


def recheck_site_proofs(
    now: datetime,
    *,
    uow: Callable[[], UnitOfWork],
    reader: ProofReader,
    terms: SchedulerTerms,
    console: Callable[[Site], ProofCheck] | None = None,
) -> tuple[int, int, int]:
    """Read again the proof of every verified site not checked for `terms.recheck_every`: found, the
    check is recorded (and a `lost_at` cleared); gone, `lost_at` is set, and once the grace period is
    over the site is lost (monitoring pauses). How many were confirmed, missing, lost."""
    confirmed = missing = lost = 0
    while True:
        with uow() as u:
            batch = list(u.sites.verified(limit=terms.batch, checked_before=now - terms.recheck_every))
        for site in batch:
            if site.verified_via is None:  # verified by hand (support): nothing to read
                confirmed += 1
                _record(site.id, site.team_id, _checked_by_hand(now), uow=uow())
                continue
            order = (site.verified_via,)
            matched = None
            for method in (*order, *(m for m in VERIFY_ORDER if m not in order)):
                if check_proof(site, method, reader, console).matched:
                    matched = method
                    break
            if matched is not None:
                confirmed += 1
                _record(site.id, site.team_id, _proof_found(matched, now), uow=uow())
                continue
            missing += 1
            _, event = site.proof_missing(now=now, grace=terms.proof_grace)
            if event is not None:
                lost += 1
                log.warning(
                    "site %s lost its verification: no ownership proof since %s", site.id, site.lost_at
                )
            _record(
                site.id,
                site.team_id,
                lambda s: s.proof_missing(now=now, grace=terms.proof_grace)[0] if s.verified else s,
                uow=uow(),
            )
        if len(batch) < terms.batch:
            return confirmed, missing, lost
