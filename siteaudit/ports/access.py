"""Where each verified site's staging access is kept (docs/security.md "Staging access"): sealed values, and
in the clear only which kinds are set and when. Callers check the site's team first."""

from typing import Protocol

from siteaudit.domain.access import StoredAccess
from siteaudit.domain.ids import SiteId


class SiteAccessRepository(Protocol):
    def get(self, site_id: SiteId) -> StoredAccess | None:
        """The site's access, None when none is set."""
        ...

    def put(self, access: StoredAccess) -> None:
        """Stage the site's access, replacing any it had."""
        ...

    def remove(self, site_id: SiteId) -> bool:
        """Stage removing the site's access; False when it had none."""
        ...
