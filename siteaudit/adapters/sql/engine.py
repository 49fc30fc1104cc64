"""Engines for the two databases: PostgreSQL through psycopg 3, and a SQLite file with one writer at a time."""

import sqlite3
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, event
from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy.engine import make_url

# SQLite waits this long for the write lock before answering "database is locked".
SQLITE_BUSY_TIMEOUT_S = 30.0
# An execution option: a connection that only reads (streams, lists) begins a deferred transaction on
# SQLite, so it takes no write lock and, under WAL, never blocks the writer.
READ_ONLY = "siteaudit_read_only"

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
    return sa_create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, **options)


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


def _make_sqlite_behave(engine: Engine) -> None:
    """WAL, foreign keys, a busy timeout, and `BEGIN IMMEDIATE`: one writer, taken at the first statement.

    The sqlite3 module's own transaction handling is turned off (isolation_level None) so that SQLAlchemy's
    `begin` decides how a transaction starts. A deferred BEGIN would take the write lock only at the first
    write, and two such transactions that both read first cannot both upgrade: one fails at once instead of
    waiting. Taking the lock at BEGIN makes writers queue on the busy timeout instead.
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
        read_only = connection.get_execution_options().get(READ_ONLY, False)
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")
