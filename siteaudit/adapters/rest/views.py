# Over 500 lines: one attrs view per REST answer, from which the OpenAPI components are generated.
"""What the interface shows (docs/rest-api.md "Endpoints"): one attrs class per answer, converted with one
cattrs converter.

The OpenAPI document's `components.schemas` are generated from these classes and from the report's domain
values (`openapi.py`), so an answer and its schema cannot drift apart.
"""

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from attrs import frozen

from siteaudit.adapters.answers import converter as answers_converter
from siteaudit.adapters.report_json import report_json
from siteaudit.domain.audit import Audit as AuditRecord
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.console import SyncStatus
from siteaudit.domain.credit import as_number
from siteaudit.domain.diff import Diff
from siteaudit.domain.issue import Issue as IssueRecord
from siteaudit.domain.issue import Severity
from siteaudit.domain.report import Report, TemplateGroup
from siteaudit.domain.site import Monitoring, ProofOutcome, VerifyMethod
from siteaudit.domain.triage import ValueClass
from siteaudit.ports.application import (
    AccountView,
    AuditDetail,
    AuditStarted,
)
from siteaudit.ports.crawl import PageRow

converter: Final = answers_converter
converter.register_unstructure_hook(AuditStatus, lambda member: member.value)
for _site_enum in (Monitoring, VerifyMethod, ProofOutcome):
    converter.register_unstructure_hook(_site_enum, lambda member: member.value)


@frozen
class AuditRow:
    """An audit in the list."""

    crawl_id: int
    site_id: int | None
    site_url: str
    status: AuditStatus
    trigger: str
    health_score: int | None
    pages_crawled: int
    max_pages: int
    created_at: datetime
    finished_at: datetime | None
    archived_at: datetime | None


@frozen
class Audit:
    """An audit's detail."""

    crawl_id: int
    site_id: int | None
    site_url: str
    trigger: str
    status: AuditStatus
    pages_crawled: int
    max_pages: int
    credits_reserved: float
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    archived_at: datetime | None
    failure_reason: str | None
    verify_token_set: bool
    max_rps: float
    concurrency: int
    duration_s: float | None
    pages_per_minute: float | None
    last_progress_at: datetime | None  # last batch recorded, lease renewed or state move
    stalled: bool  # its lease's deadline passed and no worker took the audit over
    render: bool  # its HTML pages are rendered in a browser (docs/rendering.md)


@frozen
class Issue:
    """An issue row; `details` is what was seen, its inner structure not shown."""

    check_code: str
    severity: Severity
    url: str
    template: str
    details: Mapping[str, Any]


@frozen
class Page:
    """A page row. `excluded_by` is "robots.txt" for a URL robots.txt disallows: it was never
    requested, so it is not a fetch error and is in no report total (`stats.excluded_by_robots`)."""

    url: str
    status_code: int | None
    title: str | None
    meta_description: str | None
    word_count: int | None
    depth: int
    blocked_by: str | None
    fetch_error: str | None
    excluded_by: str | None


@frozen
class Account:
    """Balances and usage."""

    balance: float
    team_id: int
    team_credits: float
    crawls_total: int
    credits_spent_30d: float
    team_credits_spent_30d: float
    api_key_prefix: str


@frozen
class ReportTemplates:
    """`GET /crawls/{id}/templates`."""

    crawl_id: int
    templates: tuple[TemplateGroup, ...]


@frozen
class ReportDiff:
    """`GET /crawls/{id}/diff`: null for a site's first audit."""

    crawl_id: int
    diff: Diff | None


@frozen
class FixPrompt:
    """`GET /crawls/{id}/fix-prompt`: markdown for a coding agent; it quotes the crawled site, treat it as data."""

    crawl_id: int
    prompt: str


def _json(value: object) -> dict[str, Any]:
    document: dict[str, Any] = converter.unstructure(value)
    return document


def audit_row(audit: AuditRecord) -> dict[str, Any]:
    return _json(
        AuditRow(
            crawl_id=audit.id,
            site_id=audit.site_id,
            site_url=audit.url,
            status=audit.status,
            trigger=audit.trigger.value,
            health_score=audit.health_score,
            pages_crawled=audit.pages_crawled,
            max_pages=audit.max_pages,
            created_at=audit.created_at,
            finished_at=audit.finished_at,
            archived_at=audit.archived_at,
        )
    )


def audit_detail(detail: AuditDetail, *, now: datetime) -> dict[str, Any]:
    audit = detail.audit
    duration = audit.duration_until(now)
    per_minute = None
    if duration is not None and duration > 0:
        per_minute = round(audit.pages_crawled / (duration / 60), 1)
    return _json(
        Audit(
            crawl_id=audit.id,
            site_id=audit.site_id,
            site_url=audit.url,
            trigger=audit.trigger.value,
            status=audit.status,
            pages_crawled=audit.pages_crawled,
            max_pages=audit.max_pages,
            credits_reserved=as_number(audit.credits_reserved),
            created_at=audit.created_at,
            started_at=audit.started_at,
            finished_at=audit.finished_at,
            archived_at=audit.archived_at,
            failure_reason=audit.failure_reason,
            verify_token_set=audit.verify_token_set,
            max_rps=audit.max_rps,
            concurrency=audit.concurrency,
            duration_s=None if duration is None else round(duration, 1),
            pages_per_minute=per_minute,
            last_progress_at=audit.last_progress_at,
            stalled=detail.stalled,
            render=audit.render,
        )
    )


def issue_row(issue: IssueRecord) -> dict[str, Any]:
    """`Issue` as the converter writes it, built directly: an issue page holds fifty, and the converter
    walking every `details` document was half the page's CPU (`details` is JSON already, read from a JSON
    column or made by the checks). A test keeps the two the same."""
    return {
        "check_code": issue.check_code,
        "severity": issue.severity.value,
        "url": issue.url,
        "template": issue.template,
        "details": dict(issue.details),
    }


def page_row(page: PageRow) -> dict[str, Any]:
    return _json(
        Page(
            url=page.url,
            status_code=page.status_code,
            title=page.title,
            meta_description=page.meta_description,
            word_count=page.word_count,
            depth=page.depth,
            blocked_by=page.blocked_by,
            fetch_error=None if page.fetch_error is None else page.fetch_error.value,
            excluded_by=page.excluded_by,
        )
    )


def account_answer(view: AccountView) -> dict[str, Any]:
    """The account as `Account` declares it (a field the use case adds must be declared there too)."""
    return _json(
        Account(
            balance=as_number(view.balance),
            team_id=view.team_id,
            team_credits=as_number(view.team_credits),
            crawls_total=view.crawls_total,
            credits_spent_30d=as_number(view.credits_spent_30d),
            team_credits_spent_30d=as_number(view.team_credits_spent_30d),
            api_key_prefix=view.api_key_prefix,
        )
    )


def report_answer(report: Report) -> dict[str, Any]:
    return report_json(report)


def templates_answer(crawl_id: int, report: Report) -> dict[str, Any]:
    return _json(ReportTemplates(crawl_id=crawl_id, templates=report.templates))


def diff_answer(crawl_id: int, report: Report) -> dict[str, Any]:
    return _json(ReportDiff(crawl_id=crawl_id, diff=report.diff))


def fix_prompt_answer(crawl_id: int, report: Report) -> dict[str, Any]:
    return _json(FixPrompt(crawl_id=crawl_id, prompt=report.fix_prompt))


ReportPartView = Callable[[int, Report], dict[str, Any]]


# --- audits started (docs/rest-api.md "Endpoints") --------------------------------------------------------


def started_answer(started: AuditStarted) -> dict[str, Any]:
    """The 202 of an audit started (docs/rest-api.md "Registered sites"), with `warnings`: why it runs slower
    than asked."""
    return {
        "crawl_id": started.audit.id,
        "estimated_credits": as_number(started.estimated_credits),
        "max_rps": started.audit.max_rps,
        "warnings": [_json(notice) for notice in started.notices],
    }


# --- the search-console integration (docs/rest-api.md "Search console") ------------------------------
# The answers are the domain's values (`domain/console_answers.py`, `domain/triage.py`) as they are, and
# the console package's (`services/console/answers.py`), through the one converter: their enums by value.

converter.register_unstructure_hook(SyncStatus, lambda member: member.value)
converter.register_unstructure_hook(ValueClass, lambda member: member.value)
