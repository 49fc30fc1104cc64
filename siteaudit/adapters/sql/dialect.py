"""The few statements whose spelling differs between PostgreSQL and SQLite."""

from sqlalchemy import Connection, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.dml import Insert


def dialect_insert(conn: Connection, table: Table) -> postgresql.Insert | sqlite.Insert:
    """`INSERT` with the dialect's `ON CONFLICT` clauses (both databases spell them the same way)."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def insert_ignoring_conflicts(conn: Connection, table: Table) -> Insert:
    """`INSERT ... ON CONFLICT DO NOTHING`: how idempotency keys and seen-sets make replays no-ops."""
    return dialect_insert(conn, table).on_conflict_do_nothing()
