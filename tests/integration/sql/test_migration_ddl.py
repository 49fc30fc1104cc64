"""Migrations are history that deployed databases have run: every revision, one step at a time up to head
and back down to an empty database, emits the SQL pinned in `migration_ddl/<dialect>.sql`.

A released revision must keep emitting exactly that. A new revision adds its steps: after review,
`SITEAUDIT_REPIN=1 pytest tests/integration/sql/test_migration_ddl.py`, then `git diff` shows only them.

Only statements that change the database are pinned (not the reads and reflection queries alembic makes).
Two orders are left out of the comparison because alembic's SQLite batch copy leaves them to chance (they
vary between runs of the same code): the constraint lines of one CREATE TABLE and a run of CREATE INDEX.
"""

import difflib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, event

from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.migration import alembic_config

PINS = Path(__file__).with_name("migration_ddl")
REPIN = "SITEAUDIT_REPIN"
_WRITES = ("CREATE", "ALTER", "DROP", "INSERT", "UPDATE", "DELETE")


def _canonical(statement: str) -> str:
    """`statement` without trailing spaces, the constraint lines of a CREATE TABLE sorted in place."""
    lines = [line.rstrip() for line in statement.strip().splitlines()]
    at = [n for n, line in enumerate(lines) if line.startswith("\tCONSTRAINT ")]
    for n, line in zip(at, sorted(lines[n].rstrip(",") for n in at), strict=True):
        lines[n] = line if n == at[-1] else f"{line},"
    return "\n".join(lines)


def _step(statements: list[str]) -> list[str]:
    """The writes of one step, each run of CREATE INDEX statements sorted."""
    kept: list[str] = []
    indexes: list[str] = []
    for statement in (_canonical(s) for s in statements if s.lstrip().upper().startswith(_WRITES)):
        if statement.startswith(("CREATE INDEX", "CREATE UNIQUE INDEX")):
            indexes.append(statement)
            continue
        kept += [*sorted(indexes), statement]
        indexes = []
    return kept + sorted(indexes)


def _emitted(engine: Engine) -> str:
    revisions = [s.revision for s in ScriptDirectory.from_config(alembic_config()).walk_revisions()][::-1]
    steps = [("upgrade", r) for r in revisions] + [("downgrade", r) for r in ["base", *revisions[:-1]]][::-1]
    statements: list[str] = []

    def record(*args: Any) -> None:
        statements.append(args[2])  # (conn, cursor, statement, parameters, context, executemany)

    event.listen(engine, "before_cursor_execute", record)
    out = []
    for way, target in steps:
        statements.clear()
        with engine.connect() as conn:
            getattr(command, way)(alembic_config(conn), target)
            conn.commit()
        out.append(f"-- {way} to {target}\n" + "".join(f"{s};\n" for s in _step(statements)))
    return "\n".join(out)


def _assert_pinned(dialect: str, emitted: str) -> None:
    path = PINS / f"{dialect}.sql"
    if os.environ.get(REPIN) == "1":
        path.write_text(emitted, encoding="utf-8")
    pinned = path.read_text(encoding="utf-8")
    if emitted != pinned:
        diff = difflib.unified_diff(
            pinned.splitlines(keepends=True), emitted.splitlines(keepends=True), f"pinned {path.name}", "now"
        )
        how = f"A released revision must not change; a new one: {REPIN}=1 pytest tests/integration/sql/test_migration_ddl.py, review git diff."
        pytest.fail(f"the migrations emit other SQL than pinned:\n{''.join(diff)}\n{how}", pytrace=False)


def test_every_step_emits_the_pinned_sql_on_sqlite(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'ddl.sqlite3'}")
    try:
        _assert_pinned("sqlite", _emitted(engine))
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_every_step_emits_the_pinned_sql_on_postgresql(new_postgres_database: Callable[[], str]) -> None:
    engine = create_engine(new_postgres_database())
    try:
        _assert_pinned("postgresql", _emitted(engine))
    finally:
        engine.dispose()
