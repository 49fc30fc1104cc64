"""Site rules shared beyond the declared site use cases (`services/sites/`): a public address, a site's
terms for its audits, the crawler secret of a verified site, the page cap of its next scheduled audit,
reading an ownership proof (the scheduler's daily re-check too), and the support's operations."""

import logging
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from siteaudit.domain.account import Plan
from siteaudit.domain.audit import SiteTerms
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.network import AddressPolicy, NameNotResolved
from siteaudit.domain.site import (
    InvalidUrl,
    ProofCheck,
    ProofOutcome,
    Site,
    VerifyMethod,
)
from siteaudit.ports.clock import Clock
from siteaudit.ports.network import HostResolver
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing
from siteaudit.ports.site import ProofReader, TxtLookupFailed

_log = logging.getLogger("siteaudit.admin")

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
        site.id,
        site.url,
        site.origin,
        site.verified,
        site.max_pages,
        site.max_rps,
        render=site.render,
        rules=site.rules,
        extract=site.extract,
    )


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


def scheduled_max_pages(site: Site, plan: Plan, *, uow: UnitOfWork) -> int:
    """The page cap, and reservation, of the site's next scheduled audit (`Site.scheduled_max_pages`)."""
    last = uow.audits.latest_done(team=site.team_id, origin=site.origin, site=site.id, before=_LAST_ID)
    return site.scheduled_max_pages(
        plan_page_limit=plan.max_pages_per_audit, last_pages=None if last is None else last.pages_crawled
    )


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
