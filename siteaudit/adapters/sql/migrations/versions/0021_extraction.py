"""Custom extraction: an audit's `extract` rules and what they read on each page (`crawl_extracts`)

Create Date: 2026-11-27

docs/extraction.md: an audit carries up to 20 named CSS or XPath rules; each page's values are rows of
`crawl_extracts`, filtered by `GET /v1/crawls/{id}/pages`. Existing audits have no rules.
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import url_key

revision: str = "0021"
down_revision: str | None = "0020"


# Plain ALTER TABLE, never a batch copy: on SQLite a copy drops and recreates the table, and the rows of
# tables that reference audits with ON DELETE CASCADE would go with it.


def upgrade() -> None:
    op.add_column("audits", sa.Column("extract", sa.JSON(), nullable=True))
    op.create_table(
        "crawl_extracts",
        *url_key("crawl_extracts", "rule", "position"),
        sa.Column("rule", sa.SmallInteger(), nullable=False),
        sa.Column("position", sa.SmallInteger(), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Text(), nullable=True),
    )
    op.create_index(
        op.f("ix_crawl_extracts_audit_id_name_value"), "crawl_extracts", ["audit_id", "name", "value"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_crawl_extracts_audit_id_name_value"), table_name="crawl_extracts")
    op.drop_table("crawl_extracts")
    op.drop_column("audits", "extract")
