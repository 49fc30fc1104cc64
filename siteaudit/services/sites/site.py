"""The site use cases' handlers (docs/rest-api.md "Registered sites"): register, list, read, change and
delete a team's sites, show and check their ownership proofs, and audit a site with its saved settings.
The rules shared with the flat modules (a public address, the proofs read, the crawler secret, the
support's operations) stay in `services/site.py`; the audit starts through `services/audit.py`."""

from collections.abc import Callable
from typing import Final

from siteaudit.domain.account import Caller, Plan, plan_named
from siteaudit.domain.audit import AuditRequest, AuditStatus
from siteaudit.domain.error import ConcurrentUpdate, ValidationFailed
from siteaudit.domain.extraction import check_rules
from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.site import VERIFY_ORDER, ProofCheck, Site, check_site_count, parse_site_url
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.network import HostResolver
from siteaudit.ports.parse import PageParser
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.repository import TeamAuditQuery, UnitOfWork
from siteaudit.ports.site import ProofReader
from siteaudit.ports.usecases import copy_named
from siteaudit.services import audit as audit_services
from siteaudit.services.audits.answers import AuditRow, AuditStarted
from siteaudit.services.site import check_proof, require_public_address, scheduled_max_pages
from siteaudit.services.sites import answers
from siteaudit.services.sites.usecases import (
    CrawlSite,
    DeleteSite,
    GetSite,
    GetSiteVerification,
    ListSites,
    RegisterSite,
    UpdateSite,
    VerifySite,
)

# Health scores shown in a site's trend.
TREND_LENGTH: Final = 12

_TOKEN_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

PublicOnly = tuple[HostResolver, AddressPolicy]


def _owner_plan(uow: UnitOfWork, team_id: TeamId) -> Plan:
    """Site rules follow the team owner's plan: the owner pays for the team's site audits."""
    return plan_named(uow.users.get(uow.teams.get(team_id).owner_id).plan)


def register_site(
    asked: RegisterSite,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
    public_only: PublicOnly | None = None,
) -> answers.RegisteredSite:
    """Register a site for the caller's team, unverified, with a fresh ownership token.

    Raises InvalidUrl (also for a host that is not public, when `public_only` is given),
    ValidationFailed, PlanLimitMaxPages, PlanLimitSites or SiteExists.
    """
    if public_only is not None:
        require_public_address(parse_site_url(asked.url).url, *public_only)
    with uow:
        team = uow.teams.get(caller.team_id)
        plan = plan_named(uow.users.get(team.owner_id).plan)
        check_site_count(uow.sites.count(team=team.id), plan.max_sites)
        site = Site.register(
            site_id=SiteId(0),
            team_id=team.id,
            url=asked.url,
            verify_token=secrets.token(32, _TOKEN_ALPHABET),
            crawler_secret_ref=secrets.token_hex(16),
            plan_page_limit=plan.max_pages_per_audit,
            now=clock.now(),
            max_pages=asked.max_pages,
            max_rps=asked.max_rps,
            alert_email=asked.alert_email,
        )
        site = uow.sites.add(site)
        uow.commit()
    return answers.site_answer(answers.RegisteredSite, site, verify=answers.FileProofSteps.of(site))


def list_sites(asked: ListSites, caller: Caller, *, uow: UnitOfWork) -> answers.SiteList:
    with uow:
        sites = uow.sites.list(team=caller.team_id)
        allows = _owner_plan(uow, caller.team_id).monitoring if sites else True
    shown = (site.as_shown(plan_allows_monitoring=allows) for site in sites)
    return answers.SiteList(tuple(answers.site_answer(answers.Site, site) for site in shown))


def get_site(asked: GetSite, caller: Caller, *, uow: UnitOfWork) -> answers.SiteWithAudits:
    """The team's site, its latest audit, and the health scores of its last audits (oldest first)."""
    with uow:
        site = uow.sites.get(asked.site_id, team=caller.team_id)
        site = site.as_shown(plan_allows_monitoring=_owner_plan(uow, caller.team_id).monitoring)
        audits, _ = uow.audits.list(
            TeamAuditQuery(
                team=caller.team_id, user=caller.user_id, site=site.id, offset=0, limit=4 * TREND_LENGTH
            )
        )
    scored = [a.health_score for a in audits if a.status is AuditStatus.DONE and a.health_score is not None]
    return answers.site_answer(
        answers.SiteWithAudits,
        site,
        verify=answers.FileProofSteps.of(site),
        latest_crawl=AuditRow.of(audits[0]) if audits else None,
        trend=tuple(reversed(scored[:TREND_LENGTH])),
    )


def update_site(
    asked: UpdateSite, caller: Caller, *, uow: UnitOfWork, clock: Clock, parser: PageParser | None = None
) -> answers.UpdatedSite:
    """Change a site's saved settings and monitoring (None: unchanged), and say what the site as saved
    will not do (`Site.notices`: scheduled audits the owner's credits cannot cover, a max_rps capped).
    Raises ValidationFailed, PlanLimitMaxPages, PlanLimitMonitoring (403) or SiteNotVerified (409,
    monitoring on an unverified site); nothing changes when any is raised. `parser` judges the grammar
    of the extraction rules (docs/extraction.md), as for an audit's."""
    if asked.extract:
        if parser is None:
            raise ValidationFailed({"extract": "this service cannot read extraction rules"})
        check_rules(asked.extract, parser.rule_errors(asked.extract))
    with uow:
        site = uow.sites.get(asked.site_id, team=caller.team_id)
        plan = _owner_plan(uow, caller.team_id)
        changed = site.update(
            plan_page_limit=plan.max_pages_per_audit,
            max_pages=asked.max_pages,
            max_rps=asked.max_rps,
            alert_email=asked.alert_email,
            render=asked.render,
            include=asked.include,
            exclude=asked.exclude,
            query_params=asked.query_params,
            keep_params=asked.keep_params,
            extract=asked.extract,
        )
        if asked.monitoring is not None:
            changed = changed.set_monitoring(
                asked.monitoring, plan_allows_monitoring=plan.monitoring, now=clock.now()
            )
        if changed is not site:
            uow.sites.save(changed)
            uow.commit()
        owner = uow.teams.get(caller.team_id).owner_id
        notices = changed.notices(
            balance=uow.credits.balance(owner),
            scheduled_pages=scheduled_max_pages(changed, plan, uow=uow),
        )
    return answers.site_answer(answers.UpdatedSite, changed, warnings=notices)


def delete_site(asked: DeleteSite, caller: Caller, *, uow: UnitOfWork) -> answers.SiteDeleted:
    """Remove the team's site. Its audits stay (history, reports, credits), still listed by GET /crawls
    with their `site_id`; an audit of it still running goes on to its end and is settled as usual."""
    with uow:
        uow.sites.delete(asked.site_id, team=caller.team_id)
        uow.console.delete_site(asked.site_id)  # its console figures, inspections and sync status go too
        uow.fix_impacts.delete_site(asked.site_id)  # and its fix-impact events
        uow.commit()
    return answers.SiteDeleted(site_id=asked.site_id)


def _read_site(site_id: SiteId, caller: Caller, uow: UnitOfWork) -> Site:
    with uow:
        return uow.sites.get(site_id, team=caller.team_id)


def site_verification(
    asked: GetSiteVerification,
    caller: Caller,
    *,
    uow: UnitOfWork,
    console_connection: Callable[[Site], tuple[bool, str | None]] | None = None,
) -> answers.SiteVerification:
    """The site's ownership status and every proof to publish; `console_connection` says whether the
    team's search console is connected and which property covers the site (none: not connected)."""
    site = _read_site(asked.site_id, caller, uow)
    connected, prop = (False, None) if console_connection is None else console_connection(site)
    return answers.SiteVerification.of(site, console_connected=connected, console_property=prop)


def verify_site(
    asked: VerifySite,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    reader: ProofReader,
    console_proof: Callable[[Site], ProofCheck] | None = None,
) -> answers.VerifiedSite:
    """Try the asked method, or every method in VERIFY_ORDER, stopping at the first match; mark the site
    verified.

    The proofs are read outside any transaction. Raises VerificationFailed (422) naming what to
    publish, with every check's outcome; a site already verified stays so.
    """
    site = _read_site(asked.site_id, caller, uow)
    checked: list[ProofCheck] = []
    for candidate in (asked.method,) if asked.method is not None else VERIFY_ORDER:
        checked.append(check_proof(site, candidate, reader, console_proof))
        if checked[-1].matched:
            break
    else:
        raise site.verification_failed([c.method for c in checked], checked)
    for attempt in range(3):
        with uow:
            current = uow.sites.get(asked.site_id, team=caller.team_id)
            verified, _ = current.verify(checked[-1].method, now=clock.now())
            try:
                uow.sites.save(verified)
                uow.commit()
            except ConcurrentUpdate:
                if attempt == 2:
                    raise
                continue
        return answers.site_answer(
            answers.VerifiedSite, verified, checked=tuple(answers.ProofCheck.of(c) for c in checked)
        )
    raise AssertionError("unreachable")


def crawl_site(
    asked: CrawlSite,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    queue: TaskQueue,
    public_only: PublicOnly | None = None,
    parser: PageParser | None = None,
) -> AuditStarted:
    """Audit the site with its saved settings, each input given replacing its saved one (the scope and
    extraction rules: docs/audits.md, docs/extraction.md): max_rps capped at the site's and at 3 while
    unverified, charged to the team owner, no webhook (`services/audit.py`, `start_audit`)."""
    request = copy_named(AuditRequest, asked)
    started = audit_services.start_audit(
        request,
        caller,
        uow=uow,
        clock=clock,
        queue=queue,
        site_endpoint=True,
        public_only=public_only,
        parser=parser,
    )
    return AuditStarted.of(started.audit, started.notices)
