"""Politeness: every request of a slice waits for its host's turn (1/max_rps, or robots.txt's longer
Crawl-delay), then for a turn of the host's rate shared by every audit (`hostgate`), backs off on 429/503 answers (Retry-After or an exponential pause), and follows redirects
hop by hop with `RedirectChain`, each hop a new fetch through the SSRF guard after its own host's turn.
"""

import asyncio
import logging
from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

from attrs import Factory, define, evolve, field

from siteaudit.domain.access import SiteAccess
from siteaudit.domain.crawl import (
    RATE_LIMIT_STATUSES,
    CrawlLimits,
    HostPace,
    Scope,
    is_rate_limit_answer,
    pace_interval,
    retry_after_seconds,
)
from siteaudit.domain.firewall import BODY_PREFIX_BYTES, detect_blocker
from siteaudit.domain.identity import VERIFY_HEADER
from siteaudit.domain.network import (
    MAX_REDIRECTS,
    FetchRequest,
    FetchResponse,
    FollowedFetch,
    RedirectChain,
)
from siteaudit.ports.clock import Clock
from siteaudit.ports.network import Fetcher
from siteaudit.ports.parse import FinalResponse
from siteaudit.services.crawl.hostgate import NO_GATE, HostGate

log = logging.getLogger("siteaudit.crawl")

_ACCEPT_HTML: Final = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"

Headers = tuple[tuple[str, str], ...]


def secret_headers(verify_token: str | None, crawler_secret: str | None) -> Headers:
    """The header proving the crawl is the owner's: the crawler secret of a verified site, else the
    audit's verify token, else none. Sent to the audited site only; never stored or logged."""
    secret = crawler_secret or verify_token
    return () if not secret else ((VERIFY_HEADER, secret),)


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return ""


def final_response(followed: FollowedFetch, url: str, *, origin: str, depth: int = 0) -> FinalResponse | None:
    """The answer `followed` ended on, as the page parser reads the page at `url` of the audited `origin`;
    None when the fetch got no answer (an error, or no status: see `FollowedFetch.unanswered_page`)."""
    response = followed.response
    if response.error is not None or response.status is None:
        return None
    return FinalResponse(
        url=url,
        status=response.status,
        headers=response.headers,
        body=response.body,
        origin=origin,
        final_url=response.url,
        depth=depth,
        redirects=followed.hops,
        truncated=response.truncated,
        ttfb_ms=response.ttfb_ms,
        total_ms=response.total_ms,
    )


class Pacer:
    """Per-host token buckets on the event loop's clock; their state crosses slices as wall-clock times."""

    def __init__(self, limits: CrawlLimits, audited_host: str, crawl_delay: float | None) -> None:
        self._limits = limits
        self._host = audited_host
        self._own_interval = pace_interval(limits, crawl_delay)
        self._other_interval = pace_interval(limits, None)
        self._paces: dict[str, HostPace] = {}
        self._left: dict[str, float] = {}  # when the last request to each host left (loop time)

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
        """Return when a request to `host` may leave: its slot is reserved in call order, and on waking
        it also keeps one interval after the host's last real departure, so a request that woke late
        (the loop was busy with other slices) never leaves bunched with the ones after it."""
        loop = asyncio.get_running_loop()
        pace, wait = self._pace(host).reserve(loop.time())
        self._paces[host] = pace
        if wait > 0:
            await asyncio.sleep(wait)
        while True:
            now = loop.time()
            gap = self._left.get(host, -pace.interval_s) + pace.interval_s - now
            if gap <= 0:
                self._left[host] = now
                return
            await asyncio.sleep(gap)

    def rate_limited(self, host: str, retry_after_s: float | None) -> float:
        now = asyncio.get_running_loop().time()
        self._paces[host], pause = self._pace(host).rate_limited(now, retry_after_s, self._limits)
        return pause

    def answered(self, host: str) -> None:
        pace = self._paces.get(host)
        if pace is not None:
            self._paces[host] = pace.answered()


@define(eq=False)
class Politely:
    """Fetches through one audit's fetcher: host turns, rate-limit back-off, redirects hop by hop."""

    fetcher: Fetcher
    pacer: Pacer
    limits: CrawlLimits
    clock: Clock
    scope: Scope
    secret_headers: Headers
    gate: HostGate = NO_GATE  # the host's rate shared with every other audit, after this audit's own pace
    # The site's staging access: only to its own origin (scheme, host and port), never to the other
    # scheme or the `www.` twin the scope also crawls (docs/security.md "Staging access").
    access: SiteAccess | None = None
    semaphore: asyncio.Semaphore = field(
        init=False,
        default=Factory(lambda politely: asyncio.Semaphore(politely.limits.concurrency), takes_self=True),
    )

    def request(self, url: str, *, max_bytes: int, validators: Headers = ()) -> FetchRequest:
        headers: Headers = (("Accept", _ACCEPT_HTML),)
        if self.scope.contains(url):
            # Only to the audited site: next_request drops them on any hop to another origin (and the
            # validators on every hop).
            headers += self.secret_headers + validators
        if self.access is not None:
            # next_request drops these too on any hop to another origin.
            headers += self.access.for_url(url)
        return FetchRequest(
            url, headers=headers, max_bytes=max_bytes, deadline_s=self.limits.request_deadline_s
        )

    async def follow(
        self, request: FetchRequest, *, max_hops: int = MAX_REDIRECTS, within: Scope | None = None
    ) -> FollowedFetch:
        """`request`, its redirects followed; with `within`, a redirect leaving that scope is not followed:
        the chain ends on the redirect's own answer."""
        chain: RedirectChain | FollowedFetch = RedirectChain.start(request, max_hops=max_hops)
        while isinstance(chain, RedirectChain):
            response = await self._once(chain.request)
            before = chain.hops
            chain = chain.answered(response)
            if (
                isinstance(chain, RedirectChain)
                and within is not None
                and not within.contains(chain.request.url)
            ):
                return FollowedFetch(response=response, hops=before)
        return chain

    async def _once(self, request: FetchRequest) -> FetchResponse:
        """One hop: after the host's turn, within the audit's connections, again after a 429/503."""
        host = host_of(request.url)
        attempt = 0
        while True:
            async with self.semaphore:
                # The turns last, right before the request leaves: a turn taken and then spent waiting
                # for a connection would reach the host later, bunched with the next turns.
                await self.pacer.turn(host)
                await self.gate.turn(host)
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
