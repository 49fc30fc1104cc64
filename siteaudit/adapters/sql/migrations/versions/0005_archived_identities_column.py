"""Archived issue identities in their own column of crawl_reports, out of the report's `stats`

Create Date: 2026-11-25

Reports archived before kept the identities in `report.stats.archived_identities`: they move to the
new column and leave the report (read and rewritten in Python, so the report's key order is kept; only
reports that have them are read). The downgrade puts them back.
"""

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"

_KEY = "archived_identities"
# The columns both directions read and write, as they are in this revision.
_REPORTS = sa.table(
    "crawl_reports",
    sa.column("audit_id", sa.Integer()),
    sa.column("report", sa.JSON()),
    sa.column("archived_identities", sa.JSON()),
)


def _document(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def _with_identities(conn: sa.Connection) -> sa.TextClause:
    if conn.dialect.name == "postgresql":
        where = "(report::jsonb -> 'stats') ? 'archived_identities'"
    else:
        where = "json_extract(report, '$.stats.archived_identities') IS NOT NULL"
    return sa.text(f"SELECT audit_id, report FROM crawl_reports WHERE {where}")


def upgrade() -> None:
    op.add_column("crawl_reports", sa.Column("archived_identities", sa.JSON(), nullable=True))
    conn = op.get_bind()
    for audit_id, stored in conn.execute(_with_identities(conn)).all():
        report = _document(stored)
        stats = dict(report["stats"])
        identities = stats.pop(_KEY)
        conn.execute(
            _REPORTS.update()
            .where(_REPORTS.c.audit_id == audit_id)
            .values(report={**report, "stats": stats}, archived_identities=identities)
        )


def downgrade() -> None:
    conn = op.get_bind()
    kept = conn.execute(
        sa.select(_REPORTS.c.audit_id, _REPORTS.c.report, _REPORTS.c.archived_identities).where(
            _REPORTS.c.archived_identities.is_not(None)
        )
    ).all()
    for audit_id, stored, identities in kept:
        report = _document(stored)
        stats = {**report["stats"], _KEY: _document(identities)}
        conn.execute(
            _REPORTS.update().where(_REPORTS.c.audit_id == audit_id).values(report={**report, "stats": stats})
        )
    with op.batch_alter_table("crawl_reports") as batch:
        batch.drop_column("archived_identities")
