"""Migrations: an empty database upgrades to head, and the migrated schema is exactly the tables' metadata."""

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import JSON, Column, Engine, Integer, MetaData, Table, insert, inspect, select

from siteaudit.adapters.sql import migrate, sql_unit_of_work_factory
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.migration import alembic_config, current_revision, head_revision
from siteaudit.adapters.sql.tables import audits, crawl_reports, metadata, users


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


def _check_identities_move_out_of_the_report(engine: Engine) -> None:
    """0005: identities stored in a report's stats move to their own column, the report keeps its order."""
    migrate(engine, "0004")
    identities = {"format": "blake2b-sorted-zlib-v1", "bits": 21, "count": 0, "keys": "", "error_keys": ""}
    kept = {
        "crawl_id": 1,
        "health_score": 90,
        "stats": {"timings": {"b": 1, "a": 2}, "diff_basis": "issue_rows"},
    }
    archived = {**kept, "crawl_id": 2, "stats": {**kept["stats"], "archived_identities": identities}}
    moment = datetime(2026, 11, 25, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(insert(users).values(id=1, email="a@b.example", plan="free", name="", created_at=moment))
        for audit_id, report in ((1, kept), (2, archived)):
            conn.execute(
                insert(audits).values(
                    id=audit_id, team_id=1, user_id=1, payer_id=1, url="https://a.example/",
                    origin="https://a.example", created_at=moment, max_pages=10, concurrency=2, max_rps=2.0,
                    trigger="api", status="done", credits_reserved=0, verify_token_set=False,
                    pages_crawled=0, pages_not_modified=0, partial=False, version=1,
                )
            )  # fmt: skip
            conn.execute(insert(reports_0004).values(audit_id=audit_id, report=report))
    migrate(engine)
    with engine.connect() as conn:
        rows = {r.audit_id: r for r in conn.execute(select(crawl_reports))}
    assert rows[1].report == kept and rows[1].archived_identities is None
    assert rows[2].report == kept | {"crawl_id": 2} and rows[2].archived_identities == identities
    assert list(rows[2].report["stats"]) == ["timings", "diff_basis"]
    assert list(rows[2].report["stats"]["timings"]) == ["b", "a"]
    with engine.connect() as conn:
        command.downgrade(alembic_config(conn), "0004")
        conn.commit()
    with engine.connect() as conn:
        stored = conn.execute(select(reports_0004.c.report).where(reports_0004.c.audit_id == 2)).scalar_one()
    assert stored == archived
    assert list(stored["stats"]) == ["timings", "diff_basis", "archived_identities"]


# crawl_reports as revision 0004 had it
reports_0004 = Table("crawl_reports", MetaData(), Column("audit_id", Integer), Column("report", JSON))


def test_identities_move_out_of_the_report_on_sqlite(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'identities.sqlite3'}")
    try:
        _check_identities_move_out_of_the_report(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_identities_move_out_of_the_report_on_postgresql(new_postgres_database: Callable[[], str]) -> None:
    engine = create_engine(new_postgres_database())
    try:
        _check_identities_move_out_of_the_report(engine)
    finally:
        engine.dispose()


def _check_last_progress_is_backfilled(engine: Engine) -> None:
    """0006: audits get `last_progress_at`, filled with when they ended, else started (queued: null)."""
    migrate(engine, "0005")
    created = datetime(2026, 11, 25, 9, tzinfo=UTC)
    started, finished = datetime(2026, 11, 25, 9, 1, tzinfo=UTC), datetime(2026, 11, 25, 9, 5, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(
            insert(users).values(id=1, email="a@b.example", plan="free", name="", created_at=created)
        )
        for audit_id, status, times in (
            (1, "queued", {}),
            (2, "running", {"started_at": started}),
            (3, "done", {"started_at": started, "finished_at": finished}),
        ):
            conn.execute(
                insert(audits).values(
                    id=audit_id, team_id=1, user_id=1, payer_id=1, url="https://a.example/",
                    origin="https://a.example", created_at=created, max_pages=10, concurrency=2, max_rps=2.0,
                    trigger="api", status=status, credits_reserved=0, verify_token_set=False,
                    pages_crawled=0, pages_not_modified=0, partial=False, version=1, **times,
                )
            )  # fmt: skip
    migrate(engine)
    with engine.connect() as conn:
        rows = {
            r.id: r.last_progress_at for r in conn.execute(select(audits.c.id, audits.c.last_progress_at))
        }
    assert rows == {1: None, 2: started, 3: finished}
    assert _drift(engine) == []
    with engine.connect() as conn:
        command.downgrade(alembic_config(conn), "0005")
        conn.commit()
    assert "last_progress_at" not in {c["name"] for c in inspect(engine).get_columns("audits")}


def test_last_progress_is_backfilled_on_sqlite(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'progress.sqlite3'}")
    try:
        _check_last_progress_is_backfilled(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_last_progress_is_backfilled_on_postgresql(new_postgres_database: Callable[[], str]) -> None:
    engine = create_engine(new_postgres_database())
    try:
        _check_last_progress_is_backfilled(engine)
    finally:
        engine.dispose()
