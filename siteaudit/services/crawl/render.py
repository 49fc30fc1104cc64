"""Rendering a crawled page (docs/rendering.md): the guard every browser request goes through, and the
rendered page's facts beside its raw ones.

`BrowserGuard` answers the requests of a page's browser as the crawler answers its own: GET and HEAD
only, http and https only, the audited site's URLs only when robots.txt allows them (another host only
when the service allows third parties, `SITEAUDIT_RENDER_THIRD_PARTY`), each request after a turn of its
host's rate shared by every audit (`hostgate`), fetched by the audit's own fetcher through the SSRF
guard, redirects followed here hop by hop with each hop judged again. The browser gets the answer; what
was refused comes back with the page.
"""

from collections.abc import Callable
from typing import Final

from attrs import evolve

from siteaudit.domain.access import SiteAccess
from siteaudit.domain.crawl import Scope
from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.facts import FetchError, HtmlFacts, LinkKind, PageFacts
from siteaudit.domain.network import MAX_REDIRECTS, FetchRequest, FetchResponse, redirect_target
from siteaudit.domain.render import RAW_LINKS_KEPT, RawHtml, Refusal, Rendered, RenderEnd, RenderFacts
from siteaudit.ports.network import Fetcher
from siteaudit.ports.parse import PageParser
from siteaudit.ports.render import BrowserRequest, Refused
from siteaudit.services.crawl.hostgate import NO_GATE, HostGate
from siteaudit.services.crawl.politeness import Headers, host_of

_ACCEPT_ANY: Final = "*/*"
_METHODS: Final = frozenset({"GET", "HEAD"})
_SCHEMES: Final = ("http://", "https://")

NOT_AVAILABLE: Final = Rendered(
    RenderEnd.FAILED, detail="rendering is not available on this worker (no browser configured)"
)


class BrowserGuard:
    """The `BrowserRequests` of one audit's slice: see the module's description."""

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        scope: Callable[[], Scope],
        allowed: Callable[[str], bool],
        secret_headers: Headers = (),
        access: SiteAccess | None = None,
        gate: HostGate = NO_GATE,
        third_party: bool = False,
        max_bytes: int = 5 * 1024 * 1024,
        deadline_s: float = 15.0,
    ) -> None:
        self.fetcher = fetcher
        self.scope = scope  # the audit's scope as it stands (the start URL may move it)
        self.allowed = allowed  # robots.txt, for the audited site's URLs
        self.secret_headers = secret_headers
        self.access = access  # the site's staging access, to its own origin only (docs/security.md)
        self.gate = gate
        self.third_party = third_party
        self.max_bytes = max_bytes
        self.deadline_s = deadline_s
        self.fetched = 0  # requests made (every hop)
        self.refused = 0

    async def __call__(self, request: BrowserRequest) -> FetchResponse | Refused:
        if request.method.upper() not in _METHODS:
            return self._refuse(Refusal.METHOD, request.method)
        url = request.url
        for _ in range(MAX_REDIRECTS + 1):
            refusal = self._judge(url)
            if refusal is not None:
                return refusal
            own = self.scope().contains(url)
            headers: Headers = (("Accept", _ACCEPT_ANY),)
            if own:
                headers += self.secret_headers
            if self.access is not None:
                # Judged again on every hop: a redirect to another origin carries none.
                headers += self.access.for_url(url)
            fetch = FetchRequest(
                url,
                method=request.method.upper(),
                headers=headers,
                max_bytes=self.max_bytes,
                deadline_s=self.deadline_s,
            )
            await self.gate.turn(host_of(url))
            self.fetched += 1
            response = await self.fetcher.fetch(fetch)
            if response.error is FetchError.REFUSED:
                return self._refuse(Refusal.ADDRESS, response.error_detail or host_of(url))
            target = redirect_target(fetch, response)
            if target is None:
                return response
            url = target
        return FetchResponse(url, error=FetchError.TOO_MANY_REDIRECTS, error_detail="too many redirects")

    def _judge(self, url: str) -> Refused | None:
        if not url.lower().startswith(_SCHEMES):
            return self._refuse(Refusal.SCHEME, url.split(":", 1)[0])
        if self.scope().contains(url):
            return None if self.allowed(url) else self._refuse(Refusal.ROBOTS)
        if not self.third_party:
            return self._refuse(Refusal.THIRD_PARTY, host_of(url))
        return None

    def _refuse(self, reason: Refusal, detail: str = "") -> Refused:
        self.refused += 1
        return Refused(reason, detail)


def raw_of(html: HtmlFacts) -> RawHtml:
    """What the raw page declared, kept beside its rendered facts."""
    anchors = [link.target for link in html.links if link.kind is LinkKind.A]
    return RawHtml(
        titles=html.titles,
        meta_descriptions=html.meta_descriptions,
        canonicals=html.canonicals,
        meta_robots=html.meta_robots,
        hreflangs=tuple((h.lang, h.href) for h in html.hreflangs if h.source == "html"),
        h1s=html.h1s,
        links=tuple(dict.fromkeys(anchors))[:RAW_LINKS_KEPT],
        word_count=html.word_count,
    )


def rendered_page(
    page: PageFacts,
    rendered: Rendered,
    *,
    parser: PageParser,
    origin: str,
    extract: tuple[ExtractionRule, ...] = (),
) -> PageFacts:
    """`page` (its raw facts) with its rendering: the rendered DOM's HTML facts replace the raw ones
    (the checks judge what a browser shows), the raw page's declarations kept in `rendering.raw`. A
    rendering without a DOM (crashed, failed) keeps the raw facts. The extraction rules read the rendered
    DOM when there is one (docs/extraction.md)."""
    raw_html = page.html
    if raw_html is None:
        return page
    facts = RenderFacts.of(rendered, raw_of(raw_html))
    if rendered.html is None:
        return evolve(page, rendering=facts)
    headers = [(name, value) for name, value in page.headers if name != "content-type"]
    reparsed = parser.page_facts(
        url=page.url,
        status=page.status_code or 200,
        headers=[*headers, ("content-type", "text/html; charset=utf-8")],
        body=rendered.html.encode("utf-8"),
        origin=origin,
        final_url=page.final_url,
        depth=page.depth,
        redirects=page.redirects,
        extract=extract,
    )
    if reparsed.html is None:
        return evolve(page, rendering=facts)
    return evolve(page, html=reparsed.html, rendering=facts, extracted=reparsed.extracted)
