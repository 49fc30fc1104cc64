"""Alembic, run from code: `migrate(database_url)` brings a database to the latest schema."""

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from attrs import frozen
from sqlalchemy import Connection, Engine, text

from siteaudit.adapters.sql.engine import create_engine

MIGRATIONS = Path(__file__).parent / "migrations"
# Any constant works: it only has to be the same in every process that migrates the same database.
_PG_MIGRATION_LOCK = 0x5174_A0D1


def alembic_config(connection: Connection | None = None) -> Config:
    """A Config built in code (no alembic.ini at runtime); env.py uses `connection` when given."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(database: str | Engine) -> str | None:
    engine = create_engine(database) if isinstance(database, str) else database
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


@frozen
class Migrated:
    """What `migrate` did: the schema revision before (None: an empty database) and after."""

    before: str | None
    after: str | None

    def describe(self) -> str:
        """One line for people: created, upgraded, or nothing to do."""
        if self.before == self.after:
            return f"nothing to do: the schema is already at revision {self.after}"
        if self.before is None:
            return f"created the schema at revision {self.after}"
        return f"upgraded the schema from revision {self.before} to {self.after}"


def migrate(database: str | Engine, revision: str = "head") -> Migrated:
    """Upgrade to `revision`. On PostgreSQL an advisory lock lets several processes call this at once."""
    engine = create_engine(database) if isinstance(database, str) else database
    try:
        with engine.connect() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
                connection.commit()
            try:
                before = MigrationContext.configure(connection).get_current_revision()
                command.upgrade(alembic_config(connection), revision)
                connection.commit()
                return Migrated(before, MigrationContext.configure(connection).get_current_revision())
            finally:
                if connection.dialect.name == "postgresql":
                    connection.rollback()
                    connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _PG_MIGRATION_LOCK})
                    connection.commit()
    finally:
        if isinstance(database, str):
            engine.dispose()
