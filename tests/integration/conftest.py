"""Integration fixtures: a PostgreSQL database of its own per test session, created and dropped here.

PostgreSQL is expected on 127.0.0.1:5432 (trust auth, user postgres), or at SITEAUDIT_TEST_POSTGRES_URL (a
URL of a database the tests may connect to in order to create and drop their own). When it cannot be
reached the PostgreSQL tests are skipped, except on CI (CI=true), where they fail.
"""

import os
import secrets
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


@pytest.fixture(scope="session")
def new_postgres_database() -> Iterator[object]:
    """A factory of fresh, empty databases (random names), all dropped at the end of the session."""
    created: list[str] = []

    def create() -> str:
        name = f"siteaudit_test_{secrets.token_hex(6)}"
        with _admin() as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        created.append(name)
        return _database_url(name)

    yield create
    if created:
        from siteaudit.adapters.sql import dispose_engines

        dispose_engines()
        with _admin() as admin:
            for name in created:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def postgres_url(new_postgres_database: object) -> str:
    """The session's own PostgreSQL database, empty (not migrated)."""
    assert callable(new_postgres_database)
    url = new_postgres_database()
    assert isinstance(url, str)
    return url
