"""Integration fixtures: a PostgreSQL database of its own per test session, created and dropped here.

PostgreSQL is expected on 127.0.0.1:5432 (trust auth, user postgres), or at SITEAUDIT_TEST_POSTGRES_URL (a
URL of a database the tests may connect to in order to create and drop their own). When it cannot be
reached the PostgreSQL tests are skipped, except on CI (CI=true), where they fail.
"""

import os
import secrets
import threading
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

ADMIN_URL = os.environ.get("SITEAUDIT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def _admin() -> psycopg.Connection:
    try:
        return psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        message = f"PostgreSQL is not reachable at {ADMIN_URL}: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)


def _database_url(name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    user = info.get("user", "postgres")
    password = f":{info['password']}" if info.get("password") else ""
    host = info.get("host", "127.0.0.1")
    port = info.get("port", 5432)
    return f"postgresql+psycopg://{user}{password}@{host}:{port}/{name}"


def _drop_all(names: list[str]) -> None:
    """Drop the databases a few at a time: each DROP DATABASE waits for a checkpoint, and concurrent ones
    share it (dropped one after the other, a session's forty databases cost half a minute)."""

    def drop(batch: list[str]) -> None:
        with _admin() as admin:
            for name in batch:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    lanes = min(8, len(names))
    threads = [threading.Thread(target=drop, args=(names[lane::lanes],)) for lane in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class DatabaseFactory:
    """Fresh databases with random names, all dropped at the end of the session. `create()` makes an empty
    one; `create(migrated=True)` a copy of the newest schema (`CREATE DATABASE ... TEMPLATE`: a file copy,
    several times quicker than running the migrations again for every database)."""

    def __init__(self) -> None:
        self.created: list[str] = []
        self._template = ""
        self._lock = threading.Lock()

    def _new(self, template: str = "") -> str:
        name = f"siteaudit_test_{secrets.token_hex(6)}"
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            statement = sql.SQL("{} TEMPLATE {}").format(statement, sql.Identifier(template))
        with _admin() as admin:
            admin.execute(statement)
        self.created.append(name)
        return name

    def _migrated_template(self) -> str:
        with self._lock:
            if not self._template:
                from siteaudit.adapters.sql import migrate

                name = self._new()
                migrate(_database_url(name))  # disposes its engine: nobody stays connected to the template
                self._template = name
            return self._template

    def __call__(self, *, migrated: bool = False) -> str:
        return _database_url(self._new(self._migrated_template() if migrated else ""))


@pytest.fixture(scope="session")
def new_postgres_database() -> Iterator[DatabaseFactory]:
    """A factory of fresh databases (random names), empty or migrated, all dropped at the end of the session."""
    factory = DatabaseFactory()
    yield factory
    if factory.created:
        from siteaudit.adapters.sql import dispose_engines

        dispose_engines()
        _drop_all(factory.created)


@pytest.fixture(scope="session")
def postgres_url(new_postgres_database: DatabaseFactory) -> str:
    """The session's own PostgreSQL database, empty (not migrated)."""
    return new_postgres_database()
