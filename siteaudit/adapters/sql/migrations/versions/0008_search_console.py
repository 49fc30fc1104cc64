"""The search-console integration: team connections, daily page figures, inspections, budget, syncs

Create Date: 2026-11-25
"""

import sqlalchemy as sa

from siteaudit.adapters.sql.migrations.ddl import NewTable, create_tables, drop_tables, moment

revision: str = "0008"
down_revision: str | None = "0007"


def _tables() -> tuple[NewTable, ...]:
    return (
        NewTable(
            "console_connections",
            sa.Column("team_id", sa.Integer(), primary_key=True, autoincrement=False),
            sa.Column("sealed_refresh_token", sa.Text(), nullable=False),
            sa.Column("account", sa.String(320), nullable=False),
            moment("connected_at"),
        ),
        NewTable(
            "console_page_days",
            sa.Column("site_id", sa.Integer(), nullable=False),
            sa.Column("day", sa.Date(), nullable=False),
            sa.Column("url", sa.Text(), nullable=False),
            sa.Column("clicks", sa.Integer(), nullable=False),
            sa.Column("impressions", sa.Integer(), nullable=False),
            sa.Column("position", sa.Float(), nullable=True),
            sa.PrimaryKeyConstraint("site_id", "day", "url"),
        ),
        NewTable(
            "console_inspections",
            sa.Column("site_id", sa.Integer(), nullable=False),
            sa.Column("url", sa.Text(), nullable=False),
            moment("inspected_at"),
            sa.Column("verdict", sa.String(40), nullable=False),
            sa.Column("coverage_state", sa.Text(), nullable=False),
            sa.Column("indexing_state", sa.String(60), nullable=True),
            sa.Column("robots_txt_state", sa.String(60), nullable=True),
            sa.Column("page_fetch_state", sa.String(60), nullable=True),
            moment("last_crawled", nullable=True),
            sa.Column("google_canonical", sa.Text(), nullable=True),
            sa.Column("user_canonical", sa.Text(), nullable=True),
            sa.Column("sitemaps", sa.JSON(), nullable=False),
            sa.Column("demo", sa.Boolean(), nullable=False),
            sa.PrimaryKeyConstraint("site_id", "url"),
        ),
        NewTable(
            "console_budget",
            sa.Column("property", sa.String(2100), nullable=False),
            sa.Column("window", sa.String(40), nullable=False),
            sa.Column("used", sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint("property", "window"),
        ),
        NewTable(
            "console_syncs",
            sa.Column("site_id", sa.Integer(), primary_key=True, autoincrement=False),
            moment("synced_at"),
            sa.Column("status", sa.String(20), nullable=False),
            sa.Column("property", sa.String(2100), nullable=True),
            sa.Column("demo", sa.Boolean(), nullable=False),
            sa.Column("days", sa.Integer(), nullable=False),
            sa.Column("inspected", sa.Integer(), nullable=False),
            sa.Column("error", sa.Text(), nullable=True),
        ),
    )


def upgrade() -> None:
    create_tables(*_tables())


def downgrade() -> None:
    drop_tables(*_tables())
