"""Fix tasks: keys, the status table, refreshing after a full audit, impact order and acceptance."""

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.domain.error import Conflict, ErrorCode, InvalidTransition, ValidationFailed
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey
from siteaudit.domain.issue import CheckScope, CheckSpec, Issue, Severity, priority
from siteaudit.domain.lifecycle import ended_states, next_state, reachable
from siteaudit.domain.task import (
    TASK_MOVES,
    FixedBy,
    FixTask,
    TaskEvidence,
    TaskFinding,
    TaskIssues,
    TaskMove,
    TaskRefresh,
    TaskResult,
    TaskStatus,
    Traffic,
    count_open,
    findings_from_issues,
    order_by_impact,
    parse_task_key,
    refresh_tasks,
    task_key,
    top_tasks,
)

NOW = datetime(2025, 3, 14, 9, 0, tzinfo=UTC)
SITE = SiteId(7)
CRAWL = AuditId(101)
NEXT_CRAWL = AuditId(102)


def finding(
    code: str = "title_missing",
    template: str = "/blog/[slug]",
    severity: Severity = Severity.ERROR,
    pages: int = 3,
    clicks: int | None = None,
    impressions: int | None = None,
) -> TaskFinding:
    return TaskFinding(
        code=code,
        template=template,
        severity=severity,
        pages=pages,
        sample_urls=("https://retro-clock.example/blog/first-post",),
        clicks_28d=clicks,
        impressions_28d=impressions,
    )


def a_task(status: TaskStatus = TaskStatus.OPEN, **kwargs: object) -> FixTask:
    task = FixTask.open(SITE, finding(**kwargs), audit_id=CRAWL, now=NOW)  # type: ignore[arg-type]
    if status is TaskStatus.OPEN:
        return task
    if status is TaskStatus.FIXED:
        return task.not_found(audit_id=NEXT_CRAWL, now=NOW)[0]
    if status is TaskStatus.REGRESSED:
        fixed = task.not_found(audit_id=NEXT_CRAWL, now=NOW)[0]
        return fixed.found_again(finding(**kwargs), audit_id=NEXT_CRAWL, now=NOW)[0]  # type: ignore[arg-type]
    return task.start_verifying(RecheckId(1), now=NOW)[0]


SPEC_PAGE = CheckSpec(
    code="title_missing",
    severity=Severity.ERROR,
    scope=CheckScope.PAGE,
    title="Title missing",
    why="Search results need a title.",
    fix="Add a <title>.",
)


# --- keys --------------------------------------------------------------------------------------------


def test_a_task_key_is_16_lowercase_hex_characters_and_stable() -> None:
    key = task_key(SITE, "title_missing", "/blog/[slug]")
    assert len(key) == 16 and all(c in "0123456789abcdef" for c in key)
    # Pinned: stored keys and links in agents' notes must survive upgrades.
    assert key == task_key(SiteId(7), "title_missing", "/blog/[slug]") == "bbe3bab3bac7ec8e"


@given(
    a=st.tuples(st.integers(1, 10**6), st.text(max_size=20), st.text(max_size=30)),
    b=st.tuples(st.integers(1, 10**6), st.text(max_size=20), st.text(max_size=30)),
)
def test_different_site_check_or_template_give_different_keys(
    a: tuple[int, str, str], b: tuple[int, str, str]
) -> None:
    if a != b and "\x1f" not in a[1] + b[1]:
        assert task_key(SiteId(a[0]), a[1], a[2]) != task_key(SiteId(b[0]), b[1], b[2])


def test_a_task_key_is_read_in_any_case() -> None:
    assert parse_task_key("0C8FD5AD1BB1F3E1") == TaskKey("0c8fd5ad1bb1f3e1")


@pytest.mark.parametrize("raw", ["", "0c8fd5ad1bb1f3e", "0c8fd5ad1bb1f3e1a", "0c8fd5ad1bb1f3eg", None, 12])
def test_a_malformed_task_key_answers_validation_failed(raw: object) -> None:
    with pytest.raises(ValidationFailed) as raised:
        parse_task_key(raw)
    assert raised.value.code is ErrorCode.VALIDATION_FAILED and "task_key" in raised.value.fields


# --- the table ---------------------------------------------------------------------------------------


def test_every_task_state_is_reachable_from_open() -> None:
    assert reachable(TASK_MOVES, TaskStatus.OPEN) == frozenset(TaskStatus)


def test_a_task_never_ends_and_ended_states_have_no_exits() -> None:
    ended = ended_states(TASK_MOVES, TaskStatus)
    assert ended == frozenset()
    assert not any(source in ended for source, _ in TASK_MOVES)


def test_every_task_move_is_used() -> None:
    assert {move for _, move in TASK_MOVES} == set(TaskMove)


def test_only_a_fixed_recheck_result_or_a_clean_audit_leads_to_fixed() -> None:
    into_fixed = {move for (source, move), target in TASK_MOVES.items() if target is TaskStatus.FIXED}
    assert into_fixed == {TaskMove.RECHECK_FIXED, TaskMove.AUDIT_MISSED}
    assert (
        next_state(TASK_MOVES, TaskStatus.VERIFYING, TaskMove.RECHECK_FIXED, entity="t") is TaskStatus.FIXED
    )


# --- rechecks on one task ----------------------------------------------------------------------------


@pytest.mark.parametrize("before", [TaskStatus.OPEN, TaskStatus.REGRESSED])
@pytest.mark.parametrize(
    "result", [TaskResult.STILL_FAILING, TaskResult.NOT_CHECKED, TaskResult.CANNOT_VERIFY]
)
def test_a_recheck_that_does_not_prove_the_fix_puts_the_task_back_where_it_was(
    before: TaskStatus, result: TaskResult
) -> None:
    task = a_task(before)
    verifying, started = task.start_verifying(RecheckId(9), now=NOW)
    assert verifying.status is TaskStatus.VERIFYING and verifying.recheck_id == RecheckId(9)
    assert (started.before, started.after) == (before, TaskStatus.VERIFYING)
    back, event = verifying.finish_verifying(result, RecheckId(9), now=NOW + timedelta(minutes=2))
    assert back.status is before and back.status_before_verifying is None and back.recheck_id is None
    assert back.version == task.version + 2 and event.recheck_id == RecheckId(9)


def test_a_fixed_recheck_result_marks_the_task_fixed() -> None:
    verifying, _ = a_task().start_verifying(RecheckId(9), now=NOW)
    fixed, event = verifying.finish_verifying(TaskResult.FIXED, RecheckId(9), now=NOW + timedelta(minutes=1))
    assert fixed.status is TaskStatus.FIXED and fixed.fixed_at == NOW + timedelta(minutes=1)
    assert event.move is TaskMove.RECHECK_FIXED


@pytest.mark.parametrize("status", [TaskStatus.VERIFYING, TaskStatus.FIXED])
def test_rechecking_a_task_that_is_verifying_or_fixed_answers_conflict(status: TaskStatus) -> None:
    with pytest.raises(InvalidTransition) as raised:
        a_task(status).start_verifying(RecheckId(2), now=NOW)
    assert raised.value.code is ErrorCode.CONFLICT and raised.value.status == 409


def test_only_the_recheck_verifying_a_task_may_settle_it() -> None:
    verifying = a_task(TaskStatus.VERIFYING)
    with pytest.raises(Conflict) as raised:
        verifying.finish_verifying(TaskResult.FIXED, RecheckId(99), now=NOW)
    assert raised.value.code is ErrorCode.CONFLICT


def test_settling_a_task_that_is_not_verifying_answers_conflict() -> None:
    with pytest.raises(InvalidTransition):
        a_task().finish_verifying(TaskResult.FIXED, RecheckId(1), now=NOW)


# --- full audits -------------------------------------------------------------------------------------


def seen_again(tasks: Iterable[FixTask]) -> dict[TaskKey, TaskEvidence]:
    """Evidence that the audit crawled every task's URLs again, and found the check on none of them but
    through the findings of the task's own template."""
    return {t.key: TaskEvidence(audited=1) for t in tasks}


def test_a_first_audit_opens_a_task_per_check_and_template() -> None:
    findings = [finding(), finding(template="/shop/[item]"), finding(code="h1_missing")]
    refresh = refresh_tasks([], findings, site_id=SITE, audit_id=CRAWL, now=NOW, evidence={})
    assert len(refresh.tasks) == 3 and len(refresh.opened) == 3
    assert all(t.status is TaskStatus.OPEN and t.version == 0 and t.audit_id == CRAWL for t in refresh.tasks)
    assert refresh.events == ()


def test_a_later_audit_regresses_fixed_tasks_fixes_vanished_ones_and_refreshes_figures() -> None:
    open_, fixed = a_task(), a_task(TaskStatus.FIXED, template="/shop/[item]")
    refresh = refresh_tasks(
        [open_, fixed],
        [finding(template="/shop/[item]", pages=9)],
        site_id=SITE,
        audit_id=NEXT_CRAWL,
        now=NOW + timedelta(days=7),
        evidence=seen_again([open_, fixed]),
    )
    by_key = {t.key: t for t in refresh.tasks}
    assert by_key[open_.key].status is TaskStatus.FIXED and by_key[open_.key].fixed_at == NOW + timedelta(
        days=7
    )
    assert by_key[fixed.key].status is TaskStatus.REGRESSED and by_key[fixed.key].pages == 9
    assert refresh.fixed == (open_.key,) and refresh.regressed == (fixed.key,) and refresh.opened == ()


def test_an_audit_leaves_a_verifying_task_to_its_recheck() -> None:
    verifying = a_task(TaskStatus.VERIFYING)
    found = refresh_tasks(
        [verifying],
        [finding(pages=5)],
        site_id=SITE,
        audit_id=NEXT_CRAWL,
        now=NOW,
        evidence=seen_again([verifying]),
    )
    assert found.tasks[0].status is TaskStatus.VERIFYING and found.tasks[0].pages == 5
    assert found.tasks[0].recheck_id == verifying.recheck_id
    missed = refresh_tasks(
        [verifying], [], site_id=SITE, audit_id=NEXT_CRAWL, now=NOW, evidence=seen_again([verifying])
    )
    assert missed.tasks == (verifying,)


def test_an_audit_that_still_misses_a_fixed_task_leaves_it_untouched() -> None:
    fixed = a_task(TaskStatus.FIXED)
    assert refresh_tasks(
        [fixed], [], site_id=SITE, audit_id=NEXT_CRAWL, now=NOW, evidence=seen_again([fixed])
    ).tasks == (fixed,)


def test_refreshing_refuses_another_sites_tasks_and_duplicate_findings() -> None:
    with pytest.raises(ValueError, match="belongs to site"):
        refresh_tasks([a_task()], [], site_id=SiteId(8), audit_id=CRAWL, now=NOW, evidence={})
    with pytest.raises(ValueError, match="two findings"):
        refresh_tasks([], [finding(), finding()], site_id=SITE, audit_id=CRAWL, now=NOW, evidence={})


_FINDINGS = st.lists(
    st.builds(
        finding,
        code=st.sampled_from(["title_missing", "h1_missing", "broken_link"]),
        template=st.sampled_from(["/", "/blog/[slug]", "/shop/[item]"]),
        severity=st.sampled_from(Severity),
        pages=st.integers(1, 500),
        clicks=st.none() | st.integers(0, 10_000),
    ),
    unique_by=lambda f: (f.code, f.template),
    max_size=9,
)


@given(audits=st.lists(_FINDINGS, min_size=1, max_size=5))
def test_after_any_audit_found_tasks_are_unfixed_and_vanished_tasks_are_fixed(
    audits: list[list[TaskFinding]],
) -> None:
    tasks: tuple[FixTask, ...] = ()
    for number, findings in enumerate(audits):
        before = {t.key: t for t in tasks}
        refresh = refresh_tasks(
            tasks,
            findings,
            site_id=SITE,
            audit_id=AuditId(number),
            now=NOW + timedelta(days=number),
            evidence=seen_again(tasks),
        )
        tasks = refresh.tasks
        found = {task_key(SITE, f.code, f.template) for f in findings}
        assert {t.key for t in tasks} == found | set(before)
        for task in tasks:
            old = before.get(task.key)
            if task.key in found:
                assert task.status in (TaskStatus.OPEN, TaskStatus.REGRESSED)
                if old is not None and old.status is TaskStatus.FIXED:
                    assert task.status is TaskStatus.REGRESSED
            else:
                assert task.status is TaskStatus.FIXED
            assert task.version == (0 if old is None else old.version + (task != old))
        assert list(tasks) == sorted(tasks, key=lambda t: priority(t.severity, t.pages, clicks=t.clicks_28d))


# --- findings, impact, lists, acceptance -------------------------------------------------------------


def test_issues_group_into_findings_with_the_most_clicked_urls_as_samples() -> None:
    base = "https://retro-clock.example/blog/"
    issues = [
        Issue("title_missing", Severity.WARNING, base + "a", "/blog/[slug]"),
        Issue("title_missing", Severity.ERROR, base + "b", "/blog/[slug]"),
        Issue("title_missing", Severity.WARNING, base + "c", "/blog/[slug]"),
        Issue("title_missing", Severity.WARNING, base + "c", "/blog/[slug]"),
        Issue("h1_missing", Severity.NOTICE, base + "a", "/blog/[slug]"),
    ]
    traffic = {base + "c": Traffic(40, 900), base + "a": Traffic(3, 50)}
    found = findings_from_issues(issues, traffic, samples=2)
    assert [(f.code, f.pages) for f in found] == [("h1_missing", 1), ("title_missing", 3)]
    title = found[1]
    assert title.severity is Severity.ERROR
    assert title.sample_urls == (base + "c", base + "a")
    assert (title.clicks_28d, title.impressions_28d) == (43, 950)
    assert findings_from_issues(issues)[1].clicks_28d is None


def _findings_by_sets(
    issues: list[Issue], traffic: dict[str, Traffic] | None, samples: int
) -> tuple[TaskFinding, ...]:
    """The grouping as it was written before `TaskIssues`: every issue kept, a set of URLs per group."""
    groups: dict[tuple[str, str], tuple[Severity, set[str]]] = {}
    for issue in issues:
        severity, urls = groups.setdefault((issue.check_code, issue.template), (issue.severity, set()))
        if issue.severity.rank < severity.rank:
            groups[(issue.check_code, issue.template)] = (issue.severity, urls)
        urls.add(issue.url)
    found = []
    for (code, template), (severity, urls) in sorted(groups.items()):
        seen = [traffic[u] for u in urls if u in traffic] if traffic is not None else []
        found.append(
            TaskFinding(
                code=code,
                template=template,
                severity=severity,
                pages=len(urls),
                sample_urls=tuple(
                    sorted(
                        urls, key=lambda u: (-(traffic[u].clicks_28d if traffic and u in traffic else 0), u)
                    )[:samples]
                ),
                clicks_28d=None if traffic is None else sum(t.clicks_28d for t in seen),
                impressions_28d=None if traffic is None else sum(t.impressions_28d for t in seen),
            )
        )
    return tuple(found)


_ISSUES = st.lists(
    st.builds(
        Issue,
        st.sampled_from(["title_missing", "h1_missing", "link_broken"]),
        st.sampled_from(list(Severity)),
        st.sampled_from([f"https://retro-clock.example/p/{n}" for n in range(12)]),
        st.sampled_from(["/p/[id]", "/", ""]),
    ),
    max_size=60,
)


@given(
    issues=_ISSUES,
    traffic=st.none()
    | st.dictionaries(
        st.sampled_from([f"https://retro-clock.example/p/{n}" for n in range(12)]),
        st.builds(Traffic, st.integers(0, 50), st.integers(0, 500)),
    ),
    samples=st.integers(0, 6),
)
def test_gathered_issues_group_as_the_issues_themselves_would(
    issues: list[Issue], traffic: dict[str, Traffic] | None, samples: int
) -> None:
    """Finalisation gathers what the tasks need as the issues stream by (one entry per check and URL, no
    issue kept): the findings are those of every issue kept, and a URL's template under a check is its
    last issue's (what the evidence of a task's URLs reads)."""
    gathered = TaskIssues.of(issues)
    assert findings_from_issues(gathered, traffic, samples=samples) == _findings_by_sets(
        issues, traffic, samples
    )
    last = {(i.check_code, i.url): i.template for i in issues}
    for code in ("title_missing", "h1_missing", "link_broken", "other"):
        for n in range(13):
            url = f"https://retro-clock.example/p/{n}"
            assert gathered.template_of(code, url) == last.get((code, url))
    assert gathered.urls() == {i.url for i in issues}
    assert len(gathered) == len({(i.check_code, i.template, i.url) for i in issues})


def test_a_url_failing_one_check_many_times_is_gathered_once() -> None:
    page = "https://retro-clock.example/blog/a"
    gathered = TaskIssues.of(Issue("link_broken", Severity.ERROR, page, "/blog/[slug]") for _ in range(1_000))
    assert len(gathered) == 1
    assert [(f.code, f.pages) for f in findings_from_issues(gathered)] == [("link_broken", 1)]


def test_adding_an_issue_says_whether_it_is_its_check_and_urls_first() -> None:
    page = "https://retro-clock.example/blog/a"
    gathered = TaskIssues()
    added = [
        gathered.add("link_broken", Severity.ERROR, page, "/blog/[slug]"),
        gathered.add("link_broken", Severity.ERROR, page, "/blog/[slug]"),
        gathered.add(
            "link_broken", Severity.ERROR, page, "/other"
        ),  # another template: the same (check, URL)
        gathered.add("h1_missing", Severity.WARNING, page, ""),
        gathered.add("h1_missing", Severity.WARNING, page, ""),  # a template of "" is not "no entry"
    ]
    assert added == [True, False, False, True, False]


def test_impact_weighs_severity_pages_and_clicks() -> None:
    error = a_task(pages=3)
    notice = a_task(code="h1_missing", severity=Severity.NOTICE, pages=20)
    busy_warning = a_task(code="meta_missing", severity=Severity.WARNING, pages=2, clicks=5)
    assert (error.impact, notice.impact, busy_warning.impact) == (30, 20, 156)


def test_tasks_rank_by_severity_then_pages_then_traffic() -> None:
    """A notice on 317 pages and a busy warning never outrank a broken link on a few pages."""
    broken = a_task(code="broken_internal_link", pages=3)
    notice = a_task(code="h1_missing", severity=Severity.NOTICE, pages=317)
    busy_warning = a_task(code="meta_missing", severity=Severity.WARNING, pages=2, clicks=500)
    wide_warning = a_task(code="title_too_long", severity=Severity.WARNING, pages=40)
    clicked = a_task(code="img_broken", severity=Severity.WARNING, pages=2, clicks=501)
    seen = a_task(code="h1_multiple", severity=Severity.WARNING, pages=2, clicks=500, impressions=9)
    ranked = order_by_impact([notice, busy_warning, wide_warning, broken, clicked, seen])
    assert [t.code for t in ranked] == [
        "broken_internal_link",
        "title_too_long",
        "img_broken",
        "h1_multiple",
        "meta_missing",
        "h1_missing",
    ]
    top = top_tasks([notice, busy_warning, broken], 3)
    assert [t.code for t in top] == ["broken_internal_link", "meta_missing", "h1_missing"]


def test_a_short_task_list_leaves_out_fixed_tasks_and_repeats_no_check() -> None:
    tasks = [
        a_task(TaskStatus.FIXED, code="redirect_chain", pages=900),
        a_task(pages=50),
        a_task(template="/shop/[item]", pages=40),
        a_task(code="h1_missing", pages=10),
    ]
    assert [(t.code, t.template) for t in top_tasks(tasks, 3)] == [
        ("title_missing", "/blog/[slug]"),
        ("h1_missing", "/blog/[slug]"),
    ]
    assert len(top_tasks(tasks, 10)) == 4
    assert TaskStatus.FIXED not in {t.status for t in top_tasks(tasks, 10, include_fixed=False)}
    assert count_open(tasks) == 3


def test_acceptance_says_how_the_task_is_judged_done() -> None:
    task = a_task()
    accepted = task.acceptance(SPEC_PAGE)
    assert (accepted.check, accepted.scope, accepted.template) == (
        "title_missing",
        CheckScope.PAGE,
        "/blog/[slug]",
    )
    assert "recheck" in accepted.text and "/blog/[slug]" in accepted.text
    graph = CheckSpec("orphan_page", Severity.WARNING, CheckScope.LINK_GRAPH, "Orphan page", "w", "f")
    orphan = a_task(code="orphan_page", severity=Severity.WARNING)
    assert "next full audit" in orphan.acceptance(graph).text
    with pytest.raises(ValueError):
        task.acceptance(graph)


def test_a_partial_audit_opens_and_regresses_tasks_but_never_fixes_one_by_absence() -> None:
    site = SiteId(1)
    old = refresh_tasks(
        [],
        [finding("title_missing", "/a/[slug]"), finding("h1_missing", "/b/[slug]")],
        site_id=site,
        audit_id=AuditId(1),
        now=NOW,
        evidence={},
    ).tasks
    partial = refresh_tasks(
        old,
        [finding("thin_content", "/c/[slug]")],
        site_id=site,
        audit_id=AuditId(2),
        now=NOW,
        evidence=seen_again(old),
        complete=False,
    )
    by_code = {t.code: t for t in partial.tasks}
    assert {c: t.status for c, t in by_code.items()} == {
        "title_missing": TaskStatus.OPEN,
        "h1_missing": TaskStatus.OPEN,
        "thin_content": TaskStatus.OPEN,
    }
    assert partial.fixed == () and partial.opened == (by_code["thin_content"].key,)
    complete = refresh_tasks(
        partial.tasks, [], site_id=site, audit_id=AuditId(3), now=NOW, evidence=seen_again(partial.tasks)
    )
    assert {t.status for t in complete.tasks} == {TaskStatus.FIXED}
    assert {t.fixed_by for t in complete.tasks} == {FixedBy.AUDIT}


# --- task identity across regrouped templates (docs/templates.md) ---------------------------------------


def refresh(
    tasks: Iterable[FixTask], findings: list[TaskFinding], evidence: dict[TaskKey, TaskEvidence]
) -> TaskRefresh:
    return refresh_tasks(tasks, findings, site_id=SITE, audit_id=NEXT_CRAWL, now=NOW, evidence=evidence)


def test_a_renamed_template_keeps_its_task_and_says_where_it_came_from() -> None:
    task = a_task(template="/products/[slug]")

    moved = refresh(
        [task],
        [finding(template="/products/[name]", pages=3)],
        {task.key: TaskEvidence(audited=3, still={"/products/[name]": 3})},
    )

    (kept,) = moved.tasks
    assert (kept.key, kept.template, kept.previous_template, kept.status) == (
        task.key,
        "/products/[name]",
        "/products/[slug]",
        TaskStatus.OPEN,
    )
    assert moved.opened == moved.fixed == moved.merged == () and moved.events == ()


def test_a_split_template_keeps_the_key_on_its_largest_part_and_fixes_nothing() -> None:
    task = a_task(template="/products/[slug]")
    parts = {"/products/a": 2, "/products/b": 1, "/products/c": 1}

    split = refresh(
        [task],
        [finding(template=t, pages=n) for t, n in parts.items()],
        {task.key: TaskEvidence(audited=4, still=parts)},
    )

    by_template = {t.template: t for t in split.tasks}
    assert by_template["/products/a"].key == task.key
    assert {t.previous_template for t in split.tasks} == {"/products/[slug]"}
    assert split.fixed == () and split.events == () and len(split.opened) == 2


def test_merged_templates_leave_one_task_and_fix_none() -> None:
    one, two = a_task(template="/products/a"), a_task(template="/products/b")

    merged = refresh(
        [one, two],
        [finding(template="/products/[slug]", pages=2)],
        {
            one.key: TaskEvidence(audited=1, still={"/products/[slug]": 1}),
            two.key: TaskEvidence(audited=1, still={"/products/[slug]": 1}),
        },
    )

    (kept,) = merged.tasks
    assert kept.key == min(one.key, two.key) and kept.template == "/products/[slug]"
    assert merged.merged == (max(one.key, two.key),)
    assert merged.fixed == () and merged.opened == () and merged.events == ()


def test_urls_not_crawled_again_are_no_evidence_of_a_fix() -> None:
    task = a_task(template="/products/[slug]")

    vanished = refresh([task], [], {task.key: TaskEvidence(audited=0)})
    fixed = refresh([task], [], {task.key: TaskEvidence(audited=2)})

    assert vanished.tasks == (task,) and vanished.fixed == ()
    assert fixed.fixed == (task.key,)


def test_a_new_task_on_a_template_whose_first_key_moved_away_gets_a_key_of_its_own() -> None:
    task = a_task(template="/a/[slug]")

    moved = refresh(
        [task],
        [finding(template="/b/[slug]"), finding(template="/a/[slug]")],
        {task.key: TaskEvidence(audited=3, still={"/b/[slug]": 3})},
    )

    by_template = {t.template: t.key for t in moved.tasks}
    assert by_template["/b/[slug]"] == task.key
    assert by_template["/a/[slug]"] == task_key(SITE, "title_missing", "/a/[slug]", 1) != task.key
