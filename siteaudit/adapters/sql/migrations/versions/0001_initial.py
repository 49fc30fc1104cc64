"""Accounts, credits, audits and an audit's crawl data

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "crawl_frontier",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("url_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("state", sa.SmallInteger(), nullable=False),
        sa.PrimaryKeyConstraint("audit_id", "url_id", name=op.f("pk_crawl_frontier")),
    )
    with op.batch_alter_table("crawl_frontier", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_crawl_frontier_audit_id_state_depth_url_id"),
            ["audit_id", "state", "depth", "url_id"],
            unique=False,
        )

    op.create_table(
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
    )
    with op.batch_alter_table("crawl_issues", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_crawl_issues_audit_id_check_code_url_id"),
            ["audit_id", "check_code", "url_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_crawl_issues_audit_id_severity_check_code_url_id_id"),
            ["audit_id", "severity", "check_code", "url_id", "id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_crawl_issues_audit_id_template"), ["audit_id", "template"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_crawl_issues_audit_id_url_id"), ["audit_id", "url_id"], unique=False
        )

    op.create_table(
        "crawl_links",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("nofollow", sa.Boolean(), nullable=False),
        sa.Column("internal", sa.Boolean(), nullable=False),
    )
    with op.batch_alter_table("crawl_links", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_crawl_links_audit_id_source_id"), ["audit_id", "source_id"], unique=False
        )

    op.create_table(
        "crawl_pages",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("url_id", sa.Integer(), autoincrement=False, nullable=False),
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
        sa.PrimaryKeyConstraint("audit_id", "url_id", name=op.f("pk_crawl_pages")),
    )
    with op.batch_alter_table("crawl_pages", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_crawl_pages_audit_id_status_code_url_id"),
            ["audit_id", "status_code", "url_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_crawl_pages_audit_id_template"), ["audit_id", "template"], unique=False
        )

    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("plan", sa.String(length=50), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("email", name=op.f("uq_users_email")),
    )
    op.create_table(
        "audits",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("payer_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("origin", sa.String(length=300), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("max_pages", sa.Integer(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("max_rps", sa.Float(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=True),
        sa.Column("trigger", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("credits_reserved", sa.BigInteger(), nullable=False),
        sa.Column("verify_token_set", sa.Boolean(), nullable=False),
        sa.Column("webhook_url", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("failure_reason", sa.String(length=500), nullable=True),
        sa.Column("pages_crawled", sa.Integer(), nullable=False),
        sa.Column("pages_not_modified", sa.Integer(), nullable=False),
        sa.Column("health_score", sa.SmallInteger(), nullable=True),
        sa.Column("partial", sa.Boolean(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["payer_id"], ["users.id"], name=op.f("fk_audits_payer_id_users")),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_audits_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audits")),
    )
    with op.batch_alter_table("audits", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audits_site_id"), ["site_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_audits_team_id_created_at"), ["team_id", "created_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_audits_team_id_status_origin"), ["team_id", "status", "origin"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_audits_user_id"), ["user_id"], unique=False)

    op.create_table(
        "credit_accounts",
        sa.Column("user_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.CheckConstraint("balance >= 0", name=op.f("ck_credit_accounts_balance_not_negative")),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_credit_accounts_user_id_users")),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_credit_accounts")),
    )
    op.create_table(
        "credit_entries",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("account", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reference", sa.String(length=200), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["account"], ["users.id"], name=op.f("fk_credit_entries_account_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credit_entries")),
        sa.UniqueConstraint("key", name=op.f("uq_credit_entries_key")),
    )
    with op.batch_alter_table("credit_entries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_credit_entries_account_at"), ["account", "at"], unique=False)
        batch_op.create_index(batch_op.f("ix_credit_entries_reference"), ["reference"], unique=False)

    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], name=op.f("fk_teams_owner_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_teams")),
        sa.UniqueConstraint("name", name=op.f("uq_teams_name")),
    )
    with op.batch_alter_table("teams", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_teams_owner_id"), ["owner_id"], unique=False)

    op.create_table(
        "crawl_checkpoints",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["audit_id"], ["audits.id"], name=op.f("fk_crawl_checkpoints_audit_id_audits"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("audit_id", name=op.f("pk_crawl_checkpoints")),
    )
    op.create_table(
        "crawl_reports",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("report", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["audit_id"], ["audits.id"], name=op.f("fk_crawl_reports_audit_id_audits"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("audit_id", name=op.f("pk_crawl_reports")),
    )
    op.create_table(
        "crawl_urls",
        sa.Column("audit_id", sa.Integer(), nullable=False),
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("key", sa.BigInteger(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["audit_id"], ["audits.id"], name=op.f("fk_crawl_urls_audit_id_audits"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("audit_id", "id", name=op.f("pk_crawl_urls")),
        sa.UniqueConstraint("audit_id", "key", name=op.f("uq_crawl_urls_audit_id_key")),
    )
    op.create_table(
        "memberships",
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=10), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_memberships_team_id_teams"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_memberships_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("team_id", "user_id", name=op.f("pk_memberships")),
    )
    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_memberships_user_id"), ["user_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_memberships_user_id"))

    op.drop_table("memberships")
    op.drop_table("crawl_urls")
    op.drop_table("crawl_reports")
    op.drop_table("crawl_checkpoints")
    with op.batch_alter_table("teams", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_teams_owner_id"))

    op.drop_table("teams")
    with op.batch_alter_table("credit_entries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_credit_entries_reference"))
        batch_op.drop_index(batch_op.f("ix_credit_entries_account_at"))

    op.drop_table("credit_entries")
    op.drop_table("credit_accounts")
    with op.batch_alter_table("audits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audits_user_id"))
        batch_op.drop_index(batch_op.f("ix_audits_team_id_status_origin"))
        batch_op.drop_index(batch_op.f("ix_audits_team_id_created_at"))
        batch_op.drop_index(batch_op.f("ix_audits_site_id"))

    op.drop_table("audits")
    op.drop_table("users")
    with op.batch_alter_table("crawl_pages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_crawl_pages_audit_id_template"))
        batch_op.drop_index(batch_op.f("ix_crawl_pages_audit_id_status_code_url_id"))

    op.drop_table("crawl_pages")
    with op.batch_alter_table("crawl_links", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_crawl_links_audit_id_source_id"))

    op.drop_table("crawl_links")
    with op.batch_alter_table("crawl_issues", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_crawl_issues_audit_id_url_id"))
        batch_op.drop_index(batch_op.f("ix_crawl_issues_audit_id_template"))
        batch_op.drop_index(batch_op.f("ix_crawl_issues_audit_id_severity_check_code_url_id_id"))
        batch_op.drop_index(batch_op.f("ix_crawl_issues_audit_id_check_code_url_id"))

    op.drop_table("crawl_issues")
    with op.batch_alter_table("crawl_frontier", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_crawl_frontier_audit_id_state_depth_url_id"))

    op.drop_table("crawl_frontier")
