"""Audit scope: what an audit covers (`audits.scope`), a site's saved scope rules and extraction rules

Create Date: 2026-11-28

docs/audits.md: an audit covers the whole site, a list of URLs or what the sitemaps list, keeps the URLs
its include and exclude patterns admit and treats query strings as asked; a site saves the patterns, the
query handling and (docs/extraction.md) up to 20 extraction rules for its audits. NULL everywhere: the
whole site, every URL, queries kept, no rules (what every existing audit and site is).
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"


# Plain ALTER TABLE, never a batch copy: on SQLite a copy drops and recreates the table, and the rows of
# tables that reference audits or sites with ON DELETE CASCADE would go with it.


def upgrade() -> None:
    op.add_column("audits", sa.Column("scope", sa.JSON(), nullable=True))
    op.add_column("sites", sa.Column("scope", sa.JSON(), nullable=True))
    op.add_column("sites", sa.Column("extract", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("sites", "extract")
    op.drop_column("sites", "scope")
    op.drop_column("audits", "scope")
