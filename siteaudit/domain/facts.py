"""What the crawler records: per-URL fetch facts, per-HTML-page facts, and the host-level files.

These values are the contract between the crawler (which produces them) and the checks (which judge
them). They hold observations only, never verdicts: "the title is 74 characters" lives here, "the title
is too long" lives in the checks.
"""

import enum

from attrs import field, frozen

from siteaudit.domain.extraction import Extracted
from siteaudit.domain.render import RenderFacts


class FetchError(enum.StrEnum):
    """Why a URL produced no HTTP response (or no usable one)."""

    DNS = "dns"
    CONNECT = "connect"
    TLS = "tls"
    TIMEOUT = "timeout"
    TOO_LARGE = "too_large"
    REFUSED = "refused"  # the SSRF guard refused the address
    REDIRECT_LOOP = "redirect_loop"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    PROTOCOL = "protocol"


class LinkKind(enum.StrEnum):
    A = "a"
    IMG = "img"
    LINK = "link"
    SCRIPT = "script"
    CANONICAL = "canonical"
    HREFLANG = "hreflang"


@frozen
class Hop:
    """One response on the way to the final one: a redirect (3xx) and where it pointed."""

    url: str
    status: int
    location: str | None = None


@frozen
class Link:
    """One outgoing reference, resolved to an absolute URL (fragment dropped)."""

    target: str
    kind: LinkKind = LinkKind.A
    internal: bool = True
    nofollow: bool = False


@frozen
class Image:
    src: str  # absolute URL
    has_alt: bool = True
    width: str | None = None
    height: str | None = None


@frozen
class Hreflang:
    lang: str  # as declared
    href: str  # as declared
    target: str | None  # absolute URL, None when unparseable
    source: str = "html"  # html | header | sitemap


@frozen
class JsonLdBlock:
    valid_json: bool
    has_context: bool = False
    has_type: bool = False
    types: tuple[str, ...] = ()


@frozen
class HtmlFacts:
    """Facts of an HTML page, extracted once at parse time."""

    titles: tuple[str, ...] = ()  # <title> elements in the head, entity-decoded, whitespace collapsed
    titles_in_body: int = 0
    meta_descriptions: tuple[str, ...] = ()  # in the head
    meta_robots: tuple[str, ...] = ()  # content of each <meta name=robots|googlebot>, lower-cased
    canonicals: tuple[str, ...] = ()  # raw href of each <link rel=canonical> in the head
    base_href: str | None = None
    h1s: tuple[str, ...] = ()
    heading_levels: tuple[int, ...] = ()  # levels of h1..h6 in document order
    lang: str | None = None  # <html lang>, None when absent
    viewport: str | None = None  # content of <meta name=viewport>
    has_doctype: bool = True
    meta_charset: str | None = None  # <meta charset> or http-equiv content-type charset
    meta_refresh: str | None = None  # content of <meta http-equiv=refresh>
    open_graph: frozenset[str] = frozenset()  # og:* properties present with non-empty content
    json_ld: tuple[JsonLdBlock, ...] = ()
    has_microdata: bool = False
    has_rdfa: bool = False
    links: tuple[Link, ...] = ()  # a/link/script/img references, resolved, each distinct one once
    anchor_links: int = 0  # every <a href> that is a link (repeats counted); 0 in facts stored before
    anchors_generic: tuple[str, ...] = ()  # anchor texts judged non-descriptive (generic or empty)
    uncrawlable_anchors: tuple[str, ...] = ()  # raw href of fake links: "" (none), javascript:, bare "#"
    images: tuple[Image, ...] = ()
    hreflangs: tuple[Hreflang, ...] = ()
    mixed_content: tuple[str, ...] = ()  # http:// subresources of an https page
    insecure_forms: tuple[str, ...] = ()  # form actions posting to http://
    metas_in_body: int = 0  # meta/link/title elements outside the head
    word_count: int = 0
    text_chars: int = 0
    not_found_phrase: bool = False  # visible text contains a "not found" phrase
    fingerprint: str = ""  # hash of the normalised visible text
    sketch: tuple[int, ...] = ()  # similarity sketch (MinHash) of the visible text's shingles
    skeleton: str = ""  # hash of the page's layout (its block elements' tag paths); docs/templates.md
    dom_nodes: int = 0


@frozen
class PageFacts:
    """Everything recorded for one URL of an audit: how it answered, and its HTML facts if any."""

    url: str
    depth: int = 0
    status_code: int | None = None  # final status; None when no response
    final_url: str | None = None
    redirects: tuple[Hop, ...] = ()
    fetch_error: FetchError | None = None
    fetch_error_detail: str | None = None
    content_type: str | None = None  # media type only, lower-cased
    charset: str | None = None  # from the Content-Type header
    headers: tuple[tuple[str, str], ...] = ()  # selected response headers, names lower-cased
    x_robots_tag: tuple[str, ...] = ()
    link_canonicals: tuple[str, ...] = ()  # from the Link header, absolute
    bytes: int = 0  # uncompressed body size read
    truncated: bool = False  # body cap reached: the rest was discarded
    ttfb_ms: int | None = None
    total_ms: int | None = None
    blocked_by: str | None = None  # firewall provider that challenged the crawler
    not_modified: bool = False  # answered 304 and reused the previous audit's facts
    etag: str | None = None
    last_modified: str | None = None
    in_sitemap: bool = False
    disallowed: bool = False  # robots.txt disallows it for our user agent
    # Fetched as a resource, not a page (`crawl.is_resource`): not in `pages_crawled`, never billed.
    resource: bool = False
    html: HtmlFacts | None = None
    # Rendered in a browser (docs/rendering.md): `html` then holds the rendered DOM's facts, and this the
    # rendering's outcome with the raw page's declarations.
    rendering: RenderFacts | None = None
    # What the audit's extraction rules read on the page (docs/extraction.md), in the rules' order.
    extracted: tuple[Extracted, ...] = ()

    @property
    def is_html(self) -> bool:
        return self.html is not None

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        for key, value in self.headers:
            if key == wanted:
                return value
        return None


@frozen
class RobotsFacts:
    """The host's robots.txt as fetched."""

    status_code: int | None = None
    fetch_error: FetchError | None = None
    bytes: int = 0
    disallow_all_groups: tuple[str, ...] = ()  # user agents (`*`, `googlebot`) disallowed from `/`
    invalid_lines: tuple[str, ...] = ()
    sitemaps: tuple[str, ...] = ()
    ai_crawlers_blocked: tuple[str, ...] = ()


@frozen
class SitemapFacts:
    """One sitemap document: where it was found, what it listed, and what was wrong with it."""

    url: str
    found_via: str = "robots"  # robots | conventional | index
    status_code: int | None = None
    is_index: bool = False
    url_count: int = 0
    problems: tuple[str, ...] = field(
        factory=tuple
    )  # not_xml, wrong_root, too_many_urls, too_large, bad_gzip
