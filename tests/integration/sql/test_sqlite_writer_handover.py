"""SQLite's writers of one file hand it over through a lock of the process, released however a writer ends:
commit, rollback, an exception, a failed commit, an invalidated connection, a thread that dies with its
transaction open. None of these leaves the lock held (no deadlock) or loses a committed write."""

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Column, Engine, ForeignKey, Integer, MetaData, Table, event, func, insert, select
from sqlalchemy.exc import IntegrityError, OperationalError

from siteaudit.adapters.sql import engine as sql_engine
from siteaudit.adapters.sql.engine import READ_ONLY, create_engine

metadata = MetaData()
clocks = Table("clocks", metadata, Column("id", Integer, primary_key=True), Column("owner", Integer))
parts = Table(
    "parts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("clock", Integer, ForeignKey("clocks.id", deferrable=True, initially="DEFERRED")),
)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "handover.sqlite3"


@pytest.fixture
def engine(path: Path) -> Iterator[Engine]:
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    yield engine
    engine.dispose()


def impatient(engine: Engine) -> Engine:
    """SQLite's busy timeout off for this engine's connections: a writer that met another's write lock in
    SQLite, instead of waiting its turn in the process, would fail at once with "database is locked"."""

    @event.listens_for(engine, "connect")
    def _no_busy_timeout(dbapi_connection: object, _record: object) -> None:
        dbapi_connection.execute("PRAGMA busy_timeout=0")  # type: ignore[attr-defined]

    engine.dispose()  # connections opened before the listener
    return engine


def held(path: Path) -> bool:
    return sql_engine._writer_lock(path).locked()


def clock_count(engine: Engine) -> int:
    with engine.connect().execution_options(**{READ_ONLY: True}) as conn:
        return int(conn.execute(select(func.count()).select_from(clocks)).scalar_one())


def test_a_writer_waits_its_turn_in_the_process_not_on_sqlites_busy_timeout(
    engine: Engine, path: Path
) -> None:
    impatient(engine)
    asking, failures = threading.Event(), []

    def second() -> None:
        asking.set()
        try:
            with engine.begin() as conn:
                conn.execute(insert(clocks).values(owner=2))
        except OperationalError as error:
            failures.append(error)

    with engine.begin() as conn:
        conn.execute(insert(clocks).values(owner=1))
        thread = threading.Thread(target=second)
        thread.start()
        asking.wait()
        thread.join(0.3)  # the second writer reaches its BEGIN while this one holds the file
    thread.join()

    assert failures == []
    assert clock_count(engine) == 2
    assert not held(path)


def test_writers_on_many_threads_all_commit(engine: Engine, path: Path) -> None:
    impatient(engine)
    failures: list[BaseException] = []

    def write(owner: int) -> None:
        try:
            for _ in range(20):
                with engine.begin() as conn:
                    conn.execute(insert(clocks).values(owner=owner))
        except OperationalError as error:
            failures.append(error)

    threads = [threading.Thread(target=write, args=(owner,)) for owner in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert clock_count(engine) == 80
    assert not held(path)


def test_a_writer_that_raises_mid_way_hands_over(engine: Engine, path: Path) -> None:
    def use_case() -> None:
        with engine.begin() as conn:
            conn.execute(insert(clocks).values(owner=1))
            assert held(path)
            raise RuntimeError("the use case failed half-way")

    with pytest.raises(RuntimeError):
        use_case()

    assert not held(path)
    assert clock_count(engine) == 0


def test_a_commit_that_fails_is_reported_as_before_and_hands_over(engine: Engine, path: Path) -> None:
    with pytest.raises(IntegrityError), engine.begin() as conn:
        conn.execute(insert(parts).values(clock=404))  # the foreign key is checked at COMMIT

    assert not held(path)
    with engine.begin() as conn:
        conn.execute(insert(clocks).values(owner=1))
    assert clock_count(engine) == 1


def test_a_thread_that_dies_with_its_transaction_open_hands_over(engine: Engine, path: Path) -> None:
    def dies() -> None:
        conn = engine.connect()
        conn.execute(insert(clocks).values(owner=1))  # begins the write; never committed nor closed
        assert held(path)

    thread = threading.Thread(target=dies)
    thread.start()
    thread.join()
    # A connection and its transaction refer to each other: the collector frees them, and until then the
    # connection holds SQLite's own write lock too, as it always did.
    gc.collect()

    assert not held(path)
    with impatient(engine).begin() as conn:
        conn.execute(insert(clocks).values(owner=2))
    assert clock_count(engine) == 1  # the dead writer's row rolled back, the next one's kept


def test_an_invalidated_connection_hands_over(engine: Engine, path: Path) -> None:
    conn = engine.connect()
    conn.execute(insert(clocks).values(owner=1))
    assert held(path)
    conn.invalidate()

    assert not held(path)
    conn.close()
    with impatient(engine).begin() as other:
        other.execute(insert(clocks).values(owner=2))
    assert clock_count(engine) == 1


def test_a_reader_takes_no_turn(engine: Engine, path: Path) -> None:
    with engine.connect().execution_options(**{READ_ONLY: True}) as reader:
        reader.execute(select(clocks)).all()
        assert not held(path)
        with engine.begin() as writer:
            writer.execute(insert(clocks).values(owner=1))
    assert clock_count(engine) == 1


@pytest.mark.timeout(60)
def test_a_thread_writing_on_two_connections_fails_as_sqlite_would_instead_of_hanging(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql_engine, "SQLITE_BUSY_TIMEOUT_S", 0.2)
    engine = create_engine(f"sqlite:///{path}")
    metadata.create_all(engine)
    try:
        with engine.begin() as first:
            first.execute(insert(clocks).values(owner=1))
            with pytest.raises(OperationalError, match="database is locked"), engine.begin() as second:
                second.execute(insert(clocks).values(owner=2))
        assert not held(path)
        assert clock_count(engine) == 1
    finally:
        engine.dispose()
