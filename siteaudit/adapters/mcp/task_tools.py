"""The run functions and summaries of the fix-task and recheck tools (SPEC 2.7, 2.8, 4.5, 4.6), declared in
`tools.TOOLS`: each renders its answer with the REST view."""

import time
from typing import TYPE_CHECKING, Any, Final

from siteaudit.adapters.rest.task_views import (
    recheck_answer,
    recheck_started_answer,
    site_tasks_answer,
    task_detail_answer,
    team_tasks_answer,
)
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.ids import RecheckId, SiteId
from siteaudit.ports.application import RecheckRequest

if TYPE_CHECKING:
    from siteaudit.adapters.mcp.tools import Call

URLS_PER_PAGE: Final = 100  # GET /sites/{id}/tasks/{key} pages its URLs by 100

RECHECK_TEXT: Final = (
    "A recheck fetches only the given URLs again (no crawl) and judges the task's check there: "
    "COSTS CREDITS, 1 credit per URL fetched (reserved on the team owner when accepted, URLs not fetched "
    "refunded); at most 30 rechecks an hour per team."
)


def _site_id(call: "Call") -> SiteId:
    return SiteId(int(call.args["site_id"]))


def _recheck_id(call: "Call") -> RecheckId:
    return RecheckId(int(call.args["recheck_id"]))


def site_tasks(call: "Call") -> dict[str, Any]:
    found = call.application.site_tasks(_site_id(call), call.caller, limit=int(call.args["limit"]))
    return site_tasks_answer(found)


def team_tasks(call: "Call") -> dict[str, Any]:
    return team_tasks_answer(call.application.team_tasks(call.caller, limit=int(call.args["limit"])))


def task_detail(call: "Call") -> dict[str, Any]:
    a = call.args
    detail = call.application.task_detail(_site_id(call), a["task_key"], call.caller, page=int(a["page"]))
    return task_detail_answer(detail, per_page=URLS_PER_PAGE)


def request_recheck(call: "Call") -> dict[str, Any]:
    key, urls = call.args["task_key"], call.args["urls"]
    if (key is None) == (urls is None):
        problem = "give exactly one of task_key and urls"
        raise ValidationFailed({"task_key": problem, "urls": problem})
    request = RecheckRequest(site_id=_site_id(call), task_key=key, urls=None if urls is None else tuple(urls))
    return recheck_started_answer(call.application.request_recheck(request, call.caller))


def get_recheck(call: "Call") -> dict[str, Any]:
    return recheck_answer(call.application.get_recheck(_recheck_id(call), call.caller))


def cancel_recheck(call: "Call") -> dict[str, Any]:
    return recheck_answer(call.application.cancel_recheck(_recheck_id(call), call.caller))


ENDED: Final = ("done", "failed", "cancelled")


def wait_for_recheck(call: "Call") -> dict[str, Any]:
    deadline = time.monotonic() + float(call.args["timeout_s"])
    while True:
        answer = get_recheck(call)
        call.progress(
            answer["pages_crawled"],
            answer["urls_total"],
            f"{answer['status']}: {answer['pages_crawled']} of {answer['urls_total']} URLs fetched",
        )
        if answer["status"] in ENDED or time.monotonic() >= deadline:
            return answer
        call.sleep(min(call.poll_s, max(0.0, deadline - time.monotonic())))


def _task_line(task: dict[str, Any]) -> str:
    where = f" on {task['site_host']}" if "site_host" in task else ""
    return (
        f"- {task['title']} [{task['severity']}, {task['status']}]{where}: {task['pages']} pages, "
        f"template {task['template'] or '(none)'}, impact {task['impact']} (task_key {task['id']})"
    )


def site_tasks_text(a: dict[str, Any]) -> str:
    if a["crawl_id"] is None:
        return f"Site {a['site_id']} has no full audit yet: call start_site_audit, then list_site_tasks."
    lines = "\n".join(_task_line(t) for t in a["tasks"])
    return (
        f"Site {a['site_id']}: {a['open_total']} open of {a['total']} tasks from audit {a['crawl_id']}, "
        f"by impact:\n{lines or '(none)'}\nCall get_task with a task_key for its fix and URLs; after the fix "
        "is deployed, request_recheck with that task_key."
    )


def team_tasks_text(a: dict[str, Any]) -> str:
    lines = "\n".join(_task_line(t) for t in a["tasks"])
    return (
        f"The team's top {len(a['tasks'])} open tasks:\n{lines or '(none)'}\nCall get_task with the site_id "
        "and task_key for its fix and URLs."
    )


def task_text(a: dict[str, Any]) -> str:
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


def recheck_started_text(a: dict[str, Any]) -> str:
    return (
        f"Recheck {a['recheck_id']} {a['status']}: {a['urls_total']} URLs, {a['estimated_credits']:g} "
        f"credits reserved{' (a sample of the task URLs)' if a['sampled'] else ''}; "
        f"{len(a['tasks'])} tasks verifying. Call wait_for_recheck with recheck_id {a['recheck_id']}."
    )


def recheck_text(a: dict[str, Any]) -> str:
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
