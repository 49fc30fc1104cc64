"""In-memory console storage (`ConsoleStore`): tables with the store's per-transaction overlay."""

import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime

from attrs import evolve

from siteaudit.adapters.memory.table import Table
from siteaudit.domain.console import (
    ConsoleConnection,
    ConsoleSync,
    PageDay,
    PageTotals,
    StoredInspection,
    totals,
)
from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.site import Site


class MemoryConsoleTables:
    """The committed tables; `lock` is the lock of the store whose transactions write them."""

    def __init__(self, lock: "threading.RLock | None" = None) -> None:
        self.lock = lock if lock is not None else threading.RLock()
        self.connections: Table[TeamId, ConsoleConnection] = Table()
        self.days: Table[tuple[SiteId, date, str], PageDay] = Table()
        self.inspections: Table[tuple[SiteId, str], StoredInspection] = Table()
        self.budget: Table[tuple[str, str], int] = Table()
        self.syncs: Table[SiteId, ConsoleSync] = Table()

    def tables(self) -> Sequence[Table]:  # type: ignore[type-arg]
        return [self.connections, self.days, self.inspections, self.budget, self.syncs]


class MemoryConsoleStore:
    def __init__(self, tables: MemoryConsoleTables, sites: "Table[SiteId, Site]") -> None:
        self._t = tables
        self._sites = sites

    def connection(self, team_id: TeamId) -> ConsoleConnection | None:
        return self._t.connections.get(team_id)

    def save_connection(self, connection: ConsoleConnection) -> None:
        self._t.connections.put(connection.team_id, connection)

    def delete_connection(self, team_id: TeamId) -> None:
        self._t.connections.delete(team_id)

    def replace_days(self, site_id: SiteId, days: Iterable[PageDay], *, start: date, end: date) -> int:
        for old in list(self._t.days.find(lambda d: d.site_id == site_id and start <= d.day <= end)):
            self._t.days.delete((site_id, old.day, old.url))
        written = 0
        for day in days:
            if start <= day.day <= end:
                self._t.days.put((site_id, day.day, day.url), evolve(day, site_id=site_id))
                written += 1
        return written

    def days(self, site_id: SiteId, *, start: date, end: date) -> Sequence[PageDay]:
        found = self._t.days.find(lambda d: d.site_id == site_id and start <= d.day <= end)
        return sorted(found, key=lambda d: (d.day, d.url))

    def page_totals(
        self, site_id: SiteId, urls: Iterable[str] | None, start: date, end: date
    ) -> Mapping[str, PageTotals]:
        wanted = None if urls is None else set(urls)
        return totals(
            d for d in self.days(site_id, start=start, end=end) if wanted is None or d.url in wanted
        )

    def latest_day(self, site_id: SiteId) -> date | None:
        return max((d.day for d in self._t.days.find(lambda d: d.site_id == site_id)), default=None)

    def save_inspection(self, inspection: StoredInspection) -> None:
        self._t.inspections.put((inspection.site_id, inspection.url), inspection)

    def inspections(self, site_id: SiteId) -> Sequence[StoredInspection]:
        return sorted(self._t.inspections.find(lambda i: i.site_id == site_id), key=lambda i: i.url)

    def spend_budget(self, property_url: str, windows: Sequence[tuple[str, int]], count: int) -> bool:
        with self._t.lock:
            if any(self.budget_used(property_url, key) + count > limit for key, limit in windows):
                return False
            for key, _ in windows:
                self._t.budget.put((property_url, key), self.budget_used(property_url, key) + count)
            return True

    def budget_used(self, property_url: str, window: str) -> int:
        return self._t.budget.get((property_url, window)) or 0

    def sync(self, site_id: SiteId) -> ConsoleSync | None:
        return self._t.syncs.get(site_id)

    def save_sync(self, sync: ConsoleSync) -> None:
        self._t.syncs.put(sync.site_id, sync)

    def due_syncs(self, synced_before: datetime, *, limit: int) -> Sequence[SiteId]:
        due = []
        for site in self._sites.values():
            if not site.verified:
                continue
            sync = self._t.syncs.get(site.id)
            if sync is None or sync.synced_at <= synced_before:
                due.append((sync is not None, sync.synced_at if sync else None, site.id))
        due.sort(key=lambda d: (d[0], d[1] or synced_before, d[2]))
        return [site_id for _, _, site_id in due[:limit]]

    def delete_site(self, site_id: SiteId) -> None:
        for old in list(self._t.days.find(lambda d: d.site_id == site_id)):
            self._t.days.delete((site_id, old.day, old.url))
        for inspection in list(self._t.inspections.find(lambda i: i.site_id == site_id)):
            self._t.inspections.delete((site_id, inspection.url))
        self._t.syncs.delete(site_id)
