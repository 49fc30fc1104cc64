"""The fix-task and recheck use cases (docs/rest-api.md "Fix tasks and rechecks"), each declared once: its inputs with their
bounds, its result, and how `/v1` and the tools offer it. Every door is derived from these
(docs/architecture.md, "Adding a use case"); the handlers are in `task.py` and `recheck.py`."""

from typing import Final

from attrs import field, frozen

from siteaudit.domain.error import ErrorCode
from siteaudit.domain.ids import MAX_ID, RecheckId, SiteId
from siteaudit.domain.recheck import MAX_RECHECK_URLS
from siteaudit.ports.usecases import (
    BODY_ERRORS,
    CANCEL_ERRORS,
    DESTRUCTIVE,
    QUERY_ERRORS,
    SITE_ID,
    STARTS_WORK,
    Bounds,
    Http,
    Tool,
    UseCase,
    Wait,
    body,
    how_many,
    lookup,
    page_of,
    path,
    url_list,
)
from siteaudit.services.tasks import doors
from siteaudit.services.tasks.answers import (
    IMPACT_FORMULA,
    Recheck,
    RecheckStarted,
    SiteTaskList,
    TaskWithUrls,
    TeamTaskList,
)

RECHECK_ID: Final = path("Recheck id (from request_recheck).", low=1, high=MAX_ID)
TASK_KEY_PATTERN: Final = "^[0-9a-fA-F]{16}$"
# A task's key wherever it is read (a task's path, a recheck's body).
TASK_KEY: Final[Bounds] = {"min_length": 1, "max_length": 64, "pattern": TASK_KEY_PATTERN}
URLS_PER_PAGE: Final = 100

TASKS_NOTE: Final = (
    "Tasks come from the site's latest full audit (ended done; a partial one, stopped at its page or time "
    "cap, cannot show an issue gone): one per check code per URL template, with a stable 16-hex id. "
    "Ranked by "
    + IMPACT_FORMULA
    + ". Status: open; verifying while a recheck deciding it runs; fixed (fixed_by recheck, or audit when "
    "a later complete audit no longer finds it); regressed when a later full audit finds a fixed task again."
)


@frozen
class ListTeamTasks(UseCase[TeamTaskList]):
    """The team's top tasks across its sites, never fixed ones."""

    limit: int = field(default=3, metadata=how_many("tasks", 20))

    http = Http(
        "GET",
        "/v1/tasks",
        "listTeamTasks",
        "The team's top fix tasks across its sites (never fixed ones)",
        errors=QUERY_ERRORS,
        description=TASKS_NOTE,
    )
    tool = Tool(
        "list_team_tasks",
        "The team's top fix tasks",
        "The team's top open fix tasks across its sites. Then get_task.",
        doors.team_tasks_text,
        untrusted=True,
        lists=("tasks",),
    )


@frozen
class ListSiteTasks(UseCase[SiteTaskList]):
    """A site's tasks in impact order; with `limit` <= 3 fixed tasks are left out and one task per check
    code is shown."""

    site_id: SiteId = field(metadata=SITE_ID)
    limit: int = field(
        default=10,
        metadata=how_many("tasks; 3 or fewer leaves fixed tasks out, one task a check", 100),
    )

    http = lookup(
        "/v1/sites/{site_id}/tasks",
        "listSiteTasks",
        "A site's fix tasks; with limit <= 3 fixed tasks are left out, one task per check code",
        description=TASKS_NOTE,
    )
    tool = Tool(
        "list_site_tasks",
        "A site's fix tasks",
        "A site's fix tasks, highest impact first: a check failing on a URL template, why, how to fix, "
        "status. Then get_task.",
        doors.site_tasks_text,
        untrusted=True,
        lists=("tasks",),
    )


@frozen
class GetTask(UseCase[TaskWithUrls]):
    """One task and a page of 100 of its URLs. Raises NotFound for an unknown key, ValidationFailed for
    a malformed one."""

    site_id: SiteId = field(metadata=SITE_ID)
    task_key: str = field(metadata=path("Task id (from list_site_tasks).", **TASK_KEY))
    page: int = field(default=1, metadata=page_of("the task's URLs"))

    http = lookup(
        "/v1/sites/{site_id}/tasks/{task_key}",
        "getSiteTask",
        "One fix task with its URLs, 100 a page",
    )
    tool = Tool(
        "get_task",
        "One fix task and its URLs",
        "One fix task and its URLs (100 a page). Once the fix is deployed: request_recheck.",
        doors.task_text,
        untrusted=True,
    )


@frozen
class RequestRecheck(UseCase[RecheckStarted]):
    """Accept and dispatch a recheck, 1 credit per URL reserved on the team owner. Raises
    InsufficientCredits (402, no slot used), RecheckRateLimited (429, 30 an hour per team),
    InvalidTransition (409: a task is already verifying), InvalidUrls, NotFound, RecheckDispatchFailed."""

    site_id: SiteId = field(metadata=SITE_ID)
    task_key: str | None = field(
        default=None,
        metadata=body("A task's key (list_site_tasks): recheck its URLs.", **TASK_KEY),
    )
    urls: tuple[str, ...] | None = field(
        default=None,
        metadata=url_list(
            "Or URLs of the site, rechecked for every check.",
            MAX_RECHECK_URLS,
            doc=f"1-{MAX_RECHECK_URLS} URLs on the site's host (else 422 invalid_urls)",
        ),
    )
    exactly_one_of = ("task_key", "urls")

    http = Http(
        "POST",
        "/v1/sites/{site_id}/recheck",
        "recheckSite",
        f"Recheck a task's URLs ({MAX_RECHECK_URLS} sampled above {MAX_RECHECK_URLS}, most clicks first) "
        f"or 1-{MAX_RECHECK_URLS} URLs of the site; 1 credit per URL fetched, charged to the team owner; "
        "30 rechecks an hour per team",
        errors=(
            ErrorCode.INSUFFICIENT_CREDITS,
            ErrorCode.NOT_FOUND,
            ErrorCode.CONFLICT,
            ErrorCode.SITE_NOT_VERIFIED,
            ErrorCode.CANNOT_VERIFY,
            ErrorCode.INVALID_URLS,
            ErrorCode.RECHECK_RATE_LIMITED,
            *BODY_ERRORS,
            ErrorCode.DISPATCH_FAILED,
        ),
        status=202,
        examples=({"task_key": "0123456789abcdef"}, {"urls": ["https://retro-clock.example/"]}),
    )
    tool = Tool(
        "request_recheck",
        "Recheck fixed URLs",
        "Check a deployed fix: a task_key or urls. "
        + doors.RECHECK_TEXT
        + " conflict, invalid_urls. Then wait_for_recheck.",
        doors.recheck_started_text,
        **STARTS_WORK,
    )


@frozen
class GetRecheck(UseCase[Recheck]):
    """A recheck of the caller's team. Raises NotFound for an unknown recheck or another team's."""

    recheck_id: RecheckId = field(metadata=RECHECK_ID)

    http = lookup(
        "/v1/rechecks/{recheck_id}",
        "getRecheck",
        "A recheck and, once it ended, its results per URL and per task",
    )
    tool = Tool(
        "get_recheck",
        "Recheck status and result",
        "A recheck's status and each URL's and task's result. To wait: wait_for_recheck.",
        doors.recheck_text,
        untrusted=True,
        lists=("urls", "tasks"),
        waits=(
            Wait(
                "wait_for_recheck",
                "Wait for a recheck",
                "Wait up to timeout_s for a recheck to end, with progress.",
                ended=doors.recheck_ended,
                progress=doors.recheck_progress,
                summary=doors.recheck_text,
            ),
        ),
    )


@frozen
class CancelRecheck(UseCase[Recheck]):
    """End a queued or running recheck `cancelled` (URLs fetched so far are charged and judged, the rest
    refunded). Raises NotFound, or Conflict once it ended."""

    recheck_id: RecheckId = field(metadata=RECHECK_ID)

    http = Http(
        "DELETE",
        "/v1/rechecks/{recheck_id}",
        "cancelRecheck",
        "Cancel a queued or running recheck (what it fetched is charged and judged, the rest refunded)",
        errors=CANCEL_ERRORS,
    )
    tool = Tool(
        "cancel_recheck",
        "Cancel a recheck",
        "Stop a recheck; what it fetched is charged, the rest refunded. conflict if it ended.",
        doors.recheck_text,
        **DESTRUCTIVE,
        untrusted=True,
        lists=("urls", "tasks"),
    )


# In the order the doors list them (the tool list, the remote CLI's commands).
USE_CASES: Final = (ListSiteTasks, ListTeamTasks, GetTask, RequestRecheck, GetRecheck, CancelRecheck)
