"""IndexNow: each site's key and allowance, the URLs counted per day, and the submissions

Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import (
    NewTable,
    create_tables,
    drop_tables,
    moment,
    serial_key,
    version,
)

revision: str = "0009"
down_revision: str | None = "0008"


def _tables() -> tuple[NewTable, ...]:
    return (
        NewTable(
            "indexnow_sites",
            sa.Column("site_id", sa.Integer(), autoincrement=False, nullable=False),
            sa.Column("team_id", sa.Integer(), nullable=False),
            sa.Column("key", sa.String(128), nullable=False),
            sa.Column("key_source", sa.String(10), nullable=False),
            sa.Column("key_location", sa.Text(), nullable=True),
            moment("key_verified_at", nullable=True),
            sa.Column("last_check", sa.JSON(), nullable=True),
            sa.Column("auto", sa.Boolean(), nullable=False),
            moment("last_submit_at", nullable=True),
            sa.Column("day", sa.Date(), nullable=True),
            sa.Column("used", sa.Integer(), nullable=False),
            sa.Column("detection", sa.JSON(), nullable=True),
            version(),
            sa.PrimaryKeyConstraint("site_id", name=op.f("pk_indexnow_sites")),
        ),
        NewTable(
            "indexnow_urls",
            sa.Column("site_id", sa.Integer(), nullable=False),
            sa.Column("day", sa.Date(), nullable=False),
            sa.Column("url_hash", sa.String(64), nullable=False),
            sa.Column("accepted", sa.Boolean(), nullable=False),
            sa.PrimaryKeyConstraint("site_id", "day", "url_hash", name=op.f("pk_indexnow_urls")),
        ),
        NewTable(
            "indexnow_submissions",
            *serial_key("indexnow_submissions"),
            sa.Column("site_id", sa.Integer(), nullable=False),
            moment("at"),
            sa.Column("trigger", sa.String(10), nullable=False),
            sa.Column("urls", sa.Integer(), nullable=False),
            sa.Column("submitted", sa.Integer(), nullable=False),
            sa.Column("requests", sa.Integer(), nullable=False),
            sa.Column("status", sa.String(20), nullable=False),
            sa.Column("status_code", sa.SmallInteger(), nullable=True),
            sa.Column("audit_id", sa.Integer(), nullable=True),
            sa.UniqueConstraint("site_id", "audit_id", name=op.f("uq_indexnow_submissions_site_id_audit_id")),
            indexes={"ix_indexnow_submissions_site_id_at": ["site_id", "at"]},
        ),
    )


def upgrade() -> None:
    create_tables(*_tables())


def downgrade() -> None:
    drop_tables(*_tables())
