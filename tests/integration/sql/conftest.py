"""Backends for the contract suites: the memory adapters, a SQLite file and the session's PostgreSQL."""

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sql_backend import Backend
from sqlalchemy import Engine

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql import SqlCrawlStore, SqlUnitOfWork, migrate
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.tables import metadata


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated once; each test copies it (cheaper than migrating per test)."""
    path = tmp_path_factory.mktemp("sqlite") / "template.sqlite3"
    engine = create_engine(f"sqlite:///{path}")
    migrate(engine)
    engine.dispose()  # the last connection to close checkpoints the WAL into the file
    assert not path.with_name(path.name + "-wal").exists()
    return path


@pytest.fixture
def sqlite_engine(sqlite_template: Path, tmp_path: Path) -> Iterator[Engine]:
    path = tmp_path / "siteaudit.sqlite3"
    shutil.copyfile(sqlite_template, path)
    engine = create_engine(f"sqlite:///{path}")
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def postgres_engine_session(postgres_url: str) -> Iterator[Engine]:
    engine = create_engine(postgres_url)
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def postgres_engine(postgres_engine_session: Engine) -> Engine:
    """The session's migrated database, emptied before the test (DELETE: far quicker than TRUNCATE here)."""
    with postgres_engine_session.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())
    return postgres_engine_session


# One key for the session: webhook secrets are sealed as in production, on every SQL backend.
SECRET_BOX = SecretBox(SecretBox.generate_key())

BACKENDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
SQL_BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def _backend(name: str, request: pytest.FixtureRequest) -> Backend:
    if name == "memory":
        store = MemoryStore()
        return Backend("memory", lambda: MemoryUnitOfWork(store), MemoryCrawlStore())
    engine: Engine = request.getfixturevalue(f"{name}_engine")
    return Backend(name, lambda: SqlUnitOfWork(engine, SECRET_BOX), SqlCrawlStore(engine), engine)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return _backend(request.param, request)


@pytest.fixture(params=SQL_BACKENDS)
def sql_backend(request: pytest.FixtureRequest) -> Backend:
    return _backend(request.param, request)
