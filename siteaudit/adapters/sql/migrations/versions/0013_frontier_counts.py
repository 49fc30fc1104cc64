"""Frontier counters per audit and state, kept by every frontier move

Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"


def upgrade() -> None:
    op.create_table(
        "crawl_frontier_counts",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.SmallInteger(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("audit_id", "state", name=op.f("pk_crawl_frontier_counts")),
    )
    # Audits crawling while the schema moves on: their counters start from their rows, counted once.
    op.execute(
        "INSERT INTO crawl_frontier_counts (audit_id, state, count)"
        " SELECT audit_id, state, count(*) FROM crawl_frontier GROUP BY audit_id, state"
    )


def downgrade() -> None:
    op.drop_table("crawl_frontier_counts")
