"""A sitemap within the protocol's 50,000-URL limit is never judged too long because earlier sitemaps
already filled the audit's room for listed URLs (that room bounds what is kept, not what is valid)."""

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from crawl_doubles import Answer, Crawl, SiteServer, html

from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.ids import UserId
from siteaudit.services.finalize import finalize_audit

NOW = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


def urlset(site: SiteServer, paths: list[str]) -> Answer:
    entries = "".join(f"<url><loc>{site.url(p)}</loc></url>" for p in paths)
    return Answer(
        200,
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>',
        {"Content-Type": "application/xml"},
    )


def test_a_second_sitemap_past_the_kept_room_is_not_invalid(site: SiteServer) -> None:
    first = [f"/a{i}" for i in range(6)]
    second = [f"/b{i}" for i in range(6)]
    site.routes.update(
        {
            "/robots.txt": Answer(
                200,
                f"User-agent: *\nSitemap: {site.url('/one.xml')}\nSitemap: {site.url('/two.xml')}\n",
                {"Content-Type": "text/plain"},
            ),
            "/one.xml": urlset(site, first),
            "/two.xml": urlset(site, second),
            "/": html("".join(f'<a href="{p}">{p}</a>' for p in first + second)),
            **{p: html(f"<h1>{p}</h1>") for p in first + second},
        }
    )
    crawl = Crawl(site.url("/"), limits=CrawlLimits(max_sitemap_urls=8))
    with crawl.uow() as uow:
        uow.credits.grant(UserId(1), 100_000, key="room", at=NOW)
        uow.credits.reserve(UserId(1), crawl.max_pages * 10, reference=f"audit:{crawl.audit_id}", at=NOW)
        uow.commit()
    crawl.run()
    finalize_audit(crawl.audit_id, uow=crawl.uow(), crawl=crawl.crawl, clock=crawl.clock)

    codes = {issue.check_code for _, issue in crawl.crawl.stream_issues(crawl.audit_id)}
    assert "sitemap_invalid" not in codes
    assert "sitemap_too_large" not in codes
