"""Recheck use cases: accept a recheck (credits, rate limit, tasks into `verifying`), read it, cancel it,
end it with its credits and tasks settled once, and reap stalled ones.

A recheck runs on the workers like an audit slice (`recheck_run.py`): one `run_recheck`
message, a lease on the recheck row, the reaper for stalled runs. It is not an audit and never appears in
`GET /crawls`.

Credits (docs/rest-api.md "Fix tasks and rechecks"): 1 credit per URL is reserved on the team owner (`recheck:<id>`) when the
recheck is accepted; when it ends, 1 credit per distinct URL fetched is charged and the rest refunded, in
the transaction that ends it. The ledger's settlement is keyed by the reference, so a redelivered or
reaped run, or a cancel racing the end, settles once. Link targets fetched to judge page-and-targets
checks, and URLs robots.txt disallows (not fetched), are not charged.
"""

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Final

from attrs import evolve, field, frozen

from siteaudit.domain.account import Caller
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.credit import RECHECK_URL_COST, recheck_cost
from siteaudit.domain.error import ConcurrentUpdate, DomainError, ErrorCode, RateLimited
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey, TeamId, UserId
from siteaudit.domain.issue import CheckScope
from siteaudit.domain.lease import ReapTerms
from siteaudit.domain.recheck import (
    Recheck,
    RecheckEnded,
    RecheckPlan,
    TaskUrl,
    issue_target,
    recheck_urls,
    settle_tasks,
)
from siteaudit.domain.recheck import (
    request_recheck as plan_recheck,
)
from siteaudit.domain.site import Site
from siteaudit.domain.task import FixTask, parse_task_key, task_key
from siteaudit.ports.application import RecheckReaped
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.queue import DispatchError, TaskQueue
from siteaudit.ports.ratelimit import Limit, RateLimiter
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.traffic import NO_TRAFFIC, TrafficSource
from siteaudit.services.tasks import answers
from siteaudit.services.tasks.task import issue_urls, with_traffic
from siteaudit.services.tasks.usecases import CancelRecheck, GetRecheck, RequestRecheck
from siteaudit.services.traffic import open_fix_impacts

log = logging.getLogger("siteaudit.recheck")

# 30 rechecks an hour per team (docs/rest-api.md "Errors and limits"), one bucket shared by every process (SQL limiter on PostgreSQL).
RECHECK_LIMIT: Final = Limit(30, 3600.0)
SCOPES: Final[Mapping[str, CheckScope]] = {code: spec.scope for code, spec in CATALOGUE.items()}


def recheck_reference(recheck_id: RecheckId) -> str:
    return f"recheck:{recheck_id}"


def rate_bucket(caller: Caller) -> str:
    return f"recheck:team:{caller.team_id}"


class RecheckDispatchFailed(DomainError):
    code = ErrorCode.DISPATCH_FAILED

    def __init__(self, recheck_id: RecheckId) -> None:
        super().__init__(
            f"recheck {recheck_id} could not be dispatched; its credits were refunded, try again"
        )


def _parent(site: Site, tasks: list[FixTask], uow: UnitOfWork) -> AuditId:
    """The full audit the recheck compares with: the one the site's tasks come from, else the latest
    done audit of the site (AuditId(0): none yet, nothing to compare with). Call inside `with uow:`."""
    if tasks:
        return AuditId(max(t.audit_id for t in tasks))
    latest = uow.audits.latest_done(
        team=site.team_id, origin=site.origin, site=site.id, before=AuditId(2**31 - 1)
    )
    return AuditId(0) if latest is None else latest.id


@frozen
class _Baseline:
    """What the parent audit reported on the URLs asked about: the codes per URL, per task its URLs
    among them, and per URL and page-and-targets code the targets reported (None: not known, the
    audit's rows were archived)."""

    codes: dict[str, set[str]] = field(factory=dict)
    per_task: dict[TaskKey, list[TaskUrl]] = field(factory=dict)
    targets: dict[str, dict[str, set[str]]] | None = field(factory=dict)


def _baseline(
    parent: AuditId,
    archived: bool,
    urls: set[str] | None,
    site_id: SiteId,
    crawl: CrawlStore,
    tasks: Sequence[FixTask] = (),
) -> _Baseline:
    """One pass over the parent audit's issues on `urls` (None: every URL). A task is found by its check
    and template: its key stays when an audit regroups its URLs (docs/templates.md), so it need not be
    the key of those two."""
    keys = {(t.code, t.template): t.key for t in tasks if t.audit_id == parent}
    found = _Baseline()
    if parent == 0:
        return found
    if archived:
        return _Baseline(targets=None)
    targets: dict[str, dict[str, set[str]]] = {}
    for _, issue in crawl.stream_issues(parent):
        if urls is not None and issue.url not in urls:
            continue
        found.codes.setdefault(issue.url, set()).add(issue.check_code)
        key = keys.get((issue.check_code, issue.template)) or task_key(
            site_id, issue.check_code, issue.template
        )
        found.per_task.setdefault(key, []).append(TaskUrl(issue.url))
        if SCOPES.get(issue.check_code) is CheckScope.PAGE_TARGETS:
            target = issue_target(issue.details)
            if target is not None:
                targets.setdefault(issue.url, {}).setdefault(issue.check_code, set()).add(target)
    return evolve(found, targets=targets)


@frozen
class _Loaded:
    """What a recheck request reads of the store, in one transaction: the site, its tasks, the audit the
    recheck compares with, which audits' issue rows were archived, and who pays."""

    site: Site
    tasks: tuple[FixTask, ...]
    parent: AuditId
    archived: Mapping[AuditId, bool]
    payer: UserId
    team: TeamId


def _load(site_id: SiteId, caller: Caller, uow: UnitOfWork) -> _Loaded:
    with uow:
        site = uow.sites.get(site_id, team=caller.team_id)
        tasks = tuple(uow.tasks.of_site(site.id))
        parent = _parent(site, list(tasks), uow)
        audits = {t.audit_id for t in tasks} | ({parent} if parent else set())
        archived = {a: uow.audits.get_any(a).archived_at is not None for a in audits}
        team = uow.teams.get(caller.team_id)
    return _Loaded(site, tasks, parent, archived, team.owner_id, team.id)


def _plan(
    request: RequestRecheck, loaded: _Loaded, now: datetime, *, crawl: CrawlStore, traffic: TrafficSource
) -> RecheckPlan:
    """The recheck decided once, by the domain, over what was loaded and what the parent audit reported
    (read from the crawl store). Raises every refusal (404, 409, 422) before anything is reserved."""
    site, tasks, parent = loaded.site, loaded.tasks, loaded.parent
    parent_archived = loaded.archived.get(parent, False)
    if request.task_key is not None and request.urls is None:
        asked = {t.key: t for t in tasks}.get(parse_task_key(request.task_key))
        all_urls: tuple[TaskUrl, ...] = ()
        if asked is not None:
            found_urls = issue_urls(asked, archived=loaded.archived[asked.audit_id], crawl=crawl)
            all_urls = with_traffic(asked, found_urls, traffic)
        found = _baseline(parent, parent_archived, {u.url for u in all_urls}, site.id, crawl)
        urls_of: dict[TaskKey, tuple[TaskUrl, ...]] = {asked.key: all_urls} if asked is not None else {}
    else:
        try:
            listed: set[str] | None = set(recheck_urls(request.urls or (), site))
        except DomainError:
            listed = None  # the plan names what is wrong with the list
        found = _baseline(parent, parent_archived, listed, site.id, crawl, tasks) if listed else _Baseline()
        urls_of = {key: tuple(urls) for key, urls in found.per_task.items()}
    return plan_recheck(
        recheck_id=RecheckId(0),  # numbered when stored
        site=site,
        parent_audit_id=parent,
        scopes=SCOPES,
        now=now,
        task_key=request.task_key,
        urls=request.urls,
        tasks=tasks,
        task_urls=urls_of,
        baseline=found.codes,
        link_targets=found.targets,
    )


def request_recheck(
    request: RequestRecheck,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    crawl: CrawlStore,
    queue: TaskQueue,
    limiter: RateLimiter,
    traffic: TrafficSource = NO_TRAFFIC,
) -> answers.RecheckStarted:
    """Load once, decide once, write once: read the site, its tasks and the parent audit in one
    transaction; plan the recheck in the domain (every refusal before anything is reserved); then, in
    one transaction, store it, reserve its credits, take a rate-limit slot and move its tasks to
    `verifying`; commit, dispatch.

    A task that moved between the two transactions is refused (ConcurrentUpdate, 409). The slot is taken
    after the reservation succeeded, so a 402 never uses one; a refused slot rolls the reservation back
    with the rest of the transaction."""
    now = clock.now()
    loaded = _load(request.site_id, caller, uow)
    plan = _plan(request, loaded, now, crawl=crawl, traffic=traffic)
    known = {t.key: t for t in loaded.tasks}
    with uow:
        for task in plan.tasks:
            if uow.tasks.get(task.site_id, task.key).version != known[task.key].version:
                raise ConcurrentUpdate("fix task", task.key)
        recheck = uow.rechecks.add(plan.recheck)
        accepted = plan.numbered(recheck.id)
        uow.credits.reserve(
            loaded.payer,
            RECHECK_URL_COST * recheck.urls_total,
            reference=recheck_reference(recheck.id),
            at=now,
            team=loaded.team,
        )  # InsufficientCredits (402): rolled back, no slot taken
        decision = limiter.hit(rate_bucket(caller), RECHECK_LIMIT, now=now)
        if not decision.allowed:
            raise RateLimited(
                max(1, int(decision.retry_after_s + 0.999)),
                code=ErrorCode.RECHECK_RATE_LIMITED,
                what=f"rechecks: {RECHECK_LIMIT.count} an hour per team",
            )
        for task in accepted.tasks:
            uow.tasks.save(task)
        uow.commit()
    claimed = {t.key for t in accepted.tasks}
    covered = [known[t.task_key] for t in recheck.targets if t.task_key not in claimed]
    try:
        queue.recheck(recheck.id)
    except DispatchError as exc:
        end_recheck(recheck.id, uow=uow, clock=clock, fail=f"dispatch_failed: {exc}"[:300])
        raise RecheckDispatchFailed(recheck.id) from exc
    log.info("recheck %s started: site %s, %d URLs", recheck.id, loaded.site.id, recheck.urls_total)
    return answers.recheck_started(recheck, (*accepted.tasks, *covered))


def get_recheck(asked: GetRecheck, caller: Caller, *, uow: UnitOfWork) -> answers.Recheck:
    with uow:
        return answers.recheck(uow.rechecks.get(asked.recheck_id, team=caller.team_id))


def cancel_recheck(asked: CancelRecheck, caller: Caller, *, uow: UnitOfWork, clock: Clock) -> answers.Recheck:
    """Raises NotFound (another team's), Conflict (already ended)."""
    with uow:
        uow.rechecks.get(asked.recheck_id, team=caller.team_id)
    return answers.recheck(end_recheck(asked.recheck_id, uow=uow, clock=clock, cancel=True))


def end_recheck(
    recheck_id: RecheckId,
    *,
    uow: UnitOfWork,
    clock: Clock,
    time_capped: bool = False,
    cancel: bool = False,
    fail: str | None = None,
) -> Recheck:
    """End the recheck (done; or cancelled; or failed with `fail`), charge what it fetched and refund the
    rest, and settle the tasks it verified, in one transaction. Ending an ended recheck to `done` or
    `failed` leaves it as it is; cancelling it raises Conflict (409)."""
    with uow:
        recheck = uow.rechecks.get_any(recheck_id)
        if recheck.ended and not cancel:
            return recheck
        now = clock.now()
        ended: tuple[Recheck, RecheckEnded]
        if cancel:
            ended = recheck.cancel(now=now)  # InvalidTransition (409) once ended
        elif fail is not None:
            ended = recheck.fail(fail, now=now)
        else:
            ended = recheck.finish(now=now, time_capped=time_capped)
        recheck, _ = ended
        settle_recheck_credits(recheck, uow=uow, at=now)
        before = {t.key: t for t in uow.tasks.of_site(recheck.site_id)}
        tasks, moved = settle_tasks(recheck, before.values(), now=now)
        changed = {event.task_key for event in moved}
        for task in tasks:
            if task.key in changed:
                uow.tasks.save(task)
        open_fix_impacts(
            moved, before, uow=uow, recheck=recheck
        )  # fix impact (docs/rest-api.md "Fix impact")
        uow.rechecks.save(recheck)
        uow.commit()
    log.info(
        "recheck %s ended: %s, %d of %d URLs fetched",
        recheck.id,
        recheck.status.value,
        recheck.urls_fetched,
        recheck.urls_total,
    )
    return recheck


def settle_recheck_credits(recheck: Recheck, *, uow: UnitOfWork, at: datetime) -> bool:
    """Charge 1 credit per URL fetched, refund the rest; once per recheck (False when settled before)."""
    reference = recheck_reference(recheck.id)
    reserved = uow.credits.reserved(reference)
    if reserved is None:
        return False
    cost = recheck_cost(urls_fetched=recheck.urls_fetched, reserved=reserved)
    return uow.credits.settle(reference, cost=cost, at=at)


def reap_rechecks(
    *, uow: UnitOfWork, queue: TaskQueue, clock: Clock, terms: ReapTerms, handover_s: float, batch: int = 100
) -> RecheckReaped:
    """Rechecks whose runner stalled (lease past its deadline by the grace, or queued and never claimed)
    are dispatched again while fewer than `terms.max_attempts` runs were taken, else end `failed`
    (`reaped: ...`) with what they fetched charged and their tasks put back."""
    now = clock.now()
    counts = {"redispatched": 0, "failed": 0, "dispatch_errors": 0}
    with uow:
        stalled = [
            r
            for r in uow.rechecks.unfinished(limit=batch)
            if r.stalled(now, grace_s=terms.grace_s, queued_s=terms.queued_s)
        ]
    for found in stalled:
        if found.attempts >= terms.max_attempts:
            end_recheck(found.id, uow=uow, clock=clock, fail=f"reaped: {found.attempts} runs stalled")
            log.warning("recheck %s reaped after %s runs", found.id, found.attempts)
            counts["failed"] += 1
            continue
        with uow:
            current = uow.rechecks.get_any(found.id)
            if current.version != found.version:
                continue  # moved on since it was read (claimed, renewed, another reaper)
            uow.rechecks.save(current.requeue(until=now + timedelta(seconds=handover_s)))
            uow.commit()
        try:
            queue.recheck(found.id)
            counts["redispatched"] += 1
            log.warning("recheck %s stalled: dispatching it again", found.id)
        except DispatchError as error:
            log.error("recheck %s could not be dispatched again: %s", found.id, error)
            counts["dispatch_errors"] += 1
    return RecheckReaped(**counts)
