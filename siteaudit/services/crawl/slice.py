"""One crawl slice, start to end: claim the audit's lease, open the audit, read the host files (first
slice) or the checkpoint, crawl through the sliding window, checkpoint, and hand over.

The modules it calls, in the order a slice meets them: `lease`, `host_files`, `window` (which starts
`visit`s through `politeness` and writes them with `record`), `handover`. Dependencies travel as one
`CrawlDeps`.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from attrs import evolve, frozen

from siteaudit.domain.access import SiteAccess
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.crawl import (
    ROBOTS_AGENT,
    UNLINKED_DEPTH,
    CrawlState,
    IdSet,
    Phase,
    Scope,
    StopReason,
    shallowest,
    within_rules,
)
from siteaudit.domain.ids import AuditId
from siteaudit.domain.scope import ScopeMode
from siteaudit.ports.render import RenderSession
from siteaudit.services.audit import begin_audit
from siteaudit.services.crawl.deps import CrawlDeps
from siteaudit.services.crawl.handover import hand_over
from siteaudit.services.crawl.host_files import read_host_files, robots_of
from siteaudit.services.crawl.hostgate import HostGate
from siteaudit.services.crawl.lease import LeaseLost, SliceLease, slice_holder
from siteaudit.services.crawl.politeness import Pacer, Politely, secret_headers
from siteaudit.services.crawl.render import BrowserGuard
from siteaudit.services.crawl.visit import Visits
from siteaudit.services.crawl.window import crawl_window

log = logging.getLogger("siteaudit.crawl")
_P = ParamSpec("_P")
_T = TypeVar("_T")


@frozen
class SliceOutcome:
    """What a slice did: `next` is what it queued ("slice", "finalize" or "" when the audit had ended).

    `lease_lost`: another live slice held the audit's lease (nothing was done), or took it from this one
    mid-slice (this one stopped and queued nothing).
    """

    audit_id: AuditId
    fetched: int = 0  # URLs fetched by this slice (host files not counted: see `host_files`)
    pages_crawled: int = 0  # the audit's total after the slice
    next: str = ""
    stop: StopReason | None = None
    lease_lost: bool = False

    @property
    def partial(self) -> bool:
        return self.stop is not None and self.stop.partial


async def arun_crawl_slice(
    audit_id: AuditId,
    deps: CrawlDeps,
    *,
    verify_token: str | None = None,
    crawler_secret: str | None = None,
    holder: str | None = None,
    access: SiteAccess | None = None,
) -> SliceOutcome:
    """Run one bounded slice of an audit's crawl, then queue the next slice or the finalisation (on the
    caller's event loop; `run_crawl_slice` is the same, blocking).

    Claims the audit (queued -> running). The first slice reads robots.txt and the sitemaps and seeds
    the frontier; every slice then fetches batches until its budget (pages or seconds) is spent or the
    crawl stops: frontier empty, page cap, time cap (both `partial`), or the audit no longer running
    (cancelled between batches: nothing more is queued). `verify_token` (plain audits) or
    `crawler_secret` (verified sites) is sent in `X-Service-Verify` to the audited origin only; it is
    never stored or logged. `access`, the site's staging access, goes to the site's own origin only
    (docs/security.md "Staging access"). An audit that already ended is left alone.

    The slice holds the audit's lease as `holder` (a fresh name by default) while it works: a message
    for an audit whose lease another live slice holds returns at once (`lease_lost`), doing nothing.
    """
    lease = SliceLease(audit_id, holder or slice_holder(), uow=deps.uow, clock=deps.clock, limits=deps.limits)
    if not await asyncio.to_thread(lease.claim):
        return SliceOutcome(audit_id, lease_lost=True)
    try:
        return await _claimed_slice(
            audit_id, lease, deps, verify_token=verify_token, crawler_secret=crawler_secret, access=access
        )
    except LeaseLost:
        log.warning("audit %s: the lease was taken over; this slice stops here", audit_id)
        return SliceOutcome(audit_id, lease_lost=True)
    finally:
        # Failed (an exception on its way to the broker's retry) or already ended: free it for the retry.
        # Here on the loop's thread, not in another: a cancelled slice must have let go before it is
        # sent again.
        lease.release()


def _blocking(work: Callable[_P, Coroutine[Any, Any, _T]]) -> Callable[_P, _T]:
    """`work` run to its end on an event loop of its own: for callers outside one."""

    def run(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        return asyncio.run(work(*args, **kwargs))

    return run


run_crawl_slice = _blocking(arun_crawl_slice)


async def _claimed_slice(
    audit_id: AuditId,
    lease: SliceLease,
    deps: CrawlDeps,
    *,
    verify_token: str | None,
    crawler_secret: str | None,
    access: SiteAccess | None,
) -> SliceOutcome:
    # The database work of a slice runs in threads (`asyncio.to_thread`), never on the event loop: the
    # loop carries other slices' fetches, and a turn of a host's shared rate taken by one of them must
    # not wait behind this slice's writes before its request leaves (requests would reach the host
    # bunched together).
    audit = await asyncio.to_thread(begin_audit, audit_id, uow=deps.uow(), clock=deps.clock)
    if audit.status is AuditStatus.FINALIZING:
        # The slice that stopped the crawl may have died before queueing finalisation; finalising is
        # idempotent, so asking again is safe.
        await asyncio.to_thread(lease.release)
        await asyncio.to_thread(deps.queue.finalize_audit, audit_id)
        return SliceOutcome(audit_id, pages_crawled=audit.pages_crawled, next="finalize")
    if audit.status is not AuditStatus.RUNNING:
        return SliceOutcome(audit_id, pages_crawled=audit.pages_crawled)
    limits = deps.limits.for_audit(audit)
    saved = await asyncio.to_thread(deps.crawl.checkpoint, audit_id)
    state = CrawlState.from_json(saved) if saved else CrawlState(scope=Scope.of(audit.url))
    state = evolve(state, slices=state.slices + 1)
    loop = asyncio.get_running_loop()
    started = loop.time()
    wall = deps.clock.now().timestamp()
    # Made in a thread too: an HTTP client loads its TLS trust store, tens of milliseconds of CPU.
    fetcher = await asyncio.to_thread(deps.fetcher_factory, limits.concurrency)
    try:
        pacer = Pacer(limits, state.scope.host, None)
        pacer.restore(state.paces, wall_now=wall, mono_now=loop.time())
        gate = HostGate(None if limits.unlimited_rate else deps.host_limiter, deps.host_limits)
        politely = Politely(
            fetcher,
            pacer,
            limits,
            deps.clock,
            state.scope,
            secret_headers(verify_token, crawler_secret),
            gate=gate,
            access=access,
        )
        if state.phase is Phase.SETUP:
            state = evolve(state, previous_audit=await asyncio.to_thread(_previous_audit, audit, deps))
            state, robots = await read_host_files(
                state,
                audit_id=audit_id,
                politely=politely,
                parser=deps.parser,
                crawl=deps.crawl,
                limits=limits,
                beat=lease.beat,
            )
            state = evolve(state, phase=Phase.LINKS)
            await asyncio.to_thread(_seeded, deps, audit, state, lease)
        else:
            robots = robots_of(state, deps.parser)
        pacer.obey_crawl_delay(robots.rules.crawl_delay(ROBOTS_AGENT))
        # The browser's requests obey the scope and robots.txt of the moment (the start URL may move).
        guard = BrowserGuard(
            fetcher,
            scope=lambda: politely.scope,
            allowed=lambda url: visits.allowed(url),
            secret_headers=politely.secret_headers,
            access=access,
            gate=gate,
            third_party=deps.render_third_party,
            max_bytes=min(limits.page_bytes, deps.render_budget.max_bytes),
            deadline_s=min(limits.request_deadline_s, deps.render_budget.time_s),
        )
        async with _rendering(audit, deps, guard) as render:
            visits = Visits(
                audit,
                deps,
                limits=limits,
                state=state,
                politely=politely,
                robots=robots,
                beat=lease.beat,
                render=render,
            )
            closed = await crawl_window(visits, deps, started=started, beat=lease.beat)
        if gate.waited_s:
            log.info(
                "audit %s: waited %.1f s for turns of hosts shared with other audits", audit_id, gate.waited_s
            )
        mono, wall = loop.time(), deps.clock.now().timestamp()
        state = evolve(visits.state, paces=pacer.export(wall_now=wall, mono_now=mono), stop=closed.stop)
        await asyncio.to_thread(deps.crawl.save_checkpoint, audit_id, state.as_json())
    finally:
        await fetcher.aclose()
    handed = await asyncio.to_thread(
        hand_over,
        audit_id,
        closed.stop,
        lease=lease,
        queue=deps.queue,
        verify_token=verify_token,
        pages_crawled=closed.pages_crawled,
    )
    return SliceOutcome(
        audit_id,
        fetched=closed.fetched,
        pages_crawled=closed.pages_crawled,
        next=handed.next,
        stop=closed.stop,
        lease_lost=handed.lease_lost,
    )


@contextlib.asynccontextmanager
async def _rendering(
    audit: Audit, deps: CrawlDeps, guard: BrowserGuard
) -> AsyncIterator[RenderSession | None]:
    """The slice's browser context when its audit renders pages and this worker has a browser."""
    if not audit.render or deps.renderer is None:
        if audit.render:
            log.warning("audit %s asks for rendering but this worker has no browser", audit.id)
        yield None
        return
    async with deps.renderer.session(guard) as session:
        yield session


def _seeded(deps: CrawlDeps, audit: Audit, state: CrawlState, lease: SliceLease) -> None:
    """The first slice read the host files: the frontier seeded (`first_urls`), the checkpoint saved, the
    lease renewed."""
    entries = first_urls(audit, state, deps)
    for start in range(0, len(entries), 1000):
        deps.crawl.frontier_add(audit.id, entries[start : start + 1000])
    deps.crawl.save_checkpoint(audit.id, state.as_json())
    lease.beat()


def first_urls(audit: Audit, state: CrawlState, deps: CrawlDeps) -> list[tuple[str, int]]:
    """(url, depth) the frontier starts with (docs/audits.md): the start URL, always; a list audit's URLs,
    each at depth 0; or what the sitemaps list (`UNLINKED_DEPTH`: no click path reached them), as the
    audit's rules treat them."""
    normalise = deps.parser.normalise
    scope = audit.scope
    if scope.mode is ScopeMode.LIST:
        return list(shallowest((normalise(url) or url, 0) for url in scope.urls).items())
    if scope.mode is ScopeMode.SITEMAP:
        ids = list(IdSet(state.sitemap_ids))
        found = (
            (url, UNLINKED_DEPTH)
            for start in range(0, len(ids), 1000)
            for url in deps.crawl.urls(audit.id, ids[start : start + 1000]).values()
        )
        return list(shallowest(within_rules(found, state.scope, scope.rules)).items())
    return [(normalise(audit.url) or audit.url, 0)]


def _previous_audit(audit: Audit, deps: CrawlDeps) -> int | None:
    """The audit whose pages give this crawl its validators: the diff's previous audit, when its rows
    are still there (an archived audit has no pages)."""
    with deps.uow() as uow:
        previous = uow.audits.latest_done(
            team=audit.team_id, origin=audit.origin, site=audit.site_id, before=audit.id
        )
    return None if previous is None or previous.archived_at is not None else int(previous.id)
