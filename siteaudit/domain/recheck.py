# Over 500 lines: the recheck aggregate, its transition table and the per-URL and per-task judgement rules belong together.
"""Rechecks: fetching a task's (or a list of) URLs again and judging them against the last full audit."""

import enum
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Final, Self

from attrs import evolve, frozen

from siteaudit.domain.error import Conflict, DomainError, ErrorCode, NotFound, ValidationFailed
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey, TeamId
from siteaudit.domain.issue import CheckScope
from siteaudit.domain.lifecycle import next_state
from siteaudit.domain.records import copy_named
from siteaudit.domain.site import InvalidUrl, Site, VerifiedOnly, parse_site_url
from siteaudit.domain.task import FixTask, TaskResult, TaskStatus, TaskStatusChanged, parse_task_key

MAX_RECHECK_URLS: Final = 200
CREDITS_PER_URL: Final = 1


class CannotVerify(DomainError):
    code = ErrorCode.CANNOT_VERIFY

    def __init__(self, task_key: TaskKey, check_code: str, scope: CheckScope | None) -> None:
        what = f"a {scope.value} check" if scope is not None else "a check outside the catalogue"
        super().__init__(
            f"fix task {task_key} is about {check_code}, {what}, which a recheck of single URLs cannot "
            "judge; the next full audit will"
        )
        self.task_key = task_key
        self.check_code = check_code
        self.scope = scope


class InvalidUrls(DomainError):
    code = ErrorCode.INVALID_URLS

    def __init__(self, reason: str, urls: Sequence[str] = ()) -> None:
        shown = ", ".join(repr(u[:200]) for u in urls[:5]) + (" ..." if len(urls) > 5 else "")
        super().__init__(f"{reason}: {shown}" if urls else reason)
        self.reason = reason
        self.urls = tuple(urls)


class RecheckStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class RecheckMove(enum.StrEnum):
    START = "start"
    RECORD = "record"  # one URL fetched and judged by the checks; the row changes, the status does not
    FINISH = "finish"
    FAIL = "fail"
    CANCEL = "cancel"


_UNENDED: Final = (RecheckStatus.QUEUED, RecheckStatus.RUNNING)
# Like an audit without the finalising step: a recheck has no report to build.
RECHECK_MOVES: Final[Mapping[tuple[RecheckStatus, RecheckMove], RecheckStatus]] = MappingProxyType(
    {
        (RecheckStatus.QUEUED, RecheckMove.START): RecheckStatus.RUNNING,
        (RecheckStatus.RUNNING, RecheckMove.RECORD): RecheckStatus.RUNNING,
        (RecheckStatus.RUNNING, RecheckMove.FINISH): RecheckStatus.DONE,
        **{(s, RecheckMove.FAIL): RecheckStatus.FAILED for s in _UNENDED},
        **{(s, RecheckMove.CANCEL): RecheckStatus.CANCELLED for s in _UNENDED},
    }
)

ENDED: Final = frozenset({RecheckStatus.DONE, RecheckStatus.FAILED, RecheckStatus.CANCELLED})


class UrlResult(enum.StrEnum):
    FIXED = "fixed"  # the URL had the issue in the parent audit and no longer has it
    STILL_FAILING = "still_failing"
    NEW_ISSUE = "new_issue"  # a judged check fails now that did not fail on this URL before
    NOT_CHECKED = "not_checked"  # no usable answer (fetch error, firewall, error status, not fetched)
    CANNOT_VERIFY = "cannot_verify"  # the URL's issues are all of checks a recheck cannot judge
    PASSING = "passing"  # nothing to fix before, nothing now


# --- inputs ------------------------------------------------------------------------------------------


@frozen
class TaskUrl:
    """One affected URL of a task, with its search traffic when known (a task's URL row)."""

    url: str
    clicks_28d: int | None = None
    impressions_28d: int | None = None


def sample_task_urls(urls: Iterable[TaskUrl], limit: int = MAX_RECHECK_URLS) -> tuple[tuple[str, ...], bool]:
    """The URLs to recheck for a task and whether they are a sample: above `limit`, the most clicked
    first, then most impressions, then URL order, so the same data always gives the same sample."""
    unique = {u.url: u for u in urls}
    ranked = sorted(unique.values(), key=lambda u: (-(u.clicks_28d or 0), -(u.impressions_28d or 0), u.url))
    return tuple(u.url for u in ranked[:limit]), len(ranked) > limit


def recheck_urls(raw: Sequence[str], site: Site) -> tuple[str, ...]:
    """A URL list for a recheck: 1-200 URLs on the site's host, normalised, duplicates dropped.
    Raises InvalidUrls (422)."""
    if not 1 <= len(raw) <= MAX_RECHECK_URLS:
        raise InvalidUrls(f"give 1 to {MAX_RECHECK_URLS} URLs, not {len(raw)}")
    good: dict[str, None] = {}
    bad: list[str] = []
    for url in raw:
        try:
            address = parse_site_url(url)
        except InvalidUrl:
            bad.append(str(url))
            continue
        if address.host != site.host:
            bad.append(url)
        else:
            good[address.url] = None
    if bad:
        raise InvalidUrls(f"these URLs are not on {site.host}", bad)
    return tuple(good)


def _normal(url: str) -> str:
    try:
        return parse_site_url(url).url
    except InvalidUrl:
        return url


@frozen
class RecheckUrl:
    """One URL to fetch, with the issues the parent audit reported on it, split by whether a recheck can
    judge them."""

    url: str
    baseline: frozenset[str] = frozenset()
    unjudgeable: frozenset[str] = frozenset()
    # The link targets (links, images, canonicals, alternates) the parent audit reported a judged
    # page-and-targets check of on this URL: the only targets a recheck fetches (`link_targets_of`).
    # None: not known (the audit's rows were archived, or a recheck stored before targets were kept), so
    # the page's own targets are fetched, capped. Sorted, so a stored row reads the same every time.
    link_targets: tuple[str, ...] | None = None


@frozen
class RecheckTarget:
    """A fix task the recheck touches. `claimed`: the recheck decides its status (it is verifying)."""

    task_key: TaskKey
    code: str
    template: str
    pages: int
    urls: tuple[str, ...]
    sampled: bool  # the URLs are the task's own sample of its most clicked URLs
    covers_task: bool  # the URLs are all of the task's URLs
    recheckable: bool
    claimed: bool
    status_before: TaskStatus

    @classmethod
    def of(
        cls,
        task: FixTask,
        urls: tuple[str, ...],
        *,
        sampled: bool,
        covers_task: bool,
        recheckable: bool,
        claimed: bool,
    ) -> Self:
        """The target a recheck makes of the task, before it moves the task."""
        return cls(
            task_key=task.key,
            code=task.code,
            template=task.template,
            pages=task.pages,
            urls=urls,
            sampled=sampled,
            covers_task=covers_task,
            recheckable=recheckable,
            claimed=claimed,
            status_before=task.status,
        )


@frozen
class UrlObservation:
    """What the recheck saw at one URL: the answer, and the codes of the checks failing on it now."""

    url: str
    status_code: int | None = None  # final status, after the URL's own redirects
    fetch_error: str | None = None
    blocked_by: str | None = None
    redirect_to: str | None = None
    issues: frozenset[str] = frozenset()
    disallowed: bool = False  # robots.txt disallows the URL: it was not fetched, nor charged

    @classmethod
    def from_page(cls, facts: PageFacts, issue_codes: Iterable[str]) -> Self:
        redirect_to = facts.final_url if facts.redirects and facts.final_url != facts.url else None
        return cls(
            url=facts.url,
            status_code=facts.status_code,
            fetch_error=facts.fetch_error.value if facts.fetch_error is not None else None,
            blocked_by=facts.blocked_by,
            redirect_to=redirect_to,
            issues=frozenset(issue_codes),
            disallowed=facts.disallowed,
        )

    @property
    def unusable(self) -> str | None:
        """Why the answer cannot show a content issue gone (None when it can)."""
        if self.disallowed:
            return "disallowed by robots.txt: not fetched"
        if self.fetch_error is not None:
            return f"fetch_error: {self.fetch_error}"
        if self.blocked_by is not None:
            return f"blocked_by: {self.blocked_by}"
        if self.status_code is None:
            return "no response"
        if not 200 <= self.status_code < 300:
            return f"status {self.status_code}: the page could not be judged"
        return None


# --- results -----------------------------------------------------------------------------------------


@frozen
class UrlOutcome:
    """One entry of a recheck's `urls`."""

    url: str
    status_code: int | None
    result: UrlResult
    reason: str | None = None
    redirected: bool = False
    redirect_to: str | None = None
    issues: tuple[str, ...] = ()  # judged checks failing before and now
    new_issues: tuple[str, ...] = ()  # judged checks failing now only


@frozen
class TaskOutcome:
    """One task of a recheck (its `tasks[]`); `status` is the task's status after the recheck."""

    task_key: TaskKey
    code: str
    template: str
    urls_rechecked: int
    pages: int
    sampled: bool
    covers_task: bool
    result: TaskResult
    urls_failing: int
    urls_passing: int
    status: TaskStatus


def judge_url(
    target: RecheckUrl, seen: UrlObservation | None, *, codes: Collection[str] | None, unfetched: str
) -> UrlOutcome:
    """One URL's result. `codes` limits judging to a task's checks (None: every check); `unfetched`
    says why a URL without observation was not fetched."""

    def judged(found: frozenset[str]) -> frozenset[str]:
        return found if codes is None else found & frozenset(codes)

    if seen is None:
        return UrlOutcome(url=target.url, status_code=None, result=UrlResult.NOT_CHECKED, reason=unfetched)
    baseline, unjudgeable, fresh = judged(target.baseline), judged(target.unjudgeable), judged(seen.issues)
    still, new = baseline & fresh, fresh - baseline
    reason = f"redirects to {seen.redirect_to}" if seen.redirect_to else None
    if still:
        result = UrlResult.STILL_FAILING
    elif seen.blocked_by is not None:
        # A firewall or bot challenge answered instead of the page: nothing can be judged there.
        result = UrlResult.CANNOT_VERIFY
        reason = (
            f"blocked_by: {seen.blocked_by}: the page answered with a bot challenge; allow-list the "
            "crawler (its user agent, or the X-Service-Verify header of a verified site) and recheck"
        )
    elif new:
        result = UrlResult.NEW_ISSUE
    elif seen.unusable is not None:
        # An error page or a challenge shows no content issue, which is not the same as having none.
        result, reason = UrlResult.NOT_CHECKED, seen.unusable
    elif baseline:
        result = UrlResult.FIXED
    elif unjudgeable:
        result = UrlResult.CANNOT_VERIFY
        reason = "a recheck cannot judge " + ", ".join(sorted(unjudgeable))
    else:
        result = UrlResult.PASSING
    return UrlOutcome(
        url=target.url,
        status_code=seen.status_code,
        result=result,
        reason=reason,
        redirected=seen.redirect_to is not None,
        redirect_to=seen.redirect_to,
        issues=tuple(sorted(still)),
        new_issues=tuple(sorted(new)),
    )


def judge_task(target: RecheckTarget, seen: Mapping[str, UrlObservation]) -> TaskOutcome:
    """One task's result: `fixed` needs every URL judged and passing, and the URLs to be the whole task
    or its own sample; one failing URL makes it `still_failing`; anything else is `not_checked`."""
    failing = passing = rechecked = blocked = 0
    for url in target.urls:
        observation = seen.get(url)
        if observation is None:
            continue
        rechecked += 1
        if target.code in observation.issues:
            failing += 1
        elif observation.blocked_by is not None:
            blocked += 1
        elif observation.unusable is None:
            passing += 1
    if not target.recheckable:
        result = TaskResult.CANNOT_VERIFY
    elif failing:
        result = TaskResult.STILL_FAILING
    elif passing == len(target.urls) and (target.covers_task or target.sampled):
        result = TaskResult.FIXED
    elif blocked:
        result = TaskResult.CANNOT_VERIFY  # a challenge hid pages: judge again once the crawler is let in
    else:
        result = TaskResult.NOT_CHECKED
    if target.claimed:
        status = TaskStatus.FIXED if result is TaskResult.FIXED else target.status_before
    else:
        status = target.status_before
    # The target's task_key, code, template, pages, sampled and covers_task, with what the recheck saw.
    return copy_named(
        TaskOutcome,
        target,
        urls_rechecked=rechecked,
        result=result,
        urls_failing=failing,
        urls_passing=passing,
        status=status,
    )


# --- the recheck -------------------------------------------------------------------------------------


@frozen
class RecheckStarted:
    recheck_id: RecheckId
    at: datetime


@frozen
class RecheckEnded:
    recheck_id: RecheckId
    site_id: SiteId
    team_id: TeamId
    status: RecheckStatus
    credits_used: int
    tasks: tuple[TaskOutcome, ...]
    at: datetime


@frozen
class Recheck:
    id: RecheckId
    site_id: SiteId
    team_id: TeamId
    parent_audit_id: AuditId  # the full audit whose issues are the baseline
    created_at: datetime
    urls: tuple[RecheckUrl, ...]
    targets: tuple[RecheckTarget, ...] = ()
    task_key: TaskKey | None = None  # the task asked for, None for a URL list
    codes: frozenset[str] | None = None  # the checks judged: the task's, or None for every check
    sampled: bool = False
    duplicate_baseline: bool = False
    status: RecheckStatus = RecheckStatus.QUEUED
    started_at: datetime | None = None
    finished_at: datetime | None = None
    time_capped: bool = False
    failure_reason: str | None = None
    observations: tuple[UrlObservation, ...] = ()
    url_results: tuple[UrlOutcome, ...] | None = None
    task_results: tuple[TaskOutcome, ...] | None = None
    version: int = 0
    # The worker lease: who runs the recheck now and until when; `attempts` counts the times it was taken
    # (a first claim, each takeover after a holder stalled, each re-dispatch by the reaper).
    lease_holder: str | None = None
    lease_until: datetime | None = None
    attempts: int = 0

    @property
    def urls_total(self) -> int:
        return len(self.urls)

    @property
    def estimated_credits(self) -> int:
        return CREDITS_PER_URL * len(self.urls)

    @property
    def pages_crawled(self) -> int:
        return len(self.observations)

    @property
    def urls_fetched(self) -> int:
        """URLs fetched (those robots.txt disallows are judged without a fetch)."""
        return sum(1 for o in self.observations if not o.disallowed)

    @property
    def credits_used(self) -> int:
        """1 credit per URL fetched; URLs never fetched (cancelled, capped, disallowed) are refunded."""
        return CREDITS_PER_URL * self.urls_fetched

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    @property
    def claimed_task_keys(self) -> frozenset[TaskKey]:
        return frozenset(t.task_key for t in self.targets if t.claimed)

    @property
    def unfetched(self) -> tuple[str, ...]:
        """The URLs not fetched yet, in the recheck's order (what a redelivered run still has to do)."""
        seen = {o.url for o in self.observations}
        return tuple(u.url for u in self.urls if u.url not in seen)

    # --- the worker lease (one runner at a time; a stalled one is taken over) ---

    def claim(self, holder: str, *, now: datetime, until: datetime) -> Self | None:
        """This recheck held by `holder` until `until`, or None while another holder's lease is live.
        An ended recheck is never claimed."""
        if self.ended:
            return None
        live = self.lease_holder is not None and self.lease_until is not None and self.lease_until > now
        if live and self.lease_holder != holder:
            return None
        # A run counts once: the first claim, a takeover from a stalled holder, or a reaper's requeue.
        takeover = self.lease_holder is not None and self.lease_holder != holder
        attempts = self.attempts + 1 if takeover or self.attempts == 0 else self.attempts
        return evolve(
            self, lease_holder=holder, lease_until=until, attempts=attempts, version=self.version + 1
        )

    def holds(self, holder: str) -> bool:
        return self.lease_holder == holder and not self.ended

    def renew(self, holder: str, *, until: datetime) -> Self | None:
        """The lease moved on to `until`; None when `holder` no longer holds it."""
        if not self.holds(holder):
            return None
        return evolve(self, lease_until=until, version=self.version + 1)

    def requeue(self, *, until: datetime) -> Self:
        """The reaper's takeover: free (nobody holds it), to be claimed by a new message before `until`."""
        return evolve(
            self, lease_holder=None, lease_until=until, attempts=self.attempts + 1, version=self.version + 1
        )

    def stalled(self, now: datetime, *, grace_s: float, queued_s: float) -> bool:
        """Not ended and nobody working: a lease past its deadline by `grace_s`, or queued for `queued_s`
        without ever being claimed (its message was lost)."""
        if self.ended:
            return False
        if self.lease_until is None:
            return (now - self.created_at).total_seconds() > queued_s
        return (now - self.lease_until).total_seconds() > grace_s

    def start(self, *, now: datetime) -> tuple[Self, RecheckStarted]:
        status = next_state(RECHECK_MOVES, self.status, RecheckMove.START, entity="recheck")
        return (
            evolve(self, status=status, started_at=now, version=self.version + 1),
            RecheckStarted(recheck_id=self.id, at=now),
        )

    def record(self, seen: UrlObservation) -> Self:
        """Keep what one fetch showed; fetching a URL again (a redelivered message) replaces it."""
        status = next_state(RECHECK_MOVES, self.status, RecheckMove.RECORD, entity="recheck")
        if seen.url not in {u.url for u in self.urls}:
            raise ValueError(f"{seen.url} is not one of recheck {self.id}'s URLs")
        kept = tuple(o for o in self.observations if o.url != seen.url)
        return evolve(self, status=status, observations=(*kept, seen), version=self.version + 1)

    def finish(self, *, now: datetime, time_capped: bool = False) -> tuple[Self, RecheckEnded]:
        unfetched = "not fetched: the recheck reached its time cap" if time_capped else "not fetched"
        return self._end(RecheckMove.FINISH, now=now, unfetched=unfetched, time_capped=time_capped)

    def fail(self, reason: str, *, now: datetime) -> tuple[Self, RecheckEnded]:
        return self._end(
            RecheckMove.FAIL, now=now, unfetched="not fetched: the recheck failed", reason=reason
        )

    def cancel(self, *, now: datetime) -> tuple[Self, RecheckEnded]:
        return self._end(
            RecheckMove.CANCEL,
            now=now,
            unfetched="not fetched: the recheck was cancelled",
            reason="cancelled",
        )

    def _end(
        self,
        move: RecheckMove,
        *,
        now: datetime,
        unfetched: str,
        reason: str | None = None,
        time_capped: bool = False,
    ) -> tuple[Self, RecheckEnded]:
        status = next_state(RECHECK_MOVES, self.status, move, entity="recheck")
        seen = {o.url: o for o in self.observations}
        url_results = tuple(
            judge_url(u, seen.get(u.url), codes=self.codes, unfetched=unfetched) for u in self.urls
        )
        task_results = tuple(judge_task(t, seen) for t in self.targets)
        ended = evolve(
            self,
            status=status,
            lease_holder=None,
            finished_at=now,
            failure_reason=reason,
            time_capped=time_capped,
            url_results=url_results,
            task_results=task_results,
            version=self.version + 1,
        )
        event = RecheckEnded(
            recheck_id=self.id,
            site_id=self.site_id,
            team_id=self.team_id,
            status=status,
            credits_used=ended.credits_used,
            tasks=task_results,
            at=now,
        )
        return ended, event


# --- requesting and settling -------------------------------------------------------------------------


@frozen
class RecheckPlan:
    """An accepted recheck, the tasks it put into `verifying`, and what to reserve."""

    recheck: Recheck
    tasks: tuple[FixTask, ...]
    events: tuple[TaskStatusChanged, ...]

    @property
    def estimated_credits(self) -> int:
        return self.recheck.estimated_credits

    def numbered(self, recheck_id: RecheckId) -> "RecheckPlan":
        """The plan of the recheck once stored under `recheck_id`: the id on the recheck and on the tasks
        and events it claimed (decided once, before the store gave the id)."""
        return RecheckPlan(
            recheck=evolve(self.recheck, id=recheck_id),
            tasks=tuple(evolve(t, recheck_id=recheck_id) for t in self.tasks),
            events=tuple(evolve(e, recheck_id=recheck_id) for e in self.events),
        )


_NO_URLS: Final[Mapping[TaskKey, Iterable[TaskUrl]]] = MappingProxyType({})
_NO_BASELINE: Final[Mapping[str, Iterable[str]]] = MappingProxyType({})
_NO_TARGETS: Final[Mapping[str, Mapping[str, Iterable[str]]]] = MappingProxyType({})


# The issue details naming the target a page-and-targets issue is about (`siteaudit.domain.checks.site`):
# a link's, image's or alternate's `target`, a canonical's `canonical`.
TARGET_DETAILS: Final = ("target", "canonical")


def issue_target(details: Mapping[str, object]) -> str | None:
    """The target a page-and-targets issue is about, from its details (None when it names none)."""
    for key in TARGET_DETAILS:
        value = details.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def link_targets_of(by_code: Mapping[str, Iterable[str]], codes: Collection[str]) -> tuple[str, ...]:
    """The link targets a recheck of `codes` on one URL fetches: those the parent audit reported one of
    them about (a broken-link task fetches its broken targets, not every link on the page)."""
    return tuple(sorted({target for code in codes for target in by_code.get(code, ())}))


def request_recheck(
    *,
    recheck_id: RecheckId,
    site: Site,
    parent_audit_id: AuditId,
    scopes: Mapping[str, CheckScope],
    now: datetime,
    task_key: str | None = None,
    urls: Sequence[str] | None = None,
    tasks: Iterable[FixTask] = (),
    task_urls: Mapping[TaskKey, Iterable[TaskUrl]] = _NO_URLS,
    baseline: Mapping[str, Iterable[str]] = _NO_BASELINE,
    link_targets: Mapping[str, Mapping[str, Iterable[str]]] | None = _NO_TARGETS,
    duplicate_baseline: bool = False,
) -> RecheckPlan:
    """Accept a recheck (docs/rest-api.md "Fix tasks and rechecks") of exactly one of a task or a URL list.

    `tasks`: the site's tasks the request may touch (the asked task, or the tasks on any listed URL);
    `task_urls`: their URLs (all of them for a task; those among the list suffice for a URL list);
    `baseline`: check codes the parent audit reported per URL; `link_targets`: per URL, per
    page-and-targets check code, the targets it was reported about (None: not known, the audit's rows
    were archived); `scopes`: the catalogue's check scopes.

    Raises ValidationFailed (422), SiteNotVerified (409), NotFound (404), CannotVerify (422),
    InvalidUrls (422), or InvalidTransition (409) for a task already verifying or fixed.
    """
    if (task_key is None) == (urls is None):
        problem = "give exactly one of task_key and urls"
        raise ValidationFailed({"task_key": problem, "urls": problem})
    key = parse_task_key(task_key) if task_key is not None else None
    site.require_verified(VerifiedOnly.RECHECK)
    known = {t.key: t for t in tasks if t.site_id == site.id}
    recheckable = {code for code, scope in scopes.items() if scope.recheckable}
    reported = {_normal(url): frozenset(codes) for url, codes in baseline.items()}
    about = None if link_targets is None else {_normal(u): by for u, by in link_targets.items()}

    def recheck_url(
        url: str, *, extra: frozenset[str] = frozenset(), judging: frozenset[str] | None = None
    ) -> RecheckUrl:
        codes = reported.get(url, frozenset()) | extra
        judged = codes & recheckable
        targets = None
        if about is not None:
            targets = link_targets_of(about.get(url, {}), judged if judging is None else judging)
        return RecheckUrl(url=url, baseline=judged, unjudgeable=codes - recheckable, link_targets=targets)

    def plan(
        urls: Iterable[RecheckUrl],
        targets: Iterable[RecheckTarget],
        tasks: Iterable[FixTask],
        events: Iterable[TaskStatusChanged],
        *,
        task: FixTask | None = None,
        sampled: bool = False,
    ) -> RecheckPlan:
        """The plan of a recheck of one `task`'s URLs (judging its check only), or of a URL list."""
        recheck = Recheck(
            id=recheck_id,
            site_id=site.id,
            team_id=site.team_id,
            parent_audit_id=parent_audit_id,
            created_at=now,
            urls=tuple(urls),
            targets=tuple(targets),
            task_key=None if task is None else task.key,
            codes=None if task is None else frozenset({task.code}),
            sampled=sampled,
            duplicate_baseline=duplicate_baseline,
        )
        return RecheckPlan(recheck=recheck, tasks=tuple(tasks), events=tuple(events))

    if key is not None:
        task = known.get(key)
        if task is None:
            raise NotFound("fix task", key)
        if task.code not in recheckable:
            raise CannotVerify(key, task.code, scopes.get(task.code))
        chosen, sampled = sample_task_urls(
            TaskUrl(_normal(u.url), u.clicks_28d, u.impressions_28d) for u in task_urls.get(key, ())
        )
        if not chosen:
            raise Conflict(f"fix task {key} has no affected URLs to recheck")
        moved, event = task.start_verifying(recheck_id, now=now)
        target = RecheckTarget.of(
            task, chosen, sampled=sampled, covers_task=not sampled, recheckable=True, claimed=True
        )
        # The task's own URLs had its issue in the parent audit, whatever else the baseline holds.
        judged = (
            recheck_url(u, extra=frozenset({task.code}), judging=frozenset({task.code})) for u in chosen
        )
        return plan(judged, (target,), (moved,), (event,), task=task, sampled=sampled)

    assert urls is not None
    listed = recheck_urls(urls, site)
    in_list = set(listed)
    targets: list[RecheckTarget] = []
    moved_tasks: list[FixTask] = []
    events: list[TaskStatusChanged] = []
    for task in sorted(known.values(), key=lambda t: t.key):
        own = {_normal(u.url) for u in task_urls.get(task.key, ())} & in_list
        if not own:
            continue
        covers = len(own) >= task.pages
        can_judge = task.code in recheckable
        claim = covers and can_judge and task.status in (TaskStatus.OPEN, TaskStatus.REGRESSED)
        if claim:
            moved, event = task.start_verifying(recheck_id, now=now)
            moved_tasks.append(moved)
            events.append(event)
        in_task = tuple(u for u in listed if u in own)
        targets.append(
            RecheckTarget.of(
                task, in_task, sampled=False, covers_task=covers, recheckable=can_judge, claimed=claim
            )
        )
    return plan((recheck_url(u) for u in listed), targets, moved_tasks, events)


def settle_tasks(
    recheck: Recheck, tasks: Iterable[FixTask], *, now: datetime
) -> tuple[tuple[FixTask, ...], tuple[TaskStatusChanged, ...]]:
    """Apply an ended recheck's verdicts to the tasks it claimed. Tasks this recheck is not verifying
    (any more) are left alone, so settling twice changes nothing."""
    if recheck.task_results is None:
        raise Conflict(f"recheck {recheck.id} has not ended; its results are not known yet")
    verdicts = {o.task_key: o.result for o in recheck.task_results}
    settled: list[FixTask] = []
    events: list[TaskStatusChanged] = []
    for task in tasks:
        mine = task.status is TaskStatus.VERIFYING and task.recheck_id == recheck.id
        if mine and task.key in recheck.claimed_task_keys:
            task, event = task.finish_verifying(verdicts[task.key], recheck.id, now=now)
            events.append(event)
        settled.append(task)
    return tuple(settled), tuple(events)
