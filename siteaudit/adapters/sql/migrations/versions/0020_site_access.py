"""Staging access of verified sites, sealed

Create Date: 2026-11-27

docs/security.md "Staging access": basic auth, headers and cookies the crawler sends to a verified site's own
origin, stored only sealed under the deployment's key; deleting the site deletes them.
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import moment

revision: str = "0020"
down_revision: str | None = "0019"


def upgrade() -> None:
    op.create_table(
        "site_access",
        sa.Column("site_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("sealed", sa.Text(), nullable=False),
        sa.Column("kinds", sa.String(length=40), nullable=False),
        sa.Column("headers", sa.Integer(), nullable=False),
        sa.Column("cookies", sa.Integer(), nullable=False),
        moment("updated_at"),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("site_id"),
    )


def downgrade() -> None:
    op.drop_table("site_access")
