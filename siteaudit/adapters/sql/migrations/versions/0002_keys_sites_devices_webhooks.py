"""API keys, sites, fix tasks, rechecks, device logins, audit leases, webhooks, rate buckets

Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import (
    NewTable,
    create_tables,
    drop_tables,
    foreign_key,
    moment,
    parent_key,
    serial_key,
    version,
)

revision: str = "0002"
down_revision: str | None = "0001"


def _tables() -> tuple[NewTable, ...]:
    return (
        NewTable(
            "device_logins",
            *serial_key("device_logins"),
            sa.Column("device_code_hash", sa.String(length=64), nullable=False),
            sa.Column("user_code", sa.String(length=8), nullable=False),
            sa.Column("client_name", sa.String(length=64), nullable=False),
            sa.Column("requested_ip", sa.String(length=64), nullable=False),
            moment("created_at"),
            moment("expires_at"),
            sa.Column("interval_s", sa.Float(), nullable=False),
            moment("last_polled_at", nullable=True),
            sa.Column("status", sa.String(length=10), nullable=False),
            sa.Column("approved_by", sa.Integer(), nullable=True),
            sa.Column("team_id", sa.Integer(), nullable=True),
            version(),
            sa.UniqueConstraint("device_code_hash", name=op.f("uq_device_logins_device_code_hash")),
            indexes={
                "ix_device_logins_user_code": ["user_code"],
            },
        ),
        NewTable(
            "fix_tasks",
            sa.Column("site_id", sa.Integer(), nullable=False),
            sa.Column("key", sa.String(length=16), nullable=False),
            sa.Column("code", sa.String(length=100), nullable=False),
            sa.Column("template", sa.Text(), nullable=False),
            sa.Column("severity", sa.String(length=10), nullable=False),
            sa.Column("pages", sa.Integer(), nullable=False),
            sa.Column("crawl_id", sa.Integer(), nullable=False),
            moment("created_at"),
            moment("updated_at"),
            sa.Column("sample_urls", sa.JSON(), nullable=False),
            sa.Column("clicks_28d", sa.Integer(), nullable=True),
            sa.Column("impressions_28d", sa.Integer(), nullable=True),
            sa.Column("status", sa.String(length=12), nullable=False),
            sa.Column("status_before_verifying", sa.String(length=12), nullable=True),
            sa.Column("recheck_id", sa.Integer(), nullable=True),
            moment("fixed_at", nullable=True),
            version(),
            sa.PrimaryKeyConstraint("site_id", "key", name=op.f("pk_fix_tasks")),
        ),
        NewTable(
            "rate_buckets",
            sa.Column("key", sa.String(length=200), nullable=False),
            sa.Column("tat", sa.Float(precision=53), nullable=False),
            sa.PrimaryKeyConstraint("key", name=op.f("pk_rate_buckets")),
        ),
        NewTable(
            "rechecks",
            *serial_key("rechecks"),
            sa.Column("site_id", sa.Integer(), nullable=False),
            sa.Column("team_id", sa.Integer(), nullable=False),
            sa.Column("parent_crawl_id", sa.Integer(), nullable=False),
            moment("created_at"),
            sa.Column("task_key", sa.String(length=16), nullable=True),
            sa.Column("codes", sa.JSON(), nullable=True),
            sa.Column("sampled", sa.Boolean(), nullable=False),
            sa.Column("duplicate_baseline", sa.Boolean(), nullable=False),
            sa.Column("status", sa.String(length=12), nullable=False),
            moment("started_at", nullable=True),
            moment("finished_at", nullable=True),
            sa.Column("time_capped", sa.Boolean(), nullable=False),
            sa.Column("failure_reason", sa.Text(), nullable=True),
            sa.Column("urls", sa.JSON(), nullable=False),
            sa.Column("targets", sa.JSON(), nullable=False),
            sa.Column("observations", sa.JSON(), nullable=False),
            sa.Column("url_results", sa.JSON(), nullable=True),
            sa.Column("task_results", sa.JSON(), nullable=True),
            version(),
            indexes={
                "ix_rechecks_site_id": ["site_id"],
            },
        ),
        NewTable(
            "sites",
            *serial_key("sites"),
            sa.Column("team_id", sa.Integer(), nullable=False),
            sa.Column("url", sa.Text(), nullable=False),
            sa.Column("host", sa.String(length=300), nullable=False),
            sa.Column("origin", sa.String(length=300), nullable=False),
            moment("created_at"),
            sa.Column("verify_token", sa.String(length=128), nullable=False),
            sa.Column("crawler_secret_ref", sa.Text(), nullable=False),
            sa.Column("status", sa.String(length=12), nullable=False),
            moment("verified_at", nullable=True),
            sa.Column("verified_via", sa.String(length=10), nullable=True),
            moment("checked_at", nullable=True),
            moment("lost_at", nullable=True),
            sa.Column("monitoring", sa.String(length=10), nullable=False),
            moment("next_crawl_at", nullable=True),
            moment("last_dispatched_at", nullable=True),
            sa.Column("last_skip_reason", sa.Text(), nullable=True),
            sa.Column("max_pages", sa.Integer(), nullable=False),
            sa.Column("max_rps", sa.Float(), nullable=False),
            sa.Column("alert_email", sa.Boolean(), nullable=False),
            version(),
            sa.UniqueConstraint("team_id", "origin", name=op.f("uq_sites_team_id_origin")),
            indexes={
                "ix_sites_next_crawl_at": ["next_crawl_at"],
            },
        ),
        NewTable(
            "api_keys",
            *serial_key("api_keys"),
            sa.Column("user_id", sa.Integer(), nullable=False),
            sa.Column("team_id", sa.Integer(), nullable=False),
            sa.Column("kind", sa.String(length=10), nullable=False),
            sa.Column("prefix", sa.String(length=12), nullable=False),
            sa.Column("hash", sa.String(length=64), nullable=False),
            sa.Column("machine", sa.String(length=255), nullable=False),
            sa.Column("agents", sa.JSON(), nullable=False),
            sa.Column("label", sa.Text(), nullable=False),
            moment("created_at"),
            moment("last_used_at", nullable=True),
            moment("revoked_at", nullable=True),
            sa.Column("status", sa.String(length=10), nullable=False),
            version(),
            foreign_key("api_keys", "user_id", "users", "CASCADE"),
            sa.UniqueConstraint("hash", name=op.f("uq_api_keys_hash")),
            indexes={
                "ix_api_keys_user_id": ["user_id"],
            },
        ),
        NewTable(
            "webhook_secrets",
            *parent_key("webhook_secrets", "user_id", "users"),
            sa.Column("sealed", sa.Text(), nullable=False),
        ),
        NewTable(
            "audit_leases",
            *parent_key("audit_leases", "audit_id", "audits"),
            sa.Column("holder", sa.String(length=200), nullable=True),
            moment("expires_at"),
            sa.Column("attempts", sa.Integer(), nullable=False),
            version(),
            indexes={
                "ix_audit_leases_expires_at": ["expires_at"],
            },
        ),
        NewTable(
            "webhook_deliveries",
            *serial_key("webhook_deliveries"),
            sa.Column("audit_id", sa.Integer(), nullable=False),
            sa.Column("user_id", sa.Integer(), nullable=False),
            sa.Column("url", sa.Text(), nullable=False),
            sa.Column("body", sa.LargeBinary(), nullable=False),
            moment("created_at"),
            sa.Column("status", sa.String(length=12), nullable=False),
            sa.Column("attempts", sa.Integer(), nullable=False),
            moment("next_attempt_at", nullable=True),
            sa.Column("last_status_code", sa.SmallInteger(), nullable=True),
            sa.Column("last_error", sa.Text(), nullable=True),
            moment("lease_until", nullable=True),
            moment("finished_at", nullable=True),
            version(),
            foreign_key("webhook_deliveries", "audit_id", "audits", "CASCADE"),
            sa.UniqueConstraint("audit_id", name=op.f("uq_webhook_deliveries_audit_id")),
            indexes={
                "ix_webhook_deliveries_status_next_attempt_at": ["status", "next_attempt_at"],
            },
        ),
        NewTable(
            "webhook_attempts",
            sa.Column("delivery_id", sa.Integer(), nullable=False),
            sa.Column("number", sa.SmallInteger(), nullable=False),
            sa.Column("audit_id", sa.Integer(), nullable=False),
            moment("at"),
            sa.Column("status_code", sa.SmallInteger(), nullable=True),
            sa.Column("error", sa.Text(), nullable=True),
            sa.Column("detail", sa.Text(), nullable=True),
            sa.Column("duration_ms", sa.Integer(), nullable=False),
            sa.Column("move", sa.String(length=10), nullable=False),
            foreign_key("webhook_attempts", "delivery_id", "webhook_deliveries", "CASCADE"),
            sa.PrimaryKeyConstraint("delivery_id", "number", name=op.f("pk_webhook_attempts")),
            indexes={
                "ix_webhook_attempts_audit_id": ["audit_id"],
            },
        ),
    )


def upgrade() -> None:
    create_tables(*_tables())


def downgrade() -> None:
    drop_tables(*_tables())
