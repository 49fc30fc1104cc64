"""SQLite's one writer and the unit of work: a use case that only reads takes no write lock, and one that
writes takes it at its first write, waiting for it rather than failing (engine.py, LAZY_BEGIN)."""

import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sql_backend import T0
from sqlalchemy import Engine

from siteaudit.adapters.sql import SqlUnitOfWork
from siteaudit.adapters.sql import engine as engine_module
from siteaudit.domain.ids import ApiKeyId

OTHERS_WAIT_S = 0.2  # the other connection's busy timeout: "not held up" means it never waits this long


@pytest.fixture
def path(sqlite_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "siteaudit.sqlite3"
    shutil.copyfile(sqlite_template, path)
    return path


@pytest.fixture
def engine(path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setattr(engine_module, "SQLITE_BUSY_TIMEOUT_S", 2.0)  # a unit of work held up fails in 2 s
    engine = engine_module.create_engine(f"sqlite:///{path}")
    yield engine
    engine.dispose()


@pytest.fixture
def other(path: Path) -> Iterator[sqlite3.Connection]:
    """Another process's connection to the same file, in autocommit mode."""
    connection = sqlite3.connect(path, timeout=OTHERS_WAIT_S, isolation_level=None, check_same_thread=False)
    connection.execute("CREATE TABLE scratch (n INTEGER)")
    yield connection
    connection.close()


def test_a_unit_of_work_that_only_reads_neither_waits_for_a_writer_nor_holds_one_up(
    engine: Engine, other: sqlite3.Connection
) -> None:
    other.execute("BEGIN IMMEDIATE")
    with SqlUnitOfWork(engine) as uow:
        assert uow.users.count() == 0  # the writer holds the lock: the read goes on
        other.execute("INSERT INTO scratch VALUES (1)")
        other.execute("COMMIT")
        other.execute("INSERT INTO scratch VALUES (2)")  # ... and a writer goes on beside the open read
        assert uow.users.count() == 0


def test_a_unit_of_work_that_read_first_writes_after_another_writer_committed(
    engine: Engine, other: sqlite3.Connection
) -> None:
    with SqlUnitOfWork(engine) as uow:
        assert uow.users.count() == 0
        other.execute(
            "INSERT INTO scratch VALUES (1)"
        )  # after the read: a read transaction could not upgrade
        uow.keys.touch(ApiKeyId(1), T0)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("INSERT INTO scratch VALUES (2)")  # from its first write on, it holds the writer
        uow.commit()
    other.execute("INSERT INTO scratch VALUES (3)")


def test_a_unit_of_work_that_read_first_waits_for_a_held_writer_at_its_first_write(
    engine: Engine, other: sqlite3.Connection
) -> None:
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO scratch VALUES (1)")
    released = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    with SqlUnitOfWork(engine) as uow:
        assert uow.users.count() == 0
        released.start()
        uow.keys.touch(ApiKeyId(1), T0)  # waits the 0.5 s, not SQLITE_BUSY at once
        uow.commit()
    released.join()
    assert other.execute("SELECT count(*) FROM scratch").fetchone() == (1,)
