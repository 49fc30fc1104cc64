"""Reading what the crawler fetched: page facts, robots.txt, sitemaps and URL normalisation.

The crawl service sees only this port, so it never imports the parsing libraries (selectolax, w3lib,
protego, lxml, ada-url); `siteaudit.adapters.parse.LibraryPageParser` implements it with them.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import NotRequired, Protocol, TypedDict, Unpack

from attrs import frozen

from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.facts import FetchError, Hop, Hreflang, PageFacts, RobotsFacts, SitemapFacts
from siteaudit.domain.judgement import SITEMAP_MAX_URLS


class RobotsRules(Protocol):
    def can_fetch(self, url: str, user_agent: str) -> bool:
        """Whether robots.txt lets `user_agent` (a product token) fetch `url` (RFC 9309 matching)."""
        ...

    def crawl_delay(self, user_agent: str) -> float | None:
        """The Crawl-delay of the group that applies to `user_agent`, None when none is given."""
        ...


@frozen
class RobotsReading:
    """A robots.txt outcome: the facts the checks judge and the rules the crawler obeys."""

    facts: RobotsFacts
    rules: RobotsRules


@frozen
class SitemapReading:
    facts: SitemapFacts
    urls: tuple[str, ...] = ()  # page URLs of a urlset, as written
    sitemaps: tuple[str, ...] = ()  # child sitemaps of an index
    hreflangs: tuple[tuple[str, Hreflang], ...] = ()  # (listed URL as written, its xhtml:link alternate)


class FinalResponse(TypedDict):
    """The final response of a fetch, as `PageParser.page_facts` reads it. Left out: no redirect
    (`final_url` None, `redirects` empty), depth 0, the whole body, no timings."""

    url: str
    status: int
    headers: Iterable[tuple[str, str]]
    body: bytes
    origin: str
    final_url: NotRequired[str | None]
    depth: NotRequired[int]
    redirects: NotRequired[tuple[Hop, ...]]
    truncated: NotRequired[bool]
    ttfb_ms: NotRequired[int | None]
    total_ms: NotRequired[int | None]


class PageParser(Protocol):
    def page_facts(
        self, *, extract: tuple[ExtractionRule, ...] = (), **response: Unpack[FinalResponse]
    ) -> PageFacts:
        """PageFacts of one final response: header facts, firewall detection, HtmlFacts for HTML bodies.

        `extract`: the audit's extraction rules, read on an HTML body into `extracted` (docs/extraction.md);
        compiled once per rule set, not per page.

        The body is decoded by HTTP charset, BOM or `<meta charset>`; links are resolved and normalised
        with the parser's parameter policy; `origin` (scheme://host[:port]) tells internal links apart.
        A challenged response (`blocked_by` set) gets no HTML facts. Never raises for bad markup.
        """
        ...

    def rule_errors(self, rules: Sequence[ExtractionRule]) -> Mapping[int, str]:
        """What is wrong with each extraction rule's expression (a CSS selector or an XPath 1.0
        expression), by the rule's index; the rules whose expression parses are absent."""
        ...

    def robots(
        self, *, url: str, status_code: int | None, body: bytes = b"", fetch_error: FetchError | None = None
    ) -> RobotsReading:
        """RFC 9309 outcome of fetching robots.txt (after redirects): 2xx parsed (first 500 KiB);
        4xx other than 429 allow everything; anything else (5xx, 429, no answer) disallows everything."""
        ...

    def sitemap(
        self,
        body: bytes,
        *,
        url: str,
        found_via: str,
        status_code: int | None = 200,
        max_urls: int = SITEMAP_MAX_URLS,
    ) -> SitemapReading:
        """One sitemap document (XML, gzip by magic bytes, or plain text), without network access and
        without expanding entities; problems (not_xml, wrong_root, too_many_urls, too_large, bad_gzip) are
        recorded in the facts, never raised. The hreflang alternates of `xhtml:link` entries come with the
        URL they were listed for."""
        ...

    def normalise(self, url: str, base: str | None = None) -> str | None:
        """The canonical form of an http(s) URL resolved against `base` (WHATWG parsing, the parameter
        policy applied); None when unparseable or not http(s)."""
        ...
