"""Site alert mails: one row per scheduled audit whose alert mail went out

Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import moment

revision: str = "0007"
down_revision: str | None = "0006"


def upgrade() -> None:
    op.create_table(
        "site_alerts",
        sa.Column("audit_id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        moment("created_at"),
    )


def downgrade() -> None:
    op.drop_table("site_alerts")
