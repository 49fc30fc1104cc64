"""What the audit use cases say at the doors beyond their answers: the summaries a tool's caller reads
first (each says what to call next), and the progress of the door-own `wait_for_audit`. They read the
answer as every door shows it (its JSON)."""

from collections.abc import Callable, Mapping
from typing import Any

from siteaudit.domain.audit import AuditStatus

A = Mapping[str, Any]


def listed(noun: str, next_step: str) -> Callable[[A], str]:
    """The summary of one page of a list: how many of how many, which page, and what to call next."""

    def summary(a: A) -> str:
        meta = a["meta"]
        return (
            f"{len(a['data'])} of {meta['total']} {noun} (page {meta['current_page']} of "
            f"{meta['last_page']}). {next_step}"
        )

    return summary


def audit_ended(a: A) -> bool:
    return AuditStatus(a["status"]).ended


def audit_progress(a: A) -> tuple[float, float | None, str]:
    rate = a["pages_per_minute"]
    return (
        a["pages_crawled"],
        a["max_pages"],
        f"{a['status']}: {a['pages_crawled']} of at most {a['max_pages']} pages"
        + (f", {rate:g} pages/min" if rate else ""),
    )


def audit_text(a: A) -> str:
    status, crawl_id = a["status"], a["crawl_id"]
    if status == "done":
        return f"Audit {crawl_id} is done ({a['pages_crawled']} pages). Call get_report or get_fix_prompt."
    if status in ("failed", "cancelled"):
        return f"Audit {crawl_id} ended {status}: {a['failure_reason']}."
    return (
        f"Audit {crawl_id} is still {status} ({a['pages_crawled']} pages so far). "
        "Call wait_for_audit again to keep waiting."
    )


def cancelled_text(a: A) -> str:
    return "The audit is cancelled; unused credits are refunded."


def report_text(a: A) -> str:
    counts = a["issue_counts"]
    top = ", ".join(f"{i['check_code']} ({i['count']})" for i in a["issues"][:5])
    score = a["health_score"]
    warning = a["coverage_warning"]
    scored = (
        f"health score {score}/100"
        if score is not None
        else f"no health score ({warning['code'] if warning else 'no_html_pages'}: no HTML page could be "
        "audited; see coverage_warning)"
    )
    return (
        f"Audit {a['crawl_id']}: {scored}, "
        f"{a['totals']['pages']} pages, {counts['error']} errors, {counts['warning']} warnings, "
        f"{counts['notice']} notices{'; partial' if a['partial'] else ''}. Top checks: {top or 'none'}. "
        "Call get_fix_prompt for instructions to fix them, list_issues for the URLs."
    )


def templates_text(a: A) -> str:
    return f"{len(a['templates'])} URL templates. Call list_issues with template to see URLs."


def diff_text(a: A) -> str:
    diff = a["diff"]
    if diff is None:
        return "First audit of this site: nothing to compare."
    health = (
        f"Health {diff['health_delta']:+d}: "
        if diff["health_delta"] is not None
        else "Health change unknown (an audit without a score): "
    )
    return health + f"{diff['new']} new, {diff['fixed']} fixed issues."


def fix_prompt_text(a: A) -> str:
    return f"Fix prompt for audit {a['crawl_id']} ({len(a['prompt'])} characters)."
