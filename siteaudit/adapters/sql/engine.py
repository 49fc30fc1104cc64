"""Engines for the two databases: PostgreSQL through psycopg 3, and a SQLite file with one writer at a time."""

import json
import re
import select
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import orjson
from sqlalchemy import Connection, Engine, event, exc
from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection, DBAPICursor, ExecutionContext
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection
from sqlalchemy.sql import CompoundSelect, Select

# SQLite waits this long for the write lock before answering "database is locked".
SQLITE_BUSY_TIMEOUT_S = 30.0
# An execution option: a connection that only reads (streams, lists) begins a deferred transaction on
# SQLite, so it takes no write lock and, under WAL, never blocks the writer.
# On PostgreSQL it also means LAZY_BEGIN.
READ_ONLY = "siteaudit_read_only"
# An execution option: statements that only read run before the transaction that writes, which begins at
# the first statement that may write. On PostgreSQL they run outside any transaction (autocommit): under
# READ COMMITTED, the default, this changes nothing a use case can see (every statement takes its own
# snapshot either way, and a plain SELECT holds no row lock) and saves a read-only use case its BEGIN and
# ROLLBACK round trips. On SQLite they run in a deferred (read) transaction, which takes no write lock and,
# under WAL, neither waits for the writer nor holds it up; the first statement that may write ends it and
# begins BEGIN IMMEDIATE, so a read transaction is never upgraded (an upgrade cannot wait for the writer:
# once another writer committed it fails at once with SQLITE_BUSY).
LAZY_BEGIN = "siteaudit_lazy_begin"

# PostgreSQL pool: no ping on every checkout (a round trip per use case). A connection is pinged only
# after it sat idle this long; sooner, a dead one is noticed without a round trip (see `_alive`).
PING_AFTER_IDLE_S: Final = 30.0
POOL_RECYCLE_S: Final = 1800
_IDLE_SINCE: Final = "siteaudit_idle_since"

_engines: dict[str, Engine] = {}
_engines_lock = threading.Lock()


def normalise_url(database_url: str) -> str:
    """`postgresql://` and `postgres://` mean psycopg 3; other drivers are refused."""
    url = make_url(database_url)
    backend, _, driver = url.drivername.partition("+")
    if backend in ("postgresql", "postgres"):
        if driver not in ("", "psycopg"):
            raise ValueError(f"PostgreSQL is reached through psycopg 3 (postgresql+psycopg://), not {driver}")
        return url.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    if backend == "sqlite":
        if driver not in ("", "pysqlite"):
            raise ValueError(f"SQLite is reached through the standard library's sqlite3, not {driver}")
        if url.database in (None, "", ":memory:"):
            raise ValueError(
                "SQLite needs a file (sqlite:///path/to/siteaudit.sqlite3): several connections share it"
            )
        return url.render_as_string(hide_password=False)
    raise ValueError(f"unsupported database URL scheme {url.drivername!r}: use postgresql:// or sqlite:///")


def create_engine(database_url: str, **options: Any) -> Engine:
    """A new engine. Prefer `engine_for`, which shares one engine (one pool) per URL in the process."""
    url = make_url(normalise_url(database_url))
    if url.get_backend_name() == "sqlite":
        assert url.database is not None
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = sa_create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False},
            **options,
        )
        _make_sqlite_behave(engine)
        return engine
    options.setdefault("json_deserializer", json_loads)
    engine = sa_create_engine(
        url, pool_pre_ping=False, pool_recycle=POOL_RECYCLE_S, pool_size=10, max_overflow=20, **options
    )
    _make_postgres_behave(engine)
    return engine


# orjson reads integers beyond 64 bits as floats; the standard library keeps them exact. Twenty digits in a
# row (in a number or a string: the check does not tell them apart) send a document the exact way.
_LONG_DIGITS: Final = re.compile(rb"[0-9]{20}")


def json_loads(document: str | bytes) -> Any:
    """JSON columns as PostgreSQL hands them over, parsed by orjson (an issue page holds fifty `details`
    objects: the standard library's parser was a fifth of the request). Whatever orjson would read
    differently (integers beyond 64 bits) or refuses (NaN) goes through the standard library."""
    data = document.encode() if isinstance(document, str) else document
    if _LONG_DIGITS.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


def engine_for(database_url: str) -> Engine:
    """The process's engine for `database_url`, created on first use."""
    key = normalise_url(database_url)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            engine = _engines[key] = create_engine(key)
        return engine


def dispose_engines() -> None:
    """Close every shared engine's connections (tests, and before a process forks)."""
    with _engines_lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


def is_sqlite(engine: Engine | Connection) -> bool:
    return engine.dialect.name == "sqlite"


@contextmanager
def autocommit_driver(engine: Engine) -> Iterator[Any]:
    """The pooled psycopg connection itself, in autocommit (each statement its own transaction: no BEGIN
    or COMMIT round trips), without SQLAlchemy's per-statement work; for the hot one-statement paths.
    The pool hands it to its next user with transactions on again (`_make_postgres_behave`), and
    notices before reuse if it broke here."""
    pooled = engine.raw_connection()
    try:
        driver: Any = pooled.driver_connection
        driver.autocommit = True
        yield driver
    finally:
        pooled.close()


def _make_sqlite_behave(engine: Engine) -> None:
    """WAL, foreign keys, a busy timeout, and `BEGIN IMMEDIATE`: one writer, taken at the first statement,
    or with LAZY_BEGIN at the first statement that may write.

    The sqlite3 module's own transaction handling is turned off (isolation_level None) so that SQLAlchemy's
    `begin` decides how a transaction starts. A deferred BEGIN would take the write lock only at the first
    write, and two such transactions that both read first cannot both upgrade: one fails at once instead of
    waiting. Taking the lock at BEGIN makes writers queue on the busy timeout instead. With LAZY_BEGIN the
    reads before the first write run in a deferred transaction of their own, ended (not upgraded) when
    the first statement that may write begins BEGIN IMMEDIATE: a unit of work that only reads never waits
    for the writer.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints; WAL keeps commits atomic
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        options = connection.get_execution_options()
        connection.info[_READING] = False
        read_only, lazy = options.get(READ_ONLY, False), options.get(LAZY_BEGIN, False)
        connection.exec_driver_sql("BEGIN" if read_only or lazy else "BEGIN IMMEDIATE")
        connection.info[_READING] = lazy and not read_only

    def _write(connection: Connection) -> None:
        connection.info[_READING] = False
        driver: Any = connection.connection.driver_connection
        driver.execute("COMMIT")  # the reads' transaction: it wrote nothing
        driver.execute("BEGIN IMMEDIATE")

    _before_writes(engine, lambda connection: bool(connection.info.get(_READING)), _write)


def _make_postgres_behave(engine: Engine) -> None:
    """Cheap checkouts (no ping per use case; a dead connection replaced before use) and LAZY_BEGIN.

    LAZY_BEGIN drives psycopg's own transaction handling: in autocommit mode it sends statements as they
    are; switched out of it, it sends BEGIN before the next statement, and its commit and rollback send
    nothing when no transaction is open.
    """
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _on_checkin(dbapi_connection: DBAPIConnection | None, record: ConnectionPoolEntry) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(
        dbapi_connection: DBAPIConnection, record: ConnectionPoolEntry, proxy: PoolProxiedConnection
    ) -> None:
        idle_since = record.info.get(_IDLE_SINCE)
        ping = idle_since is not None and time.monotonic() - idle_since > PING_AFTER_IDLE_S
        if not _alive(dbapi_connection, ping=ping, ping_with=dialect.do_ping):
            # The pool discards this connection and checks out (or opens) another: the documented
            # "pessimistic disconnect handling", without its round trip on every checkout.
            raise exc.DisconnectionError("the pooled PostgreSQL connection is gone")
        driver: Any = dbapi_connection
        if driver.autocommit:  # left lazy by its last user: whoever comes next expects transactions
            driver.autocommit = False

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        options = connection.get_execution_options()
        if options.get("isolation_level") == "AUTOCOMMIT":
            return  # SQLAlchemy's own autocommit, set on purpose
        lazy = bool(options.get(LAZY_BEGIN) or options.get(READ_ONLY))
        driver: Any = connection.connection.driver_connection
        if driver.autocommit != lazy and driver.info.transaction_status == _IDLE:
            driver.autocommit = lazy

    def _lazy(connection: Connection) -> bool:
        driver: Any = connection.connection.driver_connection
        return bool(driver.autocommit)

    def _write(connection: Connection) -> None:
        if connection.get_execution_options().get("isolation_level") != "AUTOCOMMIT":
            driver: Any = connection.connection.driver_connection
            driver.autocommit = False  # psycopg sends BEGIN before this statement

    _before_writes(engine, _lazy, _write)


def _before_writes(
    engine: Engine, waiting: Callable[[Connection], bool], begin: Callable[[Connection], None]
) -> None:
    """`begin(connection)` before a statement that may write (`_only_reads`) while `waiting(connection)`:
    LAZY_BEGIN's transaction, on either database."""

    @event.listens_for(engine, "before_cursor_execute")
    def _before_execute(
        connection: Connection,
        cursor: DBAPICursor,
        statement: str,
        parameters: Any,
        context: ExecutionContext | None,
        executemany: bool,
    ) -> None:
        if waiting(connection) and not _only_reads(context):
            begin(connection)


# Connection.info: a SQLite LAZY_BEGIN transaction that has only read so far.
_READING: Final = "siteaudit_reading"
_IDLE: Final = 0  # psycopg.pq.TransactionStatus.IDLE
_CONNECTION_OK: Final = 0  # psycopg.pq.ConnStatus.OK


def _only_reads(context: ExecutionContext | None) -> bool:
    """Whether a statement certainly writes nothing and needs no transaction: a SELECT built with
    SQLAlchemy, without FOR UPDATE/SHARE, read through a client-side cursor. Text and driver SQL, DML,
    savepoints and server-side cursors (DECLARE needs a transaction) all begin one. So a SELECT calling a
    function that writes or takes a transaction-scoped lock must be written as text()."""
    compiled = getattr(context, "compiled", None)
    # `_is_server_side` is set by SQLAlchemy's execution context when it made a named (server) cursor.
    if compiled is None or getattr(context, "_is_server_side", False):
        return False
    statement = compiled.statement
    return isinstance(statement, Select | CompoundSelect) and statement._for_update_arg is None


def _alive(dbapi_connection: DBAPIConnection, *, ping: bool, ping_with: Callable[[Any], Any]) -> bool:
    """Whether an idle pooled psycopg connection can still be used. A server that ends a connection
    (restart, idle timeout, pg_terminate_backend) sends a last message and closes the socket, so an idle
    connection whose socket has something to read is gone: that check costs no round trip. Only after a
    long idle spell, when a silent network drop becomes likely, is it pinged."""
    driver: Any = dbapi_connection
    if driver.closed or driver.broken or driver.pgconn.status != _CONNECTION_OK:
        return False
    if _readable(driver.pgconn.socket):
        return False
    if ping:
        try:
            ping_with(driver)
        except Exception:  # any failure to answer SELECT 1 means: do not use this connection
            return False
    return True


def _readable(fd: int) -> bool:
    if hasattr(select, "poll"):  # any descriptor number, unlike select()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])  # Windows
