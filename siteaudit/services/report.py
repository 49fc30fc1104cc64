"""Reading an audit's results: the stored report and its parts, the paginated issue rows and the exports
(an audit's page rows are the declared ListPages', `services/audits/`)."""

from collections.abc import Iterator, Sequence

from attrs import evolve

from siteaudit.domain.account import Caller
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.extraction import every_rule
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue
from siteaudit.domain.report import Report
from siteaudit.ports.application import AuditDetail, AuditProgress, ExportKind, ExportRow
from siteaudit.ports.crawl import CrawlStore, FrontierState, IssueQuery
from siteaudit.ports.repository import UnitOfWork


class ReportNotReady(DomainError):
    code = ErrorCode.REPORT_NOT_READY

    def __init__(self, audit_id: AuditId) -> None:
        super().__init__(
            f"the report of audit {audit_id} is not ready yet; it appears a few seconds after done"
        )


class CrawlArchived(DomainError):
    code = ErrorCode.CRAWL_ARCHIVED

    def __init__(self, audit_id: AuditId) -> None:
        super().__init__(
            f"the issue and page detail of audit {audit_id} was archived; its report, diff and fix prompt remain"
        )


def report(audit_id: AuditId, caller: Caller, *, uow: UnitOfWork, crawl: CrawlStore) -> Report:
    """The stored report. Raises NotFound (another team's or unknown audit) or ReportNotReady."""
    with uow:
        uow.audits.get(audit_id, team=caller.team_id)
    stored = crawl.report(audit_id)
    if stored is None:
        raise ReportNotReady(audit_id)
    return stored


def issues(
    audit_id: AuditId,
    caller: Caller,
    query: IssueQuery,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
) -> tuple[Sequence[Issue], int]:
    with uow:
        audit = uow.audits.get(audit_id, team=caller.team_id)
    if audit.archived_at is not None:
        raise CrawlArchived(audit_id)
    return crawl.list_issues(audit_id, query)


def export_rows(
    audit_id: AuditId, kind: ExportKind, caller: Caller, *, uow: UnitOfWork, crawl: CrawlStore
) -> Iterator[ExportRow]:
    """The audit's rows of `kind` as the crawl store streams them; the audit's team and archival are
    checked first, so a refusal is raised here and not halfway through a download."""
    with uow:
        audit = uow.audits.get(audit_id, team=caller.team_id)
    if audit.archived_at is not None:
        raise CrawlArchived(audit_id)
    if kind is ExportKind.PAGES:
        rules = audit.extract
        if rules:  # every row with every rule, so the export's columns are the first row's
            return (
                evolve(row, extracted=every_rule(row.extracted, rules))
                for row in crawl.stream_page_rows(audit_id)
            )
        return crawl.stream_page_rows(audit_id)
    if kind is ExportKind.ISSUES:
        return (issue for _, issue in crawl.stream_issues(audit_id))
    return crawl.stream_link_lines(audit_id)


def audit_progress(detail: AuditDetail, *, crawl: CrawlStore) -> AuditProgress:
    """The audit's detail (its team already checked) and the URLs its frontier holds queued."""
    if detail.audit.status.ended:
        return AuditProgress(detail, queued=0)
    return AuditProgress(detail, queued=crawl.frontier_counts(detail.audit.id).get(FrontierState.QUEUED, 0))
