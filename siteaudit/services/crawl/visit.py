"""Visiting frontier URLs: robots.txt obeyed, fetched politely (conditional when the previous audit's page
has a validator), turned into page facts; a redirect's in-scope destination is recorded as its own URL.

Conditional requests: the first slice looks up the previous audit (`AuditRepository.latest_done`: the
same site, or the same origin in the team; not archived). Each batch then reads that audit's pages of
its URLs (`CrawlStore.pages_by_url`, one query) and sends `If-None-Match` / `If-Modified-Since` for those
that answered 200 at their own address with a validator. A 304 at the same address reuses the previous
page's facts and links (`not_modified` set, timings of this fetch, depth and sitemap membership of this
audit); the batch recording runs the page checks on them again.

When the start URL moves to another origin (http -> https, the `www.` twin), robots.txt, /llms.txt and
the sitemaps of the new origin are read before the batch is recorded, and obeyed from then on.
"""

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from attrs import evolve, frozen

from siteaudit.domain.audit import Audit
from siteaudit.domain.checks.page import PageContext
from siteaudit.domain.crawl import (
    ROBOTS_AGENT,
    CrawlLimits,
    CrawlState,
    IdSet,
    Purpose,
    Scope,
    purpose_of,
    with_sitemap_alternates,
)
from siteaudit.domain.facts import Hreflang, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.network import FetchResponse
from siteaudit.ports.crawl import FrontierEntry
from siteaudit.ports.parse import RobotsReading
from siteaudit.ports.render import RenderSession
from siteaudit.services.crawl.deps import CrawlDeps
from siteaudit.services.crawl.host_files import read_host_files
from siteaudit.services.crawl.politeness import Headers, Politely, final_response
from siteaudit.services.crawl.render import NOT_AVAILABLE, rendered_page

log = logging.getLogger("siteaudit.crawl")

CHECK_BYTES: Final = 64 * 1024  # external targets: the status is what counts
_IMAGE_SUFFIXES: Final = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg", ".ico", ".bmp", ".tif")


def looks_like_image(url: str) -> bool:
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    return path.endswith(_IMAGE_SUFFIXES)


def validators_of(page: PageFacts | None) -> Headers:
    """The conditional request headers for a URL whose previous audit's page is `page`: only when that
    page answered 200 at its own address, whole, with a validator (anything else is fetched in full)."""
    if (
        page is None
        or page.status_code != 200
        or page.redirects
        or page.fetch_error is not None
        or page.blocked_by is not None
        or page.truncated
    ):
        return ()
    found: Headers = ()
    if page.etag:
        found += (("If-None-Match", page.etag),)
    if page.last_modified:
        found += (("If-Modified-Since", page.last_modified),)
    return found


@frozen
class Visit:
    """One frontier entry's outcome within a batch."""

    entry: FrontierEntry
    page: PageFacts
    purpose: Purpose
    destination: PageFacts | None = None  # a redirect's in-scope destination, recorded as its own URL
    disallowed: bool = False
    not_modified: bool = False  # answered 304: `page` is the previous audit's, links not yet read back


class Visits:
    """Where one slice's crawl stands (state, robots rules, sitemap membership, page context), and the
    visits that move it: started as tasks by the window, completed in groups before they are recorded."""

    def __init__(
        self,
        audit: Audit,
        deps: CrawlDeps,
        *,
        limits: CrawlLimits,
        state: CrawlState,
        politely: Politely,
        robots: RobotsReading,
        beat: Callable[[], None] = lambda: None,
        render: RenderSession | None = None,
    ) -> None:
        self.audit = audit
        self.render = render  # the audit renders its pages: this slice's browser context
        self.render_budget = deps.render_budget
        self.crawl = deps.crawl
        self.parser = deps.parser
        self.limits = limits
        self.state = state
        self.politely = politely
        self.robots = robots
        self.beat = beat
        self.sitemap = IdSet(state.sitemap_ids)
        self.sitemap_hreflangs = state.sitemap_hreflangs
        self.context = PageContext(start_url=audit.url, site_https=state.scope.origin.startswith("https:"))
        self.fetched = 0  # URLs fetched by this slice (host files not counted: see `host_files`)

    @property
    def scope(self) -> Scope:
        return self.state.scope

    def allowed(self, url: str) -> bool:
        return self.robots.rules.can_fetch(url, ROBOTS_AGENT)

    async def start(self, entries: Sequence[FrontierEntry]) -> list["asyncio.Task[Visit]"]:
        """Start visiting `entries` (each its own task; the politeness rules pace them). The previous
        audit's pages are read in a thread: the event loop carries other slices' requests."""
        earlier = await asyncio.to_thread(self._earlier_pages, entries)
        return [asyncio.create_task(self._visit(entry, earlier.get(entry.url))) for entry in entries]

    async def _visit(self, entry: FrontierEntry, earlier: PageFacts | None = None) -> Visit:
        url, depth = entry.url, entry.depth
        image = looks_like_image(url)
        purpose = purpose_of(url, self.scope, image=image)
        in_sitemap = entry.url_id in self.sitemap
        if self.scope.contains(url) and not self.allowed(url):
            page = PageFacts(url=url, depth=depth, disallowed=True, in_sitemap=in_sitemap)
            return Visit(entry, page, purpose, disallowed=True)
        cap = self.limits.page_bytes if purpose is Purpose.CRAWL else self.limits.image_bytes
        if purpose is Purpose.CHECK and not self.scope.contains(url):
            cap = CHECK_BYTES
        # An audit with extraction rules reads every page (docs/extraction.md): a 304 has no body to read.
        validators = () if self.audit.extract else validators_of(earlier)
        request = self.politely.request(url, max_bytes=cap, validators=validators)
        followed = await self.politely.follow(request)
        response = followed.response
        hops = followed.hops
        if (
            validators
            and earlier is not None
            and response.status == 304
            and not hops
            and response.error is None
        ):
            page = evolve(
                earlier,
                depth=depth,
                in_sitemap=in_sitemap,
                not_modified=True,
                ttfb_ms=response.ttfb_ms,
                total_ms=response.total_ms,
            )
            return Visit(entry, self._with_sitemap_alternates(entry, page), purpose, not_modified=True)
        final = final_response(followed, url, origin=self.scope.origin, depth=depth)
        if final is None:
            return Visit(entry, followed.unanswered_page(url, depth=depth, in_sitemap=in_sitemap), purpose)
        page = self.parser.page_facts(**final, extract=self.audit.extract if purpose is Purpose.CRAWL else ())
        page = evolve(page, in_sitemap=in_sitemap)
        if purpose is Purpose.CHECK and page.html is not None:
            page = evolve(page, html=None)
        if (
            self.audit.render
            and purpose is Purpose.CRAWL
            and page.html is not None
            and page.status_code == 200
        ):
            page = await self._rendered(page, response)
        if not hops:
            page = self._with_sitemap_alternates(entry, page)
        if depth == 0 and hops and self.audit.scope.follows:
            self._adopt(response.url)  # a list or sitemap audit keeps its origin (docs/audits.md)
        destination = None
        if hops and page.html is not None:
            # The content belongs to the destination: recorded under its own URL (when in scope and new),
            # never under the redirecting one, or every redirect would duplicate its target's title.
            if self.scope.contains(response.url) and self.allowed(response.url):
                destination = evolve(
                    page, url=response.url, final_url=response.url, redirects=(), in_sitemap=False
                )
            page = evolve(page, html=None, extracted=())
        return Visit(entry, page, purpose, destination=destination)

    async def _rendered(self, page: PageFacts, response: FetchResponse) -> PageFacts:
        """The page rendered in the audit's browser context from its raw answer (not fetched again)."""
        if page.blocked_by is not None or page.truncated:
            return page
        rendered = (
            NOT_AVAILABLE
            if self.render is None
            else await self.render.render(response, budget=self.render_budget)
        )
        return rendered_page(
            page, rendered, parser=self.parser, origin=self.scope.origin, extract=self.audit.extract
        )

    def _with_sitemap_alternates(self, entry: FrontierEntry, page: PageFacts) -> PageFacts:
        """The listed page with the hreflang alternates its sitemap entry declares (xhtml:link)."""
        pairs = self.sitemap_hreflangs.get(entry.url_id, ())
        if not pairs and (page.html is None or not page.html.hreflangs):
            return page
        alternates = [
            Hreflang(lang=lang, href=href, target=self.parser.normalise(href), source="sitemap")
            for lang, href in pairs
        ]
        return with_sitemap_alternates(page, alternates)

    def _adopt(self, final_url: str) -> None:
        scope = self.scope.after_start_redirect(final_url)
        if scope != self.scope:
            log.info("the start URL moved to %s: crawling that origin", scope.origin)
            self.state = evolve(self.state, scope=scope)
            self.politely.scope = scope
            self.context = PageContext(start_url=self.audit.url, site_https=scope.origin.startswith("https:"))

    def _earlier_pages(
        self, entries: Sequence[FrontierEntry], *, links: bool = False
    ) -> Mapping[str, PageFacts]:
        previous = self.state.previous_audit
        if previous is None:
            return {}
        urls = [e.url for e in entries if self.scope.contains(e.url)]
        return self.crawl.pages_by_url(AuditId(previous), urls, links=links) if urls else {}

    async def finish(self, results: Sequence[Visit], origin: str) -> list[Visit]:
        """Complete visited results before they are recorded: the previous audit's links of the pages
        that answered 304, and, when the start URL moved away from `origin`, the new origin's robots.txt
        and sitemaps (a destination the new rules disallow is not recorded)."""
        self.fetched += sum(1 for r in results if not r.disallowed)
        reused = [r.entry for r in results if r.not_modified and r.page.html is not None]
        if reused:
            # The previous page's links, read back only for the pages that answered 304.
            linked = await asyncio.to_thread(self._earlier_pages, reused, links=True)
            results = [
                evolve(r, page=evolve(r.page, html=linked[r.entry.url].html))
                if r.not_modified and r.entry.url in linked
                else r
                for r in results
            ]
        if self.scope.origin != origin:
            await self._read_moved_host_files()
            results = [
                r if r.destination is None or self.allowed(r.destination.url) else evolve(r, destination=None)
                for r in results
            ]
        return list(results)

    async def _read_moved_host_files(self) -> None:
        """The start URL moved to another origin: its robots.txt, /llms.txt and sitemaps replace the old
        ones."""
        self.state, self.robots = await read_host_files(
            self.state,
            audit_id=self.audit.id,
            politely=self.politely,
            parser=self.parser,
            crawl=self.crawl,
            limits=self.limits,
            beat=self.beat,
        )
        self.sitemap = IdSet(self.state.sitemap_ids)
        self.sitemap_hreflangs = self.state.sitemap_hreflangs
        self.politely.pacer.obey_crawl_delay(
            self.robots.rules.crawl_delay(ROBOTS_AGENT), host=self.scope.host
        )
