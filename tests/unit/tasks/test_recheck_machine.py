"""A Hypothesis state machine over fix tasks, rechecks and credits, through the application on memory
adapters against the scripted shop: start rechecks (of a task or of URLs, with or without the credits),
fetch, redeliver, kill a worker mid-run, reap, cancel, fix or break the site, audit again. After every step
task statuses follow the transition table, credits are exact per recheck, and a 402 used no slot."""

import atexit

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from pytest_httpserver import HTTPServer

from siteaudit.domain.credit import EntryKind
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import RecheckId, UserId
from siteaudit.domain.recheck import Recheck, RecheckStatus
from siteaudit.domain.task import FixedBy, FixTask, TaskStatus
from siteaudit.services.tasks.recheck import RECHECK_LIMIT, rate_bucket
from siteaudit.services.tasks.usecases import CancelRecheck, GetRecheck, RequestRecheck
from tests.unit.tasks.shop import POSTS, PRODUCTS, Shop, audit, drain, shop_app, verified_site

_SERVER: dict[str, HTTPServer] = {}


def shared_server() -> HTTPServer:
    """One local server for every example (each example scripts a fresh Shop on it)."""
    if "server" not in _SERVER:
        server = HTTPServer(host="127.0.0.1", port=0)
        server.start()
        atexit.register(server.stop)
        _SERVER["server"] = server
    server = _SERVER["server"]
    server.clear()
    return server


class RecheckMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.shop = Shop(shared_server())
        # The shop's audits unpaced, as shop_app makes them (the machine is about tasks and rechecks, not
        # politeness): paced at the verified 10 requests/s, its waits were 20 of the test's 26 s.
        self.app = shop_app()
        issued = self.app.application.ensure_local_owner(plan="scale", starting_credits=100_000)
        assert issued is not None
        self.caller = self.app.application.authenticate(issued.raw)
        self.site = verified_site(self.app, self.shop, self.caller)
        audit(self.app, self.site, self.caller)
        self.rechecks: list[RecheckId] = []
        self.holds = 0

    # --- helpers ---

    def _tasks(self) -> list[FixTask]:
        """The site's task records as stored (the invariants read what the answers leave out)."""
        with self.app.uow() as uow:
            return list(uow.tasks.of_site(self.site.id))

    def _recheck(self, recheck_id: RecheckId) -> Recheck:
        self.app.application.handle(GetRecheck(recheck_id), self.caller)  # the caller's own
        with self.app.uow() as uow:
            return uow.rechecks.get_any(recheck_id)

    def _slots_left(self) -> int:
        decision = self.app.limiter.peek(rate_bucket(self.caller), RECHECK_LIMIT, now=self.app.clock.now())
        return decision.remaining

    # --- rules ---

    @rule(pick=st.integers(0, 20))
    def recheck_a_task(self, pick: int) -> None:
        tasks = self._tasks()
        chosen = tasks[pick % len(tasks)]
        try:
            accepted = self.app.application.handle(
                RequestRecheck(self.site.id, task_key=chosen.key), self.caller
            )
        except DomainError as refused:
            # Not judgeable, already verifying or fixed, or the hour's 30 slots are used.
            assert refused.code in (
                ErrorCode.CANNOT_VERIFY,
                ErrorCode.CONFLICT,
                ErrorCode.RECHECK_RATE_LIMITED,
            )
            if refused.code is ErrorCode.CONFLICT:
                assert chosen.status in (TaskStatus.VERIFYING, TaskStatus.FIXED)
            return
        assert chosen.status in (TaskStatus.OPEN, TaskStatus.REGRESSED)
        self.rechecks.append(RecheckId(accepted.recheck_id))

    @rule(
        which=st.lists(
            st.sampled_from([f"/products/{p}" for p in PRODUCTS] + [f"/blog/{p}" for p in POSTS]),
            min_size=1,
            max_size=4,
        )
    )
    def recheck_urls(self, which: list[str]) -> None:
        try:
            accepted = self.app.application.handle(
                RequestRecheck(self.site.id, urls=tuple(self.shop.url(p) for p in which)), self.caller
            )
        except DomainError as refused:
            assert refused.code in (ErrorCode.RECHECK_RATE_LIMITED, ErrorCode.CONFLICT)
            return
        self.rechecks.append(RecheckId(accepted.recheck_id))

    @rule()
    def recheck_without_credits(self) -> None:
        owner = UserId(self.caller.user_id)
        now = self.app.clock.now()
        self.holds += 1
        hold = f"hold:{self.holds}"
        with self.app.uow() as uow:
            uow.credits.reserve(owner, uow.credits.balance(owner), reference=hold, at=now)
            uow.commit()
        before = self._slots_left()
        try:
            self.app.application.handle(RequestRecheck(self.site.id, urls=(self.shop.url("/"),)), self.caller)
            raise AssertionError("a recheck without credits was accepted")
        except DomainError as refused:
            assert refused.code is ErrorCode.INSUFFICIENT_CREDITS
        finally:
            with self.app.uow() as uow:
                uow.credits.settle(hold, cost=0, at=now)
                uow.commit()
        assert self._slots_left() == before  # a 402 uses no slot

    @rule()
    def fetch(self) -> None:
        """The workers take every queued message."""
        drain(self.app)

    @rule(pick=st.integers(0, 50))
    def redeliver(self, pick: int) -> None:
        if self.rechecks:
            self.app.queue.recheck(self.rechecks[pick % len(self.rechecks)])  # type: ignore[attr-defined]
            drain(self.app)

    @rule(pick=st.integers(0, 50))
    def kill_a_worker(self, pick: int) -> None:
        """A worker claims a recheck and dies before fetching anything (its message is gone)."""
        if not self.rechecks:
            return
        recheck_id = self.rechecks[pick % len(self.rechecks)]
        now = self.app.clock.now()
        with self.app.uow() as uow:
            found = uow.rechecks.get_any(recheck_id)
            claimed = found.claim("dead-worker", now=now, until=now)  # it never renews
            if claimed is None:
                return
            if claimed.status is RecheckStatus.QUEUED:
                claimed, _ = claimed.start(now=now)
            uow.rechecks.save(claimed)
            uow.commit()
        drain(self.app, skip=lambda actor: actor == "run_recheck")

    @rule()
    def reap(self) -> None:
        self.app.clock.advance(4 * 3600)  # type: ignore[attr-defined]
        self.app.application.reap_stalled_rechecks()
        drain(self.app)

    @rule(pick=st.integers(0, 50))
    def cancel(self, pick: int) -> None:
        if not self.rechecks:
            return
        recheck_id = self.rechecks[pick % len(self.rechecks)]
        ended = self._recheck(recheck_id).ended
        try:
            self.app.application.handle(CancelRecheck(recheck_id), self.caller)
            assert not ended
        except DomainError as refused:
            assert ended and refused.code is ErrorCode.CONFLICT

    @rule(products=st.booleans(), posts=st.booleans())
    def change_the_site(self, products: bool, posts: bool) -> None:
        self.shop.product_description = products
        self.shop.post_h1 = posts

    @rule()
    def reaudit(self) -> None:
        audit(self.app, self.site, self.caller)

    # --- invariants ---

    @invariant()
    def task_statuses_follow_the_table(self) -> None:
        live = {r: self._recheck(r) for r in self.rechecks}
        for task in self._tasks():
            if task.status is TaskStatus.VERIFYING:
                deciding = live.get(task.recheck_id) if task.recheck_id is not None else None
                assert deciding is not None and not deciding.ended, task
                assert task.status_before_verifying in (TaskStatus.OPEN, TaskStatus.REGRESSED)
            else:
                assert task.recheck_id is None and task.status_before_verifying is None
            assert (task.status is TaskStatus.FIXED) == (task.fixed_by is not None)
            if task.fixed_by is FixedBy.RECHECK:
                assert any(
                    r.task_results
                    and any(o.task_key == task.key and o.result.value == "fixed" for o in r.task_results)
                    for r in live.values()
                )

    @invariant()
    def credits_are_exact_per_recheck(self) -> None:
        with self.app.uow() as uow:
            entries = uow.credits.entries(UserId(self.caller.user_id))
        for recheck_id in self.rechecks:
            recheck = self._recheck(recheck_id)
            mine = [e for e in entries if e.reference == f"recheck:{recheck_id}"]
            reserved = [e for e in mine if e.kind is EntryKind.RESERVE]
            charged = [e for e in mine if e.kind is EntryKind.CHARGE]
            released = [e for e in mine if e.kind is EntryKind.RELEASE]
            assert [e.amount for e in reserved] == [-10 * recheck.urls_total]
            if recheck.ended:
                assert [e.amount for e in charged] == [-10 * recheck.pages_crawled]
                assert [e.amount for e in released] == [10 * recheck.urls_total]
            else:
                assert charged == [] and released == []
            assert recheck.pages_crawled <= recheck.urls_total


TestRecheckMachine = RecheckMachine.TestCase
TestRecheckMachine.settings = settings(max_examples=8, stateful_step_count=12, deadline=None)
