"""What the revisions in versions/ share: tables and columns added with their indexes and dropped in
reverse, named foreign keys, the columns and keys many tables have. Outside versions/, so alembic does not
take it for a revision.

A revision's DDL is history that deployed databases have run: a change here changes what every revision
using it emits, which tests/integration/sql/test_migration_ddl.py pins.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from alembic.operations import BatchOperations
from sqlalchemy.sql.schema import SchemaItem


class _OnTable:
    """What a revision declares on the table `name`, and the indexes (name: columns) it makes after."""

    def __init__(
        self, name: str, *items: SchemaItem, indexes: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        self.name = name
        self.items = items
        self.indexes = dict(indexes or {})

    def create_indexes(self, batch: BatchOperations) -> None:
        for name, columns in self.indexes.items():
            batch.create_index(batch.f(name), list(columns), unique=False)

    def drop_indexes(self, batch: BatchOperations) -> None:
        """Undo `create_indexes`, the last index first."""
        for name in reversed(list(self.indexes)):
            batch.drop_index(batch.f(name))


class NewTable(_OnTable):
    """A table a revision creates: its columns and constraints, then its indexes in this order."""


class NewColumns(_OnTable):
    """Columns a revision adds to the table `name`, then indexes in this order, in one batch (on SQLite
    alembic copies the table where ALTER TABLE cannot do it)."""

    def __init__(
        self, name: str, *columns: sa.Column[Any], indexes: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        super().__init__(name, *columns, indexes=indexes)
        self.columns = columns


def create_tables(*tables: NewTable) -> None:
    """Create `tables` in order, each with its indexes."""
    for table in tables:
        op.create_table(table.name, *table.items)
        if table.indexes:
            with op.batch_alter_table(table.name) as batch:
                table.create_indexes(batch)


def drop_tables(*tables: NewTable) -> None:
    """Undo `create_tables(*tables)`: the last table first, each one's indexes before it."""
    for table in reversed(tables):
        if table.indexes:
            with op.batch_alter_table(table.name) as batch:
                table.drop_indexes(batch)
        op.drop_table(table.name)


def add_columns(*groups: NewColumns) -> None:
    """Add each group's columns, then its indexes, in order."""
    for group in groups:
        with op.batch_alter_table(group.name) as batch:
            for column in group.columns:
                batch.add_column(column)
            group.create_indexes(batch)


def drop_columns(*groups: NewColumns) -> None:
    """Undo `add_columns(*groups)`: the last group first, its indexes, then its columns last first."""
    for group in reversed(groups):
        with op.batch_alter_table(group.name) as batch:
            group.drop_indexes(batch)
            for column in reversed(group.columns):
                batch.drop_column(column.name)


def foreign_key(table: str, column: str, target: str, ondelete: str | None = None) -> sa.ForeignKeyConstraint:
    """`table.column` refers to `target.id`, named as the schema names foreign keys."""
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete=ondelete
    )


def issue_marks(name: str, *group: sa.Column[Any]) -> NewTable:
    """Marks of a sealed audit's issues list: an issue of each (`group`, severity, check) every so many, with
    its ordinal there, where a deep page starts its walk (the revisions that create them say more)."""
    return NewTable(
        name,
        sa.Column("audit_id", sa.Integer(), nullable=False),
        *group,
        sa.Column("severity", sa.SmallInteger(), nullable=False),
        sa.Column("check_code", sa.String(length=100), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("url_id", sa.Integer(), nullable=False),
        sa.Column("issue_id", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "audit_id", *(c.name for c in group), "severity", "check_code", "ordinal", name=op.f(f"pk_{name}")
        ),
    )


def moment(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    """A point in time, stored with its zone (every time in the schema is)."""
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def serial_key(table: str) -> tuple[SchemaItem, ...]:
    """`id`, an integer the database numbers, as the key of `table` (most tables with no natural key)."""
    return (
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
    )


def url_key(table: str, *more: str) -> tuple[SchemaItem, ...]:
    """`audit_id` and `url_id` (the audit's number for a URL), the key of `table` with `more` columns: the
    rows an audit keeps about each URL it crawls."""
    return (
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("url_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("audit_id", "url_id", *more, name=op.f(f"pk_{table}")),
    )


def parent_key(table: str, column: str, parent: str) -> tuple[SchemaItem, ...]:
    """`column` as the key of `table`, which holds at most one row per row of `parent`, deleted with it."""
    return (
        sa.Column(column, sa.Integer(), nullable=False),
        foreign_key(table, column, parent, "CASCADE"),
        sa.PrimaryKeyConstraint(column, name=op.f(f"pk_{table}")),
    )


def version() -> sa.Column[Any]:
    """`version`, the row's counter for optimistic locking."""
    return sa.Column("version", sa.Integer(), nullable=False)
