"""Accounts, credits, audits and an audit's crawl data

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
    url_key,
    version,
)

revision: str = "0001"
down_revision: str | None = None


def _tables() -> tuple[NewTable, ...]:
    return (
        NewTable(
            "crawl_frontier",
            *url_key("crawl_frontier"),
            sa.Column("depth", sa.Integer(), nullable=False),
            sa.Column("state", sa.SmallInteger(), nullable=False),
            indexes={
                "ix_crawl_frontier_audit_id_state_depth_url_id": ["audit_id", "state", "depth", "url_id"]
            },
        ),
        NewTable(
            "crawl_issues",
            sa.Column(
                "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
            ),
            sa.Column("audit_id", sa.Integer(), nullable=False),
            sa.Column("url_id", sa.Integer(), nullable=False),
            sa.Column("check_code", sa.String(length=100), nullable=False),
            sa.Column("severity", sa.SmallInteger(), nullable=False),
            sa.Column("template", sa.Text(), nullable=False),
            sa.Column("details", sa.JSON(), nullable=False),
            sa.PrimaryKeyConstraint("id", name=op.f("pk_crawl_issues")),
            indexes={
                "ix_crawl_issues_audit_id_check_code_url_id": ["audit_id", "check_code", "url_id"],
                "ix_crawl_issues_audit_id_severity_check_code_url_id_id": [
                    "audit_id",
                    "severity",
                    "check_code",
                    "url_id",
                    "id",
                ],
                "ix_crawl_issues_audit_id_template": ["audit_id", "template"],
                "ix_crawl_issues_audit_id_url_id": ["audit_id", "url_id"],
            },
        ),
        NewTable(
            "crawl_links",
            sa.Column("audit_id", sa.Integer(), nullable=False),
            sa.Column("source_id", sa.Integer(), nullable=False),
            sa.Column("target_id", sa.Integer(), nullable=False),
            sa.Column("kind", sa.SmallInteger(), nullable=False),
            sa.Column("nofollow", sa.Boolean(), nullable=False),
            sa.Column("internal", sa.Boolean(), nullable=False),
            indexes={"ix_crawl_links_audit_id_source_id": ["audit_id", "source_id"]},
        ),
        NewTable(
            "crawl_pages",
            *url_key("crawl_pages"),
            sa.Column("status_code", sa.SmallInteger(), nullable=True),
            sa.Column("depth", sa.Integer(), nullable=False),
            sa.Column("title", sa.Text(), nullable=True),
            sa.Column("meta_description", sa.Text(), nullable=True),
            sa.Column("word_count", sa.Integer(), nullable=False),
            sa.Column("blocked_by", sa.String(length=100), nullable=True),
            sa.Column("fetch_error", sa.String(length=30), nullable=True),
            sa.Column("content_type", sa.String(length=200), nullable=True),
            sa.Column("template", sa.Text(), nullable=False),
            sa.Column("in_sitemap", sa.Boolean(), nullable=False),
            sa.Column("facts", sa.JSON(), nullable=False),
            indexes={
                "ix_crawl_pages_audit_id_status_code_url_id": ["audit_id", "status_code", "url_id"],
                "ix_crawl_pages_audit_id_template": ["audit_id", "template"],
            },
        ),
        NewTable(
            "users",
            *serial_key("users"),
            sa.Column("email", sa.String(length=254), nullable=False),
            sa.Column("plan", sa.String(length=50), nullable=False),
            sa.Column("name", sa.String(length=200), nullable=False),
            moment("created_at"),
            sa.UniqueConstraint("email", name=op.f("uq_users_email")),
        ),
        NewTable(
            "audits",
            *serial_key("audits"),
            sa.Column("team_id", sa.Integer(), nullable=False),
            sa.Column("user_id", sa.Integer(), nullable=False),
            sa.Column("payer_id", sa.Integer(), nullable=False),
            sa.Column("url", sa.Text(), nullable=False),
            sa.Column("origin", sa.String(length=300), nullable=False),
            moment("created_at"),
            sa.Column("max_pages", sa.Integer(), nullable=False),
            sa.Column("concurrency", sa.Integer(), nullable=False),
            sa.Column("max_rps", sa.Float(), nullable=False),
            sa.Column("site_id", sa.Integer(), nullable=True),
            sa.Column("trigger", sa.String(length=20), nullable=False),
            sa.Column("status", sa.String(length=20), nullable=False),
            sa.Column("credits_reserved", sa.BigInteger(), nullable=False),
            sa.Column("verify_token_set", sa.Boolean(), nullable=False),
            sa.Column("webhook_url", sa.Text(), nullable=True),
            moment("started_at", nullable=True),
            moment("finished_at", nullable=True),
            moment("archived_at", nullable=True),
            sa.Column("failure_reason", sa.String(length=500), nullable=True),
            sa.Column("pages_crawled", sa.Integer(), nullable=False),
            sa.Column("pages_not_modified", sa.Integer(), nullable=False),
            sa.Column("health_score", sa.SmallInteger(), nullable=True),
            sa.Column("partial", sa.Boolean(), nullable=False),
            version(),
            foreign_key("audits", "payer_id", "users"),
            foreign_key("audits", "user_id", "users"),
            indexes={
                "ix_audits_site_id": ["site_id"],
                "ix_audits_team_id_created_at": ["team_id", "created_at"],
                "ix_audits_team_id_status_origin": ["team_id", "status", "origin"],
                "ix_audits_user_id": ["user_id"],
            },
        ),
        NewTable(
            "credit_accounts",
            sa.Column("user_id", sa.Integer(), autoincrement=False, nullable=False),
            sa.Column("balance", sa.BigInteger(), nullable=False),
            version(),
            sa.CheckConstraint("balance >= 0", name=op.f("ck_credit_accounts_balance_not_negative")),
            foreign_key("credit_accounts", "user_id", "users"),
            sa.PrimaryKeyConstraint("user_id", name=op.f("pk_credit_accounts")),
        ),
        NewTable(
            "credit_entries",
            sa.Column(
                "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
            ),
            sa.Column("key", sa.String(length=200), nullable=False),
            sa.Column("account", sa.Integer(), nullable=False),
            sa.Column("kind", sa.String(length=10), nullable=False),
            sa.Column("amount", sa.BigInteger(), nullable=False),
            moment("at"),
            sa.Column("reference", sa.String(length=200), nullable=False),
            sa.Column("team_id", sa.Integer(), nullable=True),
            foreign_key("credit_entries", "account", "users"),
            sa.PrimaryKeyConstraint("id", name=op.f("pk_credit_entries")),
            sa.UniqueConstraint("key", name=op.f("uq_credit_entries_key")),
            indexes={
                "ix_credit_entries_account_at": ["account", "at"],
                "ix_credit_entries_reference": ["reference"],
            },
        ),
        NewTable(
            "teams",
            *serial_key("teams"),
            sa.Column("name", sa.String(length=100), nullable=False),
            sa.Column("owner_id", sa.Integer(), nullable=False),
            moment("created_at"),
            foreign_key("teams", "owner_id", "users"),
            sa.UniqueConstraint("name", name=op.f("uq_teams_name")),
            indexes={"ix_teams_owner_id": ["owner_id"]},
        ),
        NewTable(
            "crawl_checkpoints",
            *parent_key("crawl_checkpoints", "audit_id", "audits"),
            sa.Column("state", sa.JSON(), nullable=False),
        ),
        NewTable(
            "crawl_reports",
            *parent_key("crawl_reports", "audit_id", "audits"),
            sa.Column("report", sa.JSON(), nullable=False),
        ),
        NewTable(
            "crawl_urls",
            sa.Column("audit_id", sa.Integer(), nullable=False),
            sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
            sa.Column("key", sa.BigInteger(), nullable=False),
            sa.Column("url", sa.Text(), nullable=False),
            foreign_key("crawl_urls", "audit_id", "audits", "CASCADE"),
            sa.PrimaryKeyConstraint("audit_id", "id", name=op.f("pk_crawl_urls")),
            sa.UniqueConstraint("audit_id", "key", name=op.f("uq_crawl_urls_audit_id_key")),
        ),
        NewTable(
            "memberships",
            sa.Column("team_id", sa.Integer(), nullable=False),
            sa.Column("user_id", sa.Integer(), nullable=False),
            sa.Column("role", sa.String(length=10), nullable=False),
            foreign_key("memberships", "team_id", "teams", "CASCADE"),
            foreign_key("memberships", "user_id", "users", "CASCADE"),
            sa.PrimaryKeyConstraint("team_id", "user_id", name=op.f("pk_memberships")),
            indexes={"ix_memberships_user_id": ["user_id"]},
        ),
    )


def upgrade() -> None:
    create_tables(*_tables())


def downgrade() -> None:
    drop_tables(*_tables())
