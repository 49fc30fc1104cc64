# Over 500 lines: the crawl policy's values (scope, limits, pacing, checkpoint state) read together by the crawl engine.
"""The crawl policy: scope, which links are followed, click depth, politeness, stops and the checkpoint.

Pure decisions over values. The crawl service fetches, sleeps and stores; everything it has to decide
(is this URL ours, is it followed, how long to wait before the next request to a host, is the crawl over,
what survives to the next slice) is decided here.

Decisions worth knowing:

- Scope is the audited host: both schemes (the http/https twins the checks call internal) on the start
  URL's port or the scheme's default. Other hosts, `www.` twins included, are external: recorded as link
  targets, never crawled, optionally status-checked (a bounded number). One exception: when the start
  URL itself redirects to its `www.` twin (or back), the audit adopts the destination's host.
- Followed: `<a href>` links, unless the link says `rel=nofollow` or the page's robots directives say
  `nofollow`/`none` (a site owner's wish not to have those links crawled; Screaming Frog does the same by
  default); canonical and hreflang targets always (they are declarations about URLs, not links); images
  of the site when image fetching is on (their size and status feed `img_broken`/`img_too_large`).
  Scripts and stylesheets are not fetched.
- Click depth is the shortest number of followed links from the start URL: the frontier hands out the
  shallowest URLs first, and links found in one batch are queued at the smallest depth they were found
  at, so a URL's first sighting is at its shortest depth. URLs only listed in a sitemap are queued after
  every link-reachable URL was crawled, at `UNLINKED_DEPTH` (-1): no click path reaches them.
- Politeness: one request start per `interval` per host, the interval being 1/max_rps or robots.txt's
  `Crawl-delay` when that is longer (capped, so a hostile robots.txt cannot stall an audit for hours).
  429 and 503 answers push the host's next start back by `Retry-After` (or an exponential pause), bounded.
"""

import array
import base64
import bisect
import enum
import math
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Any, Final, Self

from attrs import evolve, field, frozen, validators

from siteaudit.domain.access import origin_key
from siteaudit.domain.audit import DEFAULT_CONCURRENCY, Audit
from siteaudit.domain.checks.page import directives
from siteaudit.domain.facts import FetchError, Hreflang, LinkKind, PageFacts, RobotsFacts, SitemapFacts
from siteaudit.domain.firewall import detect_blocker
from siteaudit.domain.judgement import SITEMAP_MAX_URLS
from siteaudit.domain.network import FetchResponse
from siteaudit.domain.scope import ScopeRules
from siteaudit.domain.site import DEFAULT_MAX_RPS, MAX_RPS, MIN_RPS, UNVERIFIED_MAX_PAGES

UNLINKED_DEPTH: Final = -1
ROBOTS_AGENT: Final = "siteaudit"  # the product token robots.txt groups are matched against
FOLLOWED_KINDS: Final = frozenset({LinkKind.A, LinkKind.CANONICAL, LinkKind.HREFLANG})
DECLARED_KINDS: Final = frozenset({LinkKind.CANONICAL, LinkKind.HREFLANG})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
CONVENTIONAL_SITEMAPS: Final = ("/sitemap.xml", "/sitemap_index.xml")
LLMS_TXT_PATH: Final = "/llms.txt"  # https://llmstxt.org: a Markdown map of the site for AI tools

# The service's crawl terms, defined once: `siteaudit.settings.Settings` takes its defaults from here and
# the composition root hands its values to `CrawlLimits`.
TIME_CAP_S: Final = 3600.0  # the whole crawl, from the audit's start
SLICE_PAGES: Final = 500  # fetches per slice before the next message takes over
SLICE_SECONDS: Final = 120.0
MAX_EXTERNAL_CHECKS: Final = 200  # external targets status-checked per audit, when enabled
# A slice renews its lease at least every LEASE_S / 3 seconds; a lease not renewed for LEASE_S (plus the
# reaper's grace) means the slice died. Longer than one batch or one robots/sitemap fetch can take.
LEASE_S: Final = 180.0
# How long a released lease may wait for the next message to claim it (queue backlog included).
HANDOVER_S: Final = 1800.0


def _host_names(hosts: Iterable[str]) -> frozenset[str]:
    return frozenset(name for host in hosts if (name := host.strip().rstrip(".").lower()))


@frozen
class CrawlLimits:
    """How far, how fast and in what portions an audit crawls: the service's terms (from `Settings`),
    with the audit's own `max_pages`, `concurrency` and `max_rps` filled in by `for_audit`."""

    # The audit's own three (these defaults are what an audit gets when it asks for nothing unverified).
    max_pages: int = field(default=UNVERIFIED_MAX_PAGES, validator=validators.ge(1))
    concurrency: int = field(default=DEFAULT_CONCURRENCY, validator=[validators.ge(1), validators.le(20)])
    max_rps: float = field(
        default=DEFAULT_MAX_RPS, validator=[validators.ge(MIN_RPS), validators.le(MAX_RPS)]
    )
    time_cap_s: float = TIME_CAP_S
    slice_pages: int = SLICE_PAGES
    slice_seconds: float = SLICE_SECONDS
    max_sitemap_urls: int = SITEMAP_MAX_URLS  # sitemap URLs kept for membership and seeding
    max_sitemaps: int = 50  # sitemap documents read (indexes and their children)
    max_sitemap_hreflangs: int = 10_000  # xhtml:link alternates kept for the listed pages (crawl state)
    max_crawl_delay_s: float = 10.0
    max_backoff_s: float = 60.0
    rate_limit_retries: int = 2  # fetches of one URL after a 429/503, before its answer is kept
    fetch_images: bool = True
    check_external: bool = False
    max_external_checks: int = MAX_EXTERNAL_CHECKS
    max_depth: int | None = None
    page_bytes: int = 5 * 1024 * 1024  # body cap of an HTML page; the rest is discarded and flagged
    image_bytes: int = 512 * 1024 + 1  # enough to tell an image over the 500 KB threshold
    sitemap_bytes: int = 20 * 1024 * 1024
    request_deadline_s: float = 30.0
    unlimited_rate: bool = False  # benchmarks only: no per-host pacing
    lease_s: float = LEASE_S
    handover_s: float = HANDOVER_S
    # The operator's hosts whose audits are not paced by their own max_rps or Crawl-delay
    # (SITEAUDIT_UNPACED_HOSTS: exact host names, lower case); the shared host limit still applies.
    unpaced_hosts: frozenset[str] = field(default=frozenset(), converter=_host_names)
    paced: bool = True  # False: this audit's requests wait for no max_rps/Crawl-delay turn (for_audit)

    def for_audit(self, audit: Audit) -> Self:
        """These terms with the audit's own limits; an audit of an unpaced host is not paced."""
        paced = self.paced and not (self.unpaced_hosts and _audited_host(audit.url) in self.unpaced_hosts)
        return evolve(
            self, max_pages=audit.max_pages, concurrency=audit.concurrency, max_rps=audit.max_rps, paced=paced
        )

    @property
    def batch_size(self) -> int:
        """URLs taken from the frontier at once: enough to keep every connection busy."""
        return max(8, 4 * self.concurrency)


# --- scope -------------------------------------------------------------------------------------------


# Every link of every page is asked about: sites repeat their links.
_split: Final = lru_cache(maxsize=16_384)(origin_key)


def _audited_host(url: str) -> str:
    parts = _split(url)
    return parts[1] if parts is not None else ""


@lru_cache(maxsize=64)
def _own_prefixes(host: str, port: int | None) -> tuple[str, ...]:
    """Starts of URLs that `Scope(host=host, port=port).contains` without a parse: `scheme://host/` with
    no port (the scheme's default) or with the scope's own port written out as digits."""
    prefixes = [f"{scheme}://{host}/" for scheme in _DEFAULT_PORTS]
    if port is not None:
        prefixes.extend(f"{scheme}://{host}:{port}/" for scheme in _DEFAULT_PORTS)
    return tuple(prefixes)


def _twin(host: str) -> str:
    return host[4:] if host.startswith("www.") else f"www.{host}"


@frozen
class Scope:
    """The audited site: `origin` is scheme://host[:port] of the (possibly adopted) start URL."""

    origin: str
    host: str
    port: int | None

    @classmethod
    def of(cls, start_url: str) -> Self:
        parts = _split(start_url)
        if parts is None:
            raise ValueError(f"{start_url!r} is not an http(s) URL")
        scheme, host, port = parts
        shown = host if port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
        return cls(origin=f"{scheme}://{shown}", host=host, port=port)

    def contains(self, url: str) -> bool:
        """Crawled: same host, either scheme, the start URL's port or the scheme's default port."""
        if url.startswith(_own_prefixes(self.host, self.port)):
            return True  # most links of a crawl: no parse
        parts = _split(url)
        if parts is None:
            return False
        scheme, host, port = parts
        return host == self.host and (port == self.port or port == _DEFAULT_PORTS[scheme])

    def after_start_redirect(self, final_url: str) -> Self:
        """The scope once the start URL redirected to `final_url`: its origin when on this host or the
        `www.` twin (http -> https, example.com -> www.example.com), else unchanged."""
        parts = _split(final_url)
        if parts is None or parts[1] not in (self.host, _twin(self.host)):
            return self
        return type(self).of(final_url)

    def url(self, path: str) -> str:
        return self.origin + path


# --- what is followed ---------------------------------------------------------------------------------


class Purpose(enum.StrEnum):
    """Why a URL is fetched, which decides what is read from its answer."""

    CRAWL = "crawl"  # a page of the site: parsed, its links followed
    CHECK = "check"  # an image or external target: status and size only


def next_depth(depth: int) -> int:
    """A link's depth from its page's: one more click, or still unreachable from the start."""
    return UNLINKED_DEPTH if depth == UNLINKED_DEPTH else depth + 1


def purpose_of(url: str, scope: Scope, *, image: bool = False) -> Purpose:
    return Purpose.CRAWL if scope.contains(url) and not image else Purpose.CHECK


def is_resource(purpose: Purpose, page: PageFacts) -> bool:
    """Whether a fetched URL is a resource rather than a page (`docs/scoring.md`): fetched only to be
    checked (an image, an external link target), or a URL of the site that answered 2xx, at its own
    address, with something other than HTML (a PDF, JSON, an image without an image suffix). Every other
    fetched URL of the site is a page, whatever it answered (HTML, an error status, a redirect, no answer):
    pages count in `pages_crawled`, against `max_pages`, in the credits and in the score; resources in
    none of them. A URL robots.txt disallows is neither (never requested)."""
    if page.disallowed:
        return False
    if purpose is Purpose.CHECK or page.resource:
        return True
    status = page.status_code
    return (
        page.html is None
        and page.fetch_error is None
        and page.blocked_by is None
        and not page.redirects
        and status is not None
        and 200 <= status < 300
    )


def discovered(
    page: PageFacts, scope: Scope, limits: CrawlLimits, *, external_room: int
) -> Iterator[tuple[str, int]]:
    """(url, depth) of every URL `page` leads the crawl to, each once, in document order.

    `external_room` is how many more external targets may be status-checked in this audit.
    """
    html = page.html
    if html is None or page.blocked_by is not None:
        return
    depth = next_depth(page.depth)
    if limits.max_depth is not None and depth > limits.max_depth:
        return
    page_nofollow = directives(page).nofollow
    seen: set[str] = set()
    for link in html.links:
        target = link.target
        if target in seen:
            continue
        internal = scope.contains(target)
        if link.kind in DECLARED_KINDS:
            wanted = internal
        elif link.kind is LinkKind.A:
            followable = not link.nofollow and not page_nofollow
            if internal:
                wanted = followable
            else:
                wanted = followable and limits.check_external and external_room > 0
                external_room -= wanted
        elif link.kind is LinkKind.IMG:
            wanted = internal and limits.fetch_images
        else:
            wanted = False
        if wanted:
            seen.add(target)
            yield target, depth


def within_rules(
    found: Iterable[tuple[str, int]], scope: Scope, rules: ScopeRules
) -> Iterator[tuple[str, int]]:
    """(url, depth) of `found` as the crawl queues them (docs/audits.md): a URL of the site with its query
    treated as the audit's rules say, or left out when their patterns leave it out; other hosts' URLs
    (status-checked only) as found."""
    if rules.empty:
        yield from found
        return
    for url, depth in found:
        if not scope.contains(url):
            yield url, depth
        elif (kept := rules.applied(url)) is not None:
            yield kept, depth


def shallowest(found: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Each URL once, at the smallest depth it was found at (unlinked counts as deepest)."""
    best: dict[str, int] = {}
    for url, depth in found:
        known = best.get(url)
        if known is None or _rank(depth) < _rank(known):
            best[url] = depth
    return best


def _rank(depth: int) -> float:
    return math.inf if depth == UNLINKED_DEPTH else depth


def is_image_kind(kind: LinkKind) -> bool:
    return kind is LinkKind.IMG


# --- politeness ---------------------------------------------------------------------------------------


def pace_interval(limits: CrawlLimits, crawl_delay_s: float | None) -> float:
    """Seconds between request starts to one host: 1/max_rps, or a longer robots.txt Crawl-delay."""
    if limits.unlimited_rate or not limits.paced:
        return 0.0
    delay = min(max(crawl_delay_s or 0.0, 0.0), limits.max_crawl_delay_s)
    return max(1.0 / limits.max_rps, delay)


@frozen
class HostPace:
    """A token bucket of one token per host, as arithmetic: the earliest time the next request may start.

    A bucket that holds a single token refills one token per `interval_s`; reserving a token is taking
    the later of now and the refill time, and moving the refill one interval past it. No bursts: the
    rate holds over any window, which is what a site owner reading the access log expects. Times are
    seconds on whatever monotonic scale the caller uses.
    """

    interval_s: float
    next_at: float = 0.0
    strikes: int = 0  # rate-limit answers in a row

    def reserve(self, now: float) -> tuple[Self, float]:
        """Take the next start slot: the new pace and how long to wait before sending."""
        start = max(now, self.next_at)
        return evolve(self, next_at=start + self.interval_s), start - now

    def rate_limited(
        self, now: float, retry_after_s: float | None, limits: CrawlLimits
    ) -> tuple[Self, float]:
        """A 429/503 answer: pause the host for Retry-After or 2^strikes seconds, at most max_backoff_s.

        Returns the new pace and the pause chosen."""
        pause = retry_after_s if retry_after_s is not None else float(2**self.strikes)
        pause = min(max(pause, self.interval_s), limits.max_backoff_s)
        return evolve(self, next_at=max(self.next_at, now + pause), strikes=self.strikes + 1), pause

    def answered(self) -> Self:
        return self if self.strikes == 0 else evolve(self, strikes=0)


RATE_LIMIT_STATUSES: Final = frozenset({429, 503})


def is_rate_limit_answer(status: int | None, blocked: bool) -> bool:
    """A 429, or a 503, that is not a firewall challenge (those do not go away by waiting)."""
    return status in RATE_LIMIT_STATUSES and not blocked


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Seconds a Retry-After value asks for (delta-seconds or an HTTP date), None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - now).total_seconds())


# --- stops --------------------------------------------------------------------------------------------


class StopReason(enum.StrEnum):
    FRONTIER_EMPTY = "frontier_empty"
    PAGE_CAP = "page_cap"
    TIME_CAP = "time_cap"
    CANCELLED = "cancelled"

    @property
    def partial(self) -> bool:
        """A cap stopped the crawl with URLs still waiting: the report covers part of the site."""
        return self in (StopReason.PAGE_CAP, StopReason.TIME_CAP)


def stop_reason(
    *, pages_crawled: int, queued: int, elapsed_s: float, limits: CrawlLimits, cancelled: bool = False
) -> StopReason | None:
    """Why the crawl is over, checked between batches; None while it goes on."""
    if cancelled:
        return StopReason.CANCELLED
    if queued == 0:
        return StopReason.FRONTIER_EMPTY
    if pages_crawled >= limits.max_pages:
        return StopReason.PAGE_CAP
    if elapsed_s >= limits.time_cap_s:
        return StopReason.TIME_CAP
    return None


def slice_over(*, fetched: int, elapsed_s: float, limits: CrawlLimits) -> bool:
    """The slice has used its budget: the rest goes to the next slice (a new message, a fresh lease)."""
    return fetched >= limits.slice_pages or elapsed_s >= limits.slice_seconds


def batch_limit(*, pages_crawled: int, fetched_in_slice: int, limits: CrawlLimits) -> int:
    """How many URLs the next batch may take without passing the page cap or the slice's budget."""
    return max(
        0,
        min(limits.batch_size, limits.max_pages - pages_crawled, limits.slice_pages - fetched_in_slice),
    )


# --- host files ---------------------------------------------------------------------------------------

_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})


def llms_txt_found(answer: FetchResponse) -> bool | None:
    """Whether the site publishes `/llms.txt`, from the answer to it (redirects within the site followed):
    True, False (`llms_txt_missing`), or None when the answer says neither, so nothing is claimed.

    - True: 200 with a file that is not an HTML page.
    - False: 404 or 410 (the site says there is no such file), or 200 with an HTML page that is no bot
      challenge: a site answering every path with a page (a single-page app's fallback, a soft 404).
    - None: the server failed (5xx, a network error, a timeout, a redirect loop: the file may well be
      there), the site would not show it (401, 403, 429, a bot challenge), a redirect leaving the site,
      any other status.
    """
    status = answer.status
    if answer.error is not None or status is None:
        return None
    if status in (404, 410):
        return False
    if status != 200:
        return None
    body_size = None if answer.truncated else len(answer.body)
    if detect_blocker(status, answer.headers, answer.body, body_size=body_size) is not None:
        return None
    media_type = (answer.header("content-type") or "").split(";", 1)[0].strip().lower()
    start = answer.body.lstrip()[:15].lower()
    return media_type not in _HTML_TYPES and not start.startswith((b"<!doctype html", b"<html"))


# --- the checkpoint -----------------------------------------------------------------------------------


class Phase(enum.StrEnum):
    SETUP = "setup"  # robots.txt and sitemaps not read yet
    LINKS = "links"  # crawling what links reach from the start URL
    SITEMAP = "sitemap"  # crawling sitemap URLs that no link reached
    DONE = "done"


def with_sitemap_alternates(page: PageFacts, alternates: Iterable[Hreflang]) -> PageFacts:
    """The page with its sitemap's hreflang alternates among its own (source `sitemap`), so the hreflang
    checks see languages a site declares only in its sitemap. Alternates a page carried from an earlier
    audit (reused after a 304) are replaced; those the page declares itself are not repeated."""
    html = page.html
    if html is None:
        return page
    kept = tuple(entry for entry in html.hreflangs if entry.source != "sitemap")
    declared = {(entry.lang.strip().lower(), entry.target) for entry in kept}
    added: list[Hreflang] = []
    for entry in alternates:
        key = (entry.lang.strip().lower(), entry.target)
        if key not in declared:
            declared.add(key)
            added.append(entry)
    if not added and len(kept) == len(html.hreflangs):
        return page
    return evolve(page, html=evolve(html, hreflangs=kept + tuple(added)))


def pack_ids(ids: Iterable[int]) -> str:
    """A sorted set of URL ids as base64 of unsigned 32-bit integers: 4 bytes per id in memory."""
    packed = array.array("I", sorted(set(ids)))
    return base64.b64encode(packed.tobytes()).decode("ascii")


class IdSet:
    """Membership over packed ids without unpacking them into Python ints."""

    __slots__ = ("_ids",)

    def __init__(self, packed: str) -> None:
        self._ids = array.array("I")
        self._ids.frombytes(base64.b64decode(packed))

    def __contains__(self, url_id: object) -> bool:
        if not isinstance(url_id, int):
            return False
        at = bisect.bisect_left(self._ids, url_id)
        return at < len(self._ids) and self._ids[at] == url_id

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[int]:
        return iter(self._ids)


@frozen
class CrawlState:
    """What one slice hands the next: counters, host files, politeness. JSON-compatible via `as_json`.

    The frontier and the seen set are not here: they live in the crawl store. `paces` keeps, per host,
    the wall-clock second before which the next request must not start and the strike count.
    """

    scope: Scope
    phase: Phase = Phase.SETUP
    slices: int = 0
    external_checked: int = 0
    # The earlier audit whose pages give the validators of conditional requests (None: no such audit).
    previous_audit: int | None = None
    robots: RobotsFacts | None = None
    robots_text: str | None = None  # the body obeyed, re-read by each slice (at most 500 KiB)
    sitemaps: tuple[SitemapFacts, ...] = ()
    sitemap_ids: str = ""  # pack_ids of the URL ids listed in sitemaps
    sitemap_urls_total: int = 0  # listed, before the bound
    # URL id of a listed page -> its sitemap's hreflang alternates, (lang, href) as written
    sitemap_hreflangs: Mapping[int, tuple[tuple[str, str], ...]] = field(factory=dict)
    # /llms.txt of the crawled origin (`llms_txt_found`): None when not asked (not read yet, disallowed by
    # robots.txt, a checkpoint older than the field) or when its answer said neither (5xx, network error)
    llms_txt_found: bool | None = None
    paces: Mapping[str, tuple[float, int]] = field(factory=dict)  # host -> (not before, epoch s; strikes)
    stop: StopReason | None = None

    def as_json(self) -> dict[str, Any]:
        robots = self.robots
        return {
            "version": 1,
            "origin": self.scope.origin,
            "phase": self.phase.value,
            "slices": self.slices,
            "previous_audit": self.previous_audit,
            "external_checked": self.external_checked,
            "robots": None
            if robots is None
            else {
                "status_code": robots.status_code,
                "fetch_error": None if robots.fetch_error is None else robots.fetch_error.value,
                "bytes": robots.bytes,
                "disallow_all_groups": list(robots.disallow_all_groups),
                "invalid_lines": list(robots.invalid_lines),
                "sitemaps": list(robots.sitemaps),
                "ai_crawlers_blocked": list(robots.ai_crawlers_blocked),
            },
            "robots_text": self.robots_text,
            "sitemaps": [
                {
                    "url": s.url,
                    "found_via": s.found_via,
                    "status_code": s.status_code,
                    "is_index": s.is_index,
                    "url_count": s.url_count,
                    "problems": list(s.problems),
                }
                for s in self.sitemaps
            ],
            "sitemap_ids": self.sitemap_ids,
            "sitemap_urls_total": self.sitemap_urls_total,
            "sitemap_hreflangs": {
                str(url_id): [list(pair) for pair in pairs]
                for url_id, pairs in self.sitemap_hreflangs.items()
            },
            "llms_txt_found": self.llms_txt_found,
            "paces": {host: [at, strikes] for host, (at, strikes) in self.paces.items()},
            "stop": None if self.stop is None else self.stop.value,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        robots = data.get("robots")
        return cls(
            scope=Scope.of(data["origin"]),
            phase=Phase(data["phase"]),
            slices=int(data["slices"]),
            previous_audit=data.get("previous_audit"),
            external_checked=int(data["external_checked"]),
            robots=None
            if robots is None
            else RobotsFacts(
                status_code=robots["status_code"],
                fetch_error=None if robots["fetch_error"] is None else FetchError(robots["fetch_error"]),
                bytes=robots["bytes"],
                disallow_all_groups=tuple(robots["disallow_all_groups"]),
                invalid_lines=tuple(robots["invalid_lines"]),
                sitemaps=tuple(robots["sitemaps"]),
                ai_crawlers_blocked=tuple(robots["ai_crawlers_blocked"]),
            ),
            robots_text=data.get("robots_text"),
            sitemaps=tuple(
                SitemapFacts(
                    url=s["url"],
                    found_via=s["found_via"],
                    status_code=s["status_code"],
                    is_index=s["is_index"],
                    url_count=s["url_count"],
                    problems=tuple(s["problems"]),
                )
                for s in data.get("sitemaps", ())
            ),
            sitemap_ids=data.get("sitemap_ids", ""),
            sitemap_urls_total=int(data.get("sitemap_urls_total", 0)),
            sitemap_hreflangs={
                int(url_id): tuple((str(lang), str(href)) for lang, href in pairs)
                for url_id, pairs in data.get("sitemap_hreflangs", {}).items()
            },
            llms_txt_found=data.get("llms_txt_found"),
            paces={host: (float(at), int(strikes)) for host, (at, strikes) in data.get("paces", {}).items()},
            stop=None if data.get("stop") is None else StopReason(data["stop"]),
        )
