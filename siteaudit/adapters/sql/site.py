"""Registered sites in SQL: unique per (team, origin), team-scoped reads, optimistic version checks."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from attrs import evolve
from sqlalchemy import delete, func, or_, select

from siteaudit.adapters.sql.audit import rules_from_json, rules_to_json
from siteaudit.adapters.sql.dialect import insert_ignoring_conflicts
from siteaudit.adapters.sql.rows import column, found, inserted_id, reader, row_values
from siteaudit.adapters.sql.tables import site_alerts, sites
from siteaudit.adapters.sql.version import Versioned
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.scope import ScopeRules
from siteaudit.domain.site import Site, SiteExists, SiteStatus

site_from_row: Final = reader(
    Site, rules=column("scope", read=ScopeRules.from_json), extract=column(read=rules_from_json)
)


def site_values(site: Site) -> dict[str, Any]:
    return row_values(
        site,
        leave_out=("id", "rules"),
        scope=None if site.rules.empty else site.rules.as_json(),
        extract=rules_to_json(site.extract),
    )


class SqlSiteRepository(Versioned):
    kind = "site"

    def _loaded(self, row: Any) -> Site:
        return self._seen_as(site_from_row(row))

    def add(self, site: Site) -> Site:
        new_id = inserted_id(self._c(), sites, site_values(site), id=site.id, taken=SiteExists(site.url))
        return self._seen_as(evolve(site, id=SiteId(new_id)))

    def get(self, site_id: SiteId, *, team: TeamId) -> Site:
        row = found(
            self._c(), sites, sites.c.id == site_id, sites.c.team_id == team, entity="site", key=site_id
        )
        return self._loaded(row)

    def get_any(self, site_id: SiteId) -> Site:
        row = found(self._c(), sites, sites.c.id == site_id, entity="site", key=site_id)
        return self._loaded(row)

    def list(self, *, team: TeamId) -> Sequence[Site]:
        rows = self._c().execute(select(sites).where(sites.c.team_id == team).order_by(sites.c.id))
        return [self._loaded(r) for r in rows]

    def count(self, *, team: TeamId) -> int:
        query = select(func.count()).select_from(sites).where(sites.c.team_id == team)
        return int(self._c().execute(query).scalar_one())

    def save(self, site: Site) -> None:
        self._update(sites, [sites.c.id == site.id], site.id, site_values(site))

    def delete(self, site_id: SiteId, *, team: TeamId) -> None:
        removed = self._c().execute(delete(sites).where(sites.c.id == site_id, sites.c.team_id == team))
        if removed.rowcount != 1:
            raise NotFound("site", site_id)

    def verified_for_origin(self, *, team: TeamId, origin: str) -> Site | None:
        row = (
            self._c()
            .execute(
                select(sites).where(
                    sites.c.team_id == team,
                    sites.c.origin == origin,
                    sites.c.status == SiteStatus.VERIFIED.value,
                )
            )
            .first()
        )
        return None if row is None else site_from_row(row)

    def due(self, now: datetime, *, limit: int) -> Sequence[Site]:
        rows = self._c().execute(
            select(sites)
            .where(sites.c.next_crawl_at.is_not(None), sites.c.next_crawl_at <= now)
            .order_by(sites.c.next_crawl_at, sites.c.id)
            .limit(max(0, limit))
            # PostgreSQL: each scheduler claims rows no other one holds; SQLite (one writer) renders none.
            .with_for_update(skip_locked=True)
        )
        return [self._loaded(r) for r in rows]

    def verified(self, *, limit: int, checked_before: datetime) -> Sequence[Site]:
        rows = self._c().execute(
            select(sites)
            .where(
                sites.c.status == SiteStatus.VERIFIED.value,
                or_(sites.c.checked_at.is_(None), sites.c.checked_at <= checked_before),
            )
            .order_by(sites.c.checked_at.nulls_first(), sites.c.id)
            .limit(max(0, limit))
            .with_for_update(skip_locked=True)
        )
        return [self._loaded(r) for r in rows]

    def claim_alert(self, audit_id: AuditId, *, site_id: SiteId, at: datetime) -> bool:
        statement = (
            insert_ignoring_conflicts(self._c(), site_alerts)
            .values(audit_id=audit_id, site_id=site_id, created_at=at)
            .returning(site_alerts.c.audit_id)
        )
        return self._c().execute(statement).first() is not None
