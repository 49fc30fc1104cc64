"""Fix-task use cases: deriving a site's tasks from its latest full audit, and reading them (the handlers
of `usecases.ListSiteTasks`, `ListTeamTasks` and `GetTask`).

A task is one check code on one URL template (docs/rest-api.md "Fix tasks and rechecks"). Tasks are refreshed by every full audit of a
registered site (`siteaudit.domain.task.is_full_audit`: ended `done`), in the transaction that
publishes the report; only a complete one (not stopped at its page or time cap) marks tasks fixed by
no longer finding them.
"""

from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, SiteId, TaskKey
from siteaudit.domain.issue import Issue
from siteaudit.domain.recheck import TaskUrl
from siteaudit.domain.task import (
    FIXED_BY_UNLINKING,
    FixTask,
    TaskEvidence,
    TaskIssues,
    TaskRefresh,
    TaskStatus,
    count_open,
    findings_from_issues,
    is_full_audit,
    order_by_impact,
    parse_task_key,
    proves_absence,
    refresh_tasks,
    top_tasks,
)
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore, IssueQuery
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.traffic import NO_TRAFFIC, TrafficSource
from siteaudit.services.tasks.answers import (
    SiteTaskList,
    TaskUrlPage,
    TaskWithUrls,
    TeamTaskList,
    fix_task,
    team_fix_task,
)
from siteaudit.services.tasks.answers import TaskUrl as TaskUrlRow
from siteaudit.services.tasks.usecases import URLS_PER_PAGE, GetTask, ListSiteTasks, ListTeamTasks
from siteaudit.services.traffic import open_fix_impacts

_CHUNK: Final = 1_000


def refresh_site_tasks(
    audit: Audit,
    issues: TaskIssues,
    *,
    crawled: Container[str],
    uow: UnitOfWork,
    crawl: CrawlStore,
    clock: Clock,
    traffic: TrafficSource = NO_TRAFFIC,
) -> TaskRefresh | None:
    """Inside the transaction that ends the audit: refresh the site's tasks from a full audit's issues
    (new ones open, fixed ones found again regress, and, after a complete audit, those whose URLs were
    audited again without the issue are fixed by the audit). `crawled` holds the URLs the audit crawled.
    None, changing nothing, for an audit that is not full or not of a registered site."""
    if not is_full_audit(audit):
        return None
    assert audit.site_id is not None
    figures = traffic.traffic(audit.site_id, issues.urls())
    before = {t.key: t for t in uow.tasks.of_site(audit.site_id)}
    findings = findings_from_issues(issues, figures)
    refreshed = refresh_tasks(
        before.values(),
        findings,
        site_id=audit.site_id,
        audit_id=audit.id,
        now=clock.now(),
        evidence=task_evidence(before.values(), issues, crawled, uow=uow, crawl=crawl),
        complete=proves_absence(audit),
    )
    for key in refreshed.merged:
        uow.tasks.delete(audit.site_id, key)
    for task in refreshed.tasks:
        uow.tasks.save(task)
    open_fix_impacts(refreshed.events, before, uow=uow)  # fix impact (docs/rest-api.md "Fix impact")
    return refreshed


def task_evidence(
    tasks: Iterable[FixTask],
    issues: TaskIssues,
    crawled: Container[str],
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
) -> dict[TaskKey, TaskEvidence]:
    """What the audit whose `issues` these are saw of each task's URLs (docs/templates.md).

    An unfixed task's URLs are its issue rows in the audit it was last refreshed by, read once in a stream;
    a fixed task's, or any task's whose audit was archived, are its sample URLs. Call inside `with uow:`.
    """
    audited: dict[TaskKey, int] = {}
    still: dict[TaskKey, dict[str, int]] = {}

    def saw(key: TaskKey, code: str, url: str) -> None:
        template = issues.template_of(code, url)  # now
        if template is not None:
            counts = still.setdefault(key, {})
            counts[template] = counts.get(template, 0) + 1
        elif url not in crawled and code not in FIXED_BY_UNLINKING:
            return  # not crawled this time: no evidence either way
        audited[key] = audited.get(key, 0) + 1

    rows: dict[AuditId, dict[tuple[str, str], TaskKey]] = {}
    kept: dict[AuditId, bool] = {}  # whether an audit's issue rows are still there (not archived)
    for task in tasks:
        if task.status is not TaskStatus.FIXED and task.audit_id not in kept:
            kept[task.audit_id] = uow.audits.get_any(task.audit_id).archived_at is None
        if task.status is not TaskStatus.FIXED and kept[task.audit_id]:
            rows.setdefault(task.audit_id, {})[(task.code, task.template)] = task.key
        else:
            for url in task.sample_urls:
                saw(task.key, task.code, url)
    for audit_id, owners in rows.items():
        for line in crawl.stream_issue_lines(audit_id):
            key = owners.get((line.check_code, line.template))
            if key is not None:
                saw(key, line.check_code, line.url)
    return {key: TaskEvidence(audited=audited.get(key, 0), still=still.get(key, {})) for key in audited}


def list_site_tasks(asked: ListSiteTasks, caller: Caller, *, uow: UnitOfWork) -> SiteTaskList:
    with uow:
        site = uow.sites.get(asked.site_id, team=caller.team_id)
        tasks = uow.tasks.of_site(site.id)
    audit_id = max((t.audit_id for t in tasks), default=None)
    return SiteTaskList(
        site_id=site.id,
        crawl_id=None if audit_id is None else AuditId(audit_id),
        has_traffic_data=any(t.clicks_28d is not None for t in tasks),
        total=len(tasks),
        open_total=count_open(tasks),
        tasks=tuple(fix_task(t) for t in top_tasks(tasks, asked.limit)),
    )


def list_team_tasks(asked: ListTeamTasks, caller: Caller, *, uow: UnitOfWork) -> TeamTaskList:
    """The team's unfixed tasks across its sites in impact order, the first `limit`."""
    with uow:
        sites = {s.id: s for s in uow.sites.list(team=caller.team_id)}
        tasks = [
            t for site_id in sites for t in uow.tasks.of_site(site_id) if t.status is not TaskStatus.FIXED
        ]
    chosen = order_by_impact(tasks)[: asked.limit]
    return TeamTaskList(tasks=tuple(team_fix_task(t, sites[t.site_id].host) for t in chosen))


def load_task(site_id: SiteId, raw_key: str, caller: Caller, *, uow: UnitOfWork) -> FixTask:
    """The team's site's task. Raises ValidationFailed for a malformed key, NotFound otherwise."""
    key = parse_task_key(raw_key)
    with uow:
        site = uow.sites.get(site_id, team=caller.team_id)
        return uow.tasks.get(site.id, key)


def affected_urls(task: FixTask, *, uow: UnitOfWork, crawl: CrawlStore) -> dict[str, list[Mapping[str, Any]]]:
    """Every URL of the task in its audit, with the details of each issue there (a link check finds one
    issue per broken target). When the audit's rows were archived, the task's sample URLs are all that
    is left."""
    with uow:
        audit = uow.audits.get_any(task.audit_id)
    return issue_urls(task, archived=audit.archived_at is not None, crawl=crawl)


def issue_urls(task: FixTask, *, archived: bool, crawl: CrawlStore) -> dict[str, list[Mapping[str, Any]]]:
    """`affected_urls` when whether the task's audit was archived is known (read with the task)."""
    if archived:
        return {url: [] for url in task.sample_urls}
    found: dict[str, list[Mapping[str, Any]]] = {}
    for issue in _task_issues(task, crawl):
        found.setdefault(issue.url, []).append(dict(issue.details))
    return found


def _task_issues(task: FixTask, crawl: CrawlStore) -> Iterator[Issue]:
    offset = 0
    while True:
        query = IssueQuery(check_code=task.code, template=task.template, offset=offset, limit=_CHUNK)
        rows, total = crawl.list_issues(task.audit_id, query)
        yield from rows
        offset += len(rows)
        if not rows or offset >= total:
            return


def task_urls(
    task: FixTask, *, uow: UnitOfWork, crawl: CrawlStore, traffic: TrafficSource = NO_TRAFFIC
) -> tuple[TaskUrl, ...]:
    """The task's affected URLs with their traffic (what a recheck samples from)."""
    return with_traffic(task, affected_urls(task, uow=uow, crawl=crawl), traffic)


def with_traffic(task: FixTask, urls: Iterable[str], traffic: TrafficSource) -> tuple[TaskUrl, ...]:
    """The task's URLs with the console's figures of each, when it has them."""
    urls = list(urls)
    figures = traffic.traffic(task.site_id, urls) or {}
    return tuple(
        TaskUrl(url, figures[url].clicks_28d, figures[url].impressions_28d)
        if url in figures
        else TaskUrl(url)
        for url in urls
    )


def get_task(
    asked: GetTask,
    caller: Caller,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    traffic: TrafficSource = NO_TRAFFIC,
) -> TaskWithUrls:
    """One task and its URLs, 100 a page in URL order, with traffic when the console has it."""
    task = load_task(asked.site_id, asked.task_key, caller, uow=uow)
    urls = affected_urls(task, uow=uow, crawl=crawl)
    ordered = sorted(urls)
    page = asked.page
    chosen = ordered[(page - 1) * URLS_PER_PAGE : page * URLS_PER_PAGE]
    figures = traffic.traffic(task.site_id, chosen) or {}
    rows = tuple(_row(url, urls[url], figures) for url in chosen)
    return TaskWithUrls(
        task=fix_task(task),
        urls=TaskUrlPage(data=rows, page=page, per_page=URLS_PER_PAGE, total=len(ordered)),
    )


def _row(url: str, details: Sequence[Mapping[str, Any]], figures: Mapping[str, Any]) -> TaskUrlRow:
    shown: dict[str, object] = dict(details[0]) if details else {}
    if len(details) > 1:
        shown = {**shown, "occurrences": len(details)}
    seen = figures.get(url)
    return TaskUrlRow(
        url=url,
        clicks_28d=None if seen is None else seen.clicks_28d,
        impressions_28d=None if seen is None else seen.impressions_28d,
        details=shown,
    )


def tasks_by_key(tasks: Iterable[FixTask]) -> dict[TaskKey, FixTask]:
    return {t.key: t for t in tasks}
