"""Site use cases: register a site, read the team's sites, the crawler secret of a verified site."""

from collections.abc import Sequence

from siteaudit.domain.account import Caller, plan_named
from siteaudit.domain.audit import SiteTerms
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.site import Site, check_site_count
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing

_TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def site_terms(site: Site) -> SiteTerms:
    return SiteTerms(site.id, site.url, site.origin, site.verified, site.max_pages, site.max_rps)


def register_site(
    url: str,
    caller: Caller,
    *,
    max_pages: int | None = None,
    max_rps: float | None = None,
    alert_email: bool = True,
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
) -> Site:
    """Register a site for the caller's team, unverified, with a fresh ownership token.

    Raises InvalidUrl, ValidationFailed, PlanLimitMaxPages, PlanLimitSites or SiteExists.
    """
    with uow:
        team = uow.teams.get(caller.team_id)
        plan = plan_named(uow.users.get(team.owner_id).plan)
        check_site_count(uow.sites.count(team=team.id), plan.max_sites)
        site = Site.register(
            site_id=SiteId(0),
            team_id=team.id,
            url=url,
            verify_token=secrets.token(32, _TOKEN_ALPHABET),
            crawler_secret_ref=secrets.token_hex(16),
            plan_page_limit=plan.max_pages_per_audit,
            now=clock.now(),
            max_pages=max_pages,
            max_rps=max_rps,
            alert_email=alert_email,
        )
        site = uow.sites.add(site)
        uow.commit()
    return site


def list_sites(caller: Caller, *, uow: UnitOfWork) -> Sequence[Site]:
    with uow:
        return uow.sites.list(team=caller.team_id)


def crawler_secret(audit_id: AuditId, *, uow: UnitOfWork, sealing: Sealing) -> str | None:
    """The secret an audit of a verified site sends in its verify header: derived, never stored. None
    for plain-URL audits and for sites not verified."""
    with uow:
        audit = uow.audits.get_any(audit_id)
        if audit.site_id is None:
            return None
        site = uow.sites.get(audit.site_id, team=TeamId(audit.team_id))
    if not site.verified:
        return None
    return sealing.derive(f"crawler:{site.crawler_secret_ref}")
