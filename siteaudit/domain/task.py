# Over 500 lines: a task's lifecycle and its refresh after an audit (carry-over by shared URLs) share one set of rules.
"""Fix tasks: one check on one URL template of a site, their lifecycle, refresh after audits and ranking."""

import bisect
import enum
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final, Self

from attrs import asdict, evolve, field, frozen

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.error import Conflict, ValidationFailed
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey
from siteaudit.domain.issue import CheckScope, CheckSpec, Issue, Severity, priority
from siteaudit.domain.lifecycle import next_state

SAMPLE_URLS: Final = 5
_KEY = re.compile(r"[0-9a-f]{16}")


def task_key(site_id: SiteId, check_code: str, template: str, generation: int = 0) -> TaskKey:
    """The 16-hex-character id a new task for one check on one template of one site gets.

    Fields are joined with a separator no check code or template contains, so ("a", "b:c") and ("a:b",
    "c") cannot collide by construction. A task keeps its key when its template is renamed, split or
    merged (`refresh_tasks`), so a new task on a template whose first key is taken by a task that moved
    there gets the next `generation`.
    """
    fields = ("fix-task/v1", str(int(site_id)), check_code, template)
    canonical = "\x1f".join((*fields, str(generation)) if generation else fields)
    return TaskKey(hashlib.blake2b(canonical.encode("utf-8"), digest_size=8).hexdigest())


# Checks of a URL that is judged only because the site links to it or lists it (its answer is the
# problem: a 4xx, a failing redirect). A complete audit that no longer reaches the URL shows the fix the
# check asks for, the links taken away; for every other check a URL not crawled again proves nothing.
FIXED_BY_UNLINKING: Final = frozenset(
    {
        "http_4xx",
        "http_5xx",
        "fetch_failed",
        "redirect_chain",
        "redirect_loop",
        "redirect_to_error",
        "redirect_temporary",
    }
)


def is_full_audit(audit: Audit) -> bool:
    """Whether an audit's findings make a site's fix tasks: an audit of the site that ended `done` (its
    report published), whether or not it stopped at its page or time cap. What it found is real, so it
    opens, refreshes and regresses tasks; but only a complete audit (`proves_absence`) may mark a task
    fixed because it no longer found the issue: a partial one did not see every page."""
    return audit.site_id is not None and audit.status is AuditStatus.DONE


def proves_absence(audit: Audit) -> bool:
    """A full audit that was not partial (it stopped because nothing was left to crawl) and that has a
    score: an audit that audited no HTML page (the site was down, robots.txt unreadable) saw nothing, so
    the issues it did not find are not fixed (`docs/scoring.md`)."""
    return is_full_audit(audit) and not audit.partial and audit.health_score is not None


def parse_task_key(raw: object) -> TaskKey:
    """A caller's task key (hex, any case). Raises ValidationFailed (422) when it is not 16 hex characters."""
    if isinstance(raw, str) and _KEY.fullmatch(raw.lower()):
        return TaskKey(raw.lower())
    raise ValidationFailed({"task_key": "must be 16 hexadecimal characters"})


class TaskStatus(enum.StrEnum):
    OPEN = "open"
    VERIFYING = "verifying"
    FIXED = "fixed"
    REGRESSED = "regressed"


class FixedBy(enum.StrEnum):
    """What showed a fixed task fixed: a recheck whose task result was `fixed`, or a later full audit
    that no longer found the issue on any page of the template."""

    RECHECK = "recheck"
    AUDIT = "audit"


class TaskMove(enum.StrEnum):
    START_RECHECK = "start_recheck"
    RECHECK_FIXED = "recheck_fixed"  # the recheck's result for this task is `fixed`
    # A recheck that did not prove the fix returns the task to where it was; two moves keep the table
    # a plain mapping while "where it was" is remembered in `status_before_verifying`.
    RECHECK_UNFIXED_OPEN = "recheck_unfixed_open"
    RECHECK_UNFIXED_REGRESSED = "recheck_unfixed_regressed"
    AUDIT_FOUND = "audit_found"  # the latest full audit reports the issue on the template
    AUDIT_MISSED = "audit_missed"  # the latest full audit no longer reports it


_UNFIXED: Final = (TaskStatus.OPEN, TaskStatus.REGRESSED)
TASK_MOVES: Final[Mapping[tuple[TaskStatus, TaskMove], TaskStatus]] = MappingProxyType(
    {
        **{(s, TaskMove.START_RECHECK): TaskStatus.VERIFYING for s in _UNFIXED},
        (TaskStatus.VERIFYING, TaskMove.RECHECK_FIXED): TaskStatus.FIXED,
        (TaskStatus.VERIFYING, TaskMove.RECHECK_UNFIXED_OPEN): TaskStatus.OPEN,
        (TaskStatus.VERIFYING, TaskMove.RECHECK_UNFIXED_REGRESSED): TaskStatus.REGRESSED,
        # An audit that finds the issue again leaves an open or regressed task as it is; a running recheck owns
        # the verdict, and the audit only refreshes the figures meanwhile.
        **{(s, TaskMove.AUDIT_FOUND): s for s in (*_UNFIXED, TaskStatus.VERIFYING)},
        (TaskStatus.FIXED, TaskMove.AUDIT_FOUND): TaskStatus.REGRESSED,
        **{(s, TaskMove.AUDIT_MISSED): TaskStatus.FIXED for s in _UNFIXED},
    }
)


class TaskResult(enum.StrEnum):
    """A recheck's verdict on one task (`tasks[].result`)."""

    FIXED = "fixed"
    STILL_FAILING = "still_failing"
    NOT_CHECKED = "not_checked"
    CANNOT_VERIFY = "cannot_verify"


@frozen
class TaskFinding:
    """One check on one template as the latest full audit found it."""

    code: str
    template: str
    severity: Severity
    pages: int
    sample_urls: tuple[str, ...] = ()
    clicks_28d: int | None = None
    impressions_28d: int | None = None


@frozen
class Traffic:
    clicks_28d: int
    impressions_28d: int


class TaskIssues:
    """An audit's issues as the fix tasks need them, gathered while the issues stream by: for each check,
    the URLs it fails with each one's template, and the most severe severity of each (check, template).
    No issue is kept, and a URL failing a check twice (a page's broken links) is one entry: this is what
    finalisation holds of the issues for the tasks (docs/templates.md).

    A URL's template is the one its last issue of the check gave; the rare earlier other template of the
    same (check, URL) is kept apart, so the groups are those of every issue given."""

    __slots__ = ("_others", "_severity", "_templates")

    def __init__(self) -> None:
        self._templates: dict[str, dict[str, str]] = {}  # check -> URL -> template
        self._others: set[tuple[str, str, str]] = set()  # (check, template, URL) a later issue replaced
        self._severity: dict[tuple[str, str], Severity] = {}  # (check, template) -> most severe

    @classmethod
    def of(cls, issues: Iterable[Issue]) -> "TaskIssues":
        gathered = cls()
        for issue in issues:
            gathered.add(issue.check_code, issue.severity, issue.url, issue.template)
        return gathered

    def add(self, check_code: str, severity: Severity, url: str, template: str) -> bool:
        """Adds one issue; True when it is its (check, URL)'s first."""
        urls = self._templates.get(check_code)
        if urls is None:
            urls = self._templates[check_code] = {}
        before = urls.get(url)
        if before is not None and before != template:
            self._others.add((check_code, before, url))
        urls[url] = template
        group = (check_code, template)
        known = self._severity.get(group)
        if known is None or severity.rank < known.rank:
            self._severity[group] = severity
        return before is None

    def template_of(self, check_code: str, url: str) -> str | None:
        """The template `url` fails `check_code` on (its last issue's), None when it does not fail it."""
        urls = self._templates.get(check_code)
        return None if urls is None else urls.get(url)

    def urls(self) -> set[str]:
        """Every URL with an issue."""
        return {url for urls in self._templates.values() for url in urls}

    def __len__(self) -> int:
        """The (check, template, URL) entries: the issues, but a URL's repeats of one check counted once."""
        return sum(1 for _ in self.entries())

    def entries(self) -> Iterator[tuple[str, str, str]]:
        """Each (check, template, URL) once."""
        for code, urls in self._templates.items():
            for url, template in urls.items():
                yield code, template, url
        for code, template, url in self._others:
            if self._templates[code][url] != template:
                yield code, template, url

    def severity(self, check_code: str, template: str) -> Severity:
        return self._severity[(check_code, template)]


def findings_from_issues(
    issues: Iterable[Issue] | TaskIssues,
    traffic: Mapping[str, Traffic] | None = None,
    *,
    samples: int = SAMPLE_URLS,
) -> tuple[TaskFinding, ...]:
    """Group an audit's issues by check and template. Without console data clicks stay None.

    Samples are the URLs with most clicks first, then in URL order, so they are stable between runs. One
    pass over the issues, each group keeping its count, its figures and its best `samples` URLs only.
    """
    gathered = issues if isinstance(issues, TaskIssues) else TaskIssues.of(issues)

    def busiest_first(url: str) -> tuple[int, str]:
        found = traffic.get(url) if traffic is not None else None
        return (-(found.clicks_28d if found else 0), url)

    # (check, template) -> [pages, clicks, impressions, best sample keys in order]
    groups: dict[tuple[str, str], tuple[list[int], list[tuple[int, str]]]] = {}
    for code, template, url in gathered.entries():
        group = groups.get((code, template))
        if group is None:
            group = groups[(code, template)] = ([0, 0, 0], [])
        figures, best = group
        figures[0] += 1
        if traffic is not None and (seen := traffic.get(url)) is not None:
            figures[1] += seen.clicks_28d
            figures[2] += seen.impressions_28d
        if samples > 0:
            key = busiest_first(url)
            if len(best) < samples or key < best[-1]:
                bisect.insort(best, key)
                del best[samples:]
    findings = []
    for (code, template), (figures, best) in sorted(groups.items()):
        findings.append(
            TaskFinding(
                code=code,
                template=template,
                severity=gathered.severity(code, template),
                pages=figures[0],
                sample_urls=tuple(url for _, url in best),
                clicks_28d=None if traffic is None else figures[1],
                impressions_28d=None if traffic is None else figures[2],
            )
        )
    return tuple(findings)


@frozen
class Acceptance:
    """When the task counts as done, in words and as a machine-checkable rule."""

    text: str
    check: str
    scope: CheckScope
    template: str


@frozen
class TaskStatusChanged:
    task_key: TaskKey
    site_id: SiteId
    before: TaskStatus
    after: TaskStatus
    move: TaskMove
    at: datetime
    recheck_id: RecheckId | None = None
    audit_id: AuditId | None = None


# Weights of the impact score, a figure shown with each task; tasks are ranked by
# `siteaudit.domain.issue.priority`, not by it.
SEVERITY_WEIGHT: Final[Mapping[Severity, int]] = MappingProxyType(
    {Severity.ERROR: 10, Severity.WARNING: 3, Severity.NOTICE: 1}
)
CLICK_WEIGHT: Final = 10


def _as_found(finding: TaskFinding) -> dict[str, Any]:
    """What a task keeps of the finding it is opened or found again on: every field of TaskFinding, which
    FixTask names alike."""
    return asdict(finding, recurse=False)


@frozen
class FixTask:
    key: TaskKey
    site_id: SiteId
    code: str
    template: str
    severity: Severity
    pages: int
    audit_id: AuditId  # the full audit the figures come from
    created_at: datetime
    updated_at: datetime
    sample_urls: tuple[str, ...] = ()
    clicks_28d: int | None = None
    impressions_28d: int | None = None
    status: TaskStatus = TaskStatus.OPEN
    status_before_verifying: TaskStatus | None = None
    recheck_id: RecheckId | None = None  # the recheck deciding the task while it is verifying
    fixed_at: datetime | None = None
    fixed_by: FixedBy | None = None  # set while the task is fixed
    version: int = 0
    # The template the task had before an audit regrouped its URLs (renamed, split or merged templates:
    # docs/templates.md); None while it never moved.
    previous_template: str | None = None

    @classmethod
    def open(
        cls,
        site_id: SiteId,
        finding: TaskFinding,
        *,
        audit_id: AuditId,
        now: datetime,
        key: TaskKey | None = None,
        previous_template: str | None = None,
    ) -> Self:
        return cls(
            key=key or task_key(site_id, finding.code, finding.template),
            previous_template=previous_template,
            site_id=site_id,
            audit_id=audit_id,
            created_at=now,
            updated_at=now,
            **_as_found(finding),
        )

    @property
    def impact(self) -> int:
        """Severity weight × (pages + 10 × clicks in 28 days): traffic counts when there is data."""
        return SEVERITY_WEIGHT[self.severity] * (self.pages + CLICK_WEIGHT * (self.clicks_28d or 0))

    def acceptance(self, spec: CheckSpec) -> Acceptance:
        if spec.code != self.code:
            raise ValueError(f"check {spec.code} is not this task's check {self.code}")
        where = f"template {self.template}" if self.template else "the affected pages"
        if spec.recheckable:
            text = (
                f"No page of {where} reports {self.code} ({spec.title}): "
                "a recheck of the affected URLs finds the check passing on every one."
            )
        else:
            text = (
                f"The next full audit no longer reports {self.code} ({spec.title}) on {where}; "
                f"a recheck cannot judge a {spec.scope.value} check."
            )
        return Acceptance(text=text, check=self.code, scope=spec.scope, template=self.template)

    def _move(self, move: TaskMove, *, now: datetime, changed: Self) -> tuple[Self, TaskStatusChanged]:
        """Take `move` through the table; `changed` is this task with the move's other fields set."""
        status = next_state(TASK_MOVES, self.status, move, entity="fix task")
        task = evolve(changed, status=status, updated_at=now, version=self.version + 1)
        event = TaskStatusChanged(
            task_key=self.key,
            site_id=self.site_id,
            before=self.status,
            after=status,
            move=move,
            at=now,
            recheck_id=task.recheck_id if move is TaskMove.START_RECHECK else self.recheck_id,
            audit_id=task.audit_id,
        )
        return task, event

    # rechecks

    def start_verifying(self, recheck_id: RecheckId, *, now: datetime) -> tuple[Self, TaskStatusChanged]:
        """A recheck covering the task was accepted. InvalidTransition (409) unless open or regressed."""
        changed = evolve(self, status_before_verifying=self.status, recheck_id=recheck_id)
        return self._move(TaskMove.START_RECHECK, now=now, changed=changed)

    def finish_verifying(
        self, result: TaskResult, recheck_id: RecheckId, *, now: datetime
    ) -> tuple[Self, TaskStatusChanged]:
        """Apply the recheck's verdict: only `fixed` marks the task fixed; anything else puts it back."""
        if self.status is TaskStatus.VERIFYING and self.recheck_id != recheck_id:
            raise Conflict(
                f"fix task {self.key} is being verified by recheck {self.recheck_id}, not {recheck_id}"
            )
        if result is TaskResult.FIXED:
            move = TaskMove.RECHECK_FIXED
        elif self.status_before_verifying is TaskStatus.REGRESSED:
            move = TaskMove.RECHECK_UNFIXED_REGRESSED
        else:
            move = TaskMove.RECHECK_UNFIXED_OPEN
        fixed = result is TaskResult.FIXED
        changed = evolve(
            self,
            status_before_verifying=None,
            recheck_id=None,
            fixed_at=now if fixed else self.fixed_at,
            fixed_by=FixedBy.RECHECK if fixed else self.fixed_by,
        )
        return self._move(move, now=now, changed=changed)

    # full audits

    def found_again(
        self, finding: TaskFinding, *, audit_id: AuditId, now: datetime
    ) -> tuple[Self, TaskStatusChanged]:
        if finding.code != self.code:
            raise ValueError(f"finding {finding.code}/{finding.template} is not task {self.key}")
        moved = finding.template != self.template
        changed = evolve(
            self,
            previous_template=self.template if moved else self.previous_template,
            audit_id=audit_id,
            # Found again: a fixed task regresses and is no longer fixed by anything.
            fixed_by=None if self.status is TaskStatus.FIXED else self.fixed_by,
            **_as_found(finding),
        )
        return self._move(TaskMove.AUDIT_FOUND, now=now, changed=changed)

    def not_found(self, *, audit_id: AuditId, now: datetime) -> tuple[Self, TaskStatusChanged]:
        changed = evolve(self, audit_id=audit_id, fixed_at=now, fixed_by=FixedBy.AUDIT)
        return self._move(TaskMove.AUDIT_MISSED, now=now, changed=changed)


@frozen
class TaskEvidence:
    """What a full audit saw of the URLs an existing task was last found on (docs/templates.md)."""

    audited: int = 0  # its URLs seen again: crawled, or for FIXED_BY_UNLINKING checks no longer linked
    still: Mapping[str, int] = field(factory=dict)  # template now -> its URLs still showing the check there


NO_EVIDENCE: Final = TaskEvidence()


@frozen
class TaskRefresh:
    """The site's task set after a full audit, and which keys changed status."""

    tasks: tuple[FixTask, ...]
    opened: tuple[TaskKey, ...]
    regressed: tuple[TaskKey, ...]
    fixed: tuple[TaskKey, ...]
    events: tuple[TaskStatusChanged, ...]
    merged: tuple[TaskKey, ...] = ()  # tasks whose URLs another task now carries: to be removed


def refresh_tasks(
    existing: Iterable[FixTask],
    findings: Iterable[TaskFinding],
    *,
    site_id: SiteId,
    audit_id: AuditId,
    now: datetime,
    evidence: Mapping[TaskKey, TaskEvidence],
    complete: bool = True,
) -> TaskRefresh:
    """The task set after a full audit (docs/templates.md).

    Each finding goes to the existing task of its check that shares most of its URLs (`evidence`), else to
    the task of its check and template, else it opens a new task: so a task keeps its key when its
    template is renamed, split or merged, and records the template it had (`previous_template`). Found
    again, a fixed task regresses. A task no finding went to is fixed only when the audit was `complete`
    and saw its URLs again without the check (URLs not crawled this time are no evidence); one whose URLs
    still show the check under another task is merged into it. Verifying tasks keep their status (the
    recheck decides) and fixed tasks not found stay as they are. Tasks come back in impact order."""
    by_key: dict[TaskKey, FixTask] = {}
    for task in existing:
        if task.site_id != site_id:
            raise ValueError(f"fix task {task.key} belongs to site {task.site_id}, not {site_id}")
        by_key[task.key] = task
    found: dict[tuple[str, str], TaskFinding] = {}
    for finding in findings:
        if (finding.code, finding.template) in found:
            raise ValueError(f"two findings for {finding.code} on template {finding.template!r}")
        found[(finding.code, finding.template)] = finding

    # Candidate (task, finding) pairs: by shared URLs, and a task's own template even without.
    overlap: dict[tuple[TaskKey, str], int] = {}
    for key, task in by_key.items():
        for template, count in evidence.get(key, NO_EVIDENCE).still.items():
            if count > 0 and (task.code, template) in found:
                overlap[(key, template)] = count
        if (task.code, task.template) in found:
            overlap.setdefault((key, task.template), 0)
    owner: dict[tuple[str, str], TaskKey] = {}
    claimed: set[TaskKey] = set()
    for (key, template), _ in sorted(
        overlap.items(), key=lambda p: (-p[1], p[0][1] != by_key[p[0][0]].template, p[0][0], p[0][1])
    ):
        code = by_key[key].code
        if key not in claimed and (code, template) not in owner:
            owner[(code, template)] = key
            claimed.add(key)

    result: dict[TaskKey, FixTask] = {}
    events: list[TaskStatusChanged] = []
    opened: list[TaskKey] = []
    taken = set(by_key)
    for (code, template), finding in sorted(found.items()):
        mine = owner.get((code, template))
        if mine is not None:
            task, event = by_key[mine].found_again(finding, audit_id=audit_id, now=now)
            result[mine] = task
            if event.before is not event.after:
                events.append(event)
            continue
        generation = 0
        while (key := task_key(site_id, code, template, generation)) in taken:
            generation += 1
        taken.add(key)
        # Split off a task whose URLs went to several templates: say where it came from.
        parents = sorted(k for (k, t), n in overlap.items() if t == template and n > 0)
        result[key] = FixTask.open(
            site_id,
            finding,
            audit_id=audit_id,
            now=now,
            key=key,
            previous_template=by_key[parents[0]].template if parents else None,
        )
        opened.append(key)
    merged: list[TaskKey] = []
    for key, task in by_key.items():
        if key in claimed:
            continue
        seen = evidence.get(key, NO_EVIDENCE)
        if task.status in (TaskStatus.OPEN, TaskStatus.REGRESSED):
            if any(n > 0 for n in seen.still.values()):
                merged.append(key)  # still failing, now under a task that carries its URLs
                continue
            if complete and seen.audited > 0:
                task, event = task.not_found(audit_id=audit_id, now=now)
                events.append(event)
        result[key] = task

    return TaskRefresh(
        tasks=order_by_impact(result.values()),
        opened=tuple(sorted(opened)),
        regressed=tuple(sorted(e.task_key for e in events if e.after is TaskStatus.REGRESSED)),
        fixed=tuple(sorted(e.task_key for e in events if e.after is TaskStatus.FIXED)),
        events=tuple(events),
        merged=tuple(sorted(merged)),
    )


def _rank(task: FixTask) -> tuple[tuple[int, int, int, int], str, str]:
    rank = priority(task.severity, task.pages, clicks=task.clicks_28d, impressions=task.impressions_28d)
    return (rank, task.code, task.template)


def order_by_impact(tasks: Iterable[FixTask]) -> tuple[FixTask, ...]:
    """The tasks by `siteaudit.domain.issue.priority` (severity, pages, traffic); ties by code and
    template so the order is total."""
    return tuple(sorted(tasks, key=_rank))


def top_tasks(tasks: Iterable[FixTask], limit: int, *, include_fixed: bool = True) -> tuple[FixTask, ...]:
    """A task list as `GET /sites/{id}/tasks` shows it (docs/rest-api.md "Fix tasks and rechecks"): with a
    limit of 3 or less, fixed tasks are left out and one task per check code is kept. `include_fixed=False` is
    the team list."""
    short = limit <= 3
    chosen: list[FixTask] = []
    codes: set[str] = set()
    for task in order_by_impact(tasks):
        if len(chosen) >= limit:
            break
        if task.status is TaskStatus.FIXED and (short or not include_fixed):
            continue
        if short and task.code in codes:
            continue
        codes.add(task.code)
        chosen.append(task)
    return tuple(chosen)


def count_open(tasks: Sequence[FixTask]) -> int:
    """Tasks still to be done: everything not fixed."""
    return sum(1 for t in tasks if t.status is not TaskStatus.FIXED)
