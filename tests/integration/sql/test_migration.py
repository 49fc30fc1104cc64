"""Migrations: an empty database upgrades to head, and the migrated schema is exactly the tables' metadata."""

from collections.abc import Callable
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect

from siteaudit.adapters.sql import migrate, sql_unit_of_work_factory
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.migration import current_revision, head_revision
from siteaudit.adapters.sql.tables import metadata


def _drift(engine: Engine) -> list[object]:
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        return list(compare_metadata(context, metadata))


def _check_upgrade_from_empty(engine: Engine) -> None:
    assert current_revision(engine) is None
    migrate(engine)
    migrate(engine)  # again: nothing to do
    assert current_revision(engine) == head_revision()
    assert set(inspect(engine).get_table_names()) == {t.name for t in metadata.sorted_tables} | {
        "alembic_version"
    }
    assert _drift(engine) == []


def test_an_empty_sqlite_file_upgrades_to_head_without_drift(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'fresh' / 'siteaudit.sqlite3'}")
    try:
        _check_upgrade_from_empty(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_an_empty_postgresql_database_upgrades_to_head_without_drift(
    new_postgres_database: Callable[[], str],
) -> None:
    engine = create_engine(new_postgres_database())
    try:
        _check_upgrade_from_empty(engine)
    finally:
        engine.dispose()


def test_the_embedded_default_migrates_itself_on_start(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'data' / 'siteaudit.sqlite3'}"
    uow = sql_unit_of_work_factory(url)()
    with uow:
        assert uow.users.count() == 0
    assert current_revision(url) == head_revision()


def test_a_drifted_schema_is_noticed(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'drift.sqlite3'}")
    try:
        migrate(engine)
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP INDEX ix_crawl_pages_audit_id_template")
        drift = [(d[0], d[1].name) for d in _drift(engine)]  # type: ignore[index, attr-defined]
        assert drift == [("add_index", "ix_crawl_pages_audit_id_template")]
    finally:
        engine.dispose()
