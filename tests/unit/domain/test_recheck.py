"""Rechecks: request rules, sampling, per-URL and per-task verdicts, and the recheck + fix-task machine."""

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from siteaudit.domain.error import (
    Conflict,
    DomainError,
    ErrorCode,
    InvalidTransition,
    NotFound,
    ValidationFailed,
)
from siteaudit.domain.facts import FetchError, Hop, PageFacts
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey, TeamId
from siteaudit.domain.issue import CheckScope, Severity
from siteaudit.domain.lifecycle import ended_states, next_state, reachable
from siteaudit.domain.recheck import (
    ENDED,
    MAX_RECHECK_URLS,
    RECHECK_MOVES,
    CannotVerify,
    InvalidUrls,
    Recheck,
    RecheckEnded,
    RecheckMove,
    RecheckPlan,
    RecheckStatus,
    RecheckTarget,
    RecheckUrl,
    TaskUrl,
    UrlObservation,
    UrlResult,
    judge_task,
    judge_url,
    request_recheck,
    sample_task_urls,
    settle_tasks,
)
from siteaudit.domain.site import Site, SiteNotVerified, VerifyMethod
from siteaudit.domain.task import (
    TASK_MOVES,
    FixTask,
    TaskEvidence,
    TaskFinding,
    TaskMove,
    TaskResult,
    TaskStatus,
    refresh_tasks,
    task_key,
)

NOW = datetime(2025, 3, 14, 9, 0, tzinfo=UTC)
ORIGIN = "https://retro-clock.example"
PARENT = AuditId(41)
SCOPES: Mapping[str, CheckScope] = {
    "title_missing": CheckScope.PAGE,
    "broken_link": CheckScope.PAGE_TARGETS,
    "orphan_page": CheckScope.LINK_GRAPH,
    "duplicate_title": CheckScope.SITE_WIDE,
}


def a_site(*, verified: bool = True) -> Site:
    site = Site.register(
        site_id=SiteId(7),
        team_id=TeamId(3),
        url=ORIGIN + "/",
        verify_token="tok_retro_clock_0123456789",
        crawler_secret_ref="secret/7",
        plan_page_limit=50_000,
        now=NOW,
    )
    return site.verify(VerifyMethod.DNS, now=NOW)[0] if verified else site


SITE = a_site()


def a_task(code: str = "title_missing", template: str = "/blog/[slug]", pages: int = 3) -> FixTask:
    found = TaskFinding(code=code, template=template, severity=Severity.ERROR, pages=pages)
    return FixTask.open(SITE.id, found, audit_id=PARENT, now=NOW)


def blog_urls(count: int) -> list[TaskUrl]:
    return [TaskUrl(f"{ORIGIN}/blog/post-{n:03}", clicks_28d=n % 7, impressions_28d=n) for n in range(count)]


def ok(url: str, *codes: str, status: int = 200, redirect_to: str | None = None) -> UrlObservation:
    return UrlObservation(url=url, status_code=status, redirect_to=redirect_to, issues=frozenset(codes))


# --- the table ---------------------------------------------------------------------------------------


def test_every_recheck_state_is_reachable_from_queued() -> None:
    assert reachable(RECHECK_MOVES, RecheckStatus.QUEUED) == frozenset(RecheckStatus)


def test_done_failed_and_cancelled_end_a_recheck_and_have_no_exits() -> None:
    assert ended_states(RECHECK_MOVES, RecheckStatus) == ENDED
    assert {RecheckStatus.DONE, RecheckStatus.FAILED, RecheckStatus.CANCELLED} == ENDED
    assert not any(source in ENDED for source, _ in RECHECK_MOVES)


def test_every_recheck_move_is_used() -> None:
    assert {move for _, move in RECHECK_MOVES} == set(RecheckMove)


# --- request rules -----------------------------------------------------------------------------------


def request(**kwargs: object) -> Recheck:
    arguments: dict[str, object] = {
        "recheck_id": RecheckId(1),
        "site": SITE,
        "parent_audit_id": PARENT,
        "scopes": SCOPES,
        "now": NOW,
    } | kwargs
    return request_recheck(**arguments).recheck  # type: ignore[arg-type]


@pytest.mark.parametrize("body", [{}, {"task_key": "0" * 16, "urls": [ORIGIN + "/"]}])
def test_a_recheck_needs_exactly_one_of_task_key_and_urls(body: dict[str, object]) -> None:
    with pytest.raises(ValidationFailed) as raised:
        request(**body)
    assert raised.value.code is ErrorCode.VALIDATION_FAILED and set(raised.value.fields) == {
        "task_key",
        "urls",
    }


def test_a_recheck_of_an_unverified_site_answers_site_not_verified() -> None:
    with pytest.raises(SiteNotVerified) as raised:
        request(site=a_site(verified=False), urls=[ORIGIN + "/"])
    assert raised.value.code is ErrorCode.SITE_NOT_VERIFIED and raised.value.status == 409


def test_a_recheck_of_an_unknown_task_answers_not_found() -> None:
    with pytest.raises(NotFound) as raised:
        request(task_key=a_task().key, tasks=[])
    assert raised.value.code is ErrorCode.NOT_FOUND and raised.value.status == 404


def test_another_sites_task_is_not_found_either() -> None:
    foreign = FixTask.open(
        SiteId(8), TaskFinding("title_missing", "/", Severity.ERROR, 1), audit_id=PARENT, now=NOW
    )
    with pytest.raises(NotFound):
        request(task_key=foreign.key, tasks=[foreign], task_urls={foreign.key: [TaskUrl(ORIGIN + "/")]})


@pytest.mark.parametrize("code", ["orphan_page", "duplicate_title", "not_in_catalogue"])
def test_a_task_a_recheck_cannot_judge_answers_cannot_verify_and_starts_nothing(code: str) -> None:
    task = a_task(code=code)
    with pytest.raises(CannotVerify) as raised:
        request(task_key=task.key, tasks=[task], task_urls={task.key: blog_urls(3)})
    assert raised.value.code is ErrorCode.CANNOT_VERIFY and raised.value.status == 422


def test_a_recheck_of_a_task_already_verifying_answers_conflict() -> None:
    task = a_task().start_verifying(RecheckId(1), now=NOW)[0]
    with pytest.raises(InvalidTransition) as raised:
        request(task_key=task.key, tasks=[task], task_urls={task.key: blog_urls(3)})
    assert raised.value.code is ErrorCode.CONFLICT


def test_a_plan_decided_before_the_store_numbered_it_is_the_plan_decided_with_the_id() -> None:
    """The service decides once, with no id yet, and numbers the plan when the store gives the id: the
    same as deciding with the id from the start (the recheck, the task it claims and its event)."""
    task = a_task()
    asked: dict[str, object] = {"task_key": task.key, "tasks": [task], "task_urls": {task.key: blog_urls(3)}}
    common: dict[str, object] = {"site": SITE, "parent_audit_id": PARENT, "scopes": SCOPES, "now": NOW}
    unnumbered = request_recheck(recheck_id=RecheckId(0), **common, **asked)  # type: ignore[arg-type]
    with_id = request_recheck(recheck_id=RecheckId(9), **common, **asked)  # type: ignore[arg-type]
    assert unnumbered.numbered(RecheckId(9)) == with_id
    assert with_id.tasks[0].recheck_id == 9 and with_id.events[0].recheck_id == 9


@pytest.mark.parametrize(
    "urls",
    [
        [],
        [f"{ORIGIN}/p/{n}" for n in range(MAX_RECHECK_URLS + 1)],
        ["https://other-shop.example/blog/first-post"],
        [ORIGIN + "/ok", "https://sub.retro-clock.example/"],
        ["ftp://retro-clock.example/file"],
        ["https://user@retro-clock.example/"],
    ],
)
def test_recheck_urls_off_the_host_or_more_than_200_answer_invalid_urls(urls: list[str]) -> None:
    with pytest.raises(InvalidUrls) as raised:
        request(urls=urls)
    assert raised.value.code is ErrorCode.INVALID_URLS and raised.value.status == 422


def test_recheck_urls_are_normalised_deduplicated_and_cost_one_credit_each() -> None:
    plan = request_recheck(
        recheck_id=RecheckId(1),
        site=SITE,
        parent_audit_id=PARENT,
        scopes=SCOPES,
        now=NOW,
        urls=[ORIGIN + "/blog/first-post", "HTTPS://RETRO-CLOCK.EXAMPLE:443/blog/first-post#x", ORIGIN],
    )
    assert [u.url for u in plan.recheck.urls] == [ORIGIN + "/blog/first-post", ORIGIN + "/"]
    assert plan.estimated_credits == 2 == plan.recheck.urls_total
    assert plan.recheck.status is RecheckStatus.QUEUED and plan.recheck.version == 0


def test_a_task_with_more_than_200_urls_rechecks_the_200_most_clicked() -> None:
    task = a_task(pages=450)
    plan = request_recheck(
        recheck_id=RecheckId(5),
        site=SITE,
        parent_audit_id=PARENT,
        scopes=SCOPES,
        now=NOW,
        task_key=task.key.upper(),
        tasks=[task],
        task_urls={task.key: blog_urls(450)},
    )
    recheck = plan.recheck
    assert recheck.sampled and recheck.urls_total == 200 and plan.estimated_credits == 200
    target = recheck.targets[0]
    assert target.sampled and not target.covers_task and target.claimed
    assert all(u.baseline == {"title_missing"} for u in recheck.urls)
    assert plan.tasks[0].status is TaskStatus.VERIFYING and plan.tasks[0].recheck_id == RecheckId(5)


@given(
    clicks=st.lists(st.none() | st.integers(0, 5), min_size=0, max_size=260),
    limit=st.integers(1, 200),
    seed=st.randoms(use_true_random=False),
)
def test_sampling_takes_the_most_clicked_urls_whatever_the_input_order(
    clicks: list[int | None], limit: int, seed: object
) -> None:
    urls = [TaskUrl(f"{ORIGIN}/p/{n:03}", clicks_28d=c) for n, c in enumerate(clicks)]
    chosen, sampled = sample_task_urls(urls, limit)
    shuffled = list(urls)
    seed.shuffle(shuffled)  # type: ignore[attr-defined]
    assert sample_task_urls(shuffled, limit) == (chosen, sampled)
    assert sampled == (len(urls) > limit) and len(chosen) == min(limit, len(urls))
    left_out = [u.clicks_28d or 0 for u in urls if u.url not in set(chosen)]
    kept = [u.clicks_28d or 0 for u in urls if u.url in set(chosen)]
    assert not left_out or not kept or min(kept) >= max(left_out)


# --- verdicts ----------------------------------------------------------------------------------------

URL = ORIGIN + "/blog/first-post"


@pytest.mark.parametrize(
    ("baseline", "unjudgeable", "seen", "result"),
    [
        ({"title_missing"}, set(), ok(URL), UrlResult.FIXED),
        ({"title_missing"}, set(), ok(URL, "title_missing"), UrlResult.STILL_FAILING),
        ({"title_missing"}, set(), ok(URL, "broken_link"), UrlResult.NEW_ISSUE),
        (set(), set(), ok(URL, "broken_link"), UrlResult.NEW_ISSUE),
        (set(), set(), ok(URL), UrlResult.PASSING),
        (set(), {"orphan_page"}, ok(URL), UrlResult.CANNOT_VERIFY),
        ({"title_missing"}, {"orphan_page"}, ok(URL), UrlResult.FIXED),
        ({"title_missing"}, set(), ok(URL, status=404), UrlResult.NOT_CHECKED),
        ({"title_missing"}, set(), UrlObservation(URL, fetch_error="timeout"), UrlResult.NOT_CHECKED),
        # A bot challenge answered instead of the page: the brief asks for cannot_verify there.
        (
            {"title_missing"},
            set(),
            UrlObservation(URL, 200, blocked_by="cloudflare"),
            UrlResult.CANNOT_VERIFY,
        ),
        ({"title_missing"}, set(), None, UrlResult.NOT_CHECKED),
        ({"title_missing"}, set(), ok(URL, redirect_to=ORIGIN + "/blog/first"), UrlResult.FIXED),
    ],
)
def test_a_urls_result_compares_the_parent_audit_with_what_the_recheck_saw(
    baseline: set[str], unjudgeable: set[str], seen: UrlObservation | None, result: UrlResult
) -> None:
    target = RecheckUrl(URL, frozenset(baseline), frozenset(unjudgeable))
    outcome = judge_url(target, seen, codes=None, unfetched="not fetched")
    assert outcome.result is result
    if result is UrlResult.NOT_CHECKED:
        assert outcome.reason


def test_a_url_row_names_failing_and_new_issues_and_the_redirect() -> None:
    target = RecheckUrl(URL, frozenset({"title_missing", "broken_link"}))
    seen = ok(URL, "title_missing", "h1_missing", redirect_to=ORIGIN + "/blog/first")
    outcome = judge_url(target, seen, codes=None, unfetched="")
    assert outcome.result is UrlResult.STILL_FAILING
    assert (outcome.issues, outcome.new_issues) == (("title_missing",), ("h1_missing",))
    assert outcome.redirected and outcome.redirect_to == ORIGIN + "/blog/first" and outcome.status_code == 200


def test_a_task_recheck_judges_only_the_tasks_check() -> None:
    target = RecheckUrl(URL, frozenset({"title_missing", "broken_link"}))
    seen = ok(URL, "broken_link", "h1_missing")
    assert judge_url(target, seen, codes={"title_missing"}, unfetched="").result is UrlResult.FIXED


def test_an_observation_is_read_from_page_facts() -> None:
    facts = PageFacts(
        url=URL, status_code=200, final_url=ORIGIN + "/blog/first", redirects=(Hop(URL, 301, "/blog/first"),)
    )
    seen = UrlObservation.from_page(facts, ["title_missing"])
    assert seen.redirect_to == ORIGIN + "/blog/first" and seen.issues == {"title_missing"}
    failed = UrlObservation.from_page(PageFacts(url=URL, fetch_error=FetchError.TLS), [])
    assert failed.unusable == "fetch_error: tls"


def target(
    urls: tuple[str, ...], *, covers: bool = True, sampled: bool = False, **kw: object
) -> RecheckTarget:
    values: dict[str, object] = {
        "task_key": TaskKey("0" * 16),
        "code": "title_missing",
        "template": "/blog/[slug]",
        "pages": len(urls),
        "urls": urls,
        "sampled": sampled,
        "covers_task": covers,
        "recheckable": True,
        "claimed": True,
        "status_before": TaskStatus.REGRESSED,
    } | kw
    return RecheckTarget(**values)  # type: ignore[arg-type]


A, B = ORIGIN + "/blog/a", ORIGIN + "/blog/b"


def test_a_task_is_fixed_only_when_every_rechecked_url_passes() -> None:
    outcome = judge_task(target((A, B)), {A: ok(A), B: ok(B, "h1_missing")})
    assert (outcome.result, outcome.urls_passing, outcome.urls_failing, outcome.status) == (
        TaskResult.FIXED,
        2,
        0,
        TaskStatus.FIXED,
    )


def test_one_failing_url_keeps_the_task_failing_and_back_where_it_was() -> None:
    outcome = judge_task(target((A, B)), {A: ok(A), B: ok(B, "title_missing")})
    assert (outcome.result, outcome.urls_failing, outcome.status) == (
        TaskResult.STILL_FAILING,
        1,
        TaskStatus.REGRESSED,
    )


def test_an_unanswered_url_leaves_the_task_not_checked() -> None:
    outcome = judge_task(target((A, B)), {A: ok(A), B: UrlObservation(B, fetch_error="timeout")})
    assert outcome.result is TaskResult.NOT_CHECKED and outcome.urls_rechecked == 2
    assert judge_task(target((A, B)), {A: ok(A)}).result is TaskResult.NOT_CHECKED


def test_a_partial_url_list_cannot_prove_a_task_fixed_but_the_tasks_own_sample_can() -> None:
    partial = judge_task(
        target((A,), covers=False, claimed=False, pages=9, status_before=TaskStatus.OPEN), {A: ok(A)}
    )
    assert partial.result is TaskResult.NOT_CHECKED and partial.status is TaskStatus.OPEN
    sample = judge_task(target((A,), covers=False, sampled=True, pages=300), {A: ok(A)})
    assert sample.result is TaskResult.FIXED


def test_a_task_of_an_unjudgeable_check_in_a_url_list_is_cannot_verify() -> None:
    outcome = judge_task(target((A,), recheckable=False, claimed=False), {A: ok(A)})
    assert outcome.result is TaskResult.CANNOT_VERIFY


# --- a whole recheck ---------------------------------------------------------------------------------


def a_task_recheck() -> tuple[Recheck, FixTask]:
    task = a_task(pages=2)
    plan = request_recheck(
        recheck_id=RecheckId(3),
        site=SITE,
        parent_audit_id=PARENT,
        scopes=SCOPES,
        now=NOW,
        task_key=task.key,
        tasks=[task],
        task_urls={task.key: [TaskUrl(A), TaskUrl(B)]},
    )
    return plan.recheck, plan.tasks[0]


def test_results_are_hidden_until_the_recheck_ends() -> None:
    recheck, _ = a_task_recheck()
    running, _ = recheck.start(now=NOW)
    running = running.record(ok(A)).record(ok(B))
    assert running.url_results is None and running.task_results is None and running.pages_crawled == 2
    done, ended = running.finish(now=NOW + timedelta(seconds=30))
    assert done.status is RecheckStatus.DONE and done.finished_at == NOW + timedelta(seconds=30)
    assert [r.result for r in done.url_results or ()] == [UrlResult.FIXED, UrlResult.FIXED]
    assert ended.tasks[0].result is TaskResult.FIXED and ended.credits_used == 2
    assert done.version == 4


def test_a_time_capped_recheck_reports_the_unfetched_urls_as_not_checked() -> None:
    recheck, task = a_task_recheck()
    running = recheck.start(now=NOW)[0].record(ok(A))
    done, ended = running.finish(now=NOW, time_capped=True)
    assert done.time_capped and done.credits_used == 1
    assert [r.result for r in done.url_results or ()] == [UrlResult.FIXED, UrlResult.NOT_CHECKED]
    assert ended.tasks[0].result is TaskResult.NOT_CHECKED and ended.tasks[0].status is TaskStatus.OPEN
    settled, _ = settle_tasks(done, [task], now=NOW)
    assert settled[0].status is TaskStatus.OPEN


def test_settling_a_recheck_twice_changes_nothing_the_second_time() -> None:
    recheck, task = a_task_recheck()
    done, _ = recheck.start(now=NOW)[0].record(ok(A)).record(ok(B)).finish(now=NOW)
    once, events = settle_tasks(done, [task], now=NOW)
    assert once[0].status is TaskStatus.FIXED and len(events) == 1
    assert settle_tasks(done, once, now=NOW) == (once, ())


def test_settling_a_recheck_that_has_not_ended_answers_conflict() -> None:
    recheck, task = a_task_recheck()
    with pytest.raises(Conflict):
        settle_tasks(recheck, [task], now=NOW)


def test_recording_a_url_again_replaces_the_first_observation() -> None:
    recheck, _ = a_task_recheck()
    running = recheck.start(now=NOW)[0].record(ok(A, "title_missing")).record(ok(A))
    assert running.observations == (ok(A),)
    with pytest.raises(ValueError, match="not one of"):
        running.record(ok(ORIGIN + "/elsewhere"))


def test_a_queued_recheck_cannot_finish_or_record_and_an_ended_one_cannot_be_cancelled() -> None:
    recheck, _ = a_task_recheck()
    with pytest.raises(InvalidTransition):
        recheck.finish(now=NOW)
    with pytest.raises(InvalidTransition):
        recheck.record(ok(A))
    cancelled, ended = recheck.cancel(now=NOW)
    assert cancelled.failure_reason == "cancelled" and ended.credits_used == 0
    with pytest.raises(InvalidTransition) as raised:
        cancelled.cancel(now=NOW)
    assert raised.value.code is ErrorCode.CONFLICT


def test_a_url_list_claims_only_the_open_recheckable_tasks_it_covers_completely() -> None:
    blog = a_task(pages=2)
    shop = a_task(code="broken_link", template="/shop/[item]", pages=3)
    orphan = a_task(code="orphan_page", template="/old/[page]", pages=1)
    old = ORIGIN + "/old/p"
    plan = request_recheck(
        recheck_id=RecheckId(8),
        site=SITE,
        parent_audit_id=PARENT,
        scopes=SCOPES,
        now=NOW,
        urls=[A, B, ORIGIN + "/shop/x", old],
        tasks=[blog, shop, orphan],
        task_urls={
            blog.key: [TaskUrl(A), TaskUrl(B)],
            shop.key: [TaskUrl(ORIGIN + "/shop/x")],
            orphan.key: [TaskUrl(old)],
        },
        baseline={A: ["title_missing"], B: ["title_missing"], old: ["orphan_page"]},
    )
    assert plan.recheck.claimed_task_keys == {blog.key}
    assert [t.key for t in plan.tasks] == [blog.key]
    by_key = {t.task_key: t for t in plan.recheck.targets}
    assert not by_key[shop.key].covers_task and not by_key[orphan.key].recheckable
    assert plan.recheck.urls[3] == RecheckUrl(old, frozenset(), frozenset({"orphan_page"}), link_targets=())
    done, ended = (
        plan.recheck.start(now=NOW)[0]
        .record(ok(A))
        .record(ok(B))
        .record(ok(ORIGIN + "/shop/x"))
        .record(ok(old))
        .finish(now=NOW)
    )
    results = {t.task_key: t.result for t in ended.tasks}
    assert results == {
        blog.key: TaskResult.FIXED,
        shop.key: TaskResult.NOT_CHECKED,
        orphan.key: TaskResult.CANNOT_VERIFY,
    }
    assert [r.result for r in done.url_results or ()] == [
        UrlResult.FIXED,
        UrlResult.FIXED,
        UrlResult.PASSING,
        UrlResult.CANNOT_VERIFY,
    ]


# --- the fix task + recheck machine ------------------------------------------------------------------

# A small site: each task is one check on one template with fixed URLs; two tasks share /shop/x.
TASK_SHAPES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("title_missing", "/blog/[slug]", (A, B, ORIGIN + "/blog/c")),
    ("broken_link", "/shop/[item]", (ORIGIN + "/shop/x", ORIGIN + "/shop/y")),
    ("title_missing", "/shop/[item]", (ORIGIN + "/shop/x",)),
    ("orphan_page", "/old/[page]", (ORIGIN + "/old/p",)),
)
ALL_URLS = sorted({url for _, _, urls in TASK_SHAPES for url in urls})
KEYS = tuple(task_key(SITE.id, code, template) for code, template, _ in TASK_SHAPES)
SHAPE = dict(zip(KEYS, TASK_SHAPES, strict=True))


class FixTaskAndRecheckMachine(RuleBasedStateMachine):
    """Tasks and rechecks of one site, with the two transition tables as the oracle."""

    def __init__(self) -> None:
        super().__init__()
        self.now = NOW
        self.crawl = 0
        self.baseline: dict[str, set[str]] = {}
        self.tasks: dict[TaskKey, FixTask] = {}
        self.expected_status: dict[TaskKey, TaskStatus] = {}
        self.expected_version: dict[TaskKey, int] = {}
        self.rechecks: dict[RecheckId, Recheck] = {}
        self.recheck_moves: dict[RecheckId, int] = {}

    def tick(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now

    def move_task(self, key: TaskKey, move: TaskMove) -> None:
        self.expected_status[key] = next_state(TASK_MOVES, self.expected_status[key], move, entity="task")
        self.expected_version[key] += 1

    def move_recheck(self, recheck_id: RecheckId, move: RecheckMove) -> RecheckStatus:
        self.recheck_moves[recheck_id] += 1
        return next_state(RECHECK_MOVES, self.rechecks[recheck_id].status, move, entity="recheck")

    def task_urls(self) -> dict[TaskKey, list[TaskUrl]]:
        return {key: [TaskUrl(u, clicks_28d=n) for n, u in enumerate(SHAPE[key][2])] for key in self.tasks}

    # full audits

    @rule(found=st.sets(st.sampled_from(range(len(TASK_SHAPES)))))
    def full_audit(self, found: set[int]) -> None:
        self.crawl += 1
        findings = [
            TaskFinding(code, template, Severity.ERROR, len(urls))
            for n, (code, template, urls) in enumerate(TASK_SHAPES)
            if n in found
        ]
        refresh = refresh_tasks(
            self.tasks.values(),
            findings,
            site_id=SITE.id,
            audit_id=AuditId(self.crawl),
            now=self.tick(),
            evidence={key: TaskEvidence(audited=1) for key in self.tasks},
        )
        found_keys = {KEYS[n] for n in found}
        for key in KEYS:
            if key in found_keys and key not in self.expected_status:
                self.expected_status[key], self.expected_version[key] = TaskStatus.OPEN, 0
            elif key in found_keys:
                self.move_task(key, TaskMove.AUDIT_FOUND)
            elif (self.expected_status.get(key), TaskMove.AUDIT_MISSED) in TASK_MOVES:
                self.move_task(key, TaskMove.AUDIT_MISSED)
        self.tasks = {t.key: t for t in refresh.tasks}
        self.baseline = {}
        for key in found_keys:
            code, _, urls = SHAPE[key]
            for url in urls:
                self.baseline.setdefault(url, set()).add(code)

    # requesting

    @precondition(lambda self: self.tasks)
    @rule(pick=st.integers(0, len(TASK_SHAPES) - 1))
    def recheck_a_task(self, pick: int) -> None:
        key = sorted(self.tasks)[pick % len(self.tasks)]
        task = self.tasks[key]
        recheck_id = RecheckId(len(self.rechecks) + 1)
        expected: type[DomainError] | None = None
        if not SCOPES[task.code].recheckable:
            expected = CannotVerify
        elif (task.status, TaskMove.START_RECHECK) not in TASK_MOVES:
            expected = InvalidTransition

        def ask() -> RecheckPlan:
            return request_recheck(
                recheck_id=recheck_id,
                site=SITE,
                parent_audit_id=AuditId(self.crawl),
                scopes=SCOPES,
                now=self.tick(),
                task_key=key,
                tasks=self.tasks.values(),
                task_urls=self.task_urls(),
                baseline=self.baseline,
            )

        if expected is not None:
            with pytest.raises(expected):
                ask()
            return
        plan = ask()
        assert plan.recheck.claimed_task_keys == {key}
        self.accept(plan.recheck, plan.tasks)

    @precondition(lambda self: self.tasks)
    @rule(urls=st.lists(st.sampled_from(ALL_URLS), min_size=1, unique=True))
    def recheck_urls(self, urls: list[str]) -> None:
        plan = request_recheck(
            recheck_id=RecheckId(len(self.rechecks) + 1),
            site=SITE,
            parent_audit_id=AuditId(self.crawl),
            scopes=SCOPES,
            now=self.tick(),
            urls=urls,
            tasks=self.tasks.values(),
            task_urls=self.task_urls(),
            baseline=self.baseline,
        )
        wanted = {
            key
            for key, task in self.tasks.items()
            if set(SHAPE[key][2]) <= set(urls)
            and SCOPES[task.code].recheckable
            and (task.status, TaskMove.START_RECHECK) in TASK_MOVES
        }
        assert plan.recheck.claimed_task_keys == wanted
        self.accept(plan.recheck, plan.tasks)

    def accept(self, recheck: Recheck, moved: tuple[FixTask, ...]) -> None:
        assert recheck.status is RecheckStatus.QUEUED and recheck.version == 0
        self.rechecks[recheck.id] = recheck
        self.recheck_moves[recheck.id] = 0
        for task in moved:
            self.move_task(task.key, TaskMove.START_RECHECK)
            self.tasks[task.key] = task

    # running

    def pick(self, pick: int, *statuses: RecheckStatus) -> Recheck | None:
        chosen = [r for r in self.rechecks.values() if r.status in statuses]
        return chosen[pick % len(chosen)] if chosen else None

    @rule(pick=st.integers(0, 50))
    def start(self, pick: int) -> None:
        recheck = self.pick(pick, RecheckStatus.QUEUED)
        if recheck is None:
            return
        status = self.move_recheck(recheck.id, RecheckMove.START)
        started, _ = recheck.start(now=self.tick())
        assert started.status is status
        self.rechecks[recheck.id] = started

    @rule(
        pick=st.integers(0, 50),
        url=st.integers(0, 200),
        codes=st.sets(st.sampled_from(["title_missing", "broken_link", "h1_missing"])),
        status=st.sampled_from([200, 200, 200, 404, 503, None]),
        blocked=st.booleans(),
    )
    def record(self, pick: int, url: int, codes: set[str], status: int | None, blocked: bool) -> None:
        recheck = self.pick(pick, RecheckStatus.RUNNING)
        if recheck is None:
            return
        target = recheck.urls[url % len(recheck.urls)].url
        seen = UrlObservation(
            url=target,
            status_code=status,
            fetch_error="timeout" if status is None else None,
            blocked_by="cloudflare" if blocked and status is not None else None,
            issues=frozenset(codes),
        )
        self.move_recheck(recheck.id, RecheckMove.RECORD)
        self.rechecks[recheck.id] = recheck.record(seen)

    @rule(pick=st.integers(0, 50))
    def the_fix_worked(self, pick: int) -> None:
        recheck = self.pick(pick, RecheckStatus.RUNNING)
        if recheck is None:
            return
        for target in recheck.urls:
            self.move_recheck(recheck.id, RecheckMove.RECORD)
            recheck = recheck.record(ok(target.url))
        self.rechecks[recheck.id] = recheck

    @rule(pick=st.integers(0, 50), how=st.sampled_from(RecheckMove), capped=st.booleans())
    def end(self, pick: int, how: RecheckMove, capped: bool) -> None:
        recheck = self.pick(pick, *RecheckStatus)
        if recheck is None or how in (RecheckMove.START, RecheckMove.RECORD):
            return
        if (recheck.status, how) not in RECHECK_MOVES:
            with pytest.raises(InvalidTransition):
                self.call_end(recheck, how, capped)
            return
        status = self.move_recheck(recheck.id, how)
        ended, event = self.call_end(recheck, how, capped)
        assert ended.status is status is event.status and ended.finished_at == self.now
        self.rechecks[recheck.id] = ended
        verdicts = {t.task_key: t for t in event.tasks}
        settled, events = settle_tasks(ended, self.tasks.values(), now=self.tick())
        for task in settled:
            before = self.tasks[task.key]
            if task.key in ended.claimed_task_keys:
                result = verdicts[task.key].result
                move = (
                    TaskMove.RECHECK_FIXED
                    if result is TaskResult.FIXED
                    else TaskMove.RECHECK_UNFIXED_REGRESSED
                    if before.status_before_verifying is TaskStatus.REGRESSED
                    else TaskMove.RECHECK_UNFIXED_OPEN
                )
                self.move_task(task.key, move)
                # Only a `fixed` task result makes a task fixed, and it always does.
                assert (task.status is TaskStatus.FIXED) == (result is TaskResult.FIXED)
                assert verdicts[task.key].status is task.status
            else:
                assert task == before
            self.tasks[task.key] = task
        assert all(e.move is TaskMove.RECHECK_FIXED for e in events if e.after is TaskStatus.FIXED)

    def call_end(self, recheck: Recheck, how: RecheckMove, capped: bool) -> tuple[Recheck, RecheckEnded]:
        if how is RecheckMove.FINISH:
            return recheck.finish(now=self.now, time_capped=capped)
        if how is RecheckMove.FAIL:
            return recheck.fail("internal_error", now=self.now)
        return recheck.cancel(now=self.now)

    # invariants

    @invariant()
    def statuses_follow_the_table(self) -> None:
        assert {k: t.status for k, t in self.tasks.items()} == self.expected_status

    @invariant()
    def version_counts_transitions(self) -> None:
        assert {k: t.version for k, t in self.tasks.items()} == self.expected_version
        assert {i: r.version for i, r in self.rechecks.items()} == self.recheck_moves

    @invariant()
    def a_task_is_verifying_iff_an_unfinished_recheck_covers_it(self) -> None:
        for key, task in self.tasks.items():
            deciding = [r.id for r in self.rechecks.values() if not r.ended and key in r.claimed_task_keys]
            assert len(deciding) <= 1
            assert (task.status is TaskStatus.VERIFYING) == bool(deciding)
            assert task.recheck_id == (deciding[0] if deciding else None)

    @invariant()
    def results_are_present_iff_the_recheck_ended(self) -> None:
        for recheck in self.rechecks.values():
            assert (recheck.url_results is not None) == recheck.ended == (recheck.task_results is not None)
            assert (recheck.finished_at is not None) == recheck.ended
            if recheck.url_results is not None:
                assert [r.url for r in recheck.url_results] == [u.url for u in recheck.urls]


TestFixTaskAndRecheckMachine = FixTaskAndRecheckMachine.TestCase


# --- a bot challenge, and the worker lease ------------------------------------------------------------


def test_a_task_whose_pages_answered_a_bot_challenge_cannot_be_verified() -> None:
    challenged = UrlObservation(B, 403, blocked_by="cloudflare")
    outcome = judge_task(target((A, B)), {A: ok(A), B: challenged})
    assert outcome.result is TaskResult.CANNOT_VERIFY and outcome.status is TaskStatus.REGRESSED
    assert judge_task(target((A, B)), {A: ok(A, "title_missing"), B: challenged}).result is (
        TaskResult.STILL_FAILING
    )


def test_one_runner_holds_a_recheck_until_its_lease_expires_then_another_takes_over() -> None:
    recheck, _ = a_task_recheck()
    first = recheck.claim("worker-1", now=NOW, until=NOW + timedelta(minutes=3))
    assert first is not None and (first.lease_holder, first.attempts) == ("worker-1", 1)
    assert first.claim("worker-2", now=NOW + timedelta(minutes=1), until=NOW) is None
    again = first.claim("worker-1", now=NOW + timedelta(minutes=1), until=NOW + timedelta(minutes=4))
    assert again is not None and again.attempts == 1  # the same runner renewing is not a new run
    taken = first.claim("worker-2", now=NOW + timedelta(minutes=4), until=NOW + timedelta(minutes=7))
    assert taken is not None and (taken.lease_holder, taken.attempts) == ("worker-2", 2)
    assert first.renew("worker-2", until=NOW) is None and taken.renew("worker-2", until=NOW) is not None
    requeued = taken.requeue(until=NOW + timedelta(minutes=30))
    assert (requeued.lease_holder, requeued.attempts) == (None, 3)
    claimed = requeued.claim("worker-3", now=NOW + timedelta(minutes=8), until=NOW + timedelta(minutes=9))
    assert claimed is not None and claimed.attempts == 3  # the requeue counted this run already


def test_a_recheck_is_stalled_past_its_lease_and_grace_or_queued_too_long_and_never_once_ended() -> None:
    recheck, _ = a_task_recheck()
    assert not recheck.stalled(NOW + timedelta(minutes=29), grace_s=60, queued_s=1800)
    assert recheck.stalled(NOW + timedelta(minutes=31), grace_s=60, queued_s=1800)
    held = recheck.claim("worker-1", now=NOW, until=NOW + timedelta(minutes=3))
    assert held is not None
    assert not held.stalled(NOW + timedelta(minutes=3, seconds=59), grace_s=60, queued_s=1800)
    assert held.stalled(NOW + timedelta(minutes=4, seconds=1), grace_s=60, queued_s=1800)
    ended, _ = held.start(now=NOW)[0].cancel(now=NOW)
    assert ended.lease_holder is None and not ended.stalled(NOW + timedelta(days=1), grace_s=60, queued_s=1)
    assert ended.claim("worker-2", now=NOW + timedelta(days=1), until=NOW + timedelta(days=2)) is None


@given(steps=st.lists(st.tuples(st.sampled_from(["w1", "w2", "w3"]), st.integers(0, 600)), max_size=30))
def test_at_most_one_live_holder_whatever_the_claims(steps: list[tuple[str, int]]) -> None:
    recheck, _ = a_task_recheck()
    moment = NOW
    for holder, wait in steps:
        moment += timedelta(seconds=wait)
        before = recheck
        claimed = recheck.claim(holder, now=moment, until=moment + timedelta(seconds=180))
        live = (
            before.lease_holder is not None and before.lease_until is not None and before.lease_until > moment
        )
        if live and before.lease_holder != holder:
            assert claimed is None
        else:
            assert claimed is not None and claimed.lease_holder == holder
            assert claimed.attempts >= before.attempts
            recheck = claimed


def test_a_link_task_recheck_keeps_only_the_targets_its_check_was_reported_about() -> None:
    task = a_task(code="broken_link")
    page = ORIGIN + "/blog/first-post"
    reported = {page: {"broken_link": ["https://gone.example/a", ORIGIN + "/gone"], "other": [ORIGIN + "/x"]}}

    def plan(link_targets: Mapping[str, Mapping[str, list[str]]] | None) -> Recheck:
        return request_recheck(
            recheck_id=RecheckId(9),
            site=SITE,
            parent_audit_id=PARENT,
            scopes=SCOPES,
            now=NOW,
            task_key=task.key,
            tasks=[task],
            task_urls={task.key: [TaskUrl(page)]},
            baseline={page: ["broken_link", "other"]},
            link_targets=link_targets,
        ).recheck

    assert plan(reported).urls[0].link_targets == ("https://gone.example/a", ORIGIN + "/gone")
    assert plan(None).urls[0].link_targets is None  # archived: not known, the page's own are fetched
