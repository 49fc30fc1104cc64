"""Archiving through the SQL adapter, on a SQLite file and on PostgreSQL: rows go, the report and the diff stay."""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.sql import SqlCrawlStore, migrate, sql_unit_of_work_factory
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.tables import crawl_issues, crawl_links, crawl_pages, crawl_reports, crawl_urls
from siteaudit.adapters.system import FixedClock
from siteaudit.domain.diff import DiffBasis
from siteaudit.domain.ids import AuditId
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services import archive
from tests.unit.services.test_archive import a_site, an_account, run_audit


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "sqlite":
        made = create_engine(f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}")
    else:
        made = create_engine(request.getfixturevalue("new_postgres_database")(migrated=True))
    migrate(made)
    yield made
    made.dispose()


def rows_of(engine: Engine, audit_id: AuditId) -> int:
    with engine.connect() as conn:
        return sum(
            conn.execute(select(func.count()).select_from(t).where(t.c.audit_id == audit_id)).scalar_one()
            for t in (crawl_pages, crawl_links, crawl_issues, crawl_urls)
        )


def two_audits_the_first_archived(
    uow: Callable[[], UnitOfWork], crawl: CrawlStore, clock: FixedClock
) -> tuple[AuditId, AuditId]:
    owner = an_account(uow, clock)
    first = run_audit(uow, crawl, clock, owner, a_site(broken=("/gone", "/lost"), title="Home"))
    assert archive.archive_audits(uow=uow(), crawl=crawl, clock=clock, older_than_days=None, keep_last=0) == [
        first
    ]
    later = run_audit(
        uow, crawl, clock, owner, a_site(broken=("/lost", "/missing"), title="Retro Clock shop")
    )
    return first, later


def test_archiving_on_sql_deletes_the_rows_and_the_later_diff_matches_memory(engine: Engine) -> None:
    uow = sql_unit_of_work_factory(engine, secret_key="archive-test-key-of-some-length")
    crawl = SqlCrawlStore(engine)
    first, later = two_audits_the_first_archived(uow, crawl, FixedClock())
    with uow() as work:
        assert work.audits.get_any(first).archived_at is not None
        assert work.audits.get_any(later).archived_at is None
    assert rows_of(engine, first) == 0
    assert rows_of(engine, later) > 0
    kept = crawl.report(first)
    assert kept is not None and crawl.archived_identities(first) is not None
    with engine.connect() as conn:  # the identities have their own column, never the report's stats
        stored = conn.execute(
            select(crawl_reports.c.report).where(crawl_reports.c.audit_id == first)
        ).scalar_one()
    assert "archived_identities" not in stored["stats"]

    store = MemoryStore()
    memory = MemoryCrawlStore()
    _, memory_later = two_audits_the_first_archived(lambda: MemoryUnitOfWork(store), memory, FixedClock())
    sql_report, memory_report = crawl.report(later), memory.report(memory_later)
    assert sql_report is not None and memory_report is not None
    assert sql_report.stats.diff_basis is DiffBasis.ARCHIVED_IDENTITIES
    assert sql_report.diff == memory_report.diff
    assert sql_report.diff is not None and sql_report.diff.new > 0 and sql_report.diff.fixed > 0
