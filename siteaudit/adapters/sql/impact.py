"""Fix-impact events in SQL (`FixImpactRepository`)."""

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Final

from attrs import evolve
from sqlalchemy import delete, func, or_, select, update

from siteaudit.adapters.sql.rows import SqlRepository, column, inserted_id, reader, row_values
from siteaudit.adapters.sql.tables import fix_impacts
from siteaudit.domain.ids import SiteId
from siteaudit.domain.impact import FixImpact, ImpactStatus

_OPEN = (ImpactStatus.MEASURING.value, ImpactStatus.NO_DATA.value)


def _values(event: FixImpact) -> dict[str, Any]:
    return row_values(
        event,
        leave_out=("id", "source_audit_id"),
        source_crawl_id=event.source_audit_id,
        urls=None if event.urls is None else list(event.urls),
    )


_event: Final = reader(FixImpact, source_audit_id=column("source_crawl_id"))


class SqlFixImpactRepository(SqlRepository):
    def add(self, event: FixImpact) -> FixImpact:
        return evolve(event, id=int(inserted_id(self._c(), fix_impacts, _values(event), id=event.id)))

    def save(self, event: FixImpact) -> None:
        self._c().execute(update(fix_impacts).where(fix_impacts.c.id == event.id).values(**_values(event)))

    def latest(self, site_ids: Collection[SiteId], *, limit: int) -> Sequence[FixImpact]:
        if not site_ids:
            return []
        t = fix_impacts
        rows = self._c().execute(
            select(t)
            .where(t.c.site_id.in_(sorted(site_ids)))
            .order_by(t.c.verified_at.desc(), t.c.id.desc())
            .limit(limit)
        )
        return [_event(r) for r in rows]

    def summary(self, site_ids: Collection[SiteId]) -> tuple[int, int]:
        if not site_ids:
            return 0, 0
        t = fix_impacts
        delta = func.coalesce(t.c.d28, 0) - func.coalesce(t.c.baseline_clicks_28d, 0)
        row = (
            self._c()
            .execute(
                select(func.coalesce(func.sum(delta), 0), func.count()).where(
                    t.c.site_id.in_(sorted(site_ids)), t.c.status == ImpactStatus.MEASURED.value
                )
            )
            .one()
        )
        return int(row[0]), int(row[1])

    def due(self, checked_before: datetime, *, limit: int) -> Sequence[FixImpact]:
        t = fix_impacts
        rows = self._c().execute(
            select(t)
            .where(t.c.status.in_(_OPEN), or_(t.c.checked_at.is_(None), t.c.checked_at <= checked_before))
            .order_by(t.c.checked_at.is_not(None), t.c.checked_at, t.c.id)
            .limit(limit)
        )
        return [_event(r) for r in rows]

    def delete_site(self, site_id: SiteId) -> None:
        self._c().execute(delete(fix_impacts).where(fix_impacts.c.site_id == site_id))
