"""Sealed list totals: issue and page counts per audit, written once at finalisation

Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"


def upgrade() -> None:
    # Audits finalised before have no counts: their lists count rows as before.
    op.create_table(
        "crawl_issue_counts",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("check_code", sa.String(length=100), nullable=False),
        sa.Column("severity", sa.SmallInteger(), nullable=False),
        sa.Column("template", sa.Text(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
    )
    op.create_index(op.f("ix_crawl_issue_counts_audit_id"), "crawl_issue_counts", ["audit_id"])
    op.create_table(
        "crawl_page_counts",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.SmallInteger(), nullable=True),
        sa.Column("count", sa.Integer(), nullable=False),
    )
    op.create_index(op.f("ix_crawl_page_counts_audit_id"), "crawl_page_counts", ["audit_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_crawl_page_counts_audit_id"), table_name="crawl_page_counts")
    op.drop_table("crawl_page_counts")
    op.drop_index(op.f("ix_crawl_issue_counts_audit_id"), table_name="crawl_issue_counts")
    op.drop_table("crawl_issue_counts")
