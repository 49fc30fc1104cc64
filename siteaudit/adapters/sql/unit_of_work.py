"""The SQL unit of work: one connection and one transaction per use case, committed or rolled back whole."""

from collections.abc import Callable
from types import TracebackType
from typing import Self

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from siteaudit.adapters.sql.account import SqlTeamRepository, SqlUserRepository
from siteaudit.adapters.sql.audit import SqlAuditRepository
from siteaudit.adapters.sql.credit import SqlCreditLedger
from siteaudit.adapters.sql.engine import engine_for, is_sqlite
from siteaudit.ports.repository import (
    AuditRepository,
    CreditLedger,
    TeamRepository,
    UserRepository,
)


class SqlUnitOfWork:
    """`with uow: ...; uow.commit()`. Not shareable between threads; make one per use case.

    Covers users, teams, credits and audits. The repositories of sites, fix tasks, rechecks, API keys and
    device logins are still to come (their tables are a follow-up), so it does not yet satisfy the whole
    `UnitOfWork` protocol.

    The transaction begins at the first statement (on SQLite with BEGIN IMMEDIATE: the single writer) and
    ends at `commit`, `rollback` or the end of the `with` block, which rolls back whatever was not
    committed. Statements after a `commit` run in a new transaction.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._connection: Connection | None = None
        self._seen: dict[object, int] = {}
        # Typed as the ports: the protocol's attributes are mutable, so they must match exactly.
        self.users: UserRepository = SqlUserRepository(self._current)
        self.teams: TeamRepository = SqlTeamRepository(self._current)
        self.credits: CreditLedger = SqlCreditLedger(self._current)
        self.audits: AuditRepository = SqlAuditRepository(self._current, self._seen)

    def _current(self) -> Connection:
        if self._connection is None:
            raise RuntimeError("use the unit of work inside `with uow:`")
        return self._connection

    def __enter__(self) -> Self:
        if self._connection is not None:
            raise RuntimeError("this unit of work is already in use")
        self._seen.clear()
        self._connection = self.engine.connect()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            connection.rollback()
        except DBAPIError:
            # The connection died mid-use-case: the database has already rolled the transaction back.
            # Re-raise only when nothing else is on its way out.
            if exc is None:
                raise
        finally:
            connection.close()

    def commit(self) -> None:
        self._current().commit()

    def rollback(self) -> None:
        self._current().rollback()


def sql_unit_of_work_factory(
    database_url: str | Engine, *, migrate: bool | None = None
) -> Callable[[], SqlUnitOfWork]:
    """Units of work over one shared engine. `migrate` None: bring a SQLite file to the latest schema
    first (the embedded default), leave PostgreSQL to `siteaudit migrate`."""
    engine = engine_for(database_url) if isinstance(database_url, str) else database_url
    if migrate if migrate is not None else is_sqlite(engine):
        from siteaudit.adapters.sql.migration import migrate as run_migrations

        run_migrations(engine)
    return lambda: SqlUnitOfWork(engine)
