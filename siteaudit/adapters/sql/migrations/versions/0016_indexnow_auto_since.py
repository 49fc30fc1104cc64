"""When a site's IndexNow auto-submit was turned on: audits that ended before it submit nothing

Create Date: 2026-11-25

A nullable column of indexnow_sites, set each time auto is turned on and cleared when it is turned off.
Sites with auto on already keep null, which submits after every audit, as they did before.
"""

from alembic import op

from siteaudit.adapters.sql.migrations.ddl import moment

revision: str = "0016"
down_revision: str | None = "0015"


def upgrade() -> None:
    op.add_column("indexnow_sites", moment("auto_since", nullable=True))


def downgrade() -> None:
    op.drop_column("indexnow_sites", "auto_since")
