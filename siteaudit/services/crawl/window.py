"""The sliding window: fetch the frontier so that as soon as a visit ends the next URL starts (a slow
page holds one connection, not a whole batch); finished visits are recorded in groups of a batch (or
whenever nothing is left in flight); the decisions to stop are taken with nothing in flight.

What stays in memory is one batch of pages and per-host pacing: the frontier, the seen set and the
link graph live in the crawl store.
"""

import asyncio
from collections.abc import Callable

from attrs import evolve, frozen

from siteaudit.domain.crawl import CrawlState, Phase, StopReason, batch_limit, slice_over, stop_reason
from siteaudit.services.crawl.deps import CrawlDeps
from siteaudit.services.crawl.record import (
    frontier_counts,
    progress_recorded,
    queue_unlinked_sitemap_urls,
    record_batch,
)
from siteaudit.services.crawl.visit import Visit, Visits


def _record(
    visits: Visits,
    results: list[Visit],
    deps: CrawlDeps,
    *,
    beat: Callable[[], None],
    done_before: int,
) -> tuple[CrawlState, tuple[int, int, int], bool]:
    """Write a batch, read the counts, record the progress: off the event loop (in a thread), so the
    other slices on the loop keep fetching while this one waits for the database. False: the audit is
    no longer running."""
    beat()  # before writing: a slice that lost its lease leaves the batch to the new holder
    state = record_batch(
        visits, results, done_before=done_before, thresholds=deps.thresholds, metrics=deps.metrics
    )
    counts = frontier_counts(deps.crawl, visits.audit.id)
    done, _, not_modified = counts
    running = progress_recorded(
        visits.audit, crawled=done, not_modified=not_modified, uow=deps.uow, clock=deps.clock
    )
    return state, counts, running


@frozen
class WindowClosed:
    """Why the window closed: the crawl stopped (`stop`), or, `stop` None, the slice's budget is spent
    and the next slice carries on."""

    fetched: int  # URLs fetched by this slice
    pages_crawled: int  # the audit's total
    stop: StopReason | None = None


async def crawl_window(
    visits: Visits, deps: CrawlDeps, *, started: float, beat: Callable[[], None] = lambda: None
) -> WindowClosed:
    """Visit the frontier until the crawl stops or the slice's budget (pages, seconds since the loop
    time `started`) is spent. `beat` renews the lease before each batch is written."""
    loop = asyncio.get_running_loop()
    crawl, audit, limits = deps.crawl, visits.audit, visits.limits
    audit_id, started_at = audit.id, audit.started_at
    window = limits.batch_size  # visits in flight at most (the politeness rules pace them further)
    pending: dict[asyncio.Task[Visit], int] = {}
    ended: asyncio.Queue[asyncio.Task[Visit]] = asyncio.Queue()  # visits as they end
    ready: list[Visit] = []
    taken = 0  # URLs this slice started
    origin = visits.scope.origin
    # The store keeps the counts beside the frontier (one row per state): read once per record, carried over.
    counts = await asyncio.to_thread(frontier_counts, crawl, audit_id)
    try:
        while True:
            done, queued, _ = counts
            elapsed = (deps.clock.now() - started_at).total_seconds() if started_at is not None else 0.0
            if not pending and not ready:
                if queued == 0 and visits.state.phase is Phase.LINKS:
                    visits.state = evolve(visits.state, phase=Phase.SITEMAP)
                    # A list or sitemap audit queued its URLs at the start (docs/audits.md).
                    if (
                        audit.scope.follows
                        and await asyncio.to_thread(
                            queue_unlinked_sitemap_urls, crawl, audit_id, visits.state, audit.scope.rules
                        )
                        > 0
                    ):
                        counts = await asyncio.to_thread(frontier_counts, crawl, audit_id)
                        continue
                reason = stop_reason(pages_crawled=done, queued=queued, elapsed_s=elapsed, limits=limits)
                if reason is not None:
                    if reason is StopReason.FRONTIER_EMPTY:
                        visits.state = evolve(visits.state, phase=Phase.DONE)
                    return WindowClosed(visits.fetched, done, stop=reason)
                if slice_over(fetched=taken, elapsed_s=loop.time() - started, limits=limits):
                    return WindowClosed(visits.fetched, done)
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
                    nexts = await asyncio.to_thread(crawl.frontier_next, audit_id, want + outstanding)
                    entries = [e for e in nexts if e.url_id not in busy][:want]
                    for task, entry in zip(await visits.start(entries), entries, strict=True):
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
                    return WindowClosed(visits.fetched, done)
                continue
            results = await visits.finish(ready, origin)
            ready, origin = [], visits.scope.origin
            # Pages still in flight count against the cap when redirect destinations claim room.
            visits.state, counts, running = await asyncio.to_thread(
                _record, visits, results, deps, beat=beat, done_before=done + len(pending)
            )
            done = counts[0]
            if not running:
                # No longer running: cancelled (or failed by the reaper) while these visits were out.
                return WindowClosed(visits.fetched, done, stop=StopReason.CANCELLED)
    finally:
        for task in pending:  # stopped early (cancelled, lease lost, a failure): the URLs stay queued
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
