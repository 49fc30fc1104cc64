"""Issues list by template: marks per (template, severity, check)

`crawl_issue_marks` counts a (severity, check) group's issues whatever their template, so a deep page of
the list filtered by template could not use them: it walked its group from the first issue, testing each
issue's template (150 ms p50 for the last page of one template at 500,000 pages). `crawl_issue_template_marks`
holds every 100th issue of each (template, severity, check) group of a sealed audit with its ordinal
among that template's issues of the group, so such a page starts its walk at most 100 of its issues
before its first row. Sealing an audit writes them; older audits keep none and list as before.

Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

from siteaudit.adapters.sql.migrations.ddl import create_tables, issue_marks

revision: str = "0023"
down_revision: str | None = "0022"


def upgrade() -> None:
    create_tables(issue_marks("crawl_issue_template_marks", sa.Column("template", sa.Text(), nullable=False)))


def downgrade() -> None:
    op.drop_table("crawl_issue_template_marks")
