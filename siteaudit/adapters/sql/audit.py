"""Audits in SQL: rows read by `rows.reader`, team-scoped reads, optimistic version checks on save."""

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from attrs import evolve
from sqlalchemy import Connection, Row, and_, bindparam, func, or_, select, update

from siteaudit.adapters.sql.lease import lease_from_row
from siteaudit.adapters.sql.rows import SqlRepository, column, inserted_id, reader, row_values
from siteaudit.adapters.sql.tables import audit_leases, audits
from siteaudit.domain.audit import ENDED, Audit, AuditStatus
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.domain.extraction import ExtractionRule, RuleKind
from siteaudit.domain.ids import AuditId, SiteId, TeamId, UserId
from siteaudit.domain.lease import Lease
from siteaudit.domain.scope import AuditScope
from siteaudit.ports.repository import TeamAuditQuery


def rules_from_json(document: Any) -> tuple[ExtractionRule, ...]:
    """The extraction rules of an `extract` column (NULL: none)."""
    if not document:
        return ()
    return tuple(
        ExtractionRule(
            name=r["name"],
            expression=r["expression"],
            kind=RuleKind(r.get("kind", "css")),
            take=r.get("take", "text"),
            all=bool(r.get("all", False)),
        )
        for r in document
    )


def rules_to_json(rules: Sequence[ExtractionRule]) -> list[dict[str, Any]] | None:
    if not rules:
        return None
    return [
        {"name": r.name, "expression": r.expression, "kind": r.kind.value, "take": r.take, "all": r.all}
        for r in rules
    ]


audit_from_row: Final = reader(
    Audit, extract=column(read=rules_from_json), scope=column(read=AuditScope.from_json)
)


def audit_values(audit: Audit) -> dict[str, Any]:
    return row_values(
        audit, leave_out=("id",), extract=rules_to_json(audit.extract), scope=audit.scope.as_json()
    )


# Every `GET /crawls/{id}` and issue or page list reads its audit in its team: on PostgreSQL in the
# driver's SQL, below SQLAlchemy's execution (its result metadata, events and type processing cost about
# three times the CPU of the driver's round trip); on SQLite through these statements, built once.
_GET_IN_TEAM: Final = select(audits).where(
    audits.c.id == bindparam("id"), audits.c.team_id == bindparam("team")
)


_GET_IN_TEAM_WITH_LEASE: Final = (
    select(
        audits,
        audit_leases.c.audit_id.label("lease_audit_id"),
        audit_leases.c.holder.label("lease_holder"),
        audit_leases.c.expires_at.label("lease_expires_at"),
        audit_leases.c.attempts.label("lease_attempts"),
        audit_leases.c.version.label("lease_version"),
    )
    .select_from(audits.outerjoin(audit_leases, audit_leases.c.audit_id == audits.c.id))
    .where(audits.c.id == bindparam("id"), audits.c.team_id == bindparam("team"))
)

_AUDIT_COLUMNS: Final = tuple(c.name for c in audits.columns)
_LEASE_COLUMNS: Final = ("audit_id", "holder", "expires_at", "attempts", "version")
# The `UtcDateTime` columns, which the driver's rows give in the session's zone: made UTC as that type does.
_TIMES: Final = frozenset(
    ("created_at", "started_at", "finished_at", "archived_at", "last_progress_at", "lease_expires_at")
)
_DRIVER_GET_IN_TEAM: Final = (
    f"SELECT {', '.join(f'a.{name}' for name in _AUDIT_COLUMNS)} FROM audits a"
    " WHERE a.id = %(id)s AND a.team_id = %(team)s"
)
# An audit's columns (`a`) and its lease's (`l`, outer-joined), in the driver's SQL: this read's and the key
# gate's (`keygate.py`, which reads the audit of `GET /v1/crawls/{id}` with the key).
WITH_LEASE_COLUMNS: Final = f"{', '.join(f'a.{name}' for name in _AUDIT_COLUMNS)}, {', '.join(f'l.{name}' for name in _LEASE_COLUMNS)}"
_DRIVER_GET_IN_TEAM_WITH_LEASE: Final = (
    f"SELECT {WITH_LEASE_COLUMNS} FROM audits a LEFT OUTER JOIN audit_leases l ON l.audit_id = a.id"
    " WHERE a.id = %(id)s AND a.team_id = %(team)s"
)
WITH_LEASE_NAMES: Final = (*_AUDIT_COLUMNS, *(f"lease_{name}" for name in _LEASE_COLUMNS))


def driver_values(
    names: Sequence[str], row: Sequence[Any], *, times: frozenset[str] = _TIMES
) -> dict[str, Any]:
    """A driver's row by column name, its `UtcDateTime` columns (`times`: an audit's by default) made UTC as
    that type does."""
    values = dict(zip(names, row, strict=True))
    for name in times.intersection(values):
        moment = values[name]
        if moment is not None:
            values[name] = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return values


def lease_of(row: Mapping[Any, Any] | None) -> Lease | None:
    """The lease of a row read with `WITH_LEASE_NAMES`; None without a row or when the audit holds none."""
    if row is None or row["lease_audit_id"] is None:
        return None
    return lease_from_row({name: row[f"lease_{name}"] for name in _LEASE_COLUMNS})


def _driver_row(
    conn: Connection, statement: str, names: Sequence[str], parameters: Mapping[str, Any]
) -> dict[str, Any] | None:
    """One row of a PostgreSQL read in the driver's SQL on the unit of work's connection, by column name,
    or None. The connection begins as SQLAlchemy's autobegin would (the engine's begin event keeps a lazy
    unit of work outside a transaction: `engine.LAZY_BEGIN`), so the read runs where SQLAlchemy's would."""
    if not conn.in_transaction():
        conn.begin()
    driver: Any = conn.connection.driver_connection
    row = driver.execute(statement, parameters).fetchone()
    return None if row is None else driver_values(names, row)


class SqlAuditRepository(SqlRepository):
    def __init__(self, connection: Callable[[], Connection], seen: dict[object, int]) -> None:
        super().__init__(connection)
        self._seen = seen  # the version of each audit as this unit of work last loaded or wrote it

    def _loaded(self, row: Any, key: object) -> Audit:
        if row is None:
            raise NotFound("audit", key)
        audit = audit_from_row(row)
        self._seen[("audit", audit.id)] = audit.version
        return audit

    def add(self, audit: Audit) -> Audit:
        audit = evolve(audit, id=AuditId(inserted_id(self._c(), audits, audit_values(audit), id=audit.id)))
        self._seen[("audit", audit.id)] = audit.version
        return audit

    def get(self, audit_id: AuditId, *, team: TeamId) -> Audit:
        conn, parameters = self._c(), {"id": audit_id, "team": team}
        row: Row[Any] | Mapping[Any, Any] | None
        if conn.dialect.name == "postgresql":
            row = _driver_row(conn, _DRIVER_GET_IN_TEAM, _AUDIT_COLUMNS, parameters)
        else:
            row = conn.execute(_GET_IN_TEAM, parameters).one_or_none()
        return self._loaded(row, audit_id)

    def get_with_lease(self, audit_id: AuditId, *, team: TeamId) -> tuple[Audit, Lease | None]:
        conn, parameters = self._c(), {"id": audit_id, "team": team}
        row: Mapping[Any, Any] | None
        if conn.dialect.name == "postgresql":
            row = _driver_row(conn, _DRIVER_GET_IN_TEAM_WITH_LEASE, WITH_LEASE_NAMES, parameters)
        else:
            read = conn.execute(_GET_IN_TEAM_WITH_LEASE, parameters).one_or_none()
            row = None if read is None else read._mapping
        return self._loaded(row, audit_id), lease_of(row)  # raises NotFound without a row

    def get_any(self, audit_id: AuditId) -> Audit:
        return self._loaded(
            self._c().execute(select(audits).where(audits.c.id == audit_id)).one_or_none(), audit_id
        )

    def save(self, audit: Audit) -> None:
        expected = self._seen.get(("audit", audit.id))
        if expected is None or audit.version < expected:
            if self._c().execute(select(audits.c.id).where(audits.c.id == audit.id)).first() is None:
                raise NotFound("audit", audit.id)
            raise ConcurrentUpdate("audit", audit.id)
        written = self._c().execute(
            update(audits)
            .where(audits.c.id == audit.id, audits.c.version == expected)
            .values(audit_values(audit))
        )
        if written.rowcount != 1:
            if self._c().execute(select(audits.c.id).where(audits.c.id == audit.id)).first() is None:
                raise NotFound("audit", audit.id)
            raise ConcurrentUpdate("audit", audit.id)
        self._seen[("audit", audit.id)] = audit.version

    def note_progress(self, audit_id: AuditId, *, at: datetime) -> None:
        self._c().execute(
            update(audits)
            .where(
                audits.c.id == audit_id,
                audits.c.status.not_in([s.value for s in ENDED]),
                or_(audits.c.last_progress_at.is_(None), audits.c.last_progress_at < at),
            )
            .values(last_progress_at=at)
        )

    def list(self, query: TeamAuditQuery) -> tuple[Sequence[Audit], int]:
        scope = audits.c.team_id == query.team
        if query.user is not None:
            scope = or_(scope, and_(audits.c.user_id == query.user, audits.c.team_id == 0))
        conditions = [scope] if query.site is None else [scope, audits.c.site_id == query.site]
        if query.statuses:
            conditions.append(audits.c.status.in_(sorted(s.value for s in query.statuses)))
        conn = self._c()
        total = conn.execute(select(func.count()).select_from(audits).where(*conditions)).scalar_one()
        rows = conn.execute(
            select(audits)
            .where(*conditions)
            .order_by(audits.c.created_at.desc(), audits.c.id.desc())
            .offset(query.offset)
            .limit(query.limit)
        )
        return [audit_from_row(r) for r in rows], int(total)

    def count_started_by(self, user_id: UserId) -> int:
        query = select(func.count()).select_from(audits).where(audits.c.user_id == user_id)
        return int(self._c().execute(query).scalar_one())

    def count_by_status(self) -> Mapping[AuditStatus, int]:
        query = select(audits.c.status, func.count()).group_by(audits.c.status)
        return {AuditStatus(status): int(count) for status, count in self._c().execute(query)}

    def latest_done(
        self, *, team: TeamId, origin: str, site: SiteId | None, before: AuditId, scored: bool = False
    ) -> Audit | None:
        same = (
            audits.c.site_id == site
            if site is not None
            else and_(audits.c.site_id.is_(None), audits.c.origin == origin)
        )
        row = (
            self._c()
            .execute(
                select(audits)
                .where(
                    audits.c.team_id == team,
                    audits.c.status == AuditStatus.DONE.value,
                    audits.c.id < before,
                    same,
                    *([audits.c.health_score.is_not(None)] if scored else []),
                )
                .order_by(audits.c.id.desc())
                .limit(1)
            )
            .one_or_none()
        )
        return None if row is None else audit_from_row(row)

    def ended(self) -> Sequence[Audit]:
        ended_states = [AuditStatus.DONE.value, AuditStatus.FAILED.value, AuditStatus.CANCELLED.value]
        rows = self._c().execute(
            select(audits)
            .where(audits.c.status.in_(ended_states))
            .order_by(audits.c.finished_at, audits.c.id)
        )
        return [audit_from_row(row) for row in rows]
