"""Both units of work are the `UnitOfWork` protocol as mypy sees it (this file is checked with mypy)."""

from collections.abc import Callable
from pathlib import Path

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.sql import SqlUnitOfWork, sql_unit_of_work_factory
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.ports.repository import UnitOfWork


def test_the_memory_and_sql_units_of_work_are_units_of_work(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}")
    try:
        memory: UnitOfWork = MemoryUnitOfWork(MemoryStore())
        sql: UnitOfWork = SqlUnitOfWork(engine)
        factory: Callable[[], UnitOfWork] = sql_unit_of_work_factory(engine)
        for uow in (memory, sql, factory()):
            with uow:
                assert uow.users.count() == 0
                assert uow.sites.due.__name__ == "due"
    finally:
        engine.dispose()
