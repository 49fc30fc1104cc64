"""Console storage in SQL (`ConsoleStore`): connections, daily page figures, inspections, the inspection
budget (spent with one conditional UPDATE per window) and sync status."""

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any, Final

from sqlalchemy import and_, case, delete, func, or_, select, update

from siteaudit.adapters.sql.dialect import dialect_insert, insert_ignoring_conflicts
from siteaudit.adapters.sql.rows import SqlRepository, column, reader, row_values
from siteaudit.adapters.sql.tables import (
    console_budget,
    console_connections,
    console_inspections,
    console_page_days,
    console_syncs,
    sites,
)
from siteaudit.domain.console import (
    ConsoleConnection,
    ConsoleSync,
    PageDay,
    PageTotals,
    StoredInspection,
    SyncStatus,
)
from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.site import SiteStatus

_CHUNK: Final = 500  # rows per INSERT and URLs per IN (...)


def _inspection_values(i: StoredInspection) -> dict[str, Any]:
    return row_values(i, sitemaps=list(i.sitemaps))


_inspection: Final = reader(StoredInspection, sitemaps=column(read=lambda sitemaps: tuple(sitemaps or ())))


class SqlConsoleStore(SqlRepository):
    # connections

    def connection(self, team_id: TeamId) -> ConsoleConnection | None:
        row = (
            self._c()
            .execute(select(console_connections).where(console_connections.c.team_id == team_id))
            .first()
        )
        if row is None:
            return None
        return ConsoleConnection(TeamId(row.team_id), row.sealed_refresh_token, row.account, row.connected_at)

    def save_connection(self, connection: ConsoleConnection) -> None:
        values = {
            "sealed_refresh_token": connection.sealed_refresh_token,
            "account": connection.account,
            "connected_at": connection.connected_at,
        }
        statement = (
            dialect_insert(self._c(), console_connections)
            .values(team_id=connection.team_id, **values)
            .on_conflict_do_update(index_elements=["team_id"], set_=values)
        )
        self._c().execute(statement)

    def delete_connection(self, team_id: TeamId) -> None:
        self._c().execute(delete(console_connections).where(console_connections.c.team_id == team_id))

    # daily figures

    def replace_days(self, site_id: SiteId, days: Iterable[PageDay], *, start: date, end: date) -> int:
        t = console_page_days
        self._c().execute(delete(t).where(t.c.site_id == site_id, t.c.day >= start, t.c.day <= end))
        rows = [
            {
                "site_id": site_id,
                "day": d.day,
                "url": d.url,
                "clicks": d.clicks,
                "impressions": d.impressions,
                "position": d.position,
            }
            for d in days
            if start <= d.day <= end
        ]
        for offset in range(0, len(rows), _CHUNK):
            # A provider may answer one (page, day) twice (paging over changing data): keep the first.
            self._c().execute(insert_ignoring_conflicts(self._c(), t), rows[offset : offset + _CHUNK])
        return len(rows)

    def days(self, site_id: SiteId, *, start: date, end: date) -> Sequence[PageDay]:
        t = console_page_days
        rows = self._c().execute(
            select(t)
            .where(t.c.site_id == site_id, t.c.day >= start, t.c.day <= end)
            .order_by(t.c.day, t.c.url)
        )
        return [PageDay(SiteId(r.site_id), r.day, r.url, r.clicks, r.impressions, r.position) for r in rows]

    def page_totals(
        self, site_id: SiteId, urls: Iterable[str] | None, start: date, end: date
    ) -> Mapping[str, PageTotals]:
        t = console_page_days
        weighted = func.sum(t.c.position * t.c.impressions)
        weight = func.sum(case((t.c.position.isnot(None), t.c.impressions), else_=0))
        base = (
            select(t.c.url, func.sum(t.c.clicks), func.sum(t.c.impressions), weighted, weight)
            .where(t.c.site_id == site_id, t.c.day >= start, t.c.day <= end)
            .group_by(t.c.url)
        )
        wanted = None if urls is None else sorted(set(urls))
        statements = (
            [base]
            if wanted is None
            else [base.where(t.c.url.in_(wanted[i : i + _CHUNK])) for i in range(0, len(wanted), _CHUNK)]
        )
        out: dict[str, PageTotals] = {}
        for statement in statements:
            for url, clicks, impressions, position_sum, position_weight in self._c().execute(statement):
                position = (
                    round(float(position_sum) / float(position_weight), 1)
                    if position_sum is not None and position_weight
                    else None
                )
                out[url] = PageTotals(url, int(clicks or 0), int(impressions or 0), position)
        return out

    def latest_day(self, site_id: SiteId) -> date | None:
        t = console_page_days
        found = self._c().execute(select(func.max(t.c.day)).where(t.c.site_id == site_id)).scalar()
        if found is None or isinstance(found, date):
            return found
        return date.fromisoformat(str(found)[:10])

    # inspections

    def save_inspection(self, inspection: StoredInspection) -> None:
        values = _inspection_values(inspection)
        changing = {k: v for k, v in values.items() if k not in ("site_id", "url")}
        statement = (
            dialect_insert(self._c(), console_inspections)
            .values(**values)
            .on_conflict_do_update(index_elements=["site_id", "url"], set_=changing)
        )
        self._c().execute(statement)

    def inspections(self, site_id: SiteId) -> Sequence[StoredInspection]:
        t = console_inspections
        rows = self._c().execute(select(t).where(t.c.site_id == site_id).order_by(t.c.url))
        return [_inspection(r) for r in rows]

    # the inspection budget

    def spend_budget(self, property_url: str, windows: Sequence[tuple[str, int]], count: int) -> bool:
        """One conditional UPDATE per window (the row stays locked to this transaction once updated);
        a refused window gives back what the earlier windows took, so nothing is spent."""
        t = console_budget
        connection = self._c()
        taken: list[str] = []
        for key, limit in windows:
            connection.execute(
                insert_ignoring_conflicts(connection, t).values(property=property_url, window=key, used=0)
            )
            spent = connection.execute(
                update(t)
                .where(and_(t.c.property == property_url, t.c.window == key, t.c.used + count <= limit))
                .values(used=t.c.used + count)
                .returning(t.c.used)
            ).first()
            if spent is None:
                for back in taken:
                    connection.execute(
                        update(t)
                        .where(t.c.property == property_url, t.c.window == back)
                        .values(used=t.c.used - count)
                    )
                return False
            taken.append(key)
        return True

    def budget_used(self, property_url: str, window: str) -> int:
        t = console_budget
        used = (
            self._c()
            .execute(select(t.c.used).where(t.c.property == property_url, t.c.window == window))
            .scalar()
        )
        return int(used or 0)

    # sync status

    def sync(self, site_id: SiteId) -> ConsoleSync | None:
        r = self._c().execute(select(console_syncs).where(console_syncs.c.site_id == site_id)).first()
        if r is None:
            return None
        return ConsoleSync(
            SiteId(r.site_id),
            r.synced_at,
            SyncStatus(r.status),
            r.property,
            r.demo,
            r.days,
            r.inspected,
            r.error,
        )

    def save_sync(self, sync: ConsoleSync) -> None:
        values = {
            "synced_at": sync.synced_at,
            "status": sync.status.value,
            "property": sync.property_url,
            "demo": sync.demo,
            "days": sync.days,
            "inspected": sync.inspected,
            "error": sync.error,
        }
        self._c().execute(
            dialect_insert(self._c(), console_syncs)
            .values(site_id=sync.site_id, **values)
            .on_conflict_do_update(index_elements=["site_id"], set_=values)
        )

    def due_syncs(self, synced_before: datetime, *, limit: int) -> Sequence[SiteId]:
        never_first = case((console_syncs.c.site_id.is_(None), 0), else_=1)
        statement = (
            select(sites.c.id)
            .select_from(sites.outerjoin(console_syncs, console_syncs.c.site_id == sites.c.id))
            .where(
                sites.c.status == SiteStatus.VERIFIED.value,
                or_(console_syncs.c.site_id.is_(None), console_syncs.c.synced_at <= synced_before),
            )
            .order_by(never_first, console_syncs.c.synced_at, sites.c.id)
            .limit(limit)
        )
        return [SiteId(site_id) for (site_id,) in self._c().execute(statement)]

    def delete_site(self, site_id: SiteId) -> None:
        for table in (console_page_days, console_inspections, console_syncs):
            self._c().execute(delete(table).where(table.c.site_id == site_id))
