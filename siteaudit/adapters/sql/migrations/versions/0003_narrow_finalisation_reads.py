"""Narrow finalisation reads: the site-check facts and the sketch apart from a page's facts, templates apart

Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import url_key

revision: str = "0003"
down_revision: str | None = "0002"


def upgrade() -> None:
    # Nullable and without a default: a catalogue change only, whatever the table's size. Rows written
    # before keep every fact in `facts`, which the store reads as before.
    with op.batch_alter_table("crawl_pages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("site", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("sketch", sa.LargeBinary(), nullable=True))

    op.create_table(
        "crawl_templates",
        *url_key("crawl_templates"),
        sa.Column("template", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    # Rows written with the narrow columns have their site facts and sketch there only: the downgrade
    # cannot merge JSON portably, so it refuses rather than lose them.
    bind = op.get_bind()
    if bind.execute(sa.text("SELECT 1 FROM crawl_pages WHERE site IS NOT NULL LIMIT 1")).first() is not None:
        raise RuntimeError(
            "crawl_pages rows use the narrow site columns: archive those audits before downgrading"
        )
    # Templates go back onto the page and issue rows before their table goes.
    op.execute(
        "UPDATE crawl_pages SET template = (SELECT t.template FROM crawl_templates AS t"
        " WHERE t.audit_id = crawl_pages.audit_id AND t.url_id = crawl_pages.url_id)"
        " WHERE EXISTS (SELECT 1 FROM crawl_templates AS t"
        " WHERE t.audit_id = crawl_pages.audit_id AND t.url_id = crawl_pages.url_id)"
    )
    op.execute(
        "UPDATE crawl_issues SET template = (SELECT t.template FROM crawl_templates AS t"
        " WHERE t.audit_id = crawl_issues.audit_id AND t.url_id = crawl_issues.url_id)"
        " WHERE EXISTS (SELECT 1 FROM crawl_templates AS t"
        " WHERE t.audit_id = crawl_issues.audit_id AND t.url_id = crawl_issues.url_id)"
    )
    op.drop_table("crawl_templates")
    with op.batch_alter_table("crawl_pages", schema=None) as batch_op:
        batch_op.drop_column("sketch")
        batch_op.drop_column("site")
