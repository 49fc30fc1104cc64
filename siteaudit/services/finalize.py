# Over 400 lines: finalisation is one ordered pass over the stored audit (site checks, templates, report, diff, prompt) ending in one transaction.
"""Finalising an audit: site-wide checks over the stored graph, templates, score, report, diff, fix prompt,
fix tasks, then `done` with credits settled in the same transaction.

Finalisation reads the audit's rows in streams, each once: the pages (their facts feed the site checks
while a URL and a small summary per page are kept for templates and the report), the links (into the
site checks), and the issues (into the report tally, the diff and, for registered sites, the fix tasks).
Memory grows with the number of distinct URLs and of distinct (check, URL) findings, not with links or
repeated issues; the pages' near-duplicate sketches wait in a temporary file, not in memory
(`services/sketch_file.py`). Only when a site issue
supersedes page issues (the raised `noindex`) are the issues read one more time.

The diff is against the latest done audit of the same site (or origin in the team). While that audit's
issue rows exist they are read; once it is archived, the identities kept beside its report are used
instead (`services/archive.py`), so archiving never changes a diff.

The audit's end goes to the event bus (`services/events.py`, docs/architecture.md "Events"): credits,
webhook and fix tasks in the transaction that moves the audit to `done`, the alert mail and IndexNow after
it committed. It is idempotent: an audit that is no longer `finalizing` is left as it is (its end handed to
the bus again, whose handlers do only what a crash left undone), and a redelivered run recomputes the same
report before the audit moves on.
"""

import time
from array import array
from collections.abc import Iterable, Iterator, Sequence
from sys import intern
from typing import Any

from attrs import evolve, frozen

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.checks import AuditFacts, check_site
from siteaudit.domain.checks.site import SUPERSEDING_CODES, LinkTable
from siteaudit.domain.crawl import CrawlState, IdSet
from siteaudit.domain.diff import (
    ArchivedIdentities,
    Diff,
    DiffBasis,
    NewIssueSamples,
    PreviousAudit,
    diff_summary,
)
from siteaudit.domain.events import FindingsPublished
from siteaudit.domain.facts import PageFacts, RobotsFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue, Severity
from siteaudit.domain.prompt import QUOTED_DETAILS
from siteaudit.domain.report import AllowListAdvice, Report, Timings
from siteaudit.domain.tally import AuditIdentity, PageOutcome, ReportTally
from siteaudit.domain.task import TaskIssues
from siteaudit.domain.template import infer_site_templates, url_role
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore, IssueLine
from siteaudit.ports.metrics import NO_METRICS, Metrics
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.traffic import NO_TRAFFIC, TrafficSource
from siteaudit.services.audit import log_ended
from siteaudit.services.events import MessageBus
from siteaudit.services.inject import provided
from siteaudit.services.sketch_file import SpilledSketches

BATCH = 5_000


def _batches(items: Iterator[Any], size: int = BATCH) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# `_PagePass.flags`: a page's `PageOutcome` booleans, one bit each.
_HTML, _REDIRECTED, _FAILED, _DISALLOWED, _RESOURCE = 1, 2, 4, 8, 16
_NO_STATUS = -1  # `_PagePass.statuses` of a URL that has no status (a failure, a disallowed URL)


class _PagePass:
    """The one pass over the audit's pages: each page's facts go to the site checks as they stream by,
    and only what the templates and the report need is kept, in columns: the URL, its id, the
    `PageOutcome` fields but the template (inferred once all pages are read) and the page's skeleton for
    the templates. No object per page but its URL string, which the site checks share; the skeletons are
    interned (a site has few layouts), and `blocked_by` is kept only for the pages that have one."""

    def __init__(self, crawl: CrawlStore, audit_id: AuditId) -> None:
        self._crawl = crawl
        self._audit_id = audit_id
        self.url_ids = array("q")
        self.urls: list[str] = []
        self.statuses = array("i")
        self.flags = bytearray()
        self.blocked_by: dict[int, str] = {}
        self.skeletons: list[str] = []
        # The audit's URLs by id (`_url_table`) when read before the pages: a page's entry becomes the
        # page's own URL string, so that the link table and the site checks hold one copy of it.
        self.url_table: list[str | None] | None = None

    def facts(self) -> Iterator[PageFacts]:
        urls, statuses, flags, skeletons = self.urls, self.statuses, self.flags, self.skeletons
        table = self.url_table
        for stored in self._crawl.stream_site_pages(self._audit_id):
            facts = stored.facts
            if table is not None and 0 < stored.url_id < len(table) and table[stored.url_id] == facts.url:
                table[stored.url_id] = facts.url
            if facts.blocked_by is not None:
                self.blocked_by[len(urls)] = facts.blocked_by
            self.url_ids.append(stored.url_id)
            urls.append(facts.url)
            statuses.append(_NO_STATUS if facts.status_code is None else facts.status_code)
            flags.append(
                (_HTML if facts.html is not None else 0)
                | (_REDIRECTED if facts.redirects else 0)
                | (_FAILED if facts.fetch_error is not None else 0)
                | (_DISALLOWED if facts.disallowed else 0)
                | (_RESOURCE if facts.resource else 0)
            )
            skeletons.append(intern(facts.html.skeleton) if facts.html is not None else "")
            yield facts

    def _status(self, index: int) -> int | None:
        status = self.statuses[index]
        return None if status == _NO_STATUS else status

    def templates(self) -> list[str]:
        """The template of every crawled URL, in reading order: only HTML pages shape the page templates
        (docs/templates.md). Interned: a site has few templates."""
        flags, blocked = self.flags, self.blocked_by
        roles = [
            url_role(
                self._status(index),
                is_html=bool(flags[index] & _HTML),
                redirected=bool(flags[index] & _REDIRECTED),
                failed=bool(flags[index] & _FAILED),
                blocked=index in blocked,
            )
            for index in range(len(self.urls))
        ]
        site = infer_site_templates(zip(self.urls, roles, self.skeletons, strict=True))
        return [intern(site.template_of(url, role)) for url, role in zip(self.urls, roles, strict=True)]

    def pages(self, templates: Sequence[str]) -> Iterator[PageOutcome]:
        flags, blocked = self.flags, self.blocked_by
        for index, (url, template) in enumerate(zip(self.urls, templates, strict=True)):
            bits = flags[index]
            yield PageOutcome(
                url,
                template,
                self._status(index),
                bool(bits & _HTML),
                bool(bits & _REDIRECTED),
                bool(bits & _FAILED),
                blocked.get(index),
                bool(bits & _DISALLOWED),
                bool(bits & _RESOURCE),
            )


def _url_table(crawl: CrawlStore, audit_id: AuditId) -> list[str | None]:
    """Every interned URL in a list indexed by id (ids are dense from 1)."""
    url_of: list[str | None] = [None]
    for url_id, url in crawl.stream_urls(audit_id):
        if url_id >= len(url_of):
            url_of.extend([None] * (url_id - len(url_of)))
            url_of.append(url)
        else:
            url_of[url_id] = url
    return url_of


def _site_issues(
    audit: Audit, crawl: CrawlStore, state: CrawlState | None, pages: _PagePass, thresholds: Thresholds
) -> list[Issue]:
    """Site-wide findings, without templates yet (the page pass that feeds them infers the templates)."""
    sitemap_urls: frozenset[str] = frozenset()
    if state is not None and state.sitemap_ids:
        sitemap_urls = frozenset(crawl.urls(audit.id, IdSet(state.sitemap_ids)).values())
    pages.url_table = _url_table(crawl, audit.id)
    facts = AuditFacts(
        start_url=audit.url,
        pages=pages.facts(),
        link_table=LinkTable(pages.url_table, crawl.stream_link_batches(audit.id)),
        sitemap_urls=sitemap_urls,
        sitemaps=state.sitemaps if state else (),
        robots=state.robots if state else None,
        llms_txt_found=state.llms_txt_found if state else None,
        listed_urls=audit.scope.urls,
        whole_site=audit.scope.follows,
        sketch_store=SpilledSketches(),
    )
    found = check_site(facts, thresholds=thresholds)
    pages.url_table = None  # read by the link pass only
    return found


def _store_site_issues(crawl: CrawlStore, audit_id: AuditId, site_issues: Sequence[Issue]) -> list[Issue]:
    """Where a site issue supersedes a page issue (the raised `noindex`), replace it; returns the others,
    to be written with the counts' seal (one write transaction: SQLite has one writer)."""
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
    return others


@frozen
class ArchivedPrevious:
    """The previous audit when its rows were archived: its report, and the identities it kept (if any)."""

    crawl_id: AuditId
    health_score: int | None
    report: Report
    identities: ArchivedIdentities | None


def _previous(audit: Audit, uow: UnitOfWork, crawl: CrawlStore) -> PreviousAudit | ArchivedPrevious | None:
    """The latest done audit of the same site (or origin in the team) that has a score: from its issue
    rows, or from its report when the rows were archived. An audit that audited no HTML page saw nothing
    to compare with, so it is skipped (docs/scoring.md)."""
    with uow:
        previous = uow.audits.latest_done(
            team=audit.team_id, origin=audit.origin, site=audit.site_id, before=audit.id, scored=True
        )
    if previous is None:
        return None
    if previous.archived_at is not None:
        report = crawl.report(previous.id)
        if report is None:
            return None
        return ArchivedPrevious(
            previous.id, previous.health_score, report, crawl.archived_identities(previous.id)
        )
    rows = ((i.check_code, i.severity, i.url) for i in crawl.stream_issue_lines(previous.id))
    return PreviousAudit.from_issues(previous.id, previous.health_score, rows)


class _ArchivedDiff:
    """The diff against an archived audit, fed the current issues in batches like the report tally.

    With the identities kept at archival, the counts are those of `diff_summary` over digests
    (exact but for a false match about once in a million issues). Without them (archived before reports
    kept identities) `new` and `fixed` fall back to per-check differences of affected pages, a lower
    bound, and `new_samples` stays empty; `stats.diff_basis` says which was used.
    """

    def __init__(self, previous: ArchivedPrevious) -> None:
        self.previous = previous
        self.identities = previous.identities
        self.keys: set[int] = set()
        self.error_keys: set[int] = set()
        self.samples = NewIssueSamples()

    @property
    def basis(self) -> DiffBasis:
        return DiffBasis.ARCHIVED_IDENTITIES if self.identities is not None else DiffBasis.CHECK_COUNTS

    def add(self, issues: Iterable[IssueLine]) -> None:
        identities = self.identities
        if identities is None:
            return
        known = identities.keys
        keys, error_keys = self.keys, self.error_keys
        for issue in issues:
            key = identities.key(issue.check_code, issue.url)
            if issue.severity is Severity.ERROR:
                error_keys.add(key)
            if key not in keys:
                keys.add(key)
                if key not in known:
                    self.samples.offer(issue.check_code, issue.severity, issue.url)

    def summary(self, report: Report) -> Diff:
        health_score = report.health_score
        if self.identities is not None:
            previous = PreviousAudit(
                crawl_id=self.previous.crawl_id,
                health_score=self.previous.health_score,
                keys=self.identities.keys,
                error_keys=self.identities.error_keys,
            )
            return diff_summary(
                previous,
                current_keys=self.keys,
                current_error_keys=self.error_keys,
                samples=self.samples,
                health_score=health_score,
            )
        before = _pages_by_check(self.previous.report)
        after = _pages_by_check(report)
        delta = {
            code: after.get(code, (0, False))[0] - before.get(code, (0, False))[0]
            for code in {*before, *after}
        }
        errors = {code for code, (_, error) in (*before.items(), *after.items()) if error}
        return Diff(
            previous_crawl_id=self.previous.crawl_id,
            health_delta=None
            if self.previous.health_score is None or health_score is None
            else health_score - self.previous.health_score,
            new=sum(d for d in delta.values() if d > 0),
            fixed=sum(-d for d in delta.values() if d < 0),
            new_errors=sum(d for code, d in delta.items() if d > 0 and code in errors),
            fixed_errors=sum(-d for code, d in delta.items() if d < 0 and code in errors),
            new_samples=(),
        )


def _pages_by_check(report: Report) -> dict[str, tuple[int, bool]]:
    """Pages affected per check in a report, and whether the check was at error severity."""
    return {row.check_code: (row.pages, row.severity is Severity.ERROR) for row in report.issues}


def build_report(
    audit: Audit,
    *,
    pages: Iterable[PageOutcome],
    uow: UnitOfWork,
    crawl: CrawlStore,
    thresholds: Thresholds,
    advice: AllowListAdvice,
    timings: Timings,
    keep_findings: bool = False,
    robots: RobotsFacts | None = None,
) -> tuple[Report, TaskIssues]:
    """The report, from the page summaries given and one pass over the stored issues; with
    `keep_findings`, also what the fix tasks need of the issues (empty without)."""
    previous = _previous(audit, uow, crawl)
    archived = _ArchivedDiff(previous) if isinstance(previous, ArchivedPrevious) else None
    tally = ReportTally(previous=previous if isinstance(previous, PreviousAudit) else None)
    for page in pages:
        tally.add_page(page)
    kept = TaskIssues()
    for batch in _batches(crawl.stream_issue_lines(audit.id, quote=QUOTED_DETAILS)):
        firsts = None
        if keep_findings:
            # Gathered, not kept: one entry per (check, URL). Interned: one string per distinct URL, check
            # and template, where each row brings its own copy. They tell the tally which rows are their
            # (check, URL)'s first, so it keeps no key per issue of its own.
            add = kept.add
            firsts = [add(intern(i.check_code), i.severity, intern(i.url), intern(i.template)) for i in batch]
        tally.add_issues(
            ((i.check_code, i.severity, i.url, i.template, i.quote) for i in batch), firsts=firsts
        )
        if archived is not None:
            archived.add(batch)
    report = tally.build(
        AuditIdentity(crawl_id=audit.id, site_url=audit.url, partial=audit.partial),
        catalogue=CATALOGUE,
        thresholds=thresholds.as_dict(),
        timings=timings,
        advice=advice,
        robots=robots,
    )
    if report.health_score is None:
        pass  # no diff: the audit saw no page to compare (`ReportTally.build` leaves it out too)
    elif archived is not None:
        report = evolve(
            report,
            diff=archived.summary(report),
            stats=evolve(report.stats, diff_basis=archived.basis),
        )
    elif previous is not None:
        report = evolve(report, stats=evolve(report.stats, diff_basis=DiffBasis.ISSUE_ROWS))
    return report, kept


def finalize_audit(
    audit_id: AuditId,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    clock: Clock,
    thresholds: Thresholds | None = None,
    advice: AllowListAdvice | None = None,
    metrics: Metrics = NO_METRICS,
    traffic: TrafficSource = NO_TRAFFIC,
    bus: MessageBus | None = None,
) -> Audit:
    """Finalising -> done: the report is stored first, then the audit moves, and its `AuditEnded` and
    `FindingsPublished` go to `bus` in the same transaction (credits settle, the webhook is queued, the
    site's fix tasks are refreshed), then to the handlers that run once it committed (the alert mail,
    IndexNow). An audit that already ended (a redelivered message) has its `AuditEnded` handled again: the
    handlers are idempotent, so that does only what a crash after the commit left undone.

    Without `bus`, the one over `metrics`, `crawl` and `clock`: no alert mail and no IndexNow."""
    bus = bus or MessageBus(provided({"metrics": metrics, "crawl": crawl, "clock": clock}))
    limits = thresholds or Thresholds()
    with uow:
        audit = uow.audits.get_any(audit_id)
    if audit.status is not AuditStatus.FINALIZING:
        _handle_again(audit, bus=bus, uow=uow)
        return audit
    started = time.perf_counter()
    checkpoint = crawl.checkpoint(audit_id)
    state = CrawlState.from_json(checkpoint) if checkpoint else None
    pages = _PagePass(crawl, audit_id)
    found = _site_issues(audit, crawl, state, pages, limits)
    checked = time.perf_counter()
    templates = pages.templates()
    if (
        audit.site_id is not None
    ):  # the fix tasks' findings intern the issues' URLs: these strings, not copies
        pages.urls[:] = map(intern, pages.urls)
    template_of = dict(zip(pages.urls, templates, strict=True))
    site_issues = [
        Issue(i.check_code, i.severity, i.url, template_of.get(i.url, ""), i.details) if not i.template else i
        for i in found
    ]
    others = _store_site_issues(crawl, audit_id, site_issues)
    # The last rows (the other site issues, the templates), then the lists' totals counted once.
    crawl.seal_counts(audit_id, issues=others, templates=zip(pages.url_ids, templates, strict=True))
    crawl.refresh_statistics(audit_id)  # ... and the lists are planned on the tables' real sizes
    stored = time.perf_counter()
    duration = audit.duration_until(clock.now())
    timings = Timings(
        crawl_s=None if duration is None else round(duration, 1),
        finalize_s=round(stored - started, 2),
        site_checks_s=round(checked - started, 2),
        templates_s=round(stored - checked, 2),
        pages_crawled=audit.pages_crawled,
    )
    report, findings = build_report(
        audit,
        pages=pages.pages(templates),
        uow=uow,
        crawl=crawl,
        thresholds=limits,
        advice=advice or AllowListAdvice(),
        timings=timings,
        keep_findings=audit.site_id is not None,
        robots=None if state is None else state.robots,
    )
    crawl.save_report(audit_id, report)
    # Console figures are read before the transaction that refreshes the tasks (one writer on SQLite).
    figures = None if audit.site_id is None else traffic.traffic(audit.site_id, findings.urls())
    with uow:
        audit = uow.audits.get_any(audit_id)
        if audit.status is not AuditStatus.FINALIZING:  # cancelled meanwhile: the report stays for reading
            return audit
        audit, ended = audit.publish_report(health_score=report.health_score, now=clock.now())
        uow.audits.save(audit)
        # Fix tasks follow full audits only (services/tasks/task.py says why).
        published = bus.in_transaction(
            ended, FindingsPublished(audit, findings, template_of, figures), uow=uow
        )
        uow.commit()
    log_ended(audit)
    bus.after_commit(published, uow=uow)
    return audit


def _handle_again(audit: Audit, *, bus: MessageBus, uow: UnitOfWork) -> None:
    """The `AuditEnded` of an audit that ended before this run, handled again (its findings are not: the
    run that published them refreshed the tasks in the same transaction)."""
    if audit.status.ended:
        bus.handle(audit.ended_event(), uow=uow)
