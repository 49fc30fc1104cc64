"""Staging access of sites in memory: one sealed row per site."""

from siteaudit.adapters.memory.table import Table
from siteaudit.domain.access import StoredAccess
from siteaudit.domain.ids import SiteId


class MemorySiteAccessRepository:
    def __init__(self, table: Table[SiteId, StoredAccess]) -> None:
        self._t = table

    def get(self, site_id: SiteId) -> StoredAccess | None:
        return self._t.get(site_id)

    def put(self, access: StoredAccess) -> None:
        self._t.put(access.site_id, access)

    def remove(self, site_id: SiteId) -> bool:
        if self._t.get(site_id) is None:
            return False
        self._t.delete(site_id)
        return True
