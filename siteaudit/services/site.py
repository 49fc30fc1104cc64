"""Site use cases: register, read, change and delete a team's sites, prove their ownership, and the
crawler secret of a verified site."""

import logging
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from siteaudit.domain.account import Caller, Plan, plan_named
from siteaudit.domain.audit import Audit, AuditStatus, SiteTerms
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.network import AddressPolicy, NameNotResolved
from siteaudit.domain.site import (
    VERIFY_ORDER,
    InvalidUrl,
    Monitoring,
    Notice,
    ProofCheck,
    ProofOutcome,
    Site,
    VerifyMethod,
    check_site_count,
    parse_site_url,
)
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.network import HostResolver
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing
from siteaudit.ports.site import ProofReader, TxtLookupFailed

_log = logging.getLogger("siteaudit.admin")

# Health scores shown in a site's trend.
TREND_LENGTH = 12

_TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_LAST_ID = AuditId(2**31 - 1)  # above every audit id: `latest_done` before it is the latest of all


def require_public_address(url: str, resolver: HostResolver, policy: AddressPolicy) -> None:
    """Refuse (422 invalid_url) a URL whose host does not resolve, or resolves to any non-public address.

    The crawler checks again at every connection (DNS can change); this answers the caller at once.
    """
    host = (urlsplit(url).hostname or "").strip("[]")
    try:
        addresses = resolver.resolve(host)
    except NameNotResolved:
        raise InvalidUrl(url, f"its host {host!r} does not resolve") from None
    for address in addresses:
        reason = policy.refusal(address)
        if reason is not None:
            raise InvalidUrl(
                url,
                f"its host resolves to a non-public address ({reason}); to audit a local site while "
                f"developing, set SITEAUDIT_ALLOW_NETWORKS={reason} (development only, never in production)",
            )


def site_terms(site: Site) -> SiteTerms:
    return SiteTerms(
        site.id, site.url, site.origin, site.verified, site.max_pages, site.max_rps, render=site.render
    )


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
    public_only: tuple[HostResolver, AddressPolicy] | None = None,
) -> Site:
    """Register a site for the caller's team, unverified, with a fresh ownership token.

    Raises InvalidUrl (also for a host that is not public, when `public_only` is given),
    ValidationFailed, PlanLimitMaxPages, PlanLimitSites or SiteExists.
    """
    if public_only is not None:
        require_public_address(parse_site_url(url).url, *public_only)
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
        sites = uow.sites.list(team=caller.team_id)
        allows = _owner_plan(uow, caller.team_id).monitoring if sites else True
    return [site.as_shown(plan_allows_monitoring=allows) for site in sites]


def crawler_secret(audit_id: AuditId, *, uow: UnitOfWork, sealing: Sealing) -> str | None:
    """The secret an audit of a verified site sends in its verify header: derived, never stored. None
    for plain-URL audits, for sites not verified, and for sites deleted since."""
    with uow:
        audit = uow.audits.get_any(audit_id)
        if audit.site_id is None:
            return None
        try:
            site = uow.sites.get(audit.site_id, team=TeamId(audit.team_id))
        except NotFound:
            return None  # the site was deleted while its audit ran: it goes on unverified
    if not site.verified:
        return None
    return sealing.derive(f"crawler:{site.crawler_secret_ref}")


def _owner_plan(uow: UnitOfWork, team_id: TeamId) -> Plan:
    """Site rules follow the team owner's plan: the owner pays for the team's site audits."""
    return plan_named(uow.users.get(uow.teams.get(team_id).owner_id).plan)


def get_site(
    site_id: SiteId, caller: Caller, *, uow: UnitOfWork
) -> tuple[Site, Audit | None, tuple[int, ...]]:
    """The team's site, its latest audit, and the health scores of its last audits (oldest first)."""
    with uow:
        site = uow.sites.get(site_id, team=caller.team_id)
        site = site.as_shown(plan_allows_monitoring=_owner_plan(uow, caller.team_id).monitoring)
        audits, _ = uow.audits.list(
            team=caller.team_id, user=caller.user_id, site=site.id, offset=0, limit=4 * TREND_LENGTH
        )
    scored = [a.health_score for a in audits if a.status is AuditStatus.DONE and a.health_score is not None]
    trend = tuple(reversed(scored[:TREND_LENGTH]))
    return site, (audits[0] if audits else None), trend


def update_site(
    site_id: SiteId,
    caller: Caller,
    *,
    monitoring: Monitoring | None = None,
    max_pages: int | None = None,
    max_rps: float | None = None,
    alert_email: bool | None = None,
    render: bool | None = None,
    uow: UnitOfWork,
    clock: Clock,
) -> tuple[Site, tuple[Notice, ...]]:
    """Change a site's saved settings and monitoring (None: unchanged), and say what the site as saved
    will not do (`Site.notices`: scheduled audits the owner's credits cannot cover, a max_rps capped).
    Raises ValidationFailed, PlanLimitMaxPages, PlanLimitMonitoring (403) or SiteNotVerified (409,
    monitoring on an unverified site); nothing changes when any is raised."""
    with uow:
        site = uow.sites.get(site_id, team=caller.team_id)
        plan = _owner_plan(uow, caller.team_id)
        changed = site.update(
            plan_page_limit=plan.max_pages_per_audit,
            max_pages=max_pages,
            max_rps=max_rps,
            alert_email=alert_email,
            render=render,
        )
        if monitoring is not None:
            changed = changed.set_monitoring(
                monitoring, plan_allows_monitoring=plan.monitoring, now=clock.now()
            )
        if changed is not site:
            uow.sites.save(changed)
            uow.commit()
        owner = uow.teams.get(caller.team_id).owner_id
        notices = changed.notices(
            balance=uow.credits.balance(owner),
            scheduled_pages=scheduled_max_pages(changed, plan, uow=uow),
        )
    return changed, notices


def scheduled_max_pages(site: Site, plan: Plan, *, uow: UnitOfWork) -> int:
    """The page cap, and reservation, of the site's next scheduled audit (`Site.scheduled_max_pages`)."""
    last = uow.audits.latest_done(team=site.team_id, origin=site.origin, site=site.id, before=_LAST_ID)
    return site.scheduled_max_pages(
        plan_page_limit=plan.max_pages_per_audit, last_pages=None if last is None else last.pages_crawled
    )


def delete_site(site_id: SiteId, caller: Caller, *, uow: UnitOfWork) -> None:
    """Remove the team's site. Its audits stay (history, reports, credits), still listed by GET /crawls
    with their `site_id`; an audit of it still running goes on to its end and is settled as usual."""
    with uow:
        uow.sites.delete(site_id, team=caller.team_id)
        uow.console.delete_site(site_id)  # its console figures, inspections and sync status go too
        uow.fix_impacts.delete_site(site_id)  # and its fix-impact events
        uow.commit()


def read_site(site_id: SiteId, caller: Caller, *, uow: UnitOfWork) -> Site:
    with uow:
        return uow.sites.get(site_id, team=caller.team_id)


def check_proof(
    site: Site,
    method: VerifyMethod,
    reader: ProofReader,
    console: Callable[[Site], ProofCheck] | None = None,
) -> ProofCheck:
    """Look for one ownership proof of `site`; never raises for what the network does. `console`
    checks the `gsc` method (the console use case's `console_proof`); without it, not connected."""
    proofs = site.proofs
    if method is VerifyMethod.SC and console is not None:
        return console(site)
    if method in (VerifyMethod.SC, VerifyMethod.CDN):
        vendor = "search console" if method is VerifyMethod.SC else "CDN"
        return ProofCheck(method, ProofOutcome.NOT_CONNECTED, f"the team has no {vendor} connection")
    if method is VerifyMethod.DNS:
        try:
            values = reader.txt_records(proofs.dns.name)
        except TxtLookupFailed as exc:
            return ProofCheck(method, ProofOutcome.DNS_ERROR, str(exc) or "the lookup failed")
        if proofs.dns.matches(values):
            return ProofCheck(method, ProofOutcome.MATCHED)
        if not values:
            return ProofCheck(method, ProofOutcome.NOT_FOUND, f"no TXT record at {proofs.dns.name}")
        return ProofCheck(method, ProofOutcome.WRONG_VALUE, f"TXT {proofs.dns.name} has another value")
    url = proofs.meta.url if method is VerifyMethod.META else proofs.file.url
    page = reader.read(url, origin=site.origin)
    if page.error is not None:
        return ProofCheck(method, ProofOutcome.FETCH_ERROR, page.error)
    if page.status is None or not 200 <= page.status < 300:
        return ProofCheck(method, ProofOutcome.NOT_FOUND, f"{page.url} answered {page.status}")
    if method is VerifyMethod.META:
        if proofs.meta.matches(page.metas):
            return ProofCheck(method, ProofOutcome.MATCHED)
        if any(name.strip().lower() == proofs.meta.name for name, _ in page.metas):
            return ProofCheck(method, ProofOutcome.WRONG_VALUE, "the meta tag has another token")
        return ProofCheck(method, ProofOutcome.NOT_FOUND, f"no {proofs.meta.name} meta tag in <head>")
    if proofs.file.matches(page.text):
        return ProofCheck(method, ProofOutcome.MATCHED)
    return ProofCheck(method, ProofOutcome.WRONG_VALUE, "the file does not contain the site's token")


def verify_site(
    site_id: SiteId,
    caller: Caller,
    *,
    method: VerifyMethod | None,
    uow: UnitOfWork,
    clock: Clock,
    reader: ProofReader,
    console: Callable[[Site], ProofCheck] | None = None,
) -> tuple[Site, tuple[ProofCheck, ...]]:
    """Try `method`, or every method in VERIFY_ORDER, stopping at the first match; mark the site verified.

    The proofs are read outside any transaction. Raises VerificationFailed (422) naming what to
    publish, with every check's outcome; a site already verified stays so.
    """
    site = read_site(site_id, caller, uow=uow)
    checked: list[ProofCheck] = []
    for candidate in (method,) if method is not None else VERIFY_ORDER:
        checked.append(check_proof(site, candidate, reader, console))
        if checked[-1].matched:
            break
    else:
        raise site.verification_failed([c.method for c in checked], checked)
    for attempt in range(3):
        with uow:
            current = uow.sites.get(site_id, team=caller.team_id)
            verified, _ = current.verify(checked[-1].method, now=clock.now())
            try:
                uow.sites.save(verified)
                uow.commit()
            except ConcurrentUpdate:
                if attempt == 2:
                    raise
                continue
        return verified, tuple(checked)
    raise AssertionError("unreachable")


# --- administration (support) ------------------------------------------------------------------------


def list_team_sites(team_name: str, *, uow: UnitOfWork) -> Sequence[Site]:
    """Every site of the team named `team_name` (support). Raises NotFound."""
    with uow:
        return uow.sites.list(team=uow.teams.by_name(team_name).id)


def verify_site_by_hand(site_id: SiteId, *, reason: str, uow: UnitOfWork, clock: Clock) -> Site:
    """Support marks a site verified without a proof; `reason` goes to the log. Raises NotFound."""
    with uow:
        site = uow.sites.get_any(site_id)
        verified, _ = site.verify_by_hand(now=clock.now())
        uow.sites.save(verified)
        uow.commit()
    _log.warning("site %s (%s) verified by hand: %s", site.id, site.url, reason)
    return verified
