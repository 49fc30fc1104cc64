"""Fix tasks say what fixed them; rechecks carry their worker lease

Create Date: 2026-11-25
"""

import sqlalchemy as sa

from siteaudit.adapters.sql.migrations.ddl import NewColumns, add_columns, drop_columns, moment

revision: str = "0010"
down_revision: str | None = "0009"


def _added() -> tuple[NewColumns, ...]:
    return (
        NewColumns("fix_tasks", sa.Column("fixed_by", sa.String(length=10), nullable=True)),
        NewColumns(
            "rechecks",
            sa.Column("lease_holder", sa.String(length=200), nullable=True),
            moment("lease_until", nullable=True),
            sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
            indexes={"ix_rechecks_status": ["status"]},
        ),
    )


def upgrade() -> None:
    add_columns(*_added())


def downgrade() -> None:
    drop_columns(*_added())
