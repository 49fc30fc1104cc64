"""The latest period a subscription paid for, on its billing account

Create Date: 2026-11-27

A subscription's tier grants its credits each month of a paid period (docs/billing.md); these nullable
columns of billing_accounts hold that period. Existing accounts keep null: no period was recorded.
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import moment

revision: str = "0018"
down_revision: str | None = "0017"


def upgrade() -> None:
    with op.batch_alter_table("billing_accounts") as batch:
        batch.add_column(sa.Column("paid_subscription_id", sa.String(255), nullable=True))
        batch.add_column(sa.Column("paid_choice", sa.String(40), nullable=True))
        batch.add_column(moment("paid_from", nullable=True))
        batch.add_column(moment("paid_until", nullable=True))
        batch.add_column(sa.Column("paid_months", sa.Integer(), nullable=False, server_default="0"))
        batch.create_index(batch.f("ix_billing_accounts_paid_until"), ["paid_until"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("billing_accounts") as batch:
        batch.drop_index(batch.f("ix_billing_accounts_paid_until"))
        for name in ("paid_months", "paid_until", "paid_from", "paid_choice", "paid_subscription_id"):
            batch.drop_column(name)
