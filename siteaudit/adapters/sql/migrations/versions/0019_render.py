"""JavaScript rendering, opt-in: an audit's and a site's `render` setting

Create Date: 2026-11-27

docs/rendering.md: an audit with `render` loads each HTML page in a browser after its raw fetch; a site's
`render` is what its audits ask for unless they say otherwise. Existing rows render nothing.
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"


# Plain ALTER TABLE, never a batch copy: on SQLite a copy drops and recreates the table, and the rows of
# tables that reference audits with ON DELETE CASCADE would go with it.


def upgrade() -> None:
    for table in ("audits", "sites"):
        op.add_column(table, sa.Column("render", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    for table in ("audits", "sites"):
        op.drop_column(table, "render")
