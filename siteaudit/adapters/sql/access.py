"""Sites' staging access in SQL (`SiteAccessRepository`): one row per site, its values sealed."""

from sqlalchemy import delete, insert, select

from siteaudit.adapters.sql.rows import SqlRepository
from siteaudit.adapters.sql.tables import site_access
from siteaudit.domain.access import StoredAccess
from siteaudit.domain.ids import SiteId, TeamId


class SqlSiteAccessRepository(SqlRepository):
    def get(self, site_id: SiteId) -> StoredAccess | None:
        row = self._c().execute(select(site_access).where(site_access.c.site_id == site_id)).first()
        if row is None:
            return None
        return StoredAccess(
            site_id=SiteId(row.site_id),
            team_id=TeamId(row.team_id),
            sealed=row.sealed,
            kinds=tuple(k for k in row.kinds.split(",") if k),
            headers=row.headers,
            cookies=row.cookies,
            updated_at=row.updated_at,
        )

    def put(self, access: StoredAccess) -> None:
        self._c().execute(delete(site_access).where(site_access.c.site_id == access.site_id))
        self._c().execute(
            insert(site_access).values(
                site_id=access.site_id,
                team_id=access.team_id,
                sealed=access.sealed,
                kinds=",".join(access.kinds),
                headers=access.headers,
                cookies=access.cookies,
                updated_at=access.updated_at,
            )
        )

    def remove(self, site_id: SiteId) -> bool:
        removed = self._c().execute(delete(site_access).where(site_access.c.site_id == site_id))
        return bool(removed.rowcount)
