"""Sealed list totals: issue and page counts per audit, written once at finalisation

Create Date: 2026-11-22
"""

import sqlalchemy as sa

from siteaudit.adapters.sql.migrations.ddl import NewTable, create_tables, drop_tables

revision: str = "0004"
down_revision: str | None = "0003"


def _tables() -> tuple[NewTable, ...]:
    return (
        NewTable(
            "crawl_issue_counts",
            sa.Column("audit_id", sa.Integer(), nullable=False),
            sa.Column("check_code", sa.String(length=100), nullable=False),
            sa.Column("severity", sa.SmallInteger(), nullable=False),
            sa.Column("template", sa.Text(), nullable=False),
            sa.Column("count", sa.Integer(), nullable=False),
            indexes={"ix_crawl_issue_counts_audit_id": ["audit_id"]},
        ),
        NewTable(
            "crawl_page_counts",
            sa.Column("audit_id", sa.Integer(), nullable=False),
            sa.Column("status_code", sa.SmallInteger(), nullable=True),
            sa.Column("count", sa.Integer(), nullable=False),
            indexes={"ix_crawl_page_counts_audit_id": ["audit_id"]},
        ),
    )


def upgrade() -> None:
    # Audits finalised before have no counts: their lists count rows as before.
    create_tables(*_tables())


def downgrade() -> None:
    drop_tables(*_tables())
