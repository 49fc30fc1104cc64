"""Language versions a site declares only in its sitemap (`xhtml:link` alternates) reach the hreflang checks."""

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from crawl_doubles import Answer, Crawl, SiteServer, html

from siteaudit.domain.ids import UserId
from siteaudit.services.finalize import finalize_audit

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
HREFLANG_CHECKS = (
    "hreflang_invalid_code",
    "hreflang_missing_return",
    "hreflang_missing_self",
    "hreflang_missing_x_default",
    "hreflang_target_invalid",
    "hreflang_lang_mismatch",
)


def multilingual(site: SiteServer, alternates: dict[str, list[tuple[str, str]]]) -> None:
    """/en and /de link each other; their language versions are declared in the sitemap only."""
    u = site.url
    entries = "".join(
        f"<url><loc>{u(path)}</loc>"
        + "".join(f'<xhtml:link rel="alternate" hreflang="{lang}" href="{u(href)}"/>' for lang, href in pairs)
        + "</url>"
        for path, pairs in alternates.items()
    )
    site.routes.update(
        {
            "/robots.txt": Answer(
                200, f"User-agent: *\nSitemap: {u('/sitemap.xml')}\n", {"Content-Type": "text/plain"}
            ),
            "/sitemap.xml": Answer(
                200,
                '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
                f'xmlns:xhtml="http://www.w3.org/1999/xhtml">{entries}</urlset>',
                {"Content-Type": "application/xml"},
            ),
            "/": html('<a href="/en">English</a><a href="/de">Deutsch</a>'),
            "/en": html('<h1>Clocks</h1><a href="/de">Deutsch</a>'),
            "/de": Answer(
                200,
                "<!doctype html><html lang=de><head><meta charset=utf-8></head>"
                '<body><h1>Uhren</h1><a href="/en">English</a></body></html>',
                {"Content-Type": "text/html; charset=utf-8"},
            ),
        }
    )


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


def hreflang_findings(site: SiteServer) -> set[tuple[str, str]]:
    crawl = Crawl(site.url("/"))
    with crawl.uow() as uow:
        uow.credits.grant(UserId(1), 100_000, key="hreflang", at=NOW)
        uow.credits.reserve(UserId(1), crawl.max_pages * 10, reference=f"audit:{crawl.audit_id}", at=NOW)
        uow.commit()
    crawl.run()
    finalize_audit(crawl.audit_id, uow=crawl.uow(), crawl=crawl.crawl, clock=crawl.clock)
    origin = site.url("/").rstrip("/")
    return {
        (issue.check_code, issue.url.removeprefix(origin) or "/")
        for _, issue in crawl.crawl.stream_issues(crawl.audit_id)
        if issue.check_code in HREFLANG_CHECKS
    }


def test_alternates_declared_only_in_the_sitemap_are_judged(site: SiteServer) -> None:
    # /en names /de, but /de does not name /en back; neither names an x-default.
    multilingual(site, {"/en": [("en", "/en"), ("de", "/de")], "/de": [("de", "/de")]})

    assert hreflang_findings(site) == {
        ("hreflang_missing_x_default", "/en"),
        ("hreflang_missing_x_default", "/de"),
        ("hreflang_missing_return", "/en"),
    }


def test_complete_sitemap_alternates_give_no_hreflang_finding(site: SiteServer) -> None:
    complete = [("en", "/en"), ("de", "/de"), ("x-default", "/en")]
    multilingual(site, {"/en": complete, "/de": complete})

    assert hreflang_findings(site) == set()


def test_a_sitemap_without_alternates_gives_no_hreflang_finding(site: SiteServer) -> None:
    multilingual(site, {"/en": [], "/de": []})

    assert hreflang_findings(site) == set()
