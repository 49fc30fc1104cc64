"""Billing: billing accounts (one provider customer per person, the subscription), checkout sessions,
payment events seen

Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import foreign_key, moment, parent_key, version

revision: str = "0012"
down_revision: str | None = "0011"


def upgrade() -> None:
    op.create_table(
        "billing_accounts",
        *parent_key("billing_accounts", "user_id", "users"),
        sa.Column("provider", sa.String(length=20), nullable=False),
        sa.Column("customer_id", sa.String(length=255), nullable=False),
        sa.Column("subscription_id", sa.String(length=255), nullable=True),
        sa.Column("subscription_status", sa.String(length=30), nullable=True),
        moment("subscription_as_of", nullable=True),
        sa.Column("subscription_choice", sa.String(length=40), nullable=True),
        moment("purchased_at", nullable=True),
        version(),
        sa.UniqueConstraint("provider", "customer_id", name="uq_billing_accounts_provider_customer_id"),
    )
    op.create_table(
        "checkout_sessions",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("provider", sa.String(length=20), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        moment("created_at"),
        sa.Column("pack", sa.String(length=10), nullable=True),
        sa.Column("choice", sa.String(length=40), nullable=True),
        sa.Column("form_token_hash", sa.String(length=64), nullable=False),
        moment("completed_at", nullable=True),
        foreign_key("checkout_sessions", "user_id", "users", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_checkout_sessions"),
    )
    op.create_index("ix_checkout_sessions_user_id", "checkout_sessions", ["user_id"])
    op.create_table(
        "payment_events",
        sa.Column("event_id", sa.String(length=255), nullable=False),
        moment("received_at"),
        sa.PrimaryKeyConstraint("event_id", name="pk_payment_events"),
    )


def downgrade() -> None:
    op.drop_table("payment_events")
    op.drop_index("ix_checkout_sessions_user_id", table_name="checkout_sessions")
    op.drop_table("checkout_sessions")
    op.drop_table("billing_accounts")
