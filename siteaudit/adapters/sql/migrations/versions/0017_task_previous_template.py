"""The template a fix task had before an audit regrouped its URLs

Create Date: 2026-12-02

A task keeps its key when its template is renamed, split or merged (docs/templates.md); this nullable
column of fix_tasks names the template it had before. Existing tasks keep null: they never moved.
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"


def upgrade() -> None:
    op.add_column("fix_tasks", sa.Column("previous_template", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("fix_tasks", "previous_template")
