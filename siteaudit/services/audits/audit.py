"""The handlers of the audit use cases (`usecases.py`): plain functions over ports, each one call into the
audit and report services."""

from collections.abc import Callable

from attrs import evolve

from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditRequest
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.extraction import ExtractMatch, every_rule, filter_errors
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.report import Report
from siteaudit.ports.application import AuditDetail, AuditQuery
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore, IssueQuery, PageQuery
from siteaudit.ports.metrics import NO_METRICS, Metrics
from siteaudit.ports.network import HostResolver
from siteaudit.ports.parse import PageParser
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.usecases import copy_named
from siteaudit.services import audit as audit_services
from siteaudit.services import report as report_services
from siteaudit.services.audits.answers import (
    Audit,
    AuditCancelled,
    AuditList,
    AuditRow,
    AuditStarted,
    FixPrompt,
    Issue,
    IssueList,
    ListMeta,
    Page,
    PageList,
    ReportDiff,
    ReportTemplates,
)
from siteaudit.services.audits.usecases import (
    CancelAudit,
    GetAudit,
    GetDiff,
    GetFixPrompt,
    GetReport,
    GetTemplates,
    ListAudits,
    ListIssues,
    ListPages,
    StartAudit,
)


def start_audit(
    asked: StartAudit,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    queue: TaskQueue,
    metrics: Metrics = NO_METRICS,
    public_only: tuple[HostResolver, AddressPolicy] | None = None,
    parser: PageParser | None = None,
) -> AuditStarted:
    """A URL's, a list's or a registered site's audit started (`services/audit.py`, `start_audit`): the
    rules across its inputs (one start, no crawler token for a site, a list as listed) are the domain's,
    each bad input named."""
    # sitemap_only not given (None) is false; the trigger is the request's default, api.
    request = copy_named(AuditRequest, asked, sitemap_only=bool(asked.sitemap_only))
    started = audit_services.start_audit(
        request,
        caller,
        uow=uow,
        clock=clock,
        queue=queue,
        metrics=metrics,
        public_only=public_only,
        parser=parser,
    )
    return AuditStarted.of(started.audit, started.notices)


def list_audits(asked: ListAudits, caller: Caller, *, uow: UnitOfWork) -> AuditList:
    query = AuditQuery(site_id=asked.site_id, offset=(asked.page - 1) * asked.per_page, limit=asked.per_page)
    rows, total = audit_services.list_audits(caller, query, uow=uow)
    meta = ListMeta.of(page=asked.page, per_page=asked.per_page, total=total)
    return AuditList(data=tuple(AuditRow.of(row) for row in rows), meta=meta)


def get_audit(
    asked: GetAudit,
    caller: Caller,
    *,
    uow: Callable[[], UnitOfWork],
    clock: Clock,
    admitted: AuditDetail | None = None,
) -> Audit:
    """`admitted`: the audit read with the request's key (`GetAudit.http.audit_with_key`), used when it is
    the one asked for and the caller's team's; else read here, in a unit of work made only then."""
    if (
        admitted is not None
        and admitted.audit.id == asked.crawl_id
        and admitted.audit.team_id == caller.team_id
    ):
        detail = admitted
    else:
        detail = audit_services.get_audit(asked.crawl_id, caller, uow=uow(), clock=clock)
    return Audit.of(detail, now=clock.now())


def cancel_audit(
    asked: CancelAudit, caller: Caller, *, uow: UnitOfWork, clock: Clock, metrics: Metrics = NO_METRICS
) -> AuditCancelled:
    audit_services.cancel_audit(asked.crawl_id, caller, uow=uow, clock=clock, metrics=metrics)
    return AuditCancelled()


def get_report(asked: GetReport, caller: Caller, *, uow: UnitOfWork, crawl: CrawlStore) -> Report:
    return report_services.report(asked.crawl_id, caller, uow=uow, crawl=crawl)


def get_templates(
    asked: GetTemplates, caller: Caller, *, uow: UnitOfWork, crawl: CrawlStore
) -> ReportTemplates:
    report = report_services.report(asked.crawl_id, caller, uow=uow, crawl=crawl)
    return ReportTemplates(crawl_id=asked.crawl_id, templates=report.templates)


def get_diff(asked: GetDiff, caller: Caller, *, uow: UnitOfWork, crawl: CrawlStore) -> ReportDiff:
    report = report_services.report(asked.crawl_id, caller, uow=uow, crawl=crawl)
    return ReportDiff(crawl_id=asked.crawl_id, diff=report.diff)


def get_fix_prompt(asked: GetFixPrompt, caller: Caller, *, uow: UnitOfWork, crawl: CrawlStore) -> FixPrompt:
    report = report_services.report(asked.crawl_id, caller, uow=uow, crawl=crawl)
    return FixPrompt(crawl_id=asked.crawl_id, prompt=report.fix_prompt)


def list_pages(asked: ListPages, caller: Caller, *, uow: UnitOfWork, crawl: CrawlStore) -> PageList:
    """With extraction rules (docs/extraction.md) each row carries every rule's values, and
    `extract_rule` (with `extract_value`) keeps the pages where that rule read a value (exactly that one)."""
    if asked.extract_value is not None and asked.extract_rule is None:
        raise ValidationFailed({"extract_value": "give extract_rule too: the rule whose value it is"})
    match = None if asked.extract_rule is None else ExtractMatch(asked.extract_rule, asked.extract_value)
    with uow:
        audit = uow.audits.get(asked.crawl_id, team=caller.team_id)
    if audit.archived_at is not None:
        raise report_services.CrawlArchived(asked.crawl_id)
    if match is not None and (bad := filter_errors(match, audit.extract)):
        raise ValidationFailed(bad)
    query = copy_named(
        PageQuery, asked, extract=match, offset=(asked.page - 1) * asked.per_page, limit=asked.per_page
    )
    rows, total = crawl.list_pages(asked.crawl_id, query)
    if audit.extract:
        rows = [evolve(row, extracted=every_rule(row.extracted, audit.extract)) for row in rows]
    meta = ListMeta.of(page=asked.page, per_page=asked.per_page, total=total)
    return PageList(data=tuple(Page.of(row) for row in rows), meta=meta)


def list_issues(asked: ListIssues, caller: Caller, *, uow: UnitOfWork, crawl: CrawlStore) -> IssueList:
    query = copy_named(
        IssueQuery,
        asked,
        check_code=asked.check or asked.check_code,
        offset=(asked.page - 1) * asked.per_page,
        limit=asked.per_page,
    )
    rows, total = report_services.issues(asked.crawl_id, caller, query, uow=uow, crawl=crawl)
    if asked.check and asked.check_code and asked.check != asked.check_code:
        # Both filter the same field and filters combine: two different codes match no issue.
        rows, total = [], 0
    meta = ListMeta.of(page=asked.page, per_page=asked.per_page, total=total)
    return IssueList(data=tuple(Issue.of(row) for row in rows), meta=meta)
