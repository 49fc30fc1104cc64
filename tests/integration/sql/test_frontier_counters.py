"""The frontier counters (issue 18) against the frontier itself, on memory, a SQLite file and PostgreSQL.

A Hypothesis state machine adds, marks, redelivers (the same add or mark again) and races two movers on
one audit, and after every step compares `frontier_counts` (the counters) with a real COUNT of the
frontier's rows and with a model of what each entry's state must be.
"""

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from sql_backend import Backend
from sqlalchemy import func, select

from siteaudit.adapters.sql.tables import crawl_frontier
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.ports.crawl import FrontierState

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
SITE = "https://retro-clock.example"
POOL = [f"{SITE}/p/{n}" for n in range(24)]

urls = st.lists(st.sampled_from(POOL), max_size=10)
entries = st.lists(st.tuples(st.sampled_from(POOL), st.integers(0, 4)), max_size=10)
states = st.sampled_from(list(FrontierState))
_PEOPLE = itertools.count(1)
picks = st.lists(st.integers(0, len(POOL) + 3), max_size=10)  # indexes into the queued URLs, some unknown


def new_audit(backend: Backend) -> AuditId:
    with backend.uow() as uow:
        owner = uow.users.add(User(UserId(0), f"owner-{next(_PEOPLE)}@retro-clock.example", "growth", T0))
        team = uow.teams.add(Team(TeamId(0), f"Retro Clock {owner.id}", owner.id, T0))
        audit = uow.audits.add(
            Audit(AuditId(0), team.id, owner.id, owner.id, f"{SITE}/", SITE, T0, max_pages=500)
        )
        uow.commit()
    return audit.id


def real_count(backend: Backend, audit_id: AuditId) -> Mapping[FrontierState, int]:
    """The frontier counted row by row: SQL's own COUNT, or the memory store's entries."""
    if backend.engine is None:
        return backend.crawl.frontier_recount(audit_id)
    with backend.engine.connect() as conn:
        rows = conn.execute(
            select(crawl_frontier.c.state, func.count())
            .where(crawl_frontier.c.audit_id == audit_id)
            .group_by(crawl_frontier.c.state)
        )
        return {FrontierState(state): count for state, count in rows}


class FrontierMachine(RuleBasedStateMachine):
    backend: Backend

    def __init__(self) -> None:
        super().__init__()
        self.store = self.backend.crawl
        self.audit_id = AuditId(0)
        self.model: dict[str, FrontierState] = {}  # url -> state
        self.ids: dict[str, int] = {}
        self.last: Callable[[], Any] | None = None

    @initialize()
    def audit(self) -> None:
        self.audit_id = new_audit(self.backend)

    def _add(self, pairs: list[tuple[str, int]]) -> int:
        added = self.store.frontier_add(self.audit_id, pairs)
        new = {url for url, _ in pairs if url not in self.model}
        assert added == len(new)
        for url in new:
            self.model[url] = FrontierState.QUEUED
        self.ids.update(self.store.intern(self.audit_id, new))
        return added

    def _mark(self, chosen: list[str], extra: list[int], state: FrontierState) -> int:
        ids = [self.ids[url] for url in chosen] + extra
        moved = self.store.frontier_mark(self.audit_id, ids, state)
        expected = {url for url in chosen if self.model[url] is not state}
        assert moved == len(expected)
        for url in expected:
            self.model[url] = state
        return moved

    def _chosen(self, picks: list[int]) -> tuple[list[str], list[int]]:
        known = sorted(self.model)
        chosen = [known[i] for i in picks if i < len(known)]
        unknown = [10_000 + i for i in picks if i >= len(known)]  # ids no URL has: left alone
        return chosen, unknown

    @rule(pairs=entries)
    def add(self, pairs: list[tuple[str, int]]) -> None:
        self._add(pairs)
        self.last = lambda: self._add(pairs)

    @rule(picks=picks, state=states)
    def mark(self, picks: list[int], state: FrontierState) -> None:
        chosen, unknown = self._chosen(picks)
        self._mark(chosen, unknown, state)
        self.last = lambda: self._mark(chosen, unknown, state)

    @rule(
        take=st.integers(1, 8),
        state=st.sampled_from([s for s in FrontierState if s is not FrontierState.QUEUED]),
    )
    def crawl_batch(self, take: int, state: FrontierState) -> None:
        """What the engine does: take the shallowest queued entries and mark them."""
        batch = self.store.frontier_next(self.audit_id, take)
        queued = sorted(url for url, s in self.model.items() if s is FrontierState.QUEUED)
        assert {e.url for e in batch} <= set(queued)
        assert len(batch) == min(take, len(queued))
        chosen = [e.url for e in batch]
        self._mark(chosen, [], state)
        self.last = lambda: self._mark(chosen, [], state)

    @rule()
    def redeliver(self) -> None:
        """The last add or mark again, as a redelivered batch writes it: nothing moves."""
        if self.last is not None:
            assert self.last() == 0

    @rule(first=picks, second=picks, state=states, other=states, more=entries)
    def race(
        self, first: list[int], second: list[int], state: FrontierState, other: FrontierState, more: list[Any]
    ) -> None:
        """Two movers of one audit at once (a slice and its lost-lease twin): two marks and an add.
        Marks to different states touch different entries, so the outcome does not depend on the order."""
        one, _ = self._chosen(first)
        two, _ = self._chosen(second)
        if state is not other:
            two = [url for url in two if url not in one]
        expected_new = {url for url, _ in more if url not in self.model}
        moves: dict[str, Any] = {}
        calls = {
            "one": lambda: self.store.frontier_mark(self.audit_id, [self.ids[u] for u in one], state),
            "two": lambda: self.store.frontier_mark(self.audit_id, [self.ids[u] for u in two], other),
            "add": lambda: self.store.frontier_add(self.audit_id, more),
        }
        start = threading.Barrier(len(calls))

        def run(name: str) -> None:
            start.wait()
            moves[name] = calls[name]()

        threads = [threading.Thread(target=run, args=(name,)) for name in calls]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert moves["add"] == len(expected_new)
        for url in expected_new:
            self.model[url] = FrontierState.QUEUED
        self.ids.update(self.store.intern(self.audit_id, expected_new))
        expected_one = {u for u in one if self.model[u] is not state}
        expected_two = {u for u in two if self.model[u] is not other}
        if state is other:  # the same move twice at once: each entry moved once, by one of them
            assert moves["one"] + moves["two"] == len(expected_one | expected_two)
        else:
            assert (moves["one"], moves["two"]) == (len(expected_one), len(expected_two))
        for url in expected_one:
            self.model[url] = state
        for url in expected_two:
            self.model[url] = other
        self.last = None

    @invariant()
    def counters_match_the_rows(self) -> None:
        if self.audit_id == 0:
            return
        counted = self.store.frontier_counts(self.audit_id)
        assert counted == real_count(self.backend, self.audit_id)
        assert counted == dict(Counter(self.model.values()))
        assert self.store.frontier_recount(self.audit_id) == counted


def test_the_frontier_counters_equal_a_count_of_the_rows_after_every_move(backend: Backend) -> None:
    machine = type("Machine", (FrontierMachine,), {"backend": backend})
    run_state_machine_as_test(
        machine, settings=settings(max_examples=40, stateful_step_count=25, deadline=None)
    )


def test_archiving_drops_the_counters_with_the_frontier(backend: Backend) -> None:
    audit_id, other = new_audit(backend), new_audit(backend)
    for each in (audit_id, other):
        backend.crawl.frontier_add(each, [(url, 1) for url in POOL])
        backend.crawl.frontier_mark(each, [1, 2, 3], FrontierState.DONE)
    backend.crawl.archive(audit_id)
    assert backend.crawl.frontier_counts(audit_id) == {} == real_count(backend, audit_id)
    assert backend.crawl.frontier_counts(other) == {FrontierState.QUEUED: 21, FrontierState.DONE: 3}
