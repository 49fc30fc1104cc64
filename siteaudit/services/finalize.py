"""Finalising an audit: site-wide checks over the stored graph, templates, score, report, diff, fix prompt,
fix tasks, then `done` with credits settled in the same transaction.

Finalisation reads the audit's rows in streams (pages, links, issues), so memory grows with the number
of distinct URLs, not with links or issues. It is idempotent: an audit that is no longer `finalizing`
is left as it is, and a redelivered run recomputes the same report before the audit moves on.
"""

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from attrs import evolve

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.checks import AuditFacts, check_site
from siteaudit.domain.checks.site import SUPERSEDING_CODES
from siteaudit.domain.crawl import CrawlState, IdSet
from siteaudit.domain.diff import PreviousAudit
from siteaudit.domain.facts import Link, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue
from siteaudit.domain.report import AllowListAdvice, AuditIdentity, PageSummary, ReportTally
from siteaudit.domain.task import findings_from_issues, refresh_tasks
from siteaudit.domain.template import infer_templates
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.audit import settle_ended_audit

BATCH = 5_000
_EVIDENCE_KEYS = ("title", "description", "h1", "anchor", "text")


def _evidence(issue: Issue) -> str | None:
    for key in _EVIDENCE_KEYS:
        value = issue.details.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _batches(items: Iterator[Any], size: int = BATCH) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _templates(crawl: CrawlStore, audit_id: AuditId) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """The template of every crawled URL (by URL, and as (url id, template) pairs to store)."""
    ids_and_urls = [(page.url_id, page.facts.url) for page in crawl.stream_pages(audit_id)]
    template_map = infer_templates(url for _, url in ids_and_urls)
    by_url = {url: template_map.template_of(url) for _, url in ids_and_urls}
    return by_url, [(url_id, by_url[url]) for url_id, url in ids_and_urls]


def _site_issues(
    audit: Audit,
    crawl: CrawlStore,
    state: CrawlState | None,
    templates: Mapping[str, str],
    thresholds: Thresholds,
) -> list[Issue]:
    """Site-wide findings; those on a crawled page take its template, host-level ones (robots.txt,
    sitemaps) keep none."""
    url_of = dict(crawl.stream_urls(audit.id))
    sitemap_urls = (
        frozenset(url_of[i] for i in IdSet(state.sitemap_ids) if i in url_of) if state else frozenset()
    )

    def pages() -> Iterator[PageFacts]:
        for stored in crawl.stream_pages(audit.id):
            yield stored.facts

    def links() -> Iterator[tuple[str, Link]]:
        for row in crawl.stream_links(audit.id):
            source, target = url_of.get(row.source), url_of.get(row.target)
            if source is not None and target is not None:
                yield source, Link(target=target, kind=row.kind, internal=row.internal, nofollow=row.nofollow)

    facts = AuditFacts(
        start_url=audit.url,
        pages=pages(),
        links=links(),
        sitemap_urls=sitemap_urls,
        sitemaps=state.sitemaps if state else (),
        robots=state.robots if state else None,
    )
    found = check_site(facts, thresholds=thresholds)
    return [evolve(i, template=templates.get(i.url, "")) if not i.template else i for i in found]


def _store_site_issues(crawl: CrawlStore, audit_id: AuditId, site_issues: Sequence[Issue]) -> None:
    """Write the site issues; where one supersedes a page issue (the raised `noindex`), replace it."""
    superseding = [i for i in site_issues if i.check_code in SUPERSEDING_CODES]
    others = [i for i in site_issues if i.check_code not in SUPERSEDING_CODES]
    if superseding:
        ids = crawl.intern(audit_id, {i.url for i in superseding})
        affected = set(ids.values())
        by_code = {i.identity for i in superseding}
        kept = [
            issue
            for url_id, issue in crawl.stream_issues(audit_id)
            if url_id in affected and issue.identity not in by_code
        ]
        crawl.replace_issues(audit_id, affected, [*kept, *superseding])
    for batch in _batches(iter(others)):
        crawl.write_issues(audit_id, batch)


def _previous(audit: Audit, uow: UnitOfWork, crawl: CrawlStore) -> PreviousAudit | None:
    """The latest done audit of the same site (or origin in the team), if its issue rows still exist."""
    with uow:
        previous = uow.audits.latest_done(
            team=audit.team_id, origin=audit.origin, site=audit.site_id, before=audit.id
        )
    if previous is None or previous.archived_at is not None:
        return None
    rows = ((i.check_code, i.severity, i.url) for _, i in crawl.stream_issues(previous.id))
    return PreviousAudit.from_issues(previous.id, previous.health_score, rows)


def build_report(
    audit: Audit,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    thresholds: Thresholds,
    advice: AllowListAdvice,
    timings: Mapping[str, Any],
) -> dict[str, Any]:
    tally = ReportTally(previous=_previous(audit, uow, crawl))
    for stored in crawl.stream_pages(audit.id):
        tally.add_page(PageSummary.from_facts(stored.facts, stored.template))
    for batch in _batches(crawl.stream_issues(audit.id)):
        tally.add_issues((i.check_code, i.severity, i.url, i.template, _evidence(i)) for _, i in batch)
    return tally.build(
        AuditIdentity(crawl_id=audit.id, site_url=audit.url, partial=audit.partial),
        catalogue=CATALOGUE,
        thresholds=thresholds.as_dict(),
        timings=timings,
        advice=advice,
    )


def finalize_audit(
    audit_id: AuditId,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    clock: Clock,
    thresholds: Thresholds | None = None,
    advice: AllowListAdvice | None = None,
) -> Audit:
    """Finalising -> done: the report is stored first, then the audit moves and credits settle at once."""
    limits = thresholds or Thresholds()
    with uow:
        audit = uow.audits.get_any(audit_id)
    if audit.status is not AuditStatus.FINALIZING:
        return audit
    started = time.perf_counter()
    checkpoint = crawl.checkpoint(audit_id)
    state = CrawlState.from_json(checkpoint) if checkpoint else None
    templates, assignments = _templates(crawl, audit_id)
    crawl.assign_templates(audit_id, assignments)
    _store_site_issues(crawl, audit_id, _site_issues(audit, crawl, state, templates, limits))
    duration = audit.duration_until(clock.now())
    timings = {
        "crawl_s": None if duration is None else round(duration, 1),
        "finalize_s": round(time.perf_counter() - started, 2),
        "pages_crawled": audit.pages_crawled,
    }
    report = build_report(
        audit, uow=uow, crawl=crawl, thresholds=limits, advice=advice or AllowListAdvice(), timings=timings
    )
    crawl.save_report(audit_id, report)
    with uow:
        audit = uow.audits.get_any(audit_id)
        if audit.status is not AuditStatus.FINALIZING:  # cancelled meanwhile: the report stays for reading
            return audit
        audit, ended = audit.publish_report(health_score=int(report["health_score"]), now=clock.now())
        settle_ended_audit(audit, ended, uow=uow)
        uow.audits.save(audit)
        if audit.site_id is not None:
            _refresh_fix_tasks(audit, uow=uow, crawl=crawl, clock=clock)
        uow.commit()
    return audit


def _refresh_fix_tasks(audit: Audit, *, uow: UnitOfWork, crawl: CrawlStore, clock: Clock) -> None:
    assert audit.site_id is not None
    findings = findings_from_issues(issue for _, issue in crawl.stream_issues(audit.id))
    refreshed = refresh_tasks(
        uow.tasks.of_site(audit.site_id), findings, site_id=audit.site_id, crawl_id=audit.id, now=clock.now()
    )
    for task in refreshed.tasks:
        uow.tasks.save(task)
