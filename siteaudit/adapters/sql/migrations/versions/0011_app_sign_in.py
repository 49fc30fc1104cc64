"""The app's sign-in state: password hashes, sessions and one-time links (all kept as hashes)

Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import foreign_key, moment, parent_key

revision: str = "0011"
down_revision: str | None = "0010"


def upgrade() -> None:
    op.create_table(
        "app_passwords",
        *parent_key("app_passwords", "user_id", "users"),
        sa.Column("hash", sa.String(length=255), nullable=False),
        moment("changed_at"),
    )
    op.create_table(
        "app_sessions",
        sa.Column("id_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=True),
        sa.Column("csrf", sa.String(length=64), nullable=False),
        moment("created_at"),
        moment("last_seen_at"),
        moment("authenticated_at"),
        foreign_key("app_sessions", "user_id", "users", "CASCADE"),
        sa.PrimaryKeyConstraint("id_hash", name="pk_app_sessions"),
    )
    op.create_index("ix_app_sessions_user_id", "app_sessions", ["user_id"])
    op.create_table(
        "app_links",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("purpose", sa.String(length=10), nullable=False),
        moment("created_at"),
        moment("expires_at"),
        moment("used_at", nullable=True),
        foreign_key("app_links", "user_id", "users", "CASCADE"),
        sa.PrimaryKeyConstraint("token_hash", name="pk_app_links"),
    )
    op.create_index("ix_app_links_user_id", "app_links", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_app_links_user_id", table_name="app_links")
    op.drop_table("app_links")
    op.drop_index("ix_app_sessions_user_id", table_name="app_sessions")
    op.drop_table("app_sessions")
    op.drop_table("app_passwords")
