"""The site checks find the same issues, in the same order, from what a store hands over cheaply: pages
cut down to the fields the checks read, and links by URL id in column batches."""

from collections.abc import Sequence

import attrs
import pytest
from check_cases import SITE_NEGATIVE, SITE_POSITIVE, FactsBuilder

from siteaudit.domain.checks import AuditFacts, check_site
from siteaudit.domain.checks.site import (
    SITE_HTML_FIELDS,
    SITE_PAGE_FIELDS,
    LinkBatch,
    LinkTable,
    link_flags,
)
from siteaudit.domain.facts import HtmlFacts, LinkKind, PageFacts
from siteaudit.domain.issue import Issue

ANCHOR = link_flags(LinkKind.A, internal=True, nofollow=False)


def _narrow(page: PageFacts) -> PageFacts:
    """The page with every field the site checks do not read put back to its default."""
    html = page.html
    if html is not None:
        kept = {f.name: getattr(html, f.name) for f in attrs.fields(HtmlFacts) if f.name in SITE_HTML_FIELDS}
        html = HtmlFacts(**kept)
    kept = {f.name: getattr(page, f.name) for f in attrs.fields(PageFacts) if f.name in SITE_PAGE_FIELDS}
    return PageFacts(**{**kept, "html": html})


def _by_id(facts: AuditFacts, batch: int) -> AuditFacts:
    pages: Sequence[PageFacts] = list(facts.pages)
    urls: list[str | None] = [None]
    ids: dict[str, int] = {}
    rows: list[tuple[int, int, int]] = []

    def intern(url: str) -> int:
        if url not in ids:
            ids[url] = len(urls)
            urls.append(url)
        return ids[url]

    for page in pages:
        for link in page.html.links if page.html else ():
            flags = link_flags(link.kind, internal=link.internal, nofollow=link.nofollow)
            rows.append((intern(page.url), intern(link.target), flags))
    batches = [
        LinkBatch(
            sources=[r[0] for r in rows[i : i + batch]],
            targets=[r[1] for r in rows[i : i + batch]],
            flags=[r[2] for r in rows[i : i + batch]],
        )
        for i in range(0, len(rows), batch)
    ]
    return attrs.evolve(
        facts, pages=[_narrow(p) for p in pages], links=(), link_table=LinkTable(urls, iter(batches))
    )


def _seen(issues: list[Issue]) -> list[tuple[str, str, str, dict[str, object]]]:
    return [(i.check_code, i.severity.value, i.url, dict(i.details)) for i in issues]


@pytest.mark.parametrize(("code", "build"), [*SITE_POSITIVE, *SITE_NEGATIVE])
def test_narrow_pages_and_links_by_id_give_the_same_issues_in_the_same_order(
    code: str, build: FactsBuilder
) -> None:
    expected = _seen(check_site(build()))
    assert _seen(check_site(_by_id(build(), batch=2))) == expected


def test_links_whose_source_or_target_has_no_url_are_ignored() -> None:
    facts = AuditFacts(
        start_url="https://retro-clock.example/",
        pages=[PageFacts("https://retro-clock.example/", status_code=200, content_type="text/html")],
        link_table=LinkTable(
            [None, "https://retro-clock.example/", None],
            [LinkBatch(sources=[1, 2, 7], targets=[2, 1, 1], flags=[ANCHOR, ANCHOR, 0])],
        ),
    )
    assert [i.check_code for i in check_site(facts)] == ["sitemap_missing"]
