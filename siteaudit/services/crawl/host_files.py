"""The audited host's own files, read by the first slice (and again when the start URL moves to another
origin): robots.txt, /llms.txt, then the sitemaps robots.txt declares and the conventional ones, indexes
followed. Sitemap membership is kept as a packed array of URL ids (4 bytes each) in the checkpoint.

How host files are counted: each request is a fetch like any other for politeness (its host's turn
at the audit's pace, the rate-limit back-off, the SSRF guard, the audit's connections; robots.txt's
Crawl-delay is applied once they are read, from the pages on), but not a page: no page row, not in
`pages_crawled` nor in a slice's `fetched`, never billed.
"""

import asyncio
from collections.abc import Callable
from typing import Final

from attrs import evolve

from siteaudit.domain.crawl import (
    CONVENTIONAL_SITEMAPS,
    LLMS_TXT_PATH,
    ROBOTS_AGENT,
    CrawlLimits,
    CrawlState,
    Scope,
    llms_txt_found,
    pack_ids,
)
from siteaudit.domain.facts import SitemapFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.judgement import ROBOTS_TXT_READ_BYTES, SITEMAP_MAX_URLS
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.parse import PageParser, RobotsReading
from siteaudit.services.crawl.politeness import Politely

ROBOTS_MAX_HOPS: Final = 5  # RFC 9309 2.3.1.2
ROBOTS_BYTES: Final = ROBOTS_TXT_READ_BYTES
LLMS_TXT_BYTES: Final = 16 * 1024  # enough to tell a text file from an HTML page or a bot challenge


async def read_host_files(
    state: CrawlState,
    *,
    audit_id: AuditId,
    politely: Politely,
    parser: PageParser,
    crawl: CrawlStore,
    limits: CrawlLimits,
    beat: Callable[[], None] = lambda: None,
) -> tuple[CrawlState, RobotsReading]:
    """robots.txt, /llms.txt, then the sitemaps robots.txt declares and the conventional ones, indexes
    followed: the state with what they said, and the robots rules to obey."""
    scope = state.scope
    robots_url = scope.url("/robots.txt")
    followed = await politely.follow(
        politely.request(robots_url, max_bytes=ROBOTS_BYTES), max_hops=ROBOTS_MAX_HOPS
    )
    answer = followed.response
    robots = parser.robots(
        url=robots_url, status_code=answer.status, body=answer.body, fetch_error=answer.error
    )
    text = answer.body.decode("utf-8", errors="replace") if robots.facts.status_code and answer.ok else None
    llms_txt = await read_llms_txt(scope, politely=politely, robots=robots)

    queue: list[tuple[str, str]] = [(url, "robots") for url in robots.facts.sitemaps]
    queue += [(scope.url(path), "conventional") for path in CONVENTIONAL_SITEMAPS]
    seen: set[str] = set()
    documents: list[SitemapFacts] = []
    listed: dict[str, None] = {}
    alternates: dict[str, list[tuple[str, str]]] = {}  # listed URL -> its xhtml:link alternates
    kept_alternates = 0
    total = 0
    while queue and len(documents) < limits.max_sitemaps:
        beat()
        url, found_via = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        followed = await politely.follow(politely.request(url, max_bytes=limits.sitemap_bytes))
        answer = followed.response
        if not answer.ok or answer.status != 200:
            if found_via != "conventional" or answer.status not in (404, 410):
                documents.append(SitemapFacts(url=url, found_via=found_via, status_code=answer.status))
            continue
        room = max(0, limits.max_sitemap_urls - len(listed))
        reading = parser.sitemap(
            answer.body, url=url, found_via=found_via, status_code=answer.status, max_urls=SITEMAP_MAX_URLS
        )
        documents.append(reading.facts)
        total += reading.facts.url_count
        for child in reading.sitemaps:
            normalised = parser.normalise(child, url)
            if normalised is not None:
                queue.append((normalised, "index"))
        for listed_url in reading.urls[:room]:
            normalised = parser.normalise(listed_url, url)
            if normalised is not None and scope.contains(normalised):
                listed[normalised] = None
        for listed_url, alternate in reading.hreflangs:
            normalised = parser.normalise(listed_url, url)
            if normalised in listed and kept_alternates < limits.max_sitemap_hreflangs:
                alternates.setdefault(normalised, []).append((alternate.lang, alternate.href))
                kept_alternates += 1
    ids = await asyncio.to_thread(crawl.intern, audit_id, listed)  # off the loop: see `slice`
    state = evolve(
        state,
        robots=robots.facts,
        robots_text=text,
        sitemaps=tuple(documents),
        sitemap_ids=pack_ids(ids.values()),
        sitemap_urls_total=total,
        sitemap_hreflangs={ids[listed_url]: tuple(pairs) for listed_url, pairs in alternates.items()},
        llms_txt_found=llms_txt,
    )
    return state, robots


async def read_llms_txt(scope: Scope, *, politely: Politely, robots: RobotsReading) -> bool | None:
    """Whether the site publishes /llms.txt at its origin (`llms_txt_found` decides from the answer): one
    request of at most `LLMS_TXT_BYTES`, redirects followed within `scope` only; None without asking
    when robots.txt disallows it."""
    url = scope.url(LLMS_TXT_PATH)
    if not robots.rules.can_fetch(url, ROBOTS_AGENT):
        return None
    followed = await politely.follow(politely.request(url, max_bytes=LLMS_TXT_BYTES), within=scope)
    return llms_txt_found(followed.response)


def robots_of(state: CrawlState, parser: PageParser) -> RobotsReading:
    """The robots rules an earlier slice read, parsed again from the checkpoint."""
    facts = state.robots
    assert facts is not None
    body = (state.robots_text or "").encode("utf-8")
    return parser.robots(
        url=state.scope.url("/robots.txt"),
        status_code=facts.status_code,
        body=body,
        fetch_error=facts.fetch_error,
    )
