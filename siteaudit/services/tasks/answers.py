"""The results of the fix-task and recheck use cases: what every door shows, one attrs class per answer.

REST answers `converter.unstructure(result)`, the HTTP client reads it back with `converter.structure`, and
the OpenAPI components are generated from these classes. They are values over the domain's records with
what a caller needs computed (the check's title, why and fix, the acceptance, the credits), built here."""

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final

from attrs import frozen

from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.credit import as_number, credits
from siteaudit.domain.issue import CheckScope, CheckSpec, Severity
from siteaudit.domain.recheck import Recheck as RecheckRecord
from siteaudit.domain.recheck import RecheckStatus, TaskOutcome, UrlOutcome
from siteaudit.domain.task import CLICK_WEIGHT, SEVERITY_WEIGHT, Acceptance, FixedBy, TaskStatus
from siteaudit.domain.task import FixTask as TaskRecord
from siteaudit.ports.usecases import copy_named

IMPACT_FORMULA: Final = (
    "impact = severity weight × (pages + "
    f"{CLICK_WEIGHT} × clicks_28d), severity weight "
    + ", ".join(f"{s.value} {w}" for s, w in SEVERITY_WEIGHT.items())
    + "; clicks_28d counts 0 without search-console data (has_traffic_data false), so tasks then rank by "
    "severity and pages alone"
)


@frozen
class FixTask:
    """A fix task: one check on one URL template of the site's latest full audit. `fixed_by`
    (`recheck` or `audit`) and `fixed_at` say what showed it fixed, null unless fixed."""

    id: str
    code: str
    template: str
    severity: Severity
    pages: int
    clicks_28d: int | None
    impressions_28d: int | None
    impact: int
    title: str
    why: str
    fix: str
    sample_urls: tuple[str, ...]
    acceptance: Acceptance
    recheckable: bool
    status: TaskStatus
    fixed_by: FixedBy | None
    fixed_at: datetime | None


@frozen
class TeamFixTask(FixTask):
    """One of the team's top tasks, with its site."""

    site_id: int
    site_host: str


@frozen
class SiteTaskList:
    """`GET /sites/{id}/tasks`: `crawl_id` is the full audit the tasks come from (null before one)."""

    site_id: int
    crawl_id: int | None
    has_traffic_data: bool
    total: int
    open_total: int
    tasks: tuple[FixTask, ...]


@frozen
class TeamTaskList:
    """`GET /tasks`: the team's top tasks across its sites, never fixed ones."""

    tasks: tuple[TeamFixTask, ...]


@frozen
class TaskUrl:
    """A task URL row; `details` is what the audit saw there (`occurrences` when several)."""

    url: str
    clicks_28d: int | None
    impressions_28d: int | None
    details: Mapping[str, Any]


@frozen
class TaskUrlPage:
    data: tuple[TaskUrl, ...]
    page: int
    per_page: int
    total: int


@frozen
class TaskWithUrls:
    """`GET /sites/{id}/tasks/{key}`: the task and a page of 100 of its URLs."""

    task: FixTask
    urls: TaskUrlPage


@frozen
class RecheckTaskRef:
    """A task a new recheck covers, with its status now (`verifying` when the recheck decides it)."""

    task_key: str
    code: str
    template: str
    status: TaskStatus


@frozen
class RecheckStarted:
    """`POST /sites/{id}/recheck` (202)."""

    recheck_id: int
    status: RecheckStatus
    urls_total: int
    estimated_credits: float
    sampled: bool
    tasks: tuple[RecheckTaskRef, ...]


# The domain's outcomes as they are, under the schema names the answers have always had.
@frozen
class RecheckUrl(UrlOutcome):
    """One URL of a recheck (its `urls[]`): `issues` the judged checks still failing, `new_issues` those failing only now."""


@frozen
class RecheckTask(TaskOutcome):
    """One task of a recheck (its `tasks[]`); `status` is the task's status after the recheck."""


@frozen
class Recheck:
    """`GET /rechecks/{id}`. `urls` and `tasks` are filled once the recheck ended (done,
    failed or cancelled), empty before; `parent_crawl_id` is null when the site had no audit."""

    recheck_id: int
    site_id: int
    status: RecheckStatus
    parent_crawl_id: int | None
    urls_total: int
    pages_crawled: int
    sampled: bool
    created_at: datetime
    finished_at: datetime | None
    time_capped: bool
    duplicate_baseline: bool
    failure_reason: str | None
    urls: tuple[RecheckUrl, ...]
    tasks: tuple[RecheckTask, ...]


def _spec(code: str, severity: Severity) -> CheckSpec:
    found = CATALOGUE.get(code)
    if found is not None:
        return found
    return CheckSpec(code, severity, CheckScope.SEARCH_ENGINE, code, "", "")


def _task_fields(task: TaskRecord) -> dict[str, Any]:
    """What a task shows besides the record's fields of the same names: its id, its check's texts, its
    acceptance, and when it was fixed only once fixed."""
    spec = _spec(task.code, task.severity)
    return {
        "id": task.key,
        "impact": task.impact,
        "title": spec.title,
        "why": spec.why,
        "fix": spec.fix,
        "acceptance": task.acceptance(spec),
        "recheckable": spec.recheckable,
        "fixed_by": task.fixed_by if task.status is TaskStatus.FIXED else None,
        "fixed_at": task.fixed_at if task.status is TaskStatus.FIXED else None,
    }


def fix_task(task: TaskRecord) -> FixTask:
    return copy_named(FixTask, task, **_task_fields(task))


def team_fix_task(task: TaskRecord, site_host: str) -> TeamFixTask:
    return copy_named(TeamFixTask, task, **_task_fields(task), site_host=site_host)


def recheck_started(recheck: RecheckRecord, tasks: Iterable[TaskRecord]) -> RecheckStarted:
    return RecheckStarted(
        recheck_id=recheck.id,
        status=recheck.status,
        urls_total=recheck.urls_total,
        estimated_credits=as_number(credits(recheck.estimated_credits)),
        sampled=recheck.sampled,
        tasks=tuple(
            RecheckTaskRef(task_key=t.key, code=t.code, template=t.template, status=t.status) for t in tasks
        ),
    )


def recheck(found: RecheckRecord) -> Recheck:
    return copy_named(
        Recheck,
        found,
        recheck_id=found.id,
        parent_crawl_id=found.parent_audit_id or None,
        urls_total=found.urls_total,
        pages_crawled=found.pages_crawled,
        urls=tuple(copy_named(RecheckUrl, u) for u in found.url_results or ()),
        tasks=tuple(copy_named(RecheckTask, t) for t in found.task_results or ()),
    )
