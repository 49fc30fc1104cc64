"""Optimistic version checks shared by the versioned SQL repositories: save only what this unit of work saw."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import Connection, Table, select, update
from sqlalchemy.sql.elements import ColumnElement

from siteaudit.adapters.sql.rows import SqlRepository
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.ports.repository import VersionedAggregate

V = TypeVar("V", bound=VersionedAggregate)


class Versioned(SqlRepository):
    """`kind` names the entity in errors; `seen` is the unit of work's map of versions it loaded or wrote.

    A save is one `UPDATE ... WHERE <key> AND version = <seen>`: on PostgreSQL a racing transaction that
    changed the row first makes this one's condition false once it commits (READ COMMITTED re-checks the
    row after waiting for its lock), so the loser updates nothing and answers ConcurrentUpdate.
    """

    kind = ""

    def __init__(self, connection: Callable[[], Connection], seen: dict[object, int]) -> None:
        super().__init__(connection)
        self._seen = seen

    def _saw(self, key: object, version: int) -> None:
        self._seen[(self.kind, key)] = version

    def _seen_as(self, aggregate: V) -> V:
        """`aggregate` as loaded or written: its version, under its id, is the one this unit of work saw."""
        self._saw(aggregate.id, aggregate.version)
        return aggregate

    def _exists(self, table: Table, where: Sequence[ColumnElement[bool]]) -> bool:
        return self._c().execute(select(table.c.version).where(*where)).first() is not None

    def _update(
        self, table: Table, where: Sequence[ColumnElement[bool]], key: object, values: Mapping[str, Any]
    ) -> None:
        """Write `values` (which carry the new `version`) if the stored version is the one this unit of
        work saw. Raises NotFound for a missing row, ConcurrentUpdate for a moved or never-loaded one."""
        expected = self._seen.get((self.kind, key))
        if expected is not None:
            written = self._c().execute(
                update(table).where(*where, table.c.version == expected).values(dict(values))
            )
            if written.rowcount == 1:
                self._saw(key, values["version"])
                return
        if not self._exists(table, where):
            raise NotFound(self.kind, key)
        raise ConcurrentUpdate(self.kind, key)
