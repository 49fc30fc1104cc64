"""What an audit or a recheck sends of its site's staging access (docs/security.md "Staging access"): the
access of the verified site it audits, opened for the crawl. Not a use case: the workers' part, called by
the crawl slice's and the recheck's runners, which attach it only to requests of the site's own origin.

Which audits use it: those of the site (started on it, scheduled), and those started on a URL of the
origin of a verified site of the same team (POST /v1/crawls): the team set the access for that origin.
"""

import logging

from siteaudit.domain.access import SiteAccess
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import AuditId, TeamId
from siteaudit.domain.site import Site
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing

log = logging.getLogger("siteaudit.crawl")


def access_for_site(site: Site, *, uow: UnitOfWork, sealing: Sealing) -> SiteAccess | None:
    """The site's access, opened; None when it has none or is not verified, or the access does not open
    under the configured keys (logged, without a value: the audit goes on without it)."""
    if not site.verified:
        return None
    with uow:
        stored = uow.site_access.get(site.id)
    if stored is None:
        return None
    try:
        return SiteAccess.from_json(site.origin, sealing.unseal(stored.sealed))
    except Exception:  # the adapter's own error: the key changed and the earlier one is not configured
        log.warning("site %s: its staging access does not open under the configured keys; not sent", site.id)
        return None


def access_for_audit(audit_id: AuditId, *, uow: UnitOfWork, sealing: Sealing) -> SiteAccess | None:
    """The access an audit sends: its site's, or that of the verified site of its team on its origin."""
    with uow:
        audit = uow.audits.get_any(audit_id)
        site: Site | None
        if audit.site_id is not None:
            try:
                site = uow.sites.get(audit.site_id, team=TeamId(audit.team_id))
            except NotFound:
                site = None  # deleted while its audit ran: its access went with it
        else:
            site = uow.sites.verified_for_origin(team=TeamId(audit.team_id), origin=audit.origin)
    return None if site is None else access_for_site(site, uow=uow, sealing=sealing)
