"""What the fix-task and recheck use cases say at the doors beyond their answers: the summaries a tool's
caller reads first (each says what to call next), and the progress of the door-own `wait_for_recheck`.
They read the answer as every door shows it (its JSON)."""

from collections.abc import Mapping
from typing import Any, Final

RECHECK_TEXT: Final = "COSTS CREDITS (team owner's): 1 a URL fetched again, the rest refunded; 30 an hour."
ENDED: Final = ("done", "failed", "cancelled")

A = Mapping[str, Any]


def recheck_ended(a: A) -> bool:
    return a["status"] in ENDED


def recheck_progress(a: A) -> tuple[float, float | None, str]:
    return (
        a["pages_crawled"],
        a["urls_total"],
        f"{a['status']}: {a['pages_crawled']} of {a['urls_total']} URLs fetched",
    )


def _task_line(task: A) -> str:
    where = f" on {task['site_host']}" if "site_host" in task else ""
    return (
        f"- {task['title']} [{task['severity']}, {task['status']}]{where}: {task['pages']} pages, "
        f"template {task['template'] or '(none)'}, impact {task['impact']} (task_key {task['id']})"
    )


def site_tasks_text(a: A) -> str:
    if a["crawl_id"] is None:
        return f"Site {a['site_id']} has no full audit yet: call start_site_audit, then list_site_tasks."
    lines = "\n".join(_task_line(t) for t in a["tasks"])
    return (
        f"Site {a['site_id']}: {a['open_total']} open of {a['total']} tasks from audit {a['crawl_id']}, "
        f"by impact:\n{lines or '(none)'}\nCall get_task with a task_key for its fix and URLs; after the fix "
        "is deployed, request_recheck with that task_key."
    )


def team_tasks_text(a: A) -> str:
    lines = "\n".join(_task_line(t) for t in a["tasks"])
    return (
        f"The team's top {len(a['tasks'])} open tasks:\n{lines or '(none)'}\nCall get_task with the site_id "
        "and task_key for its fix and URLs."
    )


def task_text(a: A) -> str:
    t, urls = a["task"], a["urls"]
    return (
        f"{t['title']} ({t['status']}): {t['pages']} pages of template {t['template'] or '(none)'}; "
        f"{len(urls['data'])} of {urls['total']} URLs (page {urls['page']}). Fix: {t['fix']} Done when: "
        f"{t['acceptance']['text']} "
        + (
            "After deploying the fix, call request_recheck with this task_key."
            if t["recheckable"]
            else "This check is not rechecked by URL: the next site audit decides it."
        )
    )


def recheck_started_text(a: A) -> str:
    return (
        f"Recheck {a['recheck_id']} {a['status']}: {a['urls_total']} URLs, {a['estimated_credits']:g} "
        f"credits reserved{' (a sample of the task URLs)' if a['sampled'] else ''}; "
        f"{len(a['tasks'])} tasks verifying. Call wait_for_recheck with recheck_id {a['recheck_id']}."
    )


def recheck_text(a: A) -> str:
    status = a["status"]
    if status not in ENDED:
        return (
            f"Recheck {a['recheck_id']} is {status}: {a['pages_crawled']} of {a['urls_total']} URLs "
            "fetched. Call wait_for_recheck to keep waiting."
        )
    results = ", ".join(f"{t['code']} {t['result']} (task {t['status']})" for t in a["tasks"])
    failure = f" ({a['failure_reason']})" if a["failure_reason"] else ""
    return (
        f"Recheck {a['recheck_id']} ended {status}{failure}: {a['pages_crawled']} of {a['urls_total']} "
        f"URLs fetched; {results or 'no task judged'}."
    )
