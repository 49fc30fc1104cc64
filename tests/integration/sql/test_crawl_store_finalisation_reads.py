"""The crawl store's lean reads for finalisation agree with its full reads, on every backend."""

import attrs
from sql_backend import Backend
from test_crawl_store_contract import SITE, _audits, _page

from siteaudit.domain.checks.site import SITE_HTML_FIELDS, SITE_PAGE_FIELDS, link_flags
from siteaudit.domain.facts import Hreflang, Link, LinkKind, PageFacts
from siteaudit.domain.issue import Issue, Severity
from siteaudit.ports.crawl import IssueQuery, PageQuery


def evolve_html(page: PageFacts, **changes: object) -> PageFacts:
    assert page.html is not None
    return attrs.evolve(page, html=attrs.evolve(page.html, **changes))


def _site_fields(page: PageFacts) -> dict[str, object]:
    values = {name: getattr(page, name) for name in SITE_PAGE_FIELDS if name != "html"}
    if page.html is not None:
        values["html"] = {name: getattr(page.html, name) for name in SITE_HTML_FIELDS}
    return values


def test_site_pages_carry_every_field_the_site_checks_read(backend: Backend) -> None:
    (audit,) = _audits(backend, 1)
    store = backend.crawl
    hreflang = Hreflang("de", "/de/", f"{SITE}/de/")
    pages = [
        _page("/", hreflangs=(hreflang,), meta_robots=("noindex",), fingerprint="f1"),
        evolve_html(_page("/huge-sketch"), sketch=(5, -3)),  # not unsigned 64-bit: kept as JSON
        PageFacts(f"{SITE}/blocked", status_code=403, blocked_by="cloudflare", disallowed=True),
    ]
    store.write_pages(audit, pages, templates={f"{SITE}/": "/"})
    store.assign_templates(audit, [(2, "/[slug]")])
    full = list(store.stream_pages(audit))
    lean = list(store.stream_site_pages(audit))
    assert [(p.url_id, p.template) for p in lean] == [(1, "/"), (2, "/[slug]"), (3, "")]
    assert [(p.url_id, p.template) for p in full] == [(p.url_id, p.template) for p in lean]
    assert [_site_fields(p.facts) for p in lean] == [_site_fields(p.facts) for p in full]
    assert full[1].facts.html is not None and full[1].facts.html.sketch == (5, -3)


def test_link_batches_hold_the_links_in_stream_order(backend: Backend) -> None:
    (audit,) = _audits(backend, 1)
    store = backend.crawl
    store.write_links(
        audit,
        [
            (f"{SITE}/a", Link(f"{SITE}/b")),
            (f"{SITE}/b", Link("https://elsewhere.example/", internal=False, nofollow=True)),
            (f"{SITE}/a", Link(f"{SITE}/logo.png", kind=LinkKind.IMG)),
        ],
    )
    rows = [
        (r.source, r.target, link_flags(r.kind, internal=r.internal, nofollow=r.nofollow))
        for r in store.stream_links(audit)
    ]
    batched = [
        row
        for batch in store.stream_link_batches(audit)
        for row in zip(batch.sources, batch.targets, batch.flags, strict=True)
    ]
    assert batched == rows
    assert sorted(batched) == [(1, 2, 2), (1, 4, 6), (2, 3, 1)]


def test_issue_lines_quote_the_first_wanted_detail_and_show_assigned_templates(backend: Backend) -> None:
    (audit,) = _audits(backend, 1)
    store = backend.crawl
    store.write_issues(
        audit,
        [
            Issue("title_duplicate", Severity.WARNING, f"{SITE}/a", details={"title": "Clocks", "count": 2}),
            Issue("broken_internal_link", Severity.ERROR, f"{SITE}/b", details={"target": "x", "text": ""}),
            Issue("h1_missing", Severity.NOTICE, f"{SITE}/a", "/[slug]", details={"h1": 3, "anchor": "Buy"}),
            Issue(
                "insecure_form",
                Severity.WARNING,
                f"{SITE}/a",
                details={"actions": ["http://f.example/", "x"]},
            ),
        ],
    )
    store.assign_templates(audit, [(2, "/b")])
    lines = list(store.stream_issue_lines(audit, quote=("title", "h1", "anchor", "text", "actions")))
    assert [(x.url_id, x.check_code, x.severity, x.template, x.quote) for x in lines] == [
        (1, "title_duplicate", Severity.WARNING, "", "Clocks"),
        (2, "broken_internal_link", Severity.ERROR, "/b", None),
        (1, "h1_missing", Severity.NOTICE, "/[slug]", "Buy"),
        (1, "insecure_form", Severity.WARNING, "", "http://f.example/"),  # a list quotes its first string
    ]
    assert next((x.url, x.quote) for x in store.stream_issue_lines(audit)) == (f"{SITE}/a", None)
    assert [i.template for _, i in store.stream_issues(audit)] == ["", "/b", "/[slug]", ""]
    issues, total = store.list_issues(audit, IssueQuery(template="/b"))
    assert total == 1 and [i.check_code for i in issues] == ["broken_internal_link"]


def test_assigning_templates_again_replaces_them(backend: Backend) -> None:
    (audit,) = _audits(backend, 1)
    store = backend.crawl
    store.write_pages(audit, [_page("/a"), _page("/b")])
    store.assign_templates(audit, [(1, "/x"), (2, "/x")])
    store.assign_templates(audit, [(2, "/y")])
    pages, _ = store.list_pages(audit, PageQuery())
    assert [p.template for p in pages] == ["/x", "/y"]
    assert attrs.asdict(pages[0])["template"] == "/x"
