"""The template filter of the issues list reads only its own audit's templates, however many audits are
stored: PostgreSQL's plans of the list's statements, not their timings. With the "not assigned" test
correlated on the issue's audit alone, PostgreSQL hashed every audit's `crawl_templates` rows for each
page."""

import json
from typing import Any

import pytest
from conftest import SECRET_BOX
from sql_backend import Backend
from sqlalchemy import Engine, select, text
from test_crawl_store_contract import SITE, _audits, _page

from siteaudit.adapters.sql import SqlCrawlStore, SqlUnitOfWork
from siteaudit.adapters.sql.crawl import _has_template
from siteaudit.adapters.sql.tables import crawl_issues, crawl_templates
from siteaudit.domain.issue import Issue, Severity
from siteaudit.ports.crawl import IssueQuery

pytestmark = pytest.mark.postgres

OTHER_AUDITS = 20
OTHER_URLS = 2_000  # each other audit's assigned URLs


@pytest.fixture
def stored(postgres_engine: Engine) -> tuple[Backend, int]:
    """One audit with pages, issues and templates, beside OTHER_AUDITS audits' templates and issues."""
    backend = Backend(
        "postgres",
        lambda: SqlUnitOfWork(postgres_engine, SECRET_BOX),
        SqlCrawlStore(postgres_engine),
        postgres_engine,
    )
    audit, *others = _audits(backend, 1 + OTHER_AUDITS)
    store = backend.crawl
    store.write_pages(audit, [_page("/"), _page("/a"), _page("/b")], templates={f"{SITE}/": "/"})
    store.write_issues(
        audit,
        [
            Issue("missing_alt", Severity.WARNING, f"{SITE}{path}", template="/[slug]")
            for path in ("/", "/a", "/b")
        ],
    )
    store.assign_templates(audit, [(1, "/"), (2, "/[slug]")])  # /b keeps the one it was written with
    with postgres_engine.begin() as conn:
        # Rows in bulk for every audit, this one too (URL ids past its pages, so the answers keep theirs):
        # enough issues that hashing the templates is the plan PostgreSQL picks, as with real audits.
        for other in (audit, *others):
            conn.execute(
                text(
                    "INSERT INTO crawl_templates (audit_id, url_id, template)"
                    " SELECT :audit, n, '/[slug]' FROM generate_series(100, :urls) AS n"
                ),
                {"audit": other, "urls": OTHER_URLS},
            )
            conn.execute(
                text(
                    "INSERT INTO crawl_issues (audit_id, url_id, check_code, severity, template, details)"
                    " SELECT :audit, n, 'missing_alt', 2, '/[slug]', '{}' FROM generate_series(100, :urls) AS n"
                ),
                {"audit": other, "urls": OTHER_URLS},
            )
    store.seal_counts(audit)
    with postgres_engine.connect() as conn:
        conn.execute(text("ANALYZE crawl_templates, crawl_issues, crawl_urls"))
        conn.commit()
    return backend, audit


def _template_scans(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan] if plan.get("Relation Name") == "crawl_templates" else []
    for child in plan.get("Plans", ()):
        found += _template_scans(child)
    return found


def _bounded_by_audit(scan: dict[str, Any], audit: str) -> bool:
    """Whether the scan reads one audit's rows: its index condition or filter sets `audit_id` to the
    audit itself (a parameter or the id), or it probes the key of one issue's row (the template shown)."""
    conditions = " ".join(scan.get(key, "") for key in ("Index Cond", "Recheck Cond", "Filter"))
    probe = "((audit_id = crawl_issues.audit_id) AND (url_id = crawl_issues.url_id))"
    return scan.get("Index Cond") == probe or any(
        f"audit_id = {value})" in conditions for value in (audit, "$1")
    )


def _explain(engine: Engine, statement: str, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    pooled = engine.raw_connection()
    try:
        driver: Any = pooled.driver_connection
        with driver.cursor() as cursor:
            cursor.execute("EXPLAIN (FORMAT JSON) " + statement, parameters)
            document = cursor.fetchone()[0]
        driver.rollback()
    finally:
        pooled.close()
    plan: dict[str, Any] = (json.loads(document) if isinstance(document, str) else document)[0]["Plan"]
    return plan


def test_the_first_template_page_reads_only_its_audits_templates(stored: tuple[Backend, int]) -> None:
    backend, audit = stored
    store = backend.crawl
    assert isinstance(store, SqlCrawlStore) and store._first_issues is not None
    assert [i.url for i in store.list_issues(audit, IssueQuery(template="/[slug]"))[0]] == [
        f"{SITE}/a",
        f"{SITE}/b",
    ]
    assert backend.engine is not None
    total_sql, rows_sql, fixed = store._first_issues._statements((False, False, True, 50))
    parameters = {**fixed, "audit_id": audit, "check_code": None, "severity": None, "template": "/[slug]"}
    for statement in (rows_sql, total_sql):
        scans = _template_scans(_explain(backend.engine, statement, parameters))
        assert scans, statement
        for scan in scans:
            assert _bounded_by_audit(scan, str(audit)), json.dumps(scan, indent=1)


def test_the_template_condition_reads_only_its_audits_templates(stored: tuple[Backend, int]) -> None:
    """The condition of every template-filtered page (the deep pages' too), with the audit as a value."""
    backend, audit = stored
    assert backend.engine is not None
    query = select(crawl_issues.c.id).where(crawl_issues.c.audit_id == audit, _has_template(audit, "/[slug]"))
    statement = str(query.compile(backend.engine, compile_kwargs={"literal_binds": True}))
    scans = _template_scans(_explain(backend.engine, statement))
    assert {scan["Relation Name"] for scan in scans} == {crawl_templates.name}
    for scan in scans:
        assert _bounded_by_audit(scan, str(audit)), json.dumps(scan, indent=1)
