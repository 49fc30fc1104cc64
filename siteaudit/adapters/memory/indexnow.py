"""IndexNow state in memory: one row per site, today's URL ledger, and the submissions."""

from collections.abc import Collection, Mapping, Sequence
from datetime import date

from siteaudit.adapters.memory.table import Table
from siteaudit.domain.error import ConcurrentUpdate
from siteaudit.domain.ids import SiteId
from siteaudit.domain.indexnow import IndexNowSite, Submission


class MemoryIndexNowTables:
    """The committed rows (held by MemoryStore, so its unit of work commits and rolls them back)."""

    def __init__(self) -> None:
        self.sites: Table[SiteId, IndexNowSite] = Table()
        self.ledger: Table[tuple[SiteId, date, str], bool] = Table()
        self.submissions: Table[int, Submission] = Table()

    def tables(self) -> list[Table]:  # type: ignore[type-arg]
        return [self.sites, self.ledger, self.submissions]


class MemoryIndexNowRepository:
    def __init__(self, tables: MemoryIndexNowTables, seen: dict[object, int]) -> None:
        self._t = tables
        self._seen = seen

    def get(self, site_id: SiteId, *, lock: bool = False) -> IndexNowSite | None:
        # One writer at a time already: the store's lock is held for the whole unit of work.
        state = self._t.sites.get(site_id)
        if state is not None:
            self._seen[("indexnow", site_id)] = state.version
        return state

    def add(self, state: IndexNowSite) -> None:
        if self._t.sites.get(state.site_id) is not None:
            raise ConcurrentUpdate("indexnow", state.site_id)
        self._t.sites.put(state.site_id, state)
        self._seen[("indexnow", state.site_id)] = state.version

    def save(self, state: IndexNowSite) -> None:
        stored = self._t.sites.found(state.site_id, "indexnow")
        if self._seen.get(("indexnow", state.site_id)) != stored.version:
            raise ConcurrentUpdate("indexnow", state.site_id)
        self._t.sites.put(state.site_id, state)
        self._seen[("indexnow", state.site_id)] = state.version

    def ledger(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> Mapping[str, bool]:
        found: dict[str, bool] = {}
        for url_hash in url_hashes:
            accepted = self._t.ledger.get((site_id, day, url_hash))
            if accepted is not None:
                found[url_hash] = accepted
        return found

    def count_urls(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> None:
        for key in [k for k in list(self._t.ledger.rows) if k[0] == site_id and k[1] < day]:
            self._t.ledger.delete(key)
        for url_hash in url_hashes:
            if self._t.ledger.get((site_id, day, url_hash)) is None:
                self._t.ledger.put((site_id, day, url_hash), False)

    def mark_accepted(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> None:
        for url_hash in url_hashes:
            if self._t.ledger.get((site_id, day, url_hash)) is not None:
                self._t.ledger.put((site_id, day, url_hash), True)

    def add_submission(self, submission: Submission) -> bool:
        if submission.audit_id is not None and self.has_audit_submission(
            submission.site_id, submission.audit_id
        ):
            return False
        self._t.submissions.put(self._t.submissions.next_id(), submission)
        return True

    def has_audit_submission(self, site_id: SiteId, audit_id: int) -> bool:
        return any(s.site_id == site_id and s.audit_id == audit_id for s in self._t.submissions.values())

    def recent(self, site_id: SiteId, *, limit: int) -> Sequence[Submission]:
        rows = [s for s in self._t.submissions.values() if s.site_id == site_id]
        rows.sort(key=lambda s: s.at, reverse=True)
        return rows[:limit]
