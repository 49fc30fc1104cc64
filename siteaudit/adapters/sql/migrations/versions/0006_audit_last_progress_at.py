"""The time of an audit's last recorded progress, for GET /crawls/{id}

Create Date: 2026-11-25

A nullable column of audits, set by every batch recorded, lease renewed and state move from now on.
Audits that exist already get the latest time known of them: when they ended, else when they started
(null for audits no slice has claimed yet).
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import moment

revision: str = "0006"
down_revision: str | None = "0005"


def upgrade() -> None:
    op.add_column("audits", moment("last_progress_at", nullable=True))
    audits = sa.table(
        "audits",
        sa.column("last_progress_at", sa.DateTime(timezone=True)),
        sa.column("started_at", sa.DateTime(timezone=True)),
        sa.column("finished_at", sa.DateTime(timezone=True)),
    )
    op.get_bind().execute(
        audits.update().values(last_progress_at=sa.func.coalesce(audits.c.finished_at, audits.c.started_at))
    )


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite 3.35+): batch mode would copy the table, and dropping the old `audits`
    # cascades to every row that refers to it.
    op.drop_column("audits", "last_progress_at")
