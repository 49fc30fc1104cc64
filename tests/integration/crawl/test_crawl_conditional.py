"""Conditional requests: an audit of a site with a previous audit asks with its validators, reuses the
facts and links of the pages that answered 304, finds exactly what a full crawl finds, and bills 0.2."""

import math
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from attrs import evolve
from crawl_doubles import Crawl, SiteServer, html
from test_crawl_site import retro_clock_site
from test_golden import GOLDEN_FINDINGS, GOLDEN_SCORE, GOLDEN_TOTALS, findings

from siteaudit.adapters.report_json import report_json
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.ids import UserId
from siteaudit.ports.crawl import FrontierState
from siteaudit.services.finalize import finalize_audit

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
DATED = "Sat, 21 Nov 2026 08:00:00 GMT"
# What answers 304 the second time: every URL that answered 200 at its own address, but /new/item (its
# content changed) and /new (reached only through the /old redirect chain, so asked without validators).
NOT_MODIFIED = {
    "/",
    "/about",
    "/about/team",  # by If-Modified-Since: it sends Last-Modified and no ETag
    "/canon",
    "/canon?ref=home",
    "/en",
    "/de",
    "/noindex-meta",
    "/noindex-header",
    "/slow",
    "/big",
    "/img/clock.png",
    "/orphan",
    "/orphan/child",
}


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer(validators=True)
    retro_clock_site(server)
    server.routes["/about/team"] = evolve(
        server.routes["/about/team"],  # type: ignore[misc]
        headers={"Content-Type": "text/html; charset=utf-8", "Last-Modified": DATED},
    )
    yield server
    server.close()


def audit(site: SiteServer, earlier: Crawl | None = None) -> Crawl:
    run = (
        Crawl(site.url("/"))
        if earlier is None
        else Crawl(site.url("/"), store=earlier.store, crawl=earlier.crawl, clock=earlier.clock)
    )
    with run.uow() as uow:
        uow.credits.grant(UserId(1), 100_000, key=f"grant:{run.audit_id}", at=NOW)
        uow.credits.reserve(UserId(1), run.max_pages * 10, reference=f"audit:{run.audit_id}", at=NOW)
        created = uow.audits.get_any(run.audit_id)
        uow.audits.save(evolve(created, credits_reserved=run.max_pages * 10, version=created.version + 1))
        uow.commit()
    run.run()
    finalize_audit(run.audit_id, uow=run.uow(), crawl=run.crawl, clock=run.clock)
    assert run.audit().status is AuditStatus.DONE
    return run


def untimed(page: PageFacts) -> PageFacts:
    return evolve(page, ttfb_ms=None, total_ms=None, not_modified=False)


def link_graph(run: Crawl) -> set[tuple[str, str, str, bool, bool]]:
    urls = dict(run.crawl.stream_urls(run.audit_id))
    return {
        (urls[link.source], urls[link.target], link.kind.value, link.nofollow, link.internal)
        for link in run.crawl.stream_links(run.audit_id)
    }


def test_a_second_audit_reuses_what_answered_304_and_finds_exactly_the_same(site: SiteServer) -> None:
    first = audit(site)
    assert not any(status == 304 for _, status in site.statuses)
    site.routes["/new/item"] = html("<h1>Item, now in brass</h1>")
    site.hits.clear()
    site.statuses.clear()
    with first.uow() as uow:
        balance = uow.credits.balance(UserId(1))

    second = audit(site, first)

    assert {path for path, status in site.statuses if status == 304} == NOT_MODIFIED
    asked = {hit.path: hit.headers for hit in site.hits}
    for path in NOT_MODIFIED - {"/about/team"}:
        assert asked[path]["if-none-match"].startswith('"') and "if-modified-since" not in asked[path]
    assert asked["/about/team"]["if-modified-since"] == DATED
    for path in ("/robots.txt", "/llms.txt", "/sitemap_index.xml", "/old", "/new", "/missing"):
        assert "if-none-match" not in asked[path] and "if-modified-since" not in asked[path]

    before, after = first.pages(), second.pages()
    assert set(after) == set(before)
    for url, page in after.items():
        path = url.removeprefix(site.url("/")[:-1])
        assert isinstance(page, PageFacts)
        assert page.not_modified is (path in NOT_MODIFIED)
        if page.not_modified:
            assert untimed(page) == untimed(before[url])  # type: ignore[arg-type]
    item = after[site.url("/new/item")]
    assert isinstance(item, PageFacts) and item.html is not None and item.html.h1s == ("Item, now in brass",)

    # Links read back from the first audit: the same graph, so the same findings, score and totals.
    assert link_graph(second) == link_graph(first)
    origin = site.url("/").rstrip("/")
    assert findings(second, origin) == findings(first, origin) == GOLDEN_FINDINGS
    stored = second.crawl.report(second.audit_id)
    assert stored is not None
    report = report_json(stored)
    assert report["health_score"] == GOLDEN_SCORE and report["totals"] == GOLDEN_TOTALS
    assert report["diff"]["new"] == report["diff"]["fixed"] == 0

    # Billing: 0.2 per page that answered 304, 1 per other page, rounded up once; the image that answered
    # 304 is a resource, neither (`docs/scoring.md`).
    done = second.audit()
    pages_304 = len(NOT_MODIFIED - {"/img/clock.png"})
    assert done.pages_not_modified == pages_304
    counts = second.crawl.frontier_counts(second.audit_id)
    assert counts[FrontierState.NOT_MODIFIED] == pages_304
    assert counts[FrontierState.RESOURCE] == 1
    assert done.pages_crawled == counts[FrontierState.DONE] + pages_304 == GOLDEN_TOTALS["pages"]
    fetched = done.pages_crawled - pages_304
    cost = math.ceil((fetched * 10 + pages_304 * 2) / 10) * 10
    with second.uow() as uow:
        assert balance + 100_000 - uow.credits.balance(UserId(1)) == cost


def test_no_validators_are_sent_when_the_previous_audit_was_archived(site: SiteServer) -> None:
    first = audit(site)
    with first.uow() as uow:
        uow.audits.save(uow.audits.get_any(first.audit_id).archive(now=NOW))
        uow.commit()
    first.crawl.archive(first.audit_id)
    site.hits.clear()
    site.statuses.clear()

    second = audit(site, first)

    assert not any("if-none-match" in hit.headers or "if-modified-since" in hit.headers for hit in site.hits)
    assert not any(status == 304 for _, status in site.statuses)
    assert second.audit().pages_not_modified == 0
    assert findings(second, site.url("/").rstrip("/")) == GOLDEN_FINDINGS
