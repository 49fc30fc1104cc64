"""Fix-impact events: one row per fixed task, measured against search-console data

Create Date: 2026-11-25
"""

import sqlalchemy as sa

from siteaudit.adapters.sql.migrations.ddl import NewTable, create_tables, drop_tables, moment, serial_key

revision: str = "0014"
down_revision: str | None = "0013"


def _fix_impacts() -> NewTable:
    return NewTable(
        "fix_impacts",
        *serial_key("fix_impacts"),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("task_key", sa.String(length=16), nullable=False),
        sa.Column("code", sa.String(length=100), nullable=False),
        sa.Column("template", sa.Text(), nullable=False),
        sa.Column("source_crawl_id", sa.Integer(), nullable=False),
        moment("verified_at"),
        sa.Column("recheck_id", sa.Integer(), nullable=True),
        sa.Column("sampled", sa.Boolean(), nullable=False),
        sa.Column("urls", sa.JSON(), nullable=True),
        sa.Column("baseline_clicks_28d", sa.Integer(), nullable=True),
        sa.Column("baseline_impressions_28d", sa.Integer(), nullable=True),
        sa.Column("d7", sa.Integer(), nullable=True),
        moment("d7_at", nullable=True),
        sa.Column("d14", sa.Integer(), nullable=True),
        moment("d14_at", nullable=True),
        sa.Column("d28", sa.Integer(), nullable=True),
        moment("d28_at", nullable=True),
        sa.Column("d28_impressions", sa.Integer(), nullable=True),
        moment("measured_at", nullable=True),
        moment("checked_at", nullable=True),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("demo", sa.Boolean(), nullable=False),
        indexes={"ix_fix_impacts_site_id": ["site_id"], "ix_fix_impacts_status": ["status"]},
    )


def upgrade() -> None:
    create_tables(_fix_impacts())


def downgrade() -> None:
    drop_tables(_fix_impacts())
