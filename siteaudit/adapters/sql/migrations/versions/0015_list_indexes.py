"""Issues list: indexes in the list's order for every filter

The issues list orders by severity, check, URL id and id, and pages by offset. Filtered by check it used
the index (audit, check, URL id), which is not in that order: PostgreSQL fetched and sorted every issue of
the check for each page (70 ms for 22,500 issues at offset 22,000). (audit, check, severity, URL id, id)
is in the list's order once the check is fixed, so a page, however deep, is a walk of the index; it also
answers whatever the old index answered (its prefix), which it replaces.

Both list indexes carry `template` (PostgreSQL INCLUDE; SQLite has no such thing and builds them
without): a template filter then reads the index alone instead of visiting the heap for every issue it
skips (twice as fast at 20,000 skipped issues).

`crawl_issue_marks`: every 10,000th issue of each (severity, check) group of a sealed audit, so that a
deep page starts its walk near its first row (a group can hold every page of the audit: 375,000 issues
of one check at 500,000 pages took 130 ms to skip).

Create Date: 2026-11-25
"""

from alembic import op

from siteaudit.adapters.sql.migrations.ddl import create_tables, issue_marks

revision: str = "0015"
down_revision: str | None = "0014"

_BY_SEVERITY = "ix_crawl_issues_audit_id_severity_check_code_url_id_id"
_BY_CHECK = "ix_crawl_issues_audit_id_check_code_severity_url_id_id"
_OLD_BY_CHECK = "ix_crawl_issues_audit_id_check_code_url_id"


def upgrade() -> None:
    create_tables(issue_marks("crawl_issue_marks"))
    op.drop_index(_BY_SEVERITY, table_name="crawl_issues")
    op.create_index(
        _BY_SEVERITY,
        "crawl_issues",
        ["audit_id", "severity", "check_code", "url_id", "id"],
        postgresql_include=["template"],
    )
    op.create_index(
        _BY_CHECK,
        "crawl_issues",
        ["audit_id", "check_code", "severity", "url_id", "id"],
        postgresql_include=["template"],
    )
    op.drop_index(_OLD_BY_CHECK, table_name="crawl_issues")


def downgrade() -> None:
    op.create_index(_OLD_BY_CHECK, "crawl_issues", ["audit_id", "check_code", "url_id"])
    op.drop_index(_BY_CHECK, table_name="crawl_issues")
    op.drop_index(_BY_SEVERITY, table_name="crawl_issues")
    op.create_index(_BY_SEVERITY, "crawl_issues", ["audit_id", "severity", "check_code", "url_id", "id"])
    op.drop_table("crawl_issue_marks")
