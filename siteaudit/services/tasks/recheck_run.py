"""Running a recheck on a worker: its URLs fetched again through the crawl engine's pieces (the fetcher
behind the SSRF guard, the politeness pacer, redirects hop by hop, `X-Service-Verify` for a verified
site), judged by the same page checks, and, for page-and-targets checks, by the site checks over the page
and the link targets it needs.

A recheck costs what it checks: robots.txt once, each of its URLs once, and, for page-and-targets
checks, only the link targets the audit reported the issue about (a broken-link task fetches its broken
targets, not every link on its pages).

One `run_recheck` message does the whole recheck (at most 200 URLs), under the recheck's lease:
claimed first (a live lease of another runner: nothing is done), renewed with each URL written, so a
killed worker's recheck is taken over by the reaper. Each URL's observation is written as soon as it is
judged, so the progress counts what is done and a redelivered run fetches only what is left. A
cancelled recheck stops the run; past the time cap the recheck ends `done` with `time_capped`, the URLs
not fetched `not_checked` and refunded.
"""

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Final

from attrs import evolve, field, frozen

from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.checks.page import PageContext, check_page
from siteaudit.domain.checks.site import AuditFacts, check_site
from siteaudit.domain.checks.url import normalise
from siteaudit.domain.crawl import ROBOTS_AGENT, CrawlLimits, Scope
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.domain.facts import LinkKind, PageFacts
from siteaudit.domain.ids import RecheckId
from siteaudit.domain.issue import CheckScope
from siteaudit.domain.recheck import Recheck, RecheckStatus, UrlObservation
from siteaudit.domain.site import Site
from siteaudit.ports.application import RecheckRun
from siteaudit.ports.clock import Clock
from siteaudit.ports.network import Fetcher
from siteaudit.ports.parse import PageParser, RobotsReading
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing
from siteaudit.services.access.sending import access_for_site
from siteaudit.services.crawl.host_files import ROBOTS_BYTES, ROBOTS_MAX_HOPS
from siteaudit.services.crawl.lease import slice_holder
from siteaudit.services.crawl.politeness import Pacer, Politely, final_response, secret_headers
from siteaudit.services.crawl.visit import CHECK_BYTES
from siteaudit.services.tasks.recheck import end_recheck

log = logging.getLogger("siteaudit.recheck")

_TARGET_KINDS: Final = frozenset({LinkKind.A, LinkKind.IMG, LinkKind.CANONICAL, LinkKind.HREFLANG})


@frozen
class RecheckTerms:
    """The service's recheck terms (SITEAUDIT_RECHECK_*): the time cap from the recheck's start, URLs
    fetched at once, link targets fetched per page for page-and-targets checks, the lease."""

    time_cap_s: float = 300.0
    concurrency: int = 4
    max_targets: int = 100
    lease_s: float = 180.0


@frozen(kw_only=True)  # its ports come by name (services/inject.py)
class RecheckDeps:
    uow: Callable[[], UnitOfWork]
    clock: Clock
    fetcher_factory: Callable[[int], Fetcher]
    parser: PageParser
    sealing: Sealing = field(repr=False)
    limits: CrawlLimits = field(factory=CrawlLimits)
    terms: RecheckTerms = field(factory=RecheckTerms)


class _LeaseLost(Exception):
    pass


def crawler_secret(site: Site, sealing: Sealing) -> str | None:
    """What a verified site's crawler sends in `X-Service-Verify` (derived, never stored)."""
    return sealing.derive(f"crawler:{site.crawler_secret_ref}") if site.verified else None


def run_recheck(recheck_id: RecheckId, deps: RecheckDeps, *, holder: str | None = None) -> RecheckRun:
    holder = holder or slice_holder()
    now = deps.clock.now()
    with deps.uow() as uow:
        recheck = uow.rechecks.get_any(recheck_id)
        if recheck.ended:
            return RecheckRun(recheck_id, ended=True)
        claimed = recheck.claim(holder, now=now, until=now + timedelta(seconds=deps.terms.lease_s))
        if claimed is None:
            return RecheckRun(recheck_id, lease_lost=True)
        if claimed.status is RecheckStatus.QUEUED:
            claimed, _ = claimed.start(now=now)
        uow.rechecks.save(claimed)
        uow.commit()
    with deps.uow() as uow:
        try:
            site = uow.sites.get_any(claimed.site_id)
        except NotFound:
            site = None
    if site is None:
        ended = end_recheck(recheck_id, uow=deps.uow(), clock=deps.clock, fail="site_deleted")
        return RecheckRun(recheck_id, ended=ended.ended)
    try:
        fetched, capped = asyncio.run(_fetch_all(claimed, site, holder, deps))
    except _LeaseLost:
        log.warning("recheck %s: the lease was taken over; this run stops here", recheck_id)
        return RecheckRun(recheck_id, lease_lost=True)
    ended = end_recheck(recheck_id, uow=deps.uow(), clock=deps.clock, time_capped=capped)
    return RecheckRun(recheck_id, fetched=fetched, ended=ended.ended)


def _targets_needed(recheck: Recheck) -> dict[str, tuple[str, ...] | None]:
    """The URLs whose link targets are fetched, each with the targets (None: the page's own, capped):
    those where the recheck judges a page-and-targets check (a task of such a check: all its URLs; a URL
    list: the URLs where the audit reported one), and of them only the targets the audit reported."""

    def targets_check(code: str) -> bool:
        return code in CATALOGUE and CATALOGUE[code].scope is CheckScope.PAGE_TARGETS

    if recheck.codes is not None:
        wanted = any(targets_check(c) for c in recheck.codes)
        return {u.url: u.link_targets for u in recheck.urls} if wanted else {}
    return {u.url: u.link_targets for u in recheck.urls if any(targets_check(c) for c in u.baseline)}


async def _fetch_all(recheck: Recheck, site: Site, holder: str, deps: RecheckDeps) -> tuple[int, bool]:
    """Fetch the URLs left, `concurrency` at a time, each written as soon as it is judged (the recheck's
    progress is what is really done); (URLs judged by this run, whether the time cap struck).

    robots.txt is read once, first: its Crawl-delay paces the site's requests and a URL it disallows is
    judged without a fetch, as the crawler does."""
    limits = evolve(deps.limits, concurrency=deps.terms.concurrency, max_rps=site.max_rps)
    scope = Scope.of(site.url)
    access = await asyncio.to_thread(access_for_site, site, uow=deps.uow(), sealing=deps.sealing)
    fetcher = deps.fetcher_factory(limits.concurrency)
    judged = 0
    capped = ended = False
    try:
        pacer = Pacer(limits, scope.host, None)
        politely = Politely(
            fetcher,
            pacer,
            limits,
            deps.clock,
            scope,
            secret_headers(None, crawler_secret(site, deps.sealing)),
            access=access,
        )
        context = PageContext(start_url=site.url, referenced=True, site_https=site.url.startswith("https:"))
        targets = _targets_needed(recheck)
        left = list(recheck.unfetched)
        started = recheck.started_at or deps.clock.now()
        if not left:
            return 0, False
        robots = await _robots(politely, deps)
        pacer.obey_crawl_delay(robots.rules.crawl_delay(ROBOTS_AGENT))
        # Fetching a page's link targets may outlast a third of the lease: renewed meanwhile too.
        heartbeat = asyncio.create_task(_heartbeat(recheck.id, holder, deps))

        async def runner() -> None:
            nonlocal judged, capped, ended
            while left and not (capped or ended):
                if (deps.clock.now() - started).total_seconds() >= deps.terms.time_cap_s:
                    capped = True
                    return
                url = left.pop(0)
                if scope.contains(url) and not robots.rules.can_fetch(url, ROBOTS_AGENT):
                    seen = UrlObservation.from_page(PageFacts(url=url, disallowed=True), ())
                else:
                    seen = await _observe(
                        url, politely, deps, limits, context, url in targets, targets.get(url)
                    )
                if ended:
                    return
                judged += 1
                if not _record(recheck.id, (seen,), holder, deps):
                    ended = True  # ended meanwhile (cancelled): nothing more to do

        runners = [asyncio.create_task(runner()) for _ in range(min(limits.concurrency, len(left)))]
        try:
            await asyncio.gather(*runners)
        finally:
            for task in (*runners, heartbeat):
                task.cancel()  # a lost lease stops the other runners too
    finally:
        await fetcher.aclose()
    return judged, capped and not ended


async def _robots(politely: Politely, deps: RecheckDeps) -> RobotsReading:
    """The site's robots.txt, read once per run (redirects followed as RFC 9309 allows)."""
    url = politely.scope.url("/robots.txt")
    followed = await politely.follow(politely.request(url, max_bytes=ROBOTS_BYTES), max_hops=ROBOTS_MAX_HOPS)
    answer = followed.response
    return deps.parser.robots(url=url, status_code=answer.status, body=answer.body, fetch_error=answer.error)


async def _heartbeat(recheck_id: RecheckId, holder: str, deps: RecheckDeps) -> None:
    """Renew the lease every third of its term while the run fetches (a lost lease is noticed by the
    next batch's write)."""
    while True:
        await asyncio.sleep(deps.terms.lease_s / 3)
        try:
            if not _record(recheck_id, (), holder, deps):
                return
        except _LeaseLost:
            return


def _record(recheck_id: RecheckId, seen: Sequence[UrlObservation], holder: str, deps: RecheckDeps) -> bool:
    """Write a batch's observations and renew the lease; False when the recheck ended meanwhile. Raises
    _LeaseLost when another runner holds it now."""
    for _ in range(3):
        with deps.uow() as uow:
            recheck = uow.rechecks.get_any(recheck_id)
            if recheck.ended:
                return False
            until = deps.clock.now() + timedelta(seconds=deps.terms.lease_s)
            renewed = recheck.renew(holder, until=until)
            if renewed is None:
                raise _LeaseLost(recheck_id)
            for observation in seen:
                renewed = renewed.record(observation)
            try:
                uow.rechecks.save(renewed)
                uow.commit()
            except ConcurrentUpdate:
                continue  # a cancel or the reaper moved it: read again
            return True
    raise _LeaseLost(recheck_id)


async def _page(url: str, politely: Politely, deps: RecheckDeps, *, max_bytes: int) -> PageFacts:
    followed = await politely.follow(politely.request(url, max_bytes=max_bytes))
    final = final_response(followed, url, origin=politely.scope.origin)
    return followed.unanswered_page(url) if final is None else deps.parser.page_facts(**final)


async def _observe(
    url: str,
    politely: Politely,
    deps: RecheckDeps,
    limits: CrawlLimits,
    context: PageContext,
    with_targets: bool,
    about: tuple[str, ...] | None = None,
) -> UrlObservation:
    """One URL as the crawler would see it: its own answer (redirects followed), the page checks on it,
    and, when asked, the page-and-targets checks over its link targets fetched now: only those in
    `about` that the page still links to (None: any of the page's, at most `max_targets`)."""
    answered = await _page(url, politely, deps, max_bytes=limits.page_bytes)
    page = answered
    if answered.redirects and answered.final_url:
        # As the crawler records it: the redirect's own checks on the URL, the content's checks on the
        # destination; a recheck judges both for the URL asked about (`redirected`, `redirect_to`).
        page = evolve(answered, url=answered.final_url, redirects=(), final_url=answered.final_url)
        own = evolve(answered, html=None)
        codes = {i.check_code for i in check_page(own, thresholds=None, context=context)}
        codes |= {i.check_code for i in check_page(page, thresholds=None, context=context)}
    else:
        codes = {i.check_code for i in check_page(page, thresholds=None, context=context)}
    if with_targets and page.html is not None and page.blocked_by is None:
        wanted: list[str] = []
        asked = None if about is None else {normalise(t) for t in about}
        for link in page.html.links:
            fresh = link.target != page.url and link.target not in wanted
            if asked is not None and normalise(link.target) not in asked:
                continue
            if link.kind in _TARGET_KINDS and fresh and (link.internal or limits.check_external):
                wanted.append(link.target)
        wanted = wanted[: deps.terms.max_targets]
        found = await asyncio.gather(
            *(
                _page(
                    t,
                    politely,
                    deps,
                    max_bytes=limits.page_bytes if politely.scope.contains(t) else CHECK_BYTES,
                )
                for t in wanted
            )
        )
        facts = AuditFacts.from_pages(context.start_url, [page, *found])
        codes |= {
            i.check_code
            for i in check_site(facts)
            if i.url == page.url
            and i.check_code in CATALOGUE
            and CATALOGUE[i.check_code].scope is CheckScope.PAGE_TARGETS
        }
    return UrlObservation.from_page(answered, codes)
