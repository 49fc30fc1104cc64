"""The first page of an audit's issues list on PostgreSQL in ONE round trip: its total and its rows.

Most callers read the first page (`GET /v1/crawls/{id}/issues`, with or without filters). Through the
SQLAlchemy connection it took six round trips: BEGIN (the driver SQL that turns JIT off begins a
transaction), JIT off, the sealed total, the rows, JIT back on, ROLLBACK. Here the three statements go
to the server at once in psycopg's pipeline mode, on the pooled driver connection in autocommit (as the
key gate's statement, `keygate.py`): until the pipeline's Sync they run in one implicit transaction, so
`set_config('jit', 'off', true)` holds for the statements after it, as `SET LOCAL` would, and ends with
them (why JIT is off while a list reads: `SqlCrawlStore._listing`). Every statement is planned once it
arrives, after the one before ran.

The statements are the store's own (the same conditions, order and template probe as
`SqlCrawlStore.list_issues`), compiled once per combination of filters and page size; the rows are read
as tuples into `Issue`s, without SQLAlchemy's result objects. A page past the first walks from the sealed counts and the
marks first (`SqlCrawlStore._skip_sealed_groups`): several statements that each wait for the one before.
"""

from collections.abc import Mapping
from typing import Any, Final

from attrs import define, field
from sqlalchemy import Engine, Integer, SmallInteger, String, Text, bindparam, func, literal_column, select

from siteaudit.adapters.sql.engine import autocommit_driver
from siteaudit.adapters.sql.tables import crawl_issue_counts, crawl_issues, crawl_urls
from siteaudit.domain.issue import Issue, Severity

_JIT_OFF: Final = "SELECT set_config('jit', 'off', true)"

# Which filters a request gives (check code, severity, template), and its page size: the statements differ
# by these alone. The page size is written into the statement: with `LIMIT $n` PostgreSQL's generic plan
# of the prepared statement assumes a tenth of the audit's issues and costs more than a custom plan, so
# every execution was planned again (0.3-0.9 ms of the server's CPU). A page holds at most 200 rows.
Shape = tuple[bool, bool, bool, int]


@define
class FirstIssuePage:
    """`SqlCrawlStore.list_issues` at offset 0 on PostgreSQL. `sealed_total`, `has_template`,
    `issue_template` and `counted` are the store's own pieces of SQL, so both paths read the same rows."""

    engine: Engine
    sealed_total: Any = field(kw_only=True)
    has_template: Any = field(kw_only=True)
    issue_template: Any = field(kw_only=True)
    counted: str = field(kw_only=True)
    severities: Mapping[int, Severity] = field(kw_only=True)
    _compiled: dict[Shape, tuple[str, str, dict[str, Any]]] = field(init=False, factory=dict)

    def read(
        self,
        audit_id: int,
        *,
        check_code: str | None,
        severity: Severity | None,
        template: str | None,
        limit: int,
    ) -> tuple[list[Issue], int]:
        total_sql, rows_sql, fixed = self._statements(
            (check_code is not None, severity is not None, template is not None, limit)
        )
        parameters = {
            **fixed,
            "audit_id": audit_id,
            "check_code": check_code,
            "severity": None if severity is None else severity.rank,
            "template": template,
        }
        with autocommit_driver(self.engine) as driver, driver.pipeline():
            driver.execute(_JIT_OFF)
            totals = driver.execute(total_sql, parameters)
            rows = driver.execute(rows_sql, parameters)
            total = totals.fetchone()[0]
            issues = [
                Issue(
                    check_code=check,
                    severity=self.severities[rank],
                    url=url,
                    template=shown,
                    details=details,
                )
                for check, rank, url, shown, details in rows.fetchall()
            ]
        return issues, int(total)

    def _statements(self, shape: Shape) -> tuple[str, str, dict[str, Any]]:
        compiled = self._compiled.get(shape)
        if compiled is None:  # two threads may both compile it: the same strings
            compiled = self._compiled[shape] = self._compile(*shape)
        return compiled

    def _compile(
        self, by_check: bool, by_severity: bool, by_template: bool, limit: int
    ) -> tuple[str, str, dict[str, Any]]:
        issues, counted = crawl_issues.c, crawl_issue_counts.c
        audit_id = bindparam("audit_id", type_=Integer)
        conditions: list[Any] = [issues.audit_id == audit_id]
        sealed: list[Any] = []
        if by_check:
            check = bindparam("check_code", type_=String)
            conditions.append(issues.check_code == check)
            sealed.append(counted.check_code == check)
        if by_severity:
            rank = bindparam("severity", type_=SmallInteger)
            conditions.append(issues.severity == rank)
            sealed.append(counted.severity == rank)
        if by_template:
            template = bindparam("template", type_=Text)
            conditions.append(self.has_template(audit_id, template))
            sealed.append(counted.template == template)
        counted_all = select(func.count()).select_from(crawl_issues).where(*conditions).scalar_subquery()
        total = select(
            func.coalesce(
                self.sealed_total(crawl_issue_counts, counted.check_code == self.counted, audit_id, *sealed),
                counted_all,
            )
        )
        # At offset 0 the index walk skips nothing: the rows straight from it, joined as it goes (the store's
        # ids-first subquery is for deep pages, whose skipped rows it keeps out of the joins).
        rows = (
            select(issues.check_code, issues.severity, crawl_urls.c.url, self.issue_template, issues.details)
            .select_from(
                crawl_issues.join(
                    crawl_urls,
                    (crawl_urls.c.audit_id == issues.audit_id) & (crawl_urls.c.id == issues.url_id),
                )
            )
            .where(*conditions)
            .order_by(issues.severity, issues.check_code, issues.url_id, issues.id)
            .limit(literal_column(str(int(limit))))
        )
        dialect = self.engine.dialect
        total_compiled, rows_compiled = total.compile(dialect=dialect), rows.compile(dialect=dialect)
        # The literals the statements carry (the counted marker, the sealed total's zero) as their
        # anonymous parameters; the named ones are filled per request.
        fixed = {
            name: value
            for name, value in {**total_compiled.params, **rows_compiled.params}.items()
            if name not in ("audit_id", "check_code", "severity", "template")
        }
        return str(total_compiled), str(rows_compiled), fixed
