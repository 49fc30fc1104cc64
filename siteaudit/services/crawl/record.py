"""Recording a batch of finished visits, and the frontier counts the crawl decides by.

Order of writes (what makes a killed or redelivered slice safe): a batch's pages, issues and links are
written (links replaced per source page), its new URLs queued and its URLs marked in the frontier, and
only then is progress recorded. A worker killed mid-batch loses that batch and whatever was in flight:
those URLs are still queued and the next slice fetches them again, replacing their pages, issues and
links by URL. The audit's `pages_crawled` is the frontier's DONE + NOT_MODIFIED count and
`pages_not_modified` its NOT_MODIFIED count (billed at 0.2), so both are exact however often a batch ran,
and neither counts a resource.

The counts are the store's counters, moved by `frontier_add` and `frontier_mark` in the transactions that
move the entries (a mark that finds an entry already in its state moves nothing): reading them costs the
same at any frontier size, so a batch's cost does not grow with the audit.
"""

from collections.abc import Callable, Sequence

from attrs import evolve

from siteaudit.domain.audit import Audit
from siteaudit.domain.checks.page import check_page
from siteaudit.domain.crawl import (
    UNLINKED_DEPTH,
    CrawlState,
    IdSet,
    Purpose,
    discovered,
    is_resource,
    shallowest,
    within_rules,
)
from siteaudit.domain.error import Conflict
from siteaudit.domain.facts import Link, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue
from siteaudit.domain.scope import EVERY_URL, ScopeRules
from siteaudit.domain.tally import PageOutcome
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CRAWLED_STATES, CrawlStore, FrontierState
from siteaudit.ports.metrics import DISALLOWED, NO_METRICS, NOT_MODIFIED, Metrics
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.audit import record_progress
from siteaudit.services.crawl.visit import Visit, Visits


def record_batch(
    visits: Visits,
    results: Sequence[Visit],
    *,
    done_before: int,
    thresholds: Thresholds,
    metrics: Metrics = NO_METRICS,
) -> CrawlState:
    """Write one batch: pages, issues, links, new frontier entries, then the marks, and count each visit
    in `metrics` once it is written. Returns the crawl state with the external targets it queued
    counted."""
    crawl, audit_id, limits, scope, state = (
        visits.crawl,
        visits.audit.id,
        visits.limits,
        visits.scope,
        visits.state,
    )
    follows, rules = visits.audit.scope.follows, visits.audit.scope.rules
    results = [
        evolve(r, page=evolve(r.page, resource=True)) if is_resource(r.purpose, r.page) else r
        for r in results
    ]
    room = (
        limits.max_pages - done_before - sum(1 for r in results if not r.disallowed and not r.page.resource)
    )
    pages: list[PageFacts] = []
    crawled: list[PageFacts] = []  # pages whose links are followed and whose page checks run
    done: list[int] = []
    skipped: list[int] = []
    not_modified: list[int] = []
    resources: list[int] = []
    for result in results:
        pages.append(result.page)
        if result.disallowed:
            skipped.append(result.entry.url_id)
            continue
        if result.page.resource:
            resources.append(result.entry.url_id)
        else:
            (not_modified if result.not_modified else done).append(result.entry.url_id)
        if result.purpose is Purpose.CRAWL:
            crawled.append(result.page)
        destination = result.destination
        # A list or sitemap audit audits its own URLs only, and a destination the patterns leave out is
        # not one of the audit's (docs/audits.md).
        if destination is not None and (not follows or not rules.admits(destination.url)):
            destination = None
        if destination is not None:
            claimed = room > 0 and crawl.frontier_add(audit_id, [(destination.url, result.entry.depth)])
            if claimed:
                room -= 1
                dest_id = crawl.intern(audit_id, [destination.url])[destination.url]
                destination = evolve(destination, in_sitemap=dest_id in visits.sitemap)
                pages.append(destination)
                crawled.append(destination)
                done.append(dest_id)
    issues: list[Issue] = []
    for page in crawled:
        issues.extend(check_page(page, thresholds=thresholds, context=visits.context))
    links: list[tuple[str, Link]] = [
        (page.url, link) for page in crawled if page.html is not None for link in page.html.links
    ]
    room_left = limits.max_external_checks - state.external_checked
    found: list[tuple[str, int]] = []
    for page in crawled if follows else ():  # a list or sitemap audit follows nothing
        for url, depth in within_rules(
            discovered(page, scope, limits, external_room=room_left), scope, rules
        ):
            room_left -= not scope.contains(url)
            found.append((url, depth))
    new = shallowest(found)
    crawl.write_pages(audit_id, pages)
    ids = crawl.intern(audit_id, [page.url for page in crawled])
    crawl.replace_issues(audit_id, ids.values(), issues)
    crawl.replace_links(audit_id, ids.values(), links)
    crawl.frontier_add(audit_id, new.items())
    external = sum(1 for url in new if not scope.contains(url))
    crawl.frontier_mark(audit_id, skipped, FrontierState.SKIPPED)
    crawl.frontier_mark(audit_id, done, FrontierState.DONE)
    crawl.frontier_mark(audit_id, not_modified, FrontierState.NOT_MODIFIED)
    crawl.frontier_mark(audit_id, resources, FrontierState.RESOURCE)
    for result in results:
        count_visit(result, metrics)
    return evolve(state, external_checked=state.external_checked + external)


def visit_outcome(result: Visit) -> str:
    """How a recorded visit ended, as `Metrics.page_fetched` counts it."""
    if result.disallowed:
        return DISALLOWED
    if result.not_modified:
        return NOT_MODIFIED
    return PageOutcome.from_facts(result.page, template="").outcome


def count_visit(result: Visit, metrics: Metrics) -> None:
    metrics.page_fetched(visit_outcome(result))
    if result.page.fetch_error is not None:
        metrics.fetch_failed(result.page.fetch_error)


def frontier_counts(crawl: CrawlStore, audit_id: AuditId) -> tuple[int, int, int]:
    """(crawled, queued, not modified) URLs of the audit's frontier."""
    counts = crawl.frontier_counts(audit_id)
    crawled = sum(counts.get(state, 0) for state in CRAWLED_STATES)
    return crawled, counts.get(FrontierState.QUEUED, 0), counts.get(FrontierState.NOT_MODIFIED, 0)


def progress_recorded(
    audit: Audit, *, crawled: int, not_modified: int, uow: Callable[[], UnitOfWork], clock: Clock
) -> bool:
    """Record the audit's progress after a batch; False when it is no longer running (cancelled, or
    failed by the reaper, while the batch's visits were out)."""
    try:
        record_progress(
            audit.id,
            pages_crawled=min(crawled, audit.max_pages),
            pages_not_modified=min(not_modified, crawled, audit.max_pages),
            uow=uow(),
            clock=clock,
        )
    except Conflict:
        return False
    return True


def queue_unlinked_sitemap_urls(
    crawl: CrawlStore, audit_id: AuditId, state: CrawlState, rules: ScopeRules = EVERY_URL
) -> int:
    """Queue the sitemap URLs no link reached (at `UNLINKED_DEPTH`), as the audit's scope rules treat
    them (docs/audits.md); how many were new."""
    ids = list(IdSet(state.sitemap_ids))
    added = 0
    for start in range(0, len(ids), 1000):
        urls = crawl.urls(audit_id, ids[start : start + 1000])
        found = within_rules(((url, UNLINKED_DEPTH) for url in urls.values()), state.scope, rules)
        added += crawl.frontier_add(audit_id, list(found))
    return added
