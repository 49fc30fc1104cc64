"""Crawl slices: claim the audit, read robots.txt and sitemaps, fetch the frontier politely through a
sliding window (a URL starts as soon as a visit ends, so a slow page holds one connection, not a whole
batch), record page facts, links and page issues in batches of finished visits, checkpoint, and hand
over to the next slice or to finalisation.

Order of writes (what makes a killed or redelivered slice safe): a batch's pages, issues and links are
written (links replaced per source page), its new URLs queued and its URLs marked in the frontier, and
only then is progress recorded. A worker killed mid-batch loses that batch and whatever was in flight:
those URLs are still queued and the next slice fetches them again, replacing their pages, issues and
links by URL. The audit's `pages_crawled` is the frontier's DONE + NOT_MODIFIED count, so it is exact
however often a batch ran.

What stays in memory is one batch of pages and per-host pacing: the frontier, the seen set and the
link graph live in the crawl store; sitemap membership is a packed array of URL ids (4 bytes each).

Redirects are followed here, hop by hop, with the rules of `siteaudit.domain.network` (the fetcher
adapter's `follow_redirects` does the same, but services may not import adapters, and each hop must
also wait for its host's turn). Every hop is a new fetch through the SSRF guard.

Conditional requests: the first slice looks up the previous audit (`AuditRepository.latest_done`: the
same site, or the same origin in the team; not archived). Each batch then reads that audit's pages of
its URLs (`CrawlStore.pages_by_url`, one query) and sends `If-None-Match` / `If-Modified-Since` for those
that answered 200 at their own address with a validator. A 304 at the same address reuses the previous
page's facts and links (`not_modified` set, timings of this fetch, depth and sitemap membership of this
audit), runs the page checks on them again, and marks the URL `NOT_MODIFIED` in the frontier: the
audit's `pages_not_modified` is that count, exact however often a batch ran, and is billed at 0.2.

When the start URL moves to another origin (http -> https, the `www.` twin), robots.txt and the
sitemaps of the new origin are read before the batch is recorded, and obeyed from then on.

One slice at a time per audit: a slice claims the audit's lease (`siteaudit.domain.lease`) before
anything else and returns at once when another live slice holds it (a duplicated or redelivered message),
renews it between batches, and releases it as it hands over (or fails), so the next message can claim it.
A slice that finds its lease taken (it stalled past the deadline and the reaper or a redelivered message
took over) stops without writing progress or queueing anything: the new holder carries on.
"""

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Final
from urllib.parse import urlsplit

from attrs import evolve, frozen

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.checks.page import PageContext, check_page
from siteaudit.domain.crawl import (
    CONVENTIONAL_SITEMAPS,
    RATE_LIMIT_STATUSES,
    ROBOTS_AGENT,
    UNLINKED_DEPTH,
    CrawlLimits,
    CrawlState,
    HostPace,
    IdSet,
    Phase,
    Purpose,
    Scope,
    StopReason,
    batch_limit,
    discovered,
    is_rate_limit_answer,
    pace_interval,
    pack_ids,
    purpose_of,
    retry_after_seconds,
    shallowest,
    slice_over,
    stop_reason,
)
from siteaudit.domain.error import Conflict
from siteaudit.domain.facts import Hop, Link, PageFacts, SitemapFacts
from siteaudit.domain.firewall import BODY_PREFIX_BYTES, detect_blocker
from siteaudit.domain.identity import VERIFY_HEADER
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue
from siteaudit.domain.network import (
    CRAWL_PORTS,
    MAX_REDIRECTS,
    FetchRequest,
    FetchResponse,
    FollowedFetch,
    next_request,
    redirect_refusal,
    redirect_target,
    url_port,
)
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CRAWLED_STATES, CrawlStore, FrontierEntry, FrontierState
from siteaudit.ports.network import Fetcher
from siteaudit.ports.parse import PageParser, RobotsReading
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.audit import begin_audit, record_progress

log = logging.getLogger("siteaudit.crawl")

ROBOTS_MAX_HOPS: Final = 5  # RFC 9309 2.3.1.2
ROBOTS_BYTES: Final = 500 * 1024
CHECK_BYTES: Final = 64 * 1024  # external targets: the status is what counts
_ACCEPT_HTML: Final = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"
_IMAGE_SUFFIXES: Final = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg", ".ico", ".bmp", ".tif")

# Connections wanted -> a fetcher with its own small pool, closed at the end of the slice.
FetcherFactory = Callable[[int], Fetcher]


@frozen
class CrawlSettings:
    """Service-wide crawl settings; the audit brings max_pages, concurrency and max_rps."""

    time_cap_s: float = 3600.0
    slice_pages: int = 500
    slice_seconds: float = 120.0
    max_sitemap_urls: int = 50_000
    fetch_images: bool = True
    check_external: bool = False
    max_external_checks: int = 200
    request_deadline_s: float = 30.0
    page_bytes: int = 5 * 1024 * 1024
    unlimited_rate: bool = False  # benchmarks only
    # A slice renews its lease at least every lease_s / 3 seconds; a lease not renewed for lease_s (plus
    # the reaper's grace) means the slice died. Longer than one batch or one robots/sitemap fetch can take.
    lease_s: float = 180.0
    # How long a released lease may wait for the next message to claim it (queue backlog included).
    handover_s: float = 1800.0

    def limits(self, audit: Audit) -> CrawlLimits:
        return CrawlLimits(
            max_pages=audit.max_pages,
            concurrency=audit.concurrency,
            max_rps=audit.max_rps,
            time_cap_s=self.time_cap_s,
            slice_pages=self.slice_pages,
            slice_seconds=self.slice_seconds,
            max_sitemap_urls=self.max_sitemap_urls,
            fetch_images=self.fetch_images,
            check_external=self.check_external,
            max_external_checks=self.max_external_checks,
            request_deadline_s=self.request_deadline_s,
            page_bytes=self.page_bytes,
            unlimited_rate=self.unlimited_rate,
        )


@frozen
class SliceOutcome:
    """What a slice did: `next` is what it queued ("slice", "finalize" or "" when the audit had ended).

    `lease_lost`: another live slice held the audit's lease (nothing was done), or took it from this one
    mid-slice (this one stopped and queued nothing).
    """

    audit_id: AuditId
    fetched: int = 0  # URLs fetched by this slice (robots.txt and sitemaps not counted)
    pages_crawled: int = 0  # the audit's total after the slice
    next: str = ""
    stop: StopReason | None = None
    lease_lost: bool = False

    @property
    def partial(self) -> bool:
        return self.stop is not None and self.stop.partial


class _Pacer:
    """Per-host token buckets on the event loop's clock; their state crosses slices as wall-clock times."""

    def __init__(self, limits: CrawlLimits, audited_host: str, crawl_delay: float | None) -> None:
        self._limits = limits
        self._host = audited_host
        self._own_interval = pace_interval(limits, crawl_delay)
        self._other_interval = pace_interval(limits, None)
        self._paces: dict[str, HostPace] = {}

    def restore(self, saved: Mapping[str, tuple[float, int]], *, wall_now: float, mono_now: float) -> None:
        for host, (not_before, strikes) in saved.items():
            self._paces[host] = HostPace(
                self._interval(host), next_at=mono_now + max(0.0, not_before - wall_now), strikes=strikes
            )

    def export(self, *, wall_now: float, mono_now: float) -> dict[str, tuple[float, int]]:
        return {
            host: (wall_now + max(0.0, pace.next_at - mono_now), pace.strikes)
            for host, pace in self._paces.items()
            if pace.next_at > mono_now or pace.strikes
        }

    def obey_crawl_delay(self, crawl_delay: float | None, *, host: str | None = None) -> None:
        """robots.txt was read: its Crawl-delay (if longer) spaces the audited host's requests from now.
        `host`: the audited host moved there (the start URL redirected to its `www.` twin)."""
        if host is not None and host != self._host:
            self._paces.pop(host, None)
            self._host = host
        self._own_interval = pace_interval(self._limits, crawl_delay)
        pace = self._paces.get(self._host)
        if pace is not None:
            self._paces[self._host] = evolve(pace, interval_s=self._own_interval)

    def _interval(self, host: str) -> float:
        return self._own_interval if host == self._host else self._other_interval

    def _pace(self, host: str) -> HostPace:
        pace = self._paces.get(host)
        if pace is None:
            pace = self._paces[host] = HostPace(self._interval(host))
        return pace

    async def turn(self, host: str) -> None:
        loop = asyncio.get_running_loop()
        pace, wait = self._pace(host).reserve(loop.time())
        self._paces[host] = pace
        if wait > 0:
            await asyncio.sleep(wait)

    def rate_limited(self, host: str, retry_after_s: float | None) -> float:
        now = asyncio.get_running_loop().time()
        self._paces[host], pause = self._pace(host).rate_limited(now, retry_after_s, self._limits)
        return pause

    def answered(self, host: str) -> None:
        pace = self._paces.get(host)
        if pace is not None:
            self._paces[host] = pace.answered()


def slice_holder() -> str:
    """A lease holder name unique to one slice run; host and process first, for the operator's eye."""
    return f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


class _LeaseLost(Exception):
    """Another slice holds the audit's lease now."""


class _Lease:
    """This slice's hold on the audit: claimed once, renewed (throttled) between batches, released once."""

    def __init__(
        self, audit_id: AuditId, holder: str, *, uow: UnitOfWork, clock: Clock, settings: CrawlSettings
    ) -> None:
        self.audit_id = audit_id
        self.holder = holder
        self.uow = uow
        self.clock = clock
        self.settings = settings
        self._renewed_at = clock.now()
        self.held = False

    def _until(self, seconds: float) -> datetime:
        return self.clock.now() + timedelta(seconds=seconds)

    def claim(self) -> bool:
        with self.uow as uow:
            now = self.clock.now()
            lease = uow.leases.claim(
                self.audit_id, self.holder, now=now, until=now + timedelta(seconds=self.settings.lease_s)
            )
            uow.commit()
        self._renewed_at = now
        self.held = lease is not None
        return self.held

    def beat(self) -> None:
        """The heartbeat between batches. Raises _LeaseLost when the lease is no longer this slice's."""
        now = self.clock.now()
        if (now - self._renewed_at).total_seconds() < self.settings.lease_s / 3:
            return
        with self.uow as uow:
            renewed = uow.leases.renew(self.audit_id, self.holder, until=self._until(self.settings.lease_s))
            uow.commit()
        if not renewed:
            self.held = False
            raise _LeaseLost(self.audit_id)
        self._renewed_at = now

    def release(self) -> bool:
        """Free the lease for the next message; False when it was no longer this slice's."""
        if not self.held:
            return False
        with self.uow as uow:
            released = uow.leases.release(
                self.audit_id, self.holder, until=self._until(self.settings.handover_s)
            )
            uow.commit()
        self.held = False
        return released

    def stop_crawling(self, *, partial: bool) -> bool:
        """Release the lease and move the audit to finalizing in one transaction (False: lease lost), so a
        slice that lost its lease can never end another slice's crawl."""
        with self.uow as uow:
            if not uow.leases.release(
                self.audit_id, self.holder, until=self._until(self.settings.handover_s)
            ):
                self.held = False
                return False
            audit = uow.audits.get_any(self.audit_id).stop_crawling(partial=partial)
            uow.audits.save(audit)
            uow.commit()
        self.held = False
        return True


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return ""


def _looks_like_image(url: str) -> bool:
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    return path.endswith(_IMAGE_SUFFIXES)


class _Politely:
    """Fetches through one audit's fetcher: host turns, rate-limit back-off, redirects hop by hop."""

    def __init__(
        self,
        fetcher: Fetcher,
        pacer: _Pacer,
        limits: CrawlLimits,
        clock: Clock,
        scope: Scope,
        secret_headers: tuple[tuple[str, str], ...],
    ) -> None:
        self.fetcher = fetcher
        self.pacer = pacer
        self.limits = limits
        self.clock = clock
        self.scope = scope
        self.secret_headers = secret_headers
        self.semaphore = asyncio.Semaphore(limits.concurrency)

    def request(
        self, url: str, *, max_bytes: int, validators: tuple[tuple[str, str], ...] = ()
    ) -> FetchRequest:
        headers: tuple[tuple[str, str], ...] = (("Accept", _ACCEPT_HTML),)
        if self.scope.contains(url):
            # Only to the audited site: next_request drops them on any hop to another origin (and the
            # validators on every hop).
            headers += self.secret_headers + validators
        return FetchRequest(
            url, headers=headers, max_bytes=max_bytes, deadline_s=self.limits.request_deadline_s
        )

    async def _once(self, request: FetchRequest) -> FetchResponse:
        host = _host(request.url)
        attempt = 0
        while True:
            await self.pacer.turn(host)
            async with self.semaphore:
                response = await self.fetcher.fetch(request)
            blocked = response.status in RATE_LIMIT_STATUSES and (
                detect_blocker(
                    response.status or 0,
                    response.headers,
                    response.body[:BODY_PREFIX_BYTES],
                    body_size=len(response.body),
                )
                is not None
            )
            if (
                not is_rate_limit_answer(response.status, blocked)
                or attempt >= self.limits.rate_limit_retries
            ):
                if not is_rate_limit_answer(response.status, blocked):
                    self.pacer.answered(host)
                return response
            retry_after = retry_after_seconds(response.header("retry-after"), self.clock.now())
            pause = self.pacer.rate_limited(host, retry_after)
            log.info("rate limited by %s (status %s): pausing %.1f s", host, response.status, pause)
            attempt += 1

    async def follow(self, request: FetchRequest, *, max_hops: int = MAX_REDIRECTS) -> FollowedFetch:
        allowed = CRAWL_PORTS | {url_port(request.url) or 80}
        visited = [request.url]
        hops: list[Hop] = []
        while True:
            response = await self._once(request)
            target = redirect_target(request, response)
            if target is None or response.status is None:
                return FollowedFetch(response=response, hops=tuple(hops))
            hops.append(Hop(url=request.url, status=response.status, location=target))
            refusal = redirect_refusal(
                target, visited=visited, hops=len(hops), ports=allowed, max_hops=max_hops
            )
            if refusal is not None:
                error, detail = refusal
                return FollowedFetch(
                    response=FetchResponse(url=target, error=error, error_detail=detail), hops=tuple(hops)
                )
            visited.append(target)
            request = next_request(request, target, response.status)


@frozen
class _Fetched:
    """One frontier entry's outcome within a batch."""

    entry: FrontierEntry
    page: PageFacts
    purpose: Purpose
    destination: PageFacts | None = None  # a redirect's in-scope destination, recorded as its own URL
    disallowed: bool = False
    not_modified: bool = False  # answered 304: `page` is the previous audit's, links not yet read back


def _validators(page: PageFacts | None) -> tuple[tuple[str, str], ...]:
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
    found: tuple[tuple[str, str], ...] = ()
    if page.etag:
        found += (("If-None-Match", page.etag),)
    if page.last_modified:
        found += (("If-Modified-Since", page.last_modified),)
    return found


class _Slice:
    def __init__(
        self,
        audit: Audit,
        *,
        uow: UnitOfWork,
        crawl: CrawlStore,
        parser: PageParser,
        clock: Clock,
        limits: CrawlLimits,
        thresholds: Thresholds,
        state: CrawlState,
        politely: _Politely,
        robots: RobotsReading,
        beat: Callable[[], None] = lambda: None,
    ) -> None:
        self.audit = audit
        self.beat = beat
        self.uow = uow
        self.crawl = crawl
        self.parser = parser
        self.clock = clock
        self.limits = limits
        self.thresholds = thresholds
        self.state = state
        self.politely = politely
        self.robots = robots
        self.sitemap = IdSet(state.sitemap_ids)
        self.context = PageContext(start_url=audit.url, site_https=state.scope.origin.startswith("https:"))
        self.fetched = 0

    @property
    def scope(self) -> Scope:
        return self.state.scope

    def allowed(self, url: str) -> bool:
        return self.robots.rules.can_fetch(url, ROBOTS_AGENT)

    async def _visit(self, entry: FrontierEntry, earlier: PageFacts | None = None) -> _Fetched:
        url, depth = entry.url, entry.depth
        image = _looks_like_image(url)
        purpose = purpose_of(url, self.scope, image=image)
        in_sitemap = entry.url_id in self.sitemap
        if self.scope.contains(url) and not self.allowed(url):
            page = PageFacts(url=url, depth=depth, disallowed=True, in_sitemap=in_sitemap)
            return _Fetched(entry, page, purpose, disallowed=True)
        cap = self.limits.page_bytes if purpose is Purpose.CRAWL else self.limits.image_bytes
        if purpose is Purpose.CHECK and not self.scope.contains(url):
            cap = CHECK_BYTES
        validators = _validators(earlier)
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
            return _Fetched(entry, page, purpose, not_modified=True)
        if response.error is not None or response.status is None:
            page = PageFacts(
                url=url,
                depth=depth,
                status_code=response.status,
                final_url=response.url if hops else None,
                redirects=hops,
                fetch_error=response.error,
                fetch_error_detail=response.error_detail,
                ttfb_ms=response.ttfb_ms,
                total_ms=response.total_ms,
                in_sitemap=in_sitemap,
            )
            return _Fetched(entry, page, purpose)
        page = self.parser.page_facts(
            url=url,
            status=response.status,
            headers=response.headers,
            body=response.body,
            origin=self.scope.origin,
            final_url=response.url,
            depth=depth,
            redirects=hops,
            truncated=response.truncated,
            ttfb_ms=response.ttfb_ms,
            total_ms=response.total_ms,
        )
        page = evolve(page, in_sitemap=in_sitemap)
        if purpose is Purpose.CHECK and page.html is not None:
            page = evolve(page, html=None)
        if depth == 0 and hops:
            self._adopt(response.url)
        destination = None
        if hops and page.html is not None:
            # The content belongs to the destination: recorded under its own URL (when in scope and new),
            # never under the redirecting one, or every redirect would duplicate its target's title.
            if self.scope.contains(response.url) and self.allowed(response.url):
                destination = evolve(
                    page, url=response.url, final_url=response.url, redirects=(), in_sitemap=False
                )
            page = evolve(page, html=None)
        return _Fetched(entry, page, purpose, destination=destination)

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

    def start(self, entries: Sequence[FrontierEntry]) -> list["asyncio.Task[_Fetched]"]:
        """Start visiting `entries` (each its own task; the politeness rules pace them)."""
        earlier = self._earlier_pages(entries)
        return [asyncio.create_task(self._visit(entry, earlier.get(entry.url))) for entry in entries]

    async def finish(self, results: Sequence[_Fetched], origin: str) -> list[_Fetched]:
        """Complete visited results before they are recorded: the previous audit's links of the pages
        that answered 304, and, when the start URL moved away from `origin`, the new origin's robots.txt
        and sitemaps (a destination the new rules disallow is not recorded)."""
        self.fetched += sum(1 for r in results if not r.disallowed)
        reused = [r.entry for r in results if r.not_modified and r.page.html is not None]
        if reused:
            # The previous page's links, read back only for the pages that answered 304.
            linked = self._earlier_pages(reused, links=True)
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
        """The start URL moved to another origin: its robots.txt and sitemaps replace the old ones."""
        self.state, self.robots = await _read_host_files(
            self.state,
            politely=self.politely,
            parser=self.parser,
            crawl=self.crawl,
            audit=self.audit,
            limits=self.limits,
            beat=self.beat,
        )
        self.sitemap = IdSet(self.state.sitemap_ids)
        self.politely.pacer.obey_crawl_delay(
            self.robots.rules.crawl_delay(ROBOTS_AGENT), host=self.scope.host
        )

    def record(self, results: Sequence[_Fetched], done_before: int) -> None:
        """Write one batch: pages, issues, links, new frontier entries, then the marks."""
        room = self.limits.max_pages - done_before - sum(1 for r in results if not r.disallowed)
        pages: list[PageFacts] = []
        crawled: list[PageFacts] = []  # pages whose links are followed and whose page checks run
        done: list[int] = []
        skipped: list[int] = []
        not_modified: list[int] = []
        for result in results:
            pages.append(result.page)
            if result.disallowed:
                skipped.append(result.entry.url_id)
                continue
            (not_modified if result.not_modified else done).append(result.entry.url_id)
            if result.purpose is Purpose.CRAWL:
                crawled.append(result.page)
            destination = result.destination
            if destination is not None:
                claimed = room > 0 and self.crawl.frontier_add(
                    self.audit.id, [(destination.url, result.entry.depth)]
                )
                if claimed:
                    room -= 1
                    dest_id = self.crawl.intern(self.audit.id, [destination.url])[destination.url]
                    destination = evolve(destination, in_sitemap=dest_id in self.sitemap)
                    pages.append(destination)
                    crawled.append(destination)
                    done.append(dest_id)
        issues: list[Issue] = []
        for page in crawled:
            issues.extend(check_page(page, thresholds=self.thresholds, context=self.context))
        links: list[tuple[str, Link]] = [
            (page.url, link) for page in crawled if page.html is not None for link in page.html.links
        ]
        room_left = self.limits.max_external_checks - self.state.external_checked
        found: list[tuple[str, int]] = []
        for page in crawled:
            for url, depth in discovered(page, self.scope, self.limits, external_room=room_left):
                room_left -= not self.scope.contains(url)
                found.append((url, depth))
        new = shallowest(found)
        store, audit_id = self.crawl, self.audit.id
        store.write_pages(audit_id, pages)
        ids = store.intern(audit_id, [page.url for page in crawled])
        store.replace_issues(audit_id, ids.values(), issues)
        store.replace_links(audit_id, ids.values(), links)
        store.frontier_add(audit_id, new.items())
        external = sum(1 for url in new if not self.scope.contains(url))
        self.state = evolve(self.state, external_checked=self.state.external_checked + external)
        store.frontier_mark(audit_id, skipped, FrontierState.SKIPPED)
        store.frontier_mark(audit_id, done, FrontierState.DONE)
        store.frontier_mark(audit_id, not_modified, FrontierState.NOT_MODIFIED)


def _secret_headers(verify_token: str | None, crawler_secret: str | None) -> tuple[tuple[str, str], ...]:
    secret = crawler_secret or verify_token
    return () if not secret else ((VERIFY_HEADER, secret),)


async def _read_host_files(
    state: CrawlState,
    *,
    politely: _Politely,
    parser: PageParser,
    crawl: CrawlStore,
    audit: Audit,
    limits: CrawlLimits,
    beat: Callable[[], None] = lambda: None,
) -> tuple[CrawlState, RobotsReading]:
    """robots.txt, then the sitemaps it declares and the conventional ones, indexes followed."""
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

    queue: list[tuple[str, str]] = [(url, "robots") for url in robots.facts.sitemaps]
    queue += [(scope.url(path), "conventional") for path in CONVENTIONAL_SITEMAPS]
    seen: set[str] = set()
    documents: list[SitemapFacts] = []
    listed: dict[str, None] = {}
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
            answer.body, url=url, found_via=found_via, status_code=answer.status, max_urls=max(1, room)
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
    ids = crawl.intern(audit.id, listed)
    state = evolve(
        state,
        robots=robots.facts,
        robots_text=text,
        sitemaps=tuple(documents),
        sitemap_ids=pack_ids(ids.values()),
        sitemap_urls_total=total,
    )
    return state, robots


def _robots_of(state: CrawlState, parser: PageParser) -> RobotsReading:
    facts = state.robots
    assert facts is not None
    body = (state.robots_text or "").encode("utf-8")
    return parser.robots(
        url=state.scope.url("/robots.txt"),
        status_code=facts.status_code,
        body=body,
        fetch_error=facts.fetch_error,
    )


def _counts(crawl: CrawlStore, audit_id: AuditId) -> tuple[int, int, int]:
    """(crawled, queued, not modified) URLs of the audit's frontier."""
    counts = crawl.frontier_counts(audit_id)
    crawled = sum(counts.get(state, 0) for state in CRAWLED_STATES)
    return crawled, counts.get(FrontierState.QUEUED, 0), counts.get(FrontierState.NOT_MODIFIED, 0)


def _queue_unlinked_sitemap_urls(crawl: CrawlStore, audit_id: AuditId, state: CrawlState) -> int:
    ids = list(IdSet(state.sitemap_ids))
    added = 0
    for start in range(0, len(ids), 1000):
        urls = crawl.urls(audit_id, ids[start : start + 1000])
        added += crawl.frontier_add(audit_id, [(url, UNLINKED_DEPTH) for url in urls.values()])
    return added


async def arun_crawl_slice(
    audit_id: AuditId,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    fetcher_factory: FetcherFactory,
    parser: PageParser,
    clock: Clock,
    queue: TaskQueue,
    settings: CrawlSettings = CrawlSettings(),
    thresholds: Thresholds | None = None,
    verify_token: str | None = None,
    crawler_secret: str | None = None,
    holder: str | None = None,
) -> SliceOutcome:
    """`run_crawl_slice` for callers already inside an event loop."""
    lease = _Lease(audit_id, holder or slice_holder(), uow=uow, clock=clock, settings=settings)
    if not lease.claim():
        return SliceOutcome(audit_id, lease_lost=True)
    try:
        return await _claimed_slice(
            audit_id,
            lease,
            uow=uow,
            crawl=crawl,
            fetcher_factory=fetcher_factory,
            parser=parser,
            clock=clock,
            queue=queue,
            settings=settings,
            thresholds=thresholds,
            verify_token=verify_token,
            crawler_secret=crawler_secret,
        )
    except _LeaseLost:
        log.warning("audit %s: the lease was taken over; this slice stops here", audit_id)
        return SliceOutcome(audit_id, lease_lost=True)
    finally:
        # Failed (an exception on its way to the broker's retry) or already ended: free it for the retry.
        lease.release()


async def _claimed_slice(
    audit_id: AuditId,
    lease: _Lease,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    fetcher_factory: FetcherFactory,
    parser: PageParser,
    clock: Clock,
    queue: TaskQueue,
    settings: CrawlSettings,
    thresholds: Thresholds | None,
    verify_token: str | None,
    crawler_secret: str | None,
) -> SliceOutcome:
    audit = begin_audit(audit_id, uow=uow, clock=clock)
    if audit.status is AuditStatus.FINALIZING:
        # The slice that stopped the crawl may have died before queueing finalisation; finalising is
        # idempotent, so asking again is safe.
        lease.release()
        queue.finalize_audit(audit_id)
        return SliceOutcome(audit_id, pages_crawled=audit.pages_crawled, next="finalize")
    if audit.status is not AuditStatus.RUNNING:
        return SliceOutcome(audit_id, pages_crawled=audit.pages_crawled)
    limits = settings.limits(audit)
    saved = crawl.checkpoint(audit_id)
    state = CrawlState.from_json(saved) if saved else CrawlState(scope=Scope.of(audit.url))
    state = evolve(state, slices=state.slices + 1)
    loop = asyncio.get_running_loop()
    started = loop.time()
    wall = clock.now().timestamp()
    fetcher = fetcher_factory(limits.concurrency)
    try:
        pacer = _Pacer(limits, state.scope.host, None)
        pacer.restore(state.paces, wall_now=wall, mono_now=loop.time())
        politely = _Politely(
            fetcher, pacer, limits, clock, state.scope, _secret_headers(verify_token, crawler_secret)
        )
        if state.phase is Phase.SETUP:
            state = evolve(state, previous_audit=_previous_audit(audit, uow))
            state, robots = await _read_host_files(
                state,
                politely=politely,
                parser=parser,
                crawl=crawl,
                audit=audit,
                limits=limits,
                beat=lease.beat,
            )
            start = parser.normalise(audit.url) or audit.url
            crawl.frontier_add(audit_id, [(start, 0)])
            state = evolve(state, phase=Phase.LINKS)
            crawl.save_checkpoint(audit_id, state.as_json())
            lease.beat()
        else:
            robots = _robots_of(state, parser)
        pacer.obey_crawl_delay(robots.rules.crawl_delay(ROBOTS_AGENT))
        work = _Slice(
            audit,
            uow=uow,
            crawl=crawl,
            parser=parser,
            clock=clock,
            limits=limits,
            thresholds=thresholds or Thresholds(),
            state=state,
            politely=politely,
            robots=robots,
            beat=lease.beat,
        )
        outcome = await _crawl(work, audit, started=started, beat=lease.beat)
        state = work.state
        mono, wall = loop.time(), clock.now().timestamp()
        state = evolve(state, paces=pacer.export(wall_now=wall, mono_now=mono), stop=outcome.stop)
        crawl.save_checkpoint(audit_id, state.as_json())
    finally:
        await fetcher.aclose()
    return _hand_over(outcome, lease=lease, queue=queue, verify_token=verify_token)


async def _crawl(
    work: _Slice, audit: Audit, *, started: float, beat: Callable[[], None] = lambda: None
) -> SliceOutcome:
    """Fetch the frontier through a sliding window: as soon as a visit ends, the next URL starts, so a
    slow page holds one connection, not the whole batch. Finished visits are recorded in groups of a
    batch (or whenever nothing is left in flight); the decisions to stop are taken with nothing in
    flight, as between batches."""
    loop = asyncio.get_running_loop()
    crawl, audit_id, limits = work.crawl, audit.id, work.limits
    started_at = audit.started_at
    window = limits.batch_size  # visits in flight at most (the politeness rules pace them further)
    pending: dict[asyncio.Task[_Fetched], int] = {}
    ended: asyncio.Queue[asyncio.Task[_Fetched]] = asyncio.Queue()  # visits as they end
    ready: list[_Fetched] = []
    taken = 0  # URLs this slice started
    origin = work.scope.origin
    # Counting the frontier costs a scan of the audit's frontier rows: once per record, carried over.
    counts = _counts(crawl, audit_id)
    try:
        while True:
            done, queued, _ = counts
            elapsed = (work.clock.now() - started_at).total_seconds() if started_at is not None else 0.0
            if not pending and not ready:
                if queued == 0 and work.state.phase is Phase.LINKS:
                    work.state = evolve(work.state, phase=Phase.SITEMAP)
                    if _queue_unlinked_sitemap_urls(crawl, audit_id, work.state):
                        counts = _counts(crawl, audit_id)
                        continue
                reason = stop_reason(pages_crawled=done, queued=queued, elapsed_s=elapsed, limits=limits)
                if reason is not None:
                    if reason is StopReason.FRONTIER_EMPTY:
                        work.state = evolve(work.state, phase=Phase.DONE)
                    return SliceOutcome(audit_id, fetched=work.fetched, pages_crawled=done, stop=reason)
                if slice_over(fetched=taken, elapsed_s=loop.time() - started, limits=limits):
                    return SliceOutcome(audit_id, fetched=work.fetched, pages_crawled=done, next="slice")
            outstanding = len(pending) + len(ready)
            if (
                len(pending) <= window // 2  # refilled by halves: one frontier query per half window
                and queued > outstanding
                and elapsed < limits.time_cap_s
                and not slice_over(fetched=taken, elapsed_s=loop.time() - started, limits=limits)
            ):
                room = batch_limit(pages_crawled=done + outstanding, fetched_in_slice=taken, limits=limits)
                want = min(room, window - len(pending))
                if want > 0:
                    busy = set(pending.values()) | {r.entry.url_id for r in ready}
                    entries = [
                        e for e in crawl.frontier_next(audit_id, want + outstanding) if e.url_id not in busy
                    ][:want]
                    for task, entry in zip(work.start(entries), entries, strict=True):
                        pending[task] = entry.url_id
                        task.add_done_callback(ended.put_nowait)
                    taken += len(entries)
            if pending:
                finished = [await ended.get()]
                while not ended.empty():
                    finished.append(ended.get_nowait())
                for task in finished:
                    del pending[task]
                    ready.append(task.result())
                if len(ready) < window and pending:
                    continue
            if not ready:
                if not pending:
                    # Counted as queued, yet nothing to start (the frontier changed under this slice):
                    # hand over rather than spin; the next slice counts afresh.
                    return SliceOutcome(audit_id, fetched=work.fetched, pages_crawled=done, next="slice")
                continue
            results = await work.finish(ready, origin)
            ready, origin = [], work.scope.origin
            beat()  # before writing: a slice that lost its lease leaves the batch to the new holder
            # Pages still in flight count against the cap when redirect destinations claim room.
            work.record(results, done + len(pending))
            counts = _counts(crawl, audit_id)
            done, _, not_modified = counts
            try:
                record_progress(
                    audit_id,
                    pages_crawled=min(done, audit.max_pages),
                    pages_not_modified=min(not_modified, done, audit.max_pages),
                    uow=work.uow,
                )
            except Conflict:
                # No longer running: cancelled (or failed by the reaper) while these visits were out.
                return SliceOutcome(
                    audit_id, fetched=work.fetched, pages_crawled=done, stop=StopReason.CANCELLED
                )
    finally:
        for task in pending:  # stopped early (cancelled, lease lost, a failure): the URLs stay queued
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


def _previous_audit(audit: Audit, uow: UnitOfWork) -> int | None:
    """The audit whose pages give this crawl its validators: the diff's previous audit, when its rows
    are still there (an archived audit has no pages)."""
    with uow:
        previous = uow.audits.latest_done(
            team=audit.team_id, origin=audit.origin, site=audit.site_id, before=audit.id
        )
    return None if previous is None or previous.archived_at is not None else int(previous.id)


def _hand_over(
    outcome: SliceOutcome, *, lease: _Lease, queue: TaskQueue, verify_token: str | None
) -> SliceOutcome:
    """Release the lease, then queue what comes next (released first, or the next message could find
    the lease still held and drop itself)."""
    if outcome.stop is StopReason.CANCELLED:
        return outcome
    if outcome.stop is None:
        if not lease.release():
            return evolve(outcome, lease_lost=True)
        queue.crawl_slice(outcome.audit_id, verify_token=verify_token)
        return outcome
    if not lease.stop_crawling(partial=outcome.stop.partial):
        return evolve(outcome, lease_lost=True)
    queue.finalize_audit(outcome.audit_id)
    return evolve(outcome, next="finalize")


def run_crawl_slice(
    audit_id: AuditId,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    fetcher_factory: FetcherFactory,
    parser: PageParser,
    clock: Clock,
    queue: TaskQueue,
    settings: CrawlSettings = CrawlSettings(),
    thresholds: Thresholds | None = None,
    verify_token: str | None = None,
    crawler_secret: str | None = None,
    holder: str | None = None,
) -> SliceOutcome:
    """Run one bounded slice of an audit's crawl, then queue the next slice or the finalisation.

    Claims the audit (queued -> running). The first slice reads robots.txt and the sitemaps and seeds
    the frontier; every slice then fetches batches until its budget (pages or seconds) is spent or the
    crawl stops: frontier empty, page cap, time cap (both `partial`), or the audit no longer running
    (cancelled between batches: nothing more is queued). `verify_token` (plain audits) or
    `crawler_secret` (verified sites) is sent in `X-Service-Verify` to the audited origin only; it is
    never stored or logged. An audit that already ended is left alone.

    The slice holds the audit's lease as `holder` (a fresh name by default) while it works: a message
    for an audit whose lease another live slice holds returns at once (`lease_lost`), doing nothing.
    """
    return asyncio.run(
        arun_crawl_slice(
            audit_id,
            uow=uow,
            crawl=crawl,
            fetcher_factory=fetcher_factory,
            parser=parser,
            clock=clock,
            queue=queue,
            settings=settings,
            thresholds=thresholds,
            verify_token=verify_token,
            crawler_secret=crawler_secret,
            holder=holder,
        )
    )


def crawl_audit_inline(
    audit_id: AuditId,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    fetcher_factory: FetcherFactory,
    parser: PageParser,
    clock: Clock,
    queue: TaskQueue,
    settings: CrawlSettings = CrawlSettings(),
    thresholds: Thresholds | None = None,
    verify_token: str | None = None,
    crawler_secret: str | None = None,
    max_slices: int = 100_000,
) -> list[SliceOutcome]:
    """Run slices one after another until the crawl stops (for the one-shot CLI and tests).

    The slices still publish to `queue` as they would in a worker (`crawl_slice` after each unfinished
    slice, `finalize_audit` at the end); the caller decides what to do with those messages.
    """
    outcomes: list[SliceOutcome] = []
    while len(outcomes) < max_slices:
        outcome = run_crawl_slice(
            audit_id,
            uow=uow,
            crawl=crawl,
            fetcher_factory=fetcher_factory,
            parser=parser,
            clock=clock,
            queue=queue,
            settings=settings,
            thresholds=thresholds,
            verify_token=verify_token,
            crawler_secret=crawler_secret,
        )
        outcomes.append(outcome)
        if outcome.next != "slice":
            break
    return outcomes


def sitemap_urls(crawl: CrawlStore, audit_id: AuditId) -> Iterable[str]:
    """The in-scope URLs the audit's sitemaps listed (bounded), for finalisation's sitemap checks."""
    saved = crawl.checkpoint(audit_id)
    if not saved:
        return ()
    ids = list(IdSet(CrawlState.from_json(saved).sitemap_ids))
    found: list[str] = []
    for start in range(0, len(ids), 1000):
        found.extend(crawl.urls(audit_id, ids[start : start + 1000]).values())
    return found
