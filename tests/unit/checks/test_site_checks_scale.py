"""Scale smoke test: the site checks over 20,000 synthetic pages and 400,000 links finish and stay correct."""

import time
from collections.abc import Iterator

from siteaudit.domain.checks import AuditFacts, check_site
from siteaudit.domain.facts import HtmlFacts, Link, PageFacts, RobotsFacts, SitemapFacts
from siteaudit.domain.thresholds import Thresholds

ORIGIN = "https://big-clock-shop.example"
PAGES = 20_000
LINKS_PER_PAGE = 20
BROKEN_EVERY = 1_000  # every 1,000th page answers 404


# Links are frozen values: pages share them, as a storage reader sharing interned rows would.
_LINKS = [Link(target=f"{ORIGIN}/p/{n}") for n in range(PAGES)]


def _sketch(n: int) -> tuple[int, ...]:
    # Pages come in families of ten sharing 125 of 128 sketch values (near duplicates), unrelated otherwise.
    family = n // 10
    shared = [(family * 2_654_435_761 + i * 40_503) % 4_294_967_291 for i in range(128)]
    shared[:3] = [n, n + 1, n + 2]
    return tuple(shared)


def _page(n: int) -> PageFacts:
    at = f"{ORIGIN}/p/{n}"
    if n % BROKEN_EVERY == 999:
        return PageFacts(url=at, depth=2, status_code=404, final_url=at, content_type="text/html")
    links = (
        *(_LINKS[(n * 7 + k * 13) % PAGES] for k in range(LINKS_PER_PAGE - 2)),
        _LINKS[(n + 1) % PAGES],
        _LINKS[n - 1],
    )
    html = HtmlFacts(
        titles=(f"Clock {n % 5_000}",),  # every title shared by four pages
        meta_descriptions=(f"Restored clock number {n}, " + "with a two-year warranty. " * 3,),
        canonicals=(at,),
        h1s=(f"Clock {n}",),
        links=links,
        word_count=400,
        fingerprint=f"fp{n if n % 500 else 'shared'}",
        sketch=_sketch(n),
    )
    return PageFacts(
        url=at,
        depth=n % 7,
        status_code=200,
        final_url=at,
        content_type="text/html",
        html=html,
        in_sitemap=n % 3 == 0,
    )


def test_site_checks_over_twenty_thousand_pages_finish_and_find_what_was_planted() -> None:
    stored = [_page(n) for n in range(PAGES)]  # stands for the storage the facts are streamed from

    def pages() -> Iterator[PageFacts]:
        return iter(stored)

    def links() -> Iterator[tuple[str, Link]]:
        for p in stored:
            for link in p.html.links if p.html else ():
                yield p.url, link

    facts = AuditFacts(
        start_url=f"{ORIGIN}/p/0",
        pages=pages(),
        links=links(),
        sitemaps=(SitemapFacts(url=f"{ORIGIN}/sitemap.xml", status_code=200, url_count=PAGES // 3),),
        robots=RobotsFacts(status_code=200, sitemaps=(f"{ORIGIN}/sitemap.xml",)),
        llms_txt_found=True,
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    issues = check_site(facts, thresholds=Thresholds())
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    print(
        f"\nsite checks: {PAGES} pages, {PAGES * LINKS_PER_PAGE} links, {len(issues)} issues, "
        f"{elapsed:.2f} s wall, {cpu:.2f} s CPU"
    )

    by_code: dict[str, int] = {}
    for found in issues:
        by_code[found.check_code] = by_code.get(found.check_code, 0) + 1
    broken_pages = PAGES // BROKEN_EVERY
    assert by_code["http_4xx"] == broken_pages
    assert by_code["broken_internal_link"] > 0
    assert by_code["title_duplicate"] > 0
    assert by_code["duplicate_content_exact"] == PAGES // 500
    assert by_code["duplicate_content_near"] > PAGES // 2
    assert "orphan_page" not in by_code or by_code["orphan_page"] < PAGES // 3
