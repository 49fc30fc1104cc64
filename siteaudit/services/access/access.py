"""The staging-access handlers (docs/security.md "Staging access"): read which kinds a site has, set them
sealed (verified sites only), remove them. No handler answers a value."""

from siteaudit.domain.access import STAGING_ACCESS, StoredAccess, access_of
from siteaudit.domain.account import Caller
from siteaudit.domain.ids import SiteId
from siteaudit.domain.site import SiteNotVerified
from siteaudit.ports.clock import Clock
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing
from siteaudit.ports.usecases import copy_named
from siteaudit.services.access.answers import SiteAccessStatus
from siteaudit.services.access.usecases import GetSiteAccess, RemoveSiteAccess, SetSiteAccess


def _status(site_id: SiteId, origin: str, stored: StoredAccess | None) -> SiteAccessStatus:
    if stored is None:
        return SiteAccessStatus(site_id, kinds=(), headers=0, cookies=0, sent_to=origin, updated_at=None)
    return copy_named(SiteAccessStatus, stored, sent_to=origin)


def get_site_access(asked: GetSiteAccess, caller: Caller, *, uow: UnitOfWork) -> SiteAccessStatus:
    with uow:
        site = uow.sites.get(asked.site_id, team=caller.team_id)
        stored = uow.site_access.get(site.id)
    return _status(site.id, site.origin, stored)


def set_site_access(
    asked: SetSiteAccess, caller: Caller, *, uow: UnitOfWork, clock: Clock, sealing: Sealing
) -> SiteAccessStatus:
    """The site must be the team's (404), the input right (422), then the site verified (409): the access
    is sealed before it is staged, so no value reaches the store in the clear."""
    with uow:
        site = uow.sites.get(asked.site_id, team=caller.team_id)
        access = access_of(
            site.origin,
            basic_auth_user=asked.basic_auth_user,
            basic_auth_password=asked.basic_auth_password,
            headers=asked.headers,
            cookies=asked.cookies,
        )
        if not site.verified:
            raise SiteNotVerified(site.id, STAGING_ACCESS)
        stored = StoredAccess(
            site_id=site.id,
            team_id=site.team_id,
            sealed=sealing.seal(access.as_json()),
            kinds=access.kinds,
            headers=len(access.headers),
            cookies=len(access.cookies),
            updated_at=clock.now(),
        )
        uow.site_access.put(stored)
        uow.commit()
    return _status(site.id, site.origin, stored)


def remove_site_access(asked: RemoveSiteAccess, caller: Caller, *, uow: UnitOfWork) -> SiteAccessStatus:
    with uow:
        site = uow.sites.get(asked.site_id, team=caller.team_id)
        uow.site_access.remove(site.id)
        uow.commit()
    return _status(site.id, site.origin, None)
