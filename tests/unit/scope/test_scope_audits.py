"""What an audit covers, end to end through the application against a site served on 127.0.0.1
(docs/audits.md): a list of 50 URLs audited exactly, a sitemap-only audit, include and exclude patterns,
the three query modes, robots.txt obeyed by each, and a site's saved rules (scope and extraction) used by
the audit it starts; on memory and SQLite."""

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.scope import QueryParams
from siteaudit.ports.application import Application
from siteaudit.services.audits.usecases import GetAudit, ListIssues, ListPages, StartAudit
from siteaudit.services.sites.usecases import CrawlSite, RegisterSite, UpdateSite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL

HTML = "text/html; charset=utf-8"
PAGES = 60


def page(title: str, *links: str) -> str:
    anchors = " ".join(f"<a href='{href}'>{href}</a>" for href in links)
    return (
        f"<!doctype html><html lang=en><head><title>{title} of the Retro Clock shop</title></head>"
        f"<body><h1>{title}</h1><p class=price>€{len(title)}.00</p>{anchors}</body></html>"
    )


@pytest.fixture
def site(httpserver: HTTPServer) -> HTTPServer:
    """A shop of 60 chained pages, each linking the next, a hidden page and the query pages; a private
    part robots.txt disallows; a sitemap listing five pages of its own."""
    serve = httpserver.expect_request
    serve("/robots.txt").respond_with_data("User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    listed = "".join(f"<url><loc>{httpserver.url_for(f'/s/{i}')}</loc></url>" for i in range(5))
    serve("/sitemap.xml").respond_with_data(
        f"<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>{listed}"
        f"<url><loc>{httpserver.url_for('/private/s')}</loc></url></urlset>",
        content_type="application/xml",
    )
    serve("/").respond_with_data(
        page("Home", "/p/0", "/hidden", "/q?id=1&utm=a", "/q?id=2&utm=b", "/blog/one", "/files/a.pdf"),
        content_type=HTML,
    )
    for i in range(PAGES):
        serve(f"/p/{i}").respond_with_data(page(f"Page {i}", f"/p/{i + 1}", "/hidden"), content_type=HTML)
    for i in range(5):
        serve(f"/s/{i}").respond_with_data(page(f"Listed {i}", "/hidden"), content_type=HTML)
    for path in ("/hidden", "/q", "/blog/one", "/files/a.pdf"):
        serve(path).respond_with_data(page(path.strip("/").replace("/", " ")), content_type=HTML)
    httpserver.no_handler_status_code = 404
    return httpserver


@pytest.fixture(params=["memory", "sqlite"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Application, Caller]:
    database = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"
    # The local site is not paced (tests/local_sites.py): the 50 URLs take no 25 seconds at 2 a second, nor 5
    # at the shared host limit's 10.
    settings = Settings(database_url=database, allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL)
    application = bootstrap(settings, queue=MemoryTaskQueue()).application
    key = application.ensure_local_owner(plan="scale", starting_credits=10_000)
    return application, application.authenticate(key.raw)


def finished(app: tuple[Application, Caller], audit_id: AuditId) -> AuditId:
    application, _ = app
    while application.run_crawl_slice(audit_id).next == "slice":
        pass
    application.finalize_audit(audit_id)
    return audit_id


def audited(app: tuple[Application, Caller], request: StartAudit) -> AuditId:
    application, me = app
    return finished(app, AuditId(application.handle(request, me).crawl_id))


def paths(app: tuple[Application, Caller], audit_id: AuditId, site: HTTPServer) -> set[str]:
    application, me = app
    rows = application.handle(ListPages(audit_id, per_page=200), me).data
    origin = site.url_for("/")[:-1]
    return {row.url.removeprefix(origin) for row in rows}


def test_a_list_of_50_urls_audits_exactly_those_and_follows_nothing(
    app: tuple[Application, Caller], site: HTTPServer
) -> None:
    application, me = app
    urls = tuple(site.url_for(f"/p/{i}") for i in range(50))
    started = application.handle(StartAudit(urls=urls + urls[:5]), me)  # duplicates removed
    assert started.estimated_credits == 50  # one credit a URL
    assert application.handle(GetAudit(AuditId(started.crawl_id)), me).max_pages == 50
    audit_id = finished(app, AuditId(started.crawl_id))
    assert paths(app, audit_id, site) == {f"/p/{i}" for i in range(50)}
    audit = application.handle(GetAudit(audit_id), me)
    assert (audit.status.value, audit.pages_crawled, audit.site_url) == ("done", 50, urls[0])
    fetched = {request.path for request, _ in site.log}
    assert "/p/50" not in fetched and "/hidden" not in fetched and "/" not in fetched
    assert "/robots.txt" in fetched  # read and obeyed as ever
    issues = application.handle(ListIssues(audit_id, per_page=200), me).data
    assert "orphan_page" not in {issue.check_code for issue in issues}


def test_a_list_obeys_robots_txt_and_reports_a_missing_listed_url(
    app: tuple[Application, Caller], site: HTTPServer
) -> None:
    application, me = app
    urls = (site.url_for("/p/1"), site.url_for("/private/secret"), site.url_for("/gone"))
    audit_id = audited(app, StartAudit(urls=urls))
    rows = {row.url: row for row in application.handle(ListPages(audit_id), me).data}
    assert rows[urls[1]].excluded_by is not None and rows[urls[1]].status_code is None
    assert rows[urls[2]].status_code == 404
    assert "/private/secret" not in {request.path for request, _ in site.log}
    issues = application.handle(ListIssues(audit_id, per_page=200), me).data
    assert any(i.check_code == "http_4xx" and i.url == urls[2] for i in issues)


def test_a_sitemap_only_audit_audits_what_the_sitemaps_list(
    app: tuple[Application, Caller], site: HTTPServer
) -> None:
    audit_id = audited(app, StartAudit(url=site.url_for("/"), sitemap_only=True))
    assert paths(app, audit_id, site) == {f"/s/{i}" for i in range(5)} | {"/private/s"}
    fetched = {request.path for request, _ in site.log}
    assert "/hidden" not in fetched and "/" not in fetched and "/private/s" not in fetched


def test_include_and_exclude_patterns_keep_the_crawl_to_what_they_admit(
    app: tuple[Application, Caller], site: HTTPServer
) -> None:
    request = StartAudit(url=site.url_for("/"), max_pages=100, include=("/p/",), exclude=("/p/1*",))
    found = paths(app, audited(app, request), site)
    # The start URL is always audited; /p/1, /p/10.. are excluded, so the chain stops at /p/0.
    assert found == {"/", "/p/0"}
    found = paths(app, audited(app, StartAudit(url=site.url_for("/"), exclude=("*.pdf", "/p/"))), site)
    assert found == {
        "/",
        "/hidden",
        "/q?id=1&utm=a",
        "/q?id=2&utm=b",
        "/blog/one",
        "/s/0",
        "/s/1",
        "/s/2",
        "/s/3",
        "/s/4",
        "/private/s",
    }


@pytest.mark.parametrize(
    ("mode", "keep", "expected"),
    [
        (QueryParams.KEEP, None, {"/q?id=1&utm=a", "/q?id=2&utm=b"}),
        (QueryParams.DROP, None, {"/q"}),
        (QueryParams.KEEP_LISTED, ("id",), {"/q?id=1", "/q?id=2"}),
    ],
)
def test_query_modes(
    app: tuple[Application, Caller],
    site: HTTPServer,
    mode: QueryParams,
    keep: tuple[str, ...] | None,
    expected: set[str],
) -> None:
    request = StartAudit(
        url=site.url_for("/"), include=("/q",), query_params=mode, keep_params=keep, max_pages=50
    )
    assert paths(app, audited(app, request), site) == {"/"} | expected


def test_a_sites_saved_rules_are_used_by_the_audit_it_starts(
    app: tuple[Application, Caller], site: HTTPServer
) -> None:
    application, me = app
    registered = application.handle(RegisterSite(site.url_for("/"), max_pages=200), me)
    site_id = SiteId(registered.id)
    price = ExtractionRule("price", ".price")
    saved = application.handle(
        UpdateSite(site_id, include=("/blog/",), query_params=QueryParams.DROP, extract=(price,)), me
    )
    assert (saved.include, saved.query_params, saved.extract) == (("/blog/",), QueryParams.DROP, (price,))
    started = application.handle(CrawlSite(site_id), me)
    audit_id = finished(app, AuditId(started.crawl_id))
    assert paths(app, audit_id, site) == {"/", "/blog/one"}
    rows = application.handle(ListPages(audit_id, extract_rule="price"), me).data
    origin = site.url_for("/")[:-1]
    read = {row.url.removeprefix(origin): row.extract for row in rows}
    assert read == {"/": {"price": ("€4.00",)}, "/blog/one": {"price": ("€8.00",)}}
    # What the audit gives replaces what the site saved: here a list, which reads no saved patterns.
    listed = application.handle(CrawlSite(site_id, urls=(site.url_for("/p/3"),), extract=()), me)
    audit_id = finished(app, AuditId(listed.crawl_id))
    assert paths(app, audit_id, site) == {"/p/3"}
    assert [row.extract for row in application.handle(ListPages(audit_id), me).data] == [None]
    # The site forgets its rules when told to.
    cleared = application.handle(UpdateSite(site_id, include=(), extract=()), me)
    assert (cleared.include, cleared.extract) == ((), ())
