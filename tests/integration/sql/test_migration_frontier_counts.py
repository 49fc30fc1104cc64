"""Migration 0013: audits crawling while the schema moves on get frontier counters from their rows."""

from collections.abc import Callable
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Engine, insert, inspect

from siteaudit.adapters.sql import SqlCrawlStore, migrate
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.migration import alembic_config
from siteaudit.adapters.sql.tables import crawl_frontier
from siteaudit.domain.ids import AuditId
from siteaudit.ports.crawl import FrontierState


def _check_counters_are_backfilled(engine: Engine) -> None:
    migrate(engine, "0007")
    states = [FrontierState.QUEUED] * 5 + [FrontierState.DONE] * 3 + [FrontierState.SKIPPED]
    with engine.begin() as conn:
        for audit_id, rows in ((1, states), (2, states[:2])):
            conn.execute(
                insert(crawl_frontier),
                [
                    {"audit_id": audit_id, "url_id": n, "depth": 1, "state": state.value}
                    for n, state in enumerate(rows, start=1)
                ],
            )
    migrate(engine)
    store = SqlCrawlStore(engine)
    assert store.frontier_counts(AuditId(1)) == {
        FrontierState.QUEUED: 5,
        FrontierState.DONE: 3,
        FrontierState.SKIPPED: 1,
    }
    assert store.frontier_counts(AuditId(2)) == {FrontierState.QUEUED: 2}
    for audit_id in (1, 2):
        assert store.frontier_counts(AuditId(audit_id)) == store.frontier_recount(AuditId(audit_id))
    store.frontier_mark(AuditId(2), [1, 2], FrontierState.DONE)  # and they move on from there
    assert store.frontier_counts(AuditId(2)) == {FrontierState.DONE: 2}
    with engine.connect() as conn:
        command.downgrade(alembic_config(conn), "0007")
        conn.commit()
    assert "crawl_frontier_counts" not in inspect(engine).get_table_names()


def test_frontier_counters_are_backfilled_on_sqlite(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'counters.sqlite3'}")
    try:
        _check_counters_are_backfilled(engine)
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_frontier_counters_are_backfilled_on_postgresql(new_postgres_database: Callable[[], str]) -> None:
    engine = create_engine(new_postgres_database())
    try:
        _check_counters_are_backfilled(engine)
    finally:
        engine.dispose()
