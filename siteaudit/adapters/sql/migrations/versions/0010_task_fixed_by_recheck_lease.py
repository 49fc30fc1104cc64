"""Fix tasks say what fixed them; rechecks carry their worker lease

Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import moment

revision: str = "0010"
down_revision: str | None = "0009"


def upgrade() -> None:
    with op.batch_alter_table("fix_tasks") as batch:
        batch.add_column(sa.Column("fixed_by", sa.String(length=10), nullable=True))
    with op.batch_alter_table("rechecks") as batch:
        batch.add_column(sa.Column("lease_holder", sa.String(length=200), nullable=True))
        batch.add_column(moment("lease_until", nullable=True))
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch.create_index(batch.f("ix_rechecks_status"), ["status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("rechecks") as batch:
        batch.drop_index(batch.f("ix_rechecks_status"))
        batch.drop_column("attempts")
        batch.drop_column("lease_until")
        batch.drop_column("lease_holder")
    with op.batch_alter_table("fix_tasks") as batch:
        batch.drop_column("fixed_by")
