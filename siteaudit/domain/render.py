"""JavaScript rendering as values (docs/rendering.md): what a rendered page may spend, what the browser
did, and what the raw page said before its scripts ran, kept for the raw-against-rendered checks.

The browser never reaches the network itself: every request it makes is handed to the crawler's guard
(`siteaudit.services.crawl.render`), which answers it, or refuses it with one of `Refusal`'s reasons.
"""

import enum
from typing import Final

from attrs import field, frozen

# At most this many examples of each kind (console errors, failed or refused requests) are kept.
RENDER_SAMPLE: Final = 10
# The raw page's anchor targets kept for "links only present after rendering".
RAW_LINKS_KEPT: Final = 2_000


class Refusal(enum.StrEnum):
    """Why the guard did not make a request the page's browser asked for."""

    ADDRESS = "address"  # the SSRF guard refused the address (private, loopback, metadata...)
    THIRD_PARTY = "third_party"  # another host than the audited one, and third parties are not allowed
    ROBOTS = "robots"  # robots.txt disallows it for our user agent
    SCHEME = "scheme"  # not http or https (ws:, ftp:, file:...)
    METHOD = "method"  # not GET or HEAD: rendering never sends anything to a site
    BUDGET = "budget"  # the page's request or byte budget was spent
    DOWNLOAD = "download"  # a download, never accepted


class RenderEnd(enum.StrEnum):
    """How a rendering ended."""

    DONE = "done"  # loaded and settled within the budget
    TIMEOUT = "timeout"  # still loading at the time budget: the DOM of that moment was kept
    CRASHED = "crashed"  # the browser or the page crashed: no rendered DOM
    FAILED = "failed"  # the browser could not load the page (no DOM)


@frozen
class RenderBudget:
    """What one page's rendering may spend: wall time, body bytes and requests (the page included)."""

    time_s: float = 15.0
    max_bytes: int = 20 * 1024 * 1024
    max_requests: int = 200
    settle_s: float = 0.25  # after the load event, how long the network must stay quiet


@frozen
class RequestNote:
    """A request of the rendered page that failed or was refused, with why."""

    url: str
    reason: str  # a `Refusal` value, an HTTP status ("404") or a network error


@frozen
class Rendered:
    """What a renderer reports for one page."""

    end: RenderEnd
    html: str | None = None  # the rendered DOM, serialised; None when the page never got one
    console_errors: tuple[str, ...] = ()
    failed: tuple[RequestNote, ...] = ()  # made but failed: network errors, 4xx/5xx answers
    refused: tuple[RequestNote, ...] = ()  # never made: see `Refusal`
    requests: int = 0  # requests the page asked for (the document included)
    bytes: int = 0  # body bytes handed to the browser
    elapsed_ms: int = 0
    over_budget: str | None = None  # "time", "bytes" or "requests" when a budget stopped it
    detail: str | None = None  # why a crashed or failed rendering ended


@frozen
class RawHtml:
    """What the raw (unrendered) page declared, for comparison with its rendered DOM."""

    titles: tuple[str, ...] = ()
    meta_descriptions: tuple[str, ...] = ()
    canonicals: tuple[str, ...] = ()
    meta_robots: tuple[str, ...] = ()
    hreflangs: tuple[tuple[str, str], ...] = ()  # (lang, href) as declared in the HTML
    h1s: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # distinct anchor targets, at most RAW_LINKS_KEPT
    word_count: int = 0


@frozen
class RenderFacts:
    """A rendered page's rendering: how it ended, its problems, and its raw page's declarations.

    `raw` is None when the raw page was not HTML the checks could compare (never in practice: only HTML
    pages are rendered)."""

    end: RenderEnd
    raw: RawHtml | None = None
    console_errors: tuple[str, ...] = ()
    failed: tuple[RequestNote, ...] = field(default=())
    refused: tuple[RequestNote, ...] = field(default=())
    console_error_count: int = 0
    failed_count: int = 0
    refused_count: int = 0
    requests: int = 0
    bytes: int = 0
    elapsed_ms: int = 0
    over_budget: str | None = None
    detail: str | None = None

    @classmethod
    def of(cls, rendered: Rendered, raw: RawHtml | None) -> "RenderFacts":
        return cls(
            end=rendered.end,
            raw=raw,
            console_errors=rendered.console_errors[:RENDER_SAMPLE],
            failed=rendered.failed[:RENDER_SAMPLE],
            refused=rendered.refused[:RENDER_SAMPLE],
            console_error_count=len(rendered.console_errors),
            failed_count=len(rendered.failed),
            refused_count=len(rendered.refused),
            requests=rendered.requests,
            bytes=rendered.bytes,
            elapsed_ms=rendered.elapsed_ms,
            over_budget=rendered.over_budget,
            detail=rendered.detail,
        )
