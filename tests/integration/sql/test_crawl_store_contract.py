"""The crawl store contract, once, against the memory store, a SQLite file and PostgreSQL."""

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from attrs import evolve
from sql_backend import Backend
from sqlalchemy import null, update

from siteaudit.adapters.sql.tables import crawl_pages
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.diff import ArchivedIdentities, PreviousAudit
from siteaudit.domain.facts import FetchError, Hop, HtmlFacts, Image, JsonLdBlock, Link, LinkKind, PageFacts
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.issue import Issue, Severity
from siteaudit.domain.report import Report, Timings
from siteaudit.domain.tally import AuditIdentity, PageOutcome, ReportTally
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.crawl import (
    EXCLUDED_BY_ROBOTS_TXT,
    FrontierEntry,
    FrontierState,
    IssueQuery,
    LinkLine,
    LinkRow,
    PageQuery,
    PageRow,
)

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
SITE = "https://retro-clock.example"


def _audits(backend: Backend, count: int = 2) -> list[AuditId]:
    with backend.uow() as uow:
        owner = uow.users.add(User(UserId(0), "owner@retro-clock.example", "growth", T0))
        team = uow.teams.add(Team(TeamId(0), "Retro Clock", owner.id, T0))
        ids = [
            uow.audits.add(
                Audit(AuditId(0), team.id, owner.id, owner.id, f"{SITE}/", SITE, T0, max_pages=500)
            ).id
            for _ in range(count)
        ]
        uow.commit()
    return ids


def _page(path: str, status: int | None = 200, **html: object) -> PageFacts:
    facts = HtmlFacts(
        titles=(f"Title of {path}", "A second title"),
        meta_descriptions=(f"About {path}",),
        h1s=("Clocks",),
        heading_levels=(1, 2),
        lang="en",
        open_graph=frozenset({"og:title", "og:image"}),
        json_ld=(JsonLdBlock(True, True, True, ("Product",)),),
        links=(Link(f"{SITE}/a"), Link("https://elsewhere.example/", internal=False, nofollow=True)),
        images=(Image(f"{SITE}/clock.png", has_alt=False, width="10"),),
        word_count=321,
        sketch=(5, 9, 1),
        **html,  # type: ignore[arg-type]
    )
    return PageFacts(
        url=f"{SITE}{path}",
        depth=path.count("/"),
        status_code=status,
        content_type="text/html",
        headers=(("server", "nginx"), ("x-robots-tag", "noarchive")),
        redirects=(Hop(f"http://retro-clock.example{path}", 301, f"{SITE}{path}"),),
        bytes=2048,
        ttfb_ms=40,
        in_sitemap=path.startswith("/blog"),
        html=facts,
    )


def test_urls_get_dense_ids_in_first_seen_order_once_per_audit(backend: Backend) -> None:
    first, second = _audits(backend)
    store = backend.crawl
    ids = store.intern(first, [f"{SITE}/b", f"{SITE}/a", f"{SITE}/b"])
    assert dict(ids) == {f"{SITE}/b": 1, f"{SITE}/a": 2}
    assert dict(store.intern(first, [f"{SITE}/c", f"{SITE}/a"])) == {f"{SITE}/c": 3, f"{SITE}/a": 2}
    assert dict(store.intern(second, [f"{SITE}/a"])) == {f"{SITE}/a": 1}
    assert dict(store.urls(first, [3, 1, 99])) == {1: f"{SITE}/b", 3: f"{SITE}/c"}
    assert list(store.stream_urls(first)) == [(1, f"{SITE}/b"), (2, f"{SITE}/a"), (3, f"{SITE}/c")]


def test_pages_read_back_equal_without_their_links_and_rewriting_replaces(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    pages = [
        _page("/"),
        _page("/blog/first-post"),
        PageFacts(
            f"{SITE}/gone", depth=1, fetch_error=FetchError.TIMEOUT, fetch_error_detail="read timed out"
        ),
        PageFacts(f"{SITE}/blocked", status_code=403, blocked_by="cloudflare", content_type="text/html"),
    ]
    assert store.write_pages(audit, pages, templates={f"{SITE}/blog/first-post": "/blog/[slug]"}) == 4
    store.write_pages(other, [_page("/other")])
    stored = list(store.stream_pages(audit))
    assert [s.url_id for s in stored] == [1, 2, 3, 4]
    assert [s.template for s in stored] == ["", "/blog/[slug]", "", ""]
    for page, back in zip(pages, stored, strict=True):
        html = page.html
        assert back.facts == (page if html is None else evolve(page, html=evolve(html, links=())))
    store.write_pages(audit, [evolve(_page("/"), status_code=500)])
    assert store.page_count(audit) == 4
    assert next(iter(store.stream_pages(audit))).facts.status_code == 500


def test_page_lists_filter_by_status_and_paginate_in_a_stable_order(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    store.write_pages(audit, [_page(f"/p{i}", 404 if i % 3 == 0 else 200) for i in range(10)])
    store.write_pages(other, [_page("/p0", 404)])
    rows, total = store.list_pages(audit, PageQuery(offset=2, limit=3))
    assert total == 10
    assert [r.url for r in rows] == [f"{SITE}/p2", f"{SITE}/p3", f"{SITE}/p4"]
    rows, total = store.list_pages(audit, PageQuery(status_code=404, limit=2))
    assert total == 4
    assert [r.url for r in rows] == [f"{SITE}/p0", f"{SITE}/p3"]
    assert rows[0] == PageRow(
        url_id=1,
        url=f"{SITE}/p0",
        status_code=404,
        depth=1,
        title="Title of /p0",
        meta_description="About /p0",
        word_count=321,
        content_type="text/html",
    )
    assert store.list_pages(audit, PageQuery(status_code=301)) == ([], 0)


def test_page_rows_say_which_urls_robots_txt_excluded(backend: Backend) -> None:
    """A URL robots.txt disallows is a row with no status and no fetch error, marked `excluded_by` (issue
    12); the status filter and the sealed totals are unchanged by it."""
    audit, _ = _audits(backend)
    store = backend.crawl
    excluded = PageFacts(f"{SITE}/private/plans", depth=1, disallowed=True, in_sitemap=True)
    failed = PageFacts(f"{SITE}/slow", depth=1, fetch_error=FetchError.TIMEOUT)
    store.write_pages(audit, [_page("/"), excluded, failed])
    rows, total = store.list_pages(audit, PageQuery())
    assert total == 3
    assert [(r.url, r.status_code, r.fetch_error, r.excluded_by) for r in rows] == [
        (f"{SITE}/", 200, None, None),
        (excluded.url, None, None, EXCLUDED_BY_ROBOTS_TXT),
        (failed.url, None, FetchError.TIMEOUT, None),
    ]
    assert EXCLUDED_BY_ROBOTS_TXT == "robots.txt"
    assert [r.url for r in store.list_pages(audit, PageQuery(status_code=200))[0]] == [f"{SITE}/"]
    store.seal_counts(audit)
    assert store.list_pages(audit, PageQuery()) == (rows, 3)
    assert store.list_pages(audit, PageQuery(status_code=200))[1] == 1
    if backend.engine is not None:
        # A row written before the `site` document existed keeps every fact in `facts`.
        with backend.engine.begin() as conn:
            conn.execute(
                update(crawl_pages)
                .where(crawl_pages.c.audit_id == audit, crawl_pages.c.url_id == rows[1].url_id)
                .values(site=null(), facts={"disallowed": True})
            )
        assert store.list_pages(audit, PageQuery())[0][1].excluded_by == EXCLUDED_BY_ROBOTS_TXT


def _issues() -> list[Issue]:
    return [
        Issue("title_too_long", Severity.WARNING, f"{SITE}/b", "/[slug]", {"length": 74}),
        Issue("broken_link", Severity.ERROR, f"{SITE}/c", "", {"target": f"{SITE}/x", "status": 404}),
        Issue("missing_alt", Severity.NOTICE, f"{SITE}/a", "/[slug]", {"images": [f"{SITE}/i.png"]}),
        Issue("broken_link", Severity.ERROR, f"{SITE}/a", "", {"target": f"{SITE}/y", "status": 410}),
        Issue("title_too_long", Severity.WARNING, f"{SITE}/a", "/[slug]", {"length": 80}),
        Issue("broken_link", Severity.ERROR, f"{SITE}/a", "", {"target": f"{SITE}/z", "status": 500}),
    ]


def test_issues_list_most_severe_first_with_filters_totals_and_details(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    store.intern(audit, [f"{SITE}/a", f"{SITE}/b", f"{SITE}/c"])
    assert store.write_issues(audit, _issues()) == 6
    store.write_issues(other, _issues()[:1])
    rows, total = store.list_issues(audit, IssueQuery())
    assert total == 6
    assert [(i.check_code, i.url, i.details.get("target")) for i in rows] == [
        ("broken_link", f"{SITE}/a", f"{SITE}/y"),
        ("broken_link", f"{SITE}/a", f"{SITE}/z"),
        ("broken_link", f"{SITE}/c", f"{SITE}/x"),
        ("title_too_long", f"{SITE}/a", None),
        ("title_too_long", f"{SITE}/b", None),
        ("missing_alt", f"{SITE}/a", None),
    ]
    assert rows[5].details == {"images": [f"{SITE}/i.png"]}
    assert store.list_issues(audit, IssueQuery(offset=4, limit=10))[0] == rows[4:]
    assert store.list_issues(audit, IssueQuery(check_code="broken_link", limit=1)) == (rows[:1], 3)
    assert store.list_issues(audit, IssueQuery(severity=Severity.WARNING))[1] == 2
    assert store.list_issues(audit, IssueQuery(template="/[slug]"))[1] == 3
    assert store.list_issues(audit, IssueQuery(check_code="broken_link", severity=Severity.NOTICE)) == ([], 0)


def test_replacing_a_urls_issues_drops_only_those(backend: Backend) -> None:
    (audit, _) = _audits(backend)
    store = backend.crawl
    store.write_issues(audit, _issues())
    ids = store.intern(audit, [f"{SITE}/a"])
    fresh = Issue("thin_content", Severity.WARNING, f"{SITE}/a", "", {"words": 12})
    assert store.replace_issues(audit, [ids[f"{SITE}/a"]], [fresh]) == 1
    remaining = sorted((url_id, i.check_code) for url_id, i in store.stream_issues(audit))
    assert ids[f"{SITE}/a"] == 3
    assert remaining == [(1, "title_too_long"), (2, "broken_link"), (3, "thin_content")]


def test_templates_are_assigned_to_pages_and_their_issues(backend: Backend) -> None:
    (audit, _) = _audits(backend)
    store = backend.crawl
    store.write_pages(audit, [_page("/blog/one"), _page("/blog/two"), _page("/about")])
    store.write_issues(audit, [Issue("thin_content", Severity.WARNING, f"{SITE}/blog/two")])
    store.assign_templates(audit, [(1, "/blog/[slug]"), (2, "/blog/[slug]"), (3, "/about")])
    assert [s.template for s in store.stream_pages(audit)] == ["/blog/[slug]", "/blog/[slug]", "/about"]
    assert store.list_pages(audit, PageQuery())[0][0].template == "/blog/[slug]"
    assert [i.template for i in store.list_issues(audit, IssueQuery(template="/blog/[slug]"))[0]] == [
        "/blog/[slug]"
    ]


def test_sealed_counts_answer_the_same_lists_and_totals_for_every_filter(backend: Backend) -> None:
    audit, other, empty = _audits(backend, 3)
    store = backend.crawl
    store.write_pages(
        audit,
        [
            _page("/blog/one"),
            _page("/blog/two"),
            _page("/about", status=404),
            PageFacts(url=f"{SITE}/down", fetch_error=FetchError.TIMEOUT),
        ],
    )
    store.write_issues(audit, _issues())  # /a, /b, /c: URLs without pages, templates written with them
    store.write_issues(
        audit,
        [
            Issue("thin_content", Severity.WARNING, f"{SITE}/blog/two", "", {"words": 12}),
            Issue("title_too_long", Severity.WARNING, f"{SITE}/blog/one", "", {}),
            Issue("http_4xx", Severity.ERROR, f"{SITE}/about", "", {"status": 404}),
        ],
    )
    ids = store.intern(audit, [f"{SITE}/blog/one", f"{SITE}/blog/two", f"{SITE}/about"])
    store.assign_templates(
        audit, [(ids[f"{SITE}/blog/one"], "/blog/[slug]"), (ids[f"{SITE}/blog/two"], "/[slug]")]
    )
    store.write_issues(other, _issues())
    filters = [
        {"check_code": code, "severity": severity, "template": template}
        for code in (None, "broken_link", "title_too_long", "thin_content", "nothing")
        for severity in (None, *Severity)
        for template in (None, "/[slug]", "/blog/[slug]", "", "/none")
    ]
    before = [store.list_issues(audit, IssueQuery(**f)) for f in filters]
    pages_before = [store.list_pages(audit, PageQuery(status_code=s)) for s in (None, 200, 404, 500)]

    store.seal_counts(audit)
    store.seal_counts(audit)  # idempotent

    assert [store.list_issues(audit, IssueQuery(**f)) for f in filters] == before  # type: ignore[arg-type]
    assert [store.list_pages(audit, PageQuery(status_code=s)) for s in (None, 200, 404, 500)] == pages_before
    assert before[0][1] == 9 and pages_before[0][1] == 4
    assert (
        store.list_issues(audit, IssueQuery(template="/[slug]"))[1] == 4
    )  # /blog/two by assignment, /b and /c written
    store.seal_counts(other)
    store.seal_counts(empty)
    assert store.list_issues(empty, IssueQuery()) == ([], 0) and store.list_pages(empty, PageQuery()) == (
        [],
        0,
    )
    assert store.list_issues(other, IssueQuery())[1] == 6
    store.archive(audit)
    assert store.list_issues(audit, IssueQuery()) == ([], 0) and store.list_pages(audit, PageQuery()) == (
        [],
        0,
    )


def test_a_seal_given_the_last_issues_and_templates_stores_and_counts_them_as_if_written_before(
    backend: Backend,
) -> None:
    apart, together = _audits(backend)
    store = backend.crawl
    last = [Issue("thin_content", Severity.WARNING, f"{SITE}/blog/two", "", {"words": 12})]
    for audit in (apart, together):
        store.write_pages(audit, [_page("/blog/one"), _page("/blog/two"), _page("/about", status=404)])
        store.write_issues(audit, _issues())
    templates = {
        audit: [
            (i, "/blog/[slug]")
            for i in store.intern(audit, [f"{SITE}/blog/one", f"{SITE}/blog/two"]).values()
        ]
        for audit in (apart, together)
    }
    store.write_issues(apart, last)
    store.assign_templates(apart, templates[apart])
    store.seal_counts(apart)
    store.seal_counts(together, issues=last, templates=templates[together])

    def lists(audit: AuditId) -> list[Any]:
        return [
            *(
                store.list_issues(audit, IssueQuery(template=t))
                for t in (None, "/blog/[slug]", "/[slug]", "")
            ),
            *(store.list_pages(audit, PageQuery(status_code=s)) for s in (None, 200, 404)),
        ]

    assert lists(together) == lists(apart)
    assert (
        store.list_issues(together, IssueQuery(template="/blog/[slug]"))[1] == 1
    )  # the last issue, its page's template


def test_every_page_of_the_lists_holds_the_rows_of_a_plain_sort_before_and_after_sealing(
    backend: Backend,
) -> None:
    """Each list page (fetched by offset, as the REST lists do) is that slice of the rows sorted in Python:
    pages by URL id, issues by severity, check, URL id and writing order; for every filter, unsealed,
    then sealed with the statistics refreshed (finalisation), next to another audit's rows."""
    audit, other = _audits(backend)
    store = backend.crawl
    checks = [
        ("broken_link", Severity.ERROR),
        ("missing_alt", Severity.NOTICE),
        ("thin_content", Severity.WARNING),
        ("title_too_long", Severity.WARNING),
    ]
    urls = [f"{SITE}/p{(i * 37) % 90}" for i in range(90)]  # interned in this order, not the path's
    for target in (other, audit):
        url_ids = store.intern(target, urls)
        store.write_pages(
            target, [_page(f"/p{(i * 37) % 90}", status=404 if i % 4 == 0 else 200) for i in range(0, 90, 2)]
        )
    written = [
        Issue(code, severity, urls[(i * 7) % 90], ("/[slug]", "/blog/[slug]")[i % 2], {"n": i})
        for i in range(260)
        for code, severity in [checks[(i * 3) % 4]]
    ]
    for target in (other, audit):
        for start in range(0, len(written), 100):  # writing order is the last tie-breaker
            store.write_issues(target, written[start : start + 100])
    store.assign_templates(audit, [(url_ids[u], "/[other]") for u in urls[::5]])
    template_of = {u: "/[other]" for u in urls[::5]}
    by_order = sorted(
        range(len(written)),
        key=lambda n: (written[n].severity.rank, written[n].check_code, url_ids[written[n].url], n),
    )
    issues = [
        evolve(written[n], template=template_of.get(written[n].url, written[n].template)) for n in by_order
    ]
    pages = sorted((url_ids[f"{SITE}/p{(i * 37) % 90}"], i) for i in range(0, 90, 2))

    def paged(
        fetch: Callable[[AuditId, Any], tuple[Sequence[Any], int]], query: Any, per_page: int
    ) -> list[Any]:
        rows: list[Any] = []
        while True:
            batch, _ = fetch(audit, evolve(query, offset=len(rows), limit=per_page))
            rows.extend(batch)
            if len(batch) < per_page:
                return rows

    def check_lists() -> None:
        for code in (None, "broken_link", "title_too_long"):
            for severity in (None, Severity.WARNING, Severity.NOTICE):
                for template in (None, "/[slug]", "/[other]"):
                    expected = [
                        i
                        for i in issues
                        if code in (None, i.check_code)
                        and severity in (None, i.severity)
                        and template in (None, i.template)
                    ]
                    query = IssueQuery(check_code=code, severity=severity, template=template)
                    assert paged(store.list_issues, query, 7) == expected, (code, severity, template)
                    assert store.list_issues(audit, query)[1] == len(expected)
        for status in (None, 200, 404):
            expected_ids = [u for u, i in pages if status in (None, 404 if i % 4 == 0 else 200)]
            pages_query = PageQuery(status_code=status)
            assert [r.url_id for r in paged(store.list_pages, pages_query, 6)] == expected_ids, status
            assert store.list_pages(audit, pages_query)[1] == len(expected_ids)

    check_lists()
    if hasattr(store, "issue_mark_every"):  # the SQL store: a deep page starts at a mark of its group
        store.issue_mark_every = 5
        store.template_mark_every = 3  # the template filter's marks (`crawl_issue_template_marks`)
    store.seal_counts(audit)
    store.refresh_statistics(audit)
    check_lists()
    if hasattr(store, "probed_walk"):  # and a deep page by template tests its issues through hashed sets
        store.probed_walk = 0
        check_lists()


def test_links_stream_by_source_with_interned_ends(backend: Backend) -> None:
    (audit, _) = _audits(backend)
    store = backend.crawl
    written = store.write_links(
        audit,
        [
            (f"{SITE}/b", Link(f"{SITE}/a")),
            (f"{SITE}/a", Link(f"{SITE}/b", kind=LinkKind.CANONICAL)),
            (f"{SITE}/a", Link("https://elsewhere.example/", internal=False, nofollow=True)),
            (f"{SITE}/b", Link(f"{SITE}/logo.png", kind=LinkKind.IMG)),
        ],
    )
    assert written == 4
    ids = store.intern(audit, [f"{SITE}/b", f"{SITE}/a", "https://elsewhere.example/", f"{SITE}/logo.png"])
    assert list(ids.values()) == [1, 2, 3, 4]
    assert sorted(store.stream_links(audit), key=lambda r: (r.source, r.target)) == [
        LinkRow(1, 2, LinkKind.A),
        LinkRow(1, 4, LinkKind.IMG),
        LinkRow(2, 1, LinkKind.CANONICAL),
        LinkRow(2, 3, LinkKind.A, nofollow=True, internal=False),
    ]
    assert [r.source for r in store.stream_links(audit)] == [1, 1, 2, 2]


def test_link_lines_stream_both_ends_as_urls_for_an_export(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    store.write_links(
        audit,
        [
            (f"{SITE}/b", Link(f"{SITE}/a")),
            (f"{SITE}/a", Link(f"{SITE}/b", kind=LinkKind.CANONICAL)),
            (f"{SITE}/a", Link("https://elsewhere.example/", internal=False, nofollow=True)),
            (f"{SITE}/b", Link(f"{SITE}/logo.png", kind=LinkKind.IMG)),
        ],
    )
    store.write_links(other, [(f"{SITE}/z", Link(f"{SITE}/y"))])
    lines = list(store.stream_link_lines(audit))
    assert [line.source for line in lines] == [f"{SITE}/b", f"{SITE}/b", f"{SITE}/a", f"{SITE}/a"]
    assert sorted(lines) == sorted(
        [
            LinkLine(f"{SITE}/b", f"{SITE}/a", LinkKind.A, False, True),
            LinkLine(f"{SITE}/b", f"{SITE}/logo.png", LinkKind.IMG, False, True),
            LinkLine(f"{SITE}/a", f"{SITE}/b", LinkKind.CANONICAL, False, True),
            LinkLine(f"{SITE}/a", "https://elsewhere.example/", LinkKind.A, True, False),
        ]
    )
    assert list(store.stream_link_lines(other)) == [
        LinkLine(f"{SITE}/z", f"{SITE}/y", LinkKind.A, False, True)
    ]
    assert list(store.stream_link_lines(AuditId(999))) == []


def test_page_rows_stream_as_the_list_shows_them(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    excluded = PageFacts(f"{SITE}/private", depth=1, disallowed=True)
    store.write_pages(audit, [_page(f"/p{i}", 404 if i % 3 == 0 else 200) for i in range(7)] + [excluded])
    store.write_pages(other, [_page("/elsewhere")])
    store.assign_templates(audit, [(2, "/[slug]")])
    rows, total = store.list_pages(audit, PageQuery(limit=100))
    assert total == 8
    assert list(store.stream_page_rows(audit)) == list(rows)
    assert rows[1].template == "/[slug]" and rows[-1].excluded_by == EXCLUDED_BY_ROBOTS_TXT
    assert [r.url for r in store.stream_page_rows(other)] == [f"{SITE}/elsewhere"]


def test_replacing_links_drops_only_those_of_the_given_sources(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    store.write_links(audit, [(f"{SITE}/a", Link(f"{SITE}/b")), (f"{SITE}/b", Link(f"{SITE}/a"))])
    store.write_links(other, [(f"{SITE}/a", Link(f"{SITE}/b"))])
    ids = store.intern(audit, [f"{SITE}/a", f"{SITE}/b", f"{SITE}/c"])
    written = store.replace_links(
        audit,
        [ids[f"{SITE}/a"], ids[f"{SITE}/c"]],
        [(f"{SITE}/a", Link(f"{SITE}/c", kind=LinkKind.IMG)), (f"{SITE}/a", Link(f"{SITE}/b"))],
    )
    assert written == 2
    assert sorted(store.stream_links(audit), key=lambda r: (r.source, r.target)) == [
        LinkRow(1, 2, LinkKind.A),
        LinkRow(1, 3, LinkKind.IMG),
        LinkRow(2, 1, LinkKind.A),
    ]
    store.replace_links(audit, [ids[f"{SITE}/a"]], [(f"{SITE}/a", Link(f"{SITE}/c", kind=LinkKind.IMG))])
    assert len(list(store.stream_links(audit))) == 2
    assert list(store.stream_links(other)) == [LinkRow(1, 2, LinkKind.A)]


def test_pages_are_found_by_url_with_their_links_on_request(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    home = evolve(_page("/"), etag='"v1"')
    post = evolve(_page("/blog/first-post"), last_modified="Sat, 21 Nov 2026 08:00:00 GMT")
    error = PageFacts(url=f"{SITE}/down", fetch_error=FetchError.TIMEOUT)
    store.write_pages(audit, [home, post, error])
    assert home.html is not None
    store.write_links(audit, [(home.url, link) for link in home.html.links])
    store.write_pages(other, [_page("/elsewhere")])

    found = store.pages_by_url(audit, [home.url, post.url, error.url, f"{SITE}/never", f"{SITE}/elsewhere"])
    assert set(found) == {home.url, post.url, error.url}
    assert found[home.url] == evolve(home, html=evolve(home.html, links=()))
    assert found[home.url].etag == '"v1"' and found[post.url].last_modified == post.last_modified
    assert found[error.url] == error

    linked = store.pages_by_url(audit, [home.url, post.url, error.url], links=True)
    assert linked[home.url].html is not None
    assert sorted(linked[home.url].html.links, key=lambda link: link.target) == sorted(
        home.html.links, key=lambda link: link.target
    )
    assert evolve(linked[home.url], html=None) == evolve(home, html=None)
    assert linked[post.url].html is not None and linked[post.url].html.links == ()
    assert linked[error.url] == error
    assert store.pages_by_url(audit, []) == {}


def a_report(audit: AuditId) -> Report:
    """A small real report: two pages (one challenged by a firewall), two issues, a diff."""
    previous = PreviousAudit.from_issues(1, 80, [("title_missing", Severity.ERROR, f"{SITE}/gone")])
    tally = ReportTally(previous=previous)
    tally.add_page(PageOutcome(f"{SITE}/", "/", 200))
    tally.add_page(PageOutcome(f"{SITE}/shop/a", "/shop/[slug]", 403, blocked_by="cloudflare"))
    tally.add_issues(
        [
            ("title_missing", Severity.ERROR, f"{SITE}/", "/", "Home"),
            ("robots_txt_missing", Severity.NOTICE, f"{SITE}/robots.txt", "", None),
        ]
    )
    return tally.build(
        AuditIdentity(crawl_id=audit, site_url=f"{SITE}/"),
        catalogue=CATALOGUE,
        thresholds=Thresholds().as_dict(),
        timings=Timings(crawl_s=None, finalize_s=0.5, site_checks_s=0.25, templates_s=0.0, pages_crawled=2),
    )


def test_the_report_and_the_checkpoint_are_replaced_and_read_back(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    assert store.report(audit) is None and store.checkpoint(audit) is None
    report = a_report(audit)
    store.save_report(audit, report)
    store.save_report(audit, evolve(report, health_score=88))
    store.save_checkpoint(audit, {"cursor": [1, 2], "cookies": {}})
    assert store.report(audit) == evolve(report, health_score=88)
    assert store.checkpoint(audit) == {"cursor": [1, 2], "cookies": {}}
    assert store.report(other) is None


def test_identities_are_kept_beside_the_report_and_survive_its_replacement(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    identities = ArchivedIdentities.from_issues((i.check_code, i.severity, i.url) for i in _issues())
    with pytest.raises(KeyError):
        store.save_archived_identities(audit, identities)  # no report to keep them beside
    store.save_report(audit, a_report(audit))
    assert store.archived_identities(audit) is None
    store.save_archived_identities(audit, identities)
    store.save_report(audit, evolve(a_report(audit), health_score=12))
    assert store.archived_identities(audit) == identities
    assert store.report(audit) == evolve(a_report(audit), health_score=12)
    assert store.archived_identities(other) is None


def test_the_frontier_queues_each_url_once_and_hands_out_shallowest_first(backend: Backend) -> None:
    (audit, _) = _audits(backend)
    store = backend.crawl
    assert store.frontier_add(audit, [(f"{SITE}/", 0), (f"{SITE}/deep/page", 2), (f"{SITE}/a", 1)]) == 3
    assert store.frontier_add(audit, [(f"{SITE}/a", 0), (f"{SITE}/b", 1), (f"{SITE}/b", 1)]) == 1
    assert store.frontier_next(audit, 2) == [
        FrontierEntry(1, f"{SITE}/", 0),
        FrontierEntry(3, f"{SITE}/a", 1),
    ]
    store.frontier_mark(audit, [1, 3], FrontierState.DONE)
    store.frontier_mark(audit, [2], FrontierState.SKIPPED)
    assert [e.url for e in store.frontier_next(audit, 10)] == [f"{SITE}/b"]
    assert store.frontier_counts(audit) == {
        FrontierState.DONE: 2,
        FrontierState.SKIPPED: 1,
        FrontierState.QUEUED: 1,
    }
    assert store.frontier_add(audit, [(f"{SITE}/", 0)]) == 0  # seen, even when done


def test_archiving_removes_the_detail_keeps_the_report_and_spares_other_audits(backend: Backend) -> None:
    audit, other = _audits(backend)
    store = backend.crawl
    for each in (audit, other):
        store.write_pages(each, [_page("/"), _page("/a")])
        store.write_links(each, [(f"{SITE}/", Link(f"{SITE}/a"))])
        store.write_issues(each, _issues())
        store.frontier_add(each, [(f"{SITE}/b", 1)])
        store.save_checkpoint(each, {"slice": 3})
        store.save_report(each, a_report(each))
    identities = ArchivedIdentities.from_issues((i.check_code, i.severity, i.url) for i in _issues())
    store.save_archived_identities(audit, identities)
    store.archive(audit)
    assert store.page_count(audit) == 0
    assert store.list_issues(audit, IssueQuery()) == ([], 0)
    assert list(store.stream_links(audit)) == []
    assert list(store.stream_urls(audit)) == []
    assert store.frontier_counts(audit) == {}
    assert store.checkpoint(audit) is None
    assert store.report(audit) == a_report(audit)
    assert store.archived_identities(audit) == identities
    assert store.page_count(other) == 2
    assert store.list_issues(other, IssueQuery())[1] == 6
    assert len(list(store.stream_links(other))) == 1


@pytest.mark.parametrize("count", [0, 2_345])
def test_batches_of_any_size_are_written_whole(backend: Backend, count: int) -> None:
    (audit, _) = _audits(backend)
    store = backend.crawl
    pages = [PageFacts(f"{SITE}/p/{i}", depth=1, status_code=200) for i in range(count)]
    assert store.write_pages(audit, pages) == count
    issues = [Issue("orphan_page", Severity.NOTICE, p.url) for p in pages]
    assert store.write_issues(audit, issues) == count
    assert store.page_count(audit) == count
    assert [s.url_id for s in store.stream_pages(audit)] == list(range(1, count + 1))
    assert sum(1 for _ in store.stream_issues(audit)) == count
