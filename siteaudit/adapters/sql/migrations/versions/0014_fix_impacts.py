"""Fix-impact events: one row per fixed task, measured against search-console data

Create Date: 2026-11-25
"""

import sqlalchemy as sa

from siteaudit.adapters.sql.migrations.ddl import NewTable, create_tables, drop_tables

revision: str = "0014"
down_revision: str | None = "0013"


def _tables() -> tuple[NewTable, ...]:
    return (
        NewTable(
            "fix_impacts",
            sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
            sa.Column("site_id", sa.Integer(), nullable=False),
            sa.Column("task_key", sa.String(length=16), nullable=False),
            sa.Column("code", sa.String(length=100), nullable=False),
            sa.Column("template", sa.Text(), nullable=False),
            sa.Column("source_crawl_id", sa.Integer(), nullable=False),
            sa.Column("verified_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("recheck_id", sa.Integer(), nullable=True),
            sa.Column("sampled", sa.Boolean(), nullable=False),
            sa.Column("urls", sa.JSON(), nullable=True),
            sa.Column("baseline_clicks_28d", sa.Integer(), nullable=True),
            sa.Column("baseline_impressions_28d", sa.Integer(), nullable=True),
            sa.Column("d7", sa.Integer(), nullable=True),
            sa.Column("d7_at", sa.DateTime(timezone=True), nullable=True),
            sa.Column("d14", sa.Integer(), nullable=True),
            sa.Column("d14_at", sa.DateTime(timezone=True), nullable=True),
            sa.Column("d28", sa.Integer(), nullable=True),
            sa.Column("d28_at", sa.DateTime(timezone=True), nullable=True),
            sa.Column("d28_impressions", sa.Integer(), nullable=True),
            sa.Column("measured_at", sa.DateTime(timezone=True), nullable=True),
            sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True),
            sa.Column("status", sa.String(length=10), nullable=False),
            sa.Column("demo", sa.Boolean(), nullable=False),
            sa.PrimaryKeyConstraint("id"),
            indexes={"ix_fix_impacts_site_id": ["site_id"], "ix_fix_impacts_status": ["status"]},
        ),
    )


def upgrade() -> None:
    create_tables(*_tables())


def downgrade() -> None:
    drop_tables(*_tables())
