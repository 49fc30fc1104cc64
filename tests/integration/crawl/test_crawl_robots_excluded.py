"""URLs robots.txt disallows are never requested, so they are not fetch errors: the report counts them in
`stats.excluded_by_robots` and in no total, the page rows mark them `excluded_by: robots.txt`, and nothing
but the robots.txt findings is reported on them (issue 12)."""

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from crawl_doubles import Answer, Crawl, SiteServer, html

from siteaudit.adapters.answers import converter
from siteaudit.adapters.report_json import report_json
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import UserId
from siteaudit.ports.crawl import EXCLUDED_BY_ROBOTS_TXT, PageQuery
from siteaudit.services.audits.answers import Page
from siteaudit.services.finalize import finalize_audit

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
EXCLUDED = ("/private/plans", "/private/prices", "/private/clock.png")


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    u = server.url
    server.routes.update(
        {
            "/robots.txt": Answer(
                200, f"User-agent: *\nDisallow: /private\n\nSitemap: {u('/sitemap.xml')}\n", {}
            ),
            "/sitemap.xml": Answer(
                200,
                '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                + "".join(f"<url><loc>{u(p)}</loc></url>" for p in ("/", "/about", "/private/prices"))
                + "</urlset>",
                {"Content-Type": "application/xml"},
            ),
            "/": html(
                '<h1>Retro clocks</h1><a href="/about">About</a><a href="/private/plans">Plans</a>'
                '<a href="/private/prices">Prices</a>'
                '<img src="/private/clock.png" alt="A clock" width="10" height="10">',
                head="<title>Retro clock workshop</title>",
            ),
            "/about": html('<h1>About</h1><a href="/">Home</a>', head="<title>About the workshop</title>"),
            **{path: html("<h1>Not for crawlers</h1>") for path in EXCLUDED},
        }
    )
    yield server
    server.close()


def audited(site: SiteServer) -> Crawl:
    crawl = Crawl(site.url("/"))
    with crawl.uow() as uow:
        uow.credits.grant(UserId(1), 100_000, key="excluded", at=NOW)
        uow.credits.reserve(UserId(1), crawl.max_pages * 10, reference=f"audit:{crawl.audit_id}", at=NOW)
        uow.commit()
    crawl.run()
    finalize_audit(crawl.audit_id, uow=crawl.uow(), crawl=crawl.crawl, clock=crawl.clock)
    assert crawl.audit().status is AuditStatus.DONE
    return crawl


def test_excluded_urls_are_counted_apart_from_the_totals(site: SiteServer) -> None:
    crawl = audited(site)
    assert not [path for path in site.paths() if path.startswith("/private")]  # never requested
    report = crawl.crawl.report(crawl.audit_id)
    assert report is not None
    document = report_json(report)
    assert document["totals"] == {
        "pages": 2,
        "ok": 2,
        "redirects": 0,
        "broken": 0,
        "fetch_errors": 0,
        "blocked": 0,
    }
    assert document["totals"]["pages"] == crawl.audit().pages_crawled
    assert document["stats"]["excluded_by_robots"] == len(EXCLUDED)
    assert document["stats"]["score"]["inputs"]["audited_pages"] == 2
    assert document["coverage_warning"] is None


def test_page_rows_mark_the_excluded_urls(site: SiteServer) -> None:
    crawl = audited(site)
    rows, total = crawl.crawl.list_pages(crawl.audit_id, PageQuery())
    assert total == 2 + len(EXCLUDED)
    path = site.url("/").rstrip("/")
    marked = {row.url.removeprefix(path): row.excluded_by for row in rows}
    assert marked == {"/": None, "/about": None, **dict.fromkeys(EXCLUDED, EXCLUDED_BY_ROBOTS_TXT)}
    for row in rows:
        served = converter.unstructure(Page.of(row))
        if row.excluded_by is not None:
            assert (served["excluded_by"], served["status_code"], served["fetch_error"]) == (
                "robots.txt",
                None,
                None,
            )
        else:
            assert served["excluded_by"] is None and served["status_code"] == 200
    ok, ok_total = crawl.crawl.list_pages(crawl.audit_id, PageQuery(status_code=200))
    assert ok_total == 2 and all(row.excluded_by is None for row in ok)


def test_only_the_robots_txt_findings_are_reported_on_excluded_urls(site: SiteServer) -> None:
    crawl = audited(site)
    path = site.url("/").rstrip("/")
    issues = [issue for _, issue in crawl.crawl.stream_issues(crawl.audit_id)]
    on_excluded = {
        (issue.check_code, issue.url.removeprefix(path))
        for issue in issues
        if issue.url.removeprefix(path) in EXCLUDED
    }
    # The image is neither linked by an <a> nor listed: nothing to say about it.
    assert on_excluded == {
        ("blocked_by_robots_txt", "/private/plans"),
        ("blocked_by_robots_txt", "/private/prices"),
        ("sitemap_url_blocked", "/private/prices"),
    }
    # A link to an excluded URL is not broken: nothing was asked, nothing failed.
    targets = {
        str(issue.details.get("target", "")).removeprefix(path)
        for issue in issues
        if issue.url.removeprefix(path) not in EXCLUDED
    }
    assert not targets & set(EXCLUDED)
    codes = {issue.check_code for issue in issues}
    assert not codes & {"fetch_failed", "broken_internal_link", "img_broken", "http_4xx", "http_5xx"}
