"""The latest period a subscription paid for, on its billing account

Create Date: 2026-11-27

A subscription's tier grants its credits each month of a paid period (docs/billing.md); these nullable
columns of billing_accounts hold that period. Existing accounts keep null: no period was recorded.
"""

import sqlalchemy as sa

from siteaudit.adapters.sql.migrations.ddl import NewColumns, add_columns, drop_columns, moment

revision: str = "0018"
down_revision: str | None = "0017"


def _added() -> NewColumns:
    return NewColumns(
        "billing_accounts",
        sa.Column("paid_subscription_id", sa.String(255), nullable=True),
        sa.Column("paid_choice", sa.String(40), nullable=True),
        moment("paid_from", nullable=True),
        moment("paid_until", nullable=True),
        sa.Column("paid_months", sa.Integer(), nullable=False, server_default="0"),
        indexes={"ix_billing_accounts_paid_until": ["paid_until"]},
    )


def upgrade() -> None:
    add_columns(_added())


def downgrade() -> None:
    drop_columns(_added())
