"""Domain values as the interface shows them (SPEC 2.3): explicit fields, one cattrs converter."""

from datetime import datetime
from enum import Enum
from typing import Any

import cattrs

from siteaudit.domain.audit import Audit
from siteaudit.domain.credit import as_number
from siteaudit.domain.issue import Issue
from siteaudit.ports.application import AccountView
from siteaudit.ports.crawl import PageSummary

converter = cattrs.Converter()
converter.register_unstructure_hook(datetime, lambda moment: moment.isoformat().replace("+00:00", "Z"))
converter.register_unstructure_hook(Enum, lambda member: member.value)


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else converter.unstructure(moment, datetime)


def account_view(view: AccountView) -> dict[str, Any]:
    return {
        "balance": as_number(view.balance),
        "team_id": view.team_id,
        "team_credits": as_number(view.team_credits),
        "crawls_total": view.crawls_total,
        "credits_spent_30d": as_number(view.credits_spent_30d),
        "team_credits_spent_30d": as_number(view.team_credits_spent_30d),
        "api_key_prefix": view.api_key_prefix,
    }


def audit_row(audit: Audit) -> dict[str, Any]:
    return {
        "crawl_id": audit.id,
        "site_id": audit.site_id,
        "site_url": audit.url,
        "status": audit.status.value,
        "trigger": audit.trigger.value,
        "health_score": audit.health_score,
        "pages_crawled": audit.pages_crawled,
        "max_pages": audit.max_pages,
        "created_at": _time(audit.created_at),
        "finished_at": _time(audit.finished_at),
        "archived_at": _time(audit.archived_at),
    }


def audit_detail(audit: Audit, *, now: datetime) -> dict[str, Any]:
    duration = audit.duration_until(now)
    per_minute = None
    if duration is not None and duration > 0:
        per_minute = round(audit.pages_crawled / (duration / 60), 1)
    return {
        "crawl_id": audit.id,
        "site_id": audit.site_id,
        "site_url": audit.url,
        "trigger": audit.trigger.value,
        "status": audit.status.value,
        "pages_crawled": audit.pages_crawled,
        "max_pages": audit.max_pages,
        "credits_reserved": as_number(audit.credits_reserved),
        "created_at": _time(audit.created_at),
        "started_at": _time(audit.started_at),
        "finished_at": _time(audit.finished_at),
        "archived_at": _time(audit.archived_at),
        "failure_reason": audit.failure_reason,
        "verify_token_set": audit.verify_token_set,
        "max_rps": audit.max_rps,
        "concurrency": audit.concurrency,
        "duration_s": None if duration is None else round(duration, 1),
        "pages_per_minute": per_minute,
    }


def issue_row(issue: Issue) -> dict[str, Any]:
    return {
        "check_code": issue.check_code,
        "severity": issue.severity.value,
        "url": issue.url,
        "template": issue.template,
        "details": dict(issue.details),
    }


def page_row(page: PageSummary) -> dict[str, Any]:
    return {
        "url": page.url,
        "status_code": page.status_code,
        "title": page.title,
        "meta_description": page.meta_description,
        "word_count": page.word_count,
        "depth": page.depth,
        "blocked_by": page.blocked_by,
        "fetch_error": None if page.fetch_error is None else page.fetch_error.value,
    }
