"""In-memory fix-impact events (`FixImpactRepository`) over a table of the store."""

from collections.abc import Collection, Sequence
from datetime import UTC, datetime

from siteaudit.adapters.memory.table import Table
from siteaudit.domain.ids import SiteId
from siteaudit.domain.impact import FixImpact, ImpactStatus

_OPEN = (ImpactStatus.MEASURING, ImpactStatus.NO_DATA)
_NEVER = datetime.min.replace(tzinfo=UTC)


class MemoryFixImpactRepository:
    def __init__(self, table: "Table[int, FixImpact]") -> None:
        self._t = table

    def add(self, event: FixImpact) -> FixImpact:
        event = self._t.add(event)
        return event

    def save(self, event: FixImpact) -> None:
        self._t.put(event.id, event)

    def latest(self, site_ids: Collection[SiteId], *, limit: int) -> Sequence[FixImpact]:
        wanted = set(site_ids)
        found = self._t.find(lambda e: e.site_id in wanted)
        return sorted(found, key=lambda e: (e.verified_at, e.id), reverse=True)[:limit]

    def summary(self, site_ids: Collection[SiteId]) -> tuple[int, int]:
        wanted = set(site_ids)
        measured = [
            e for e in self._t.find(lambda e: e.site_id in wanted) if e.status is ImpactStatus.MEASURED
        ]
        return sum(e.delta_28d or 0 for e in measured), len(measured)

    def due(self, checked_before: datetime, *, limit: int) -> Sequence[FixImpact]:
        found = self._t.find(
            lambda e: e.status in _OPEN and (e.checked_at is None or e.checked_at <= checked_before)
        )
        return sorted(found, key=lambda e: (e.checked_at or _NEVER, e.id))[:limit]

    def delete_site(self, site_id: SiteId) -> None:
        for event in list(self._t.find(lambda e: e.site_id == site_id)):
            self._t.delete(event.id)
