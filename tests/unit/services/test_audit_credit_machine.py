"""Audit lifecycle and credits together, through the services on the memory adapters (and, through
`AuditCreditMachine.empty_storage`, on SQLite and PostgreSQL in tests/integration/sql).

Invariants, after every step: for every account, balance = grants - settled charges - open reservations
and equals the sum of its ledger entries; the credits-charged metric is the sum of the charges; no ended audit keeps an open reservation; a refund never exceeds
its reservation; every audit's version counts its transitions; an audit has ended iff finished_at is set.
"""

from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, rule

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.metrics import MemoryMetrics
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditRequest, AuditStatus
from siteaudit.domain.credit import EntryKind, credits
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import AuditId
from siteaudit.ports.repository import TeamAuditQuery, UnitOfWork
from siteaudit.services import account as accounts
from siteaudit.services import audit as audits


class AuditCreditMachine(RuleBasedStateMachine):
    audits = Bundle("audits")

    def empty_storage(self) -> Callable[[], UnitOfWork]:
        """Units of work over storage that holds nothing yet, asked for once per example."""
        store = MemoryStore()
        return lambda: MemoryUnitOfWork(store)

    @initialize()
    def people(self) -> None:
        self.uow = self.empty_storage()
        self.clock = FixedClock()
        self.queue = MemoryTaskQueue()
        self.metrics = MemoryMetrics()
        uow = self.uow
        accounts.create_user(
            "owner@retro-clock.example", plan="growth", uow=uow(), clock=self.clock, secrets=SystemSecrets()
        )
        accounts.create_user(
            "member@retro-clock.example", plan="starter", uow=uow(), clock=self.clock, secrets=SystemSecrets()
        )
        team = accounts.create_team(
            "Retro Clock", owner_email="owner@retro-clock.example", uow=uow(), clock=self.clock
        )
        accounts.add_member("Retro Clock", "member@retro-clock.example", uow=uow())
        with uow() as u:
            self.owner = u.users.by_email("owner@retro-clock.example").id
            self.member = u.users.by_email("member@retro-clock.example").id
        self.callers = [
            Caller(self.owner, team.id, "sk_ownerkey1"),
            Caller(self.member, team.id, "sk_memberkey"),
        ]
        self.grants: Counter[int] = Counter()
        self.transitions: dict[int, int] = {}

    @rule(who=st.sampled_from([0, 1]), amount=st.integers(1, 2_000))
    def grant(self, who: int, amount: int) -> None:
        email = ["owner@retro-clock.example", "member@retro-clock.example"][who]
        key = f"grant:{sum(self.grants.values())}:{amount}"
        accounts.grant_credits(email, credits(amount), key=key, uow=self.uow(), clock=self.clock)
        accounts.grant_credits(
            email, credits(amount), key=key, uow=self.uow(), clock=self.clock
        )  # replay: no-op
        self.grants[self.callers[who].user_id] += credits(amount)

    @rule(target=audits, who=st.sampled_from([0, 1]), pages=st.integers(1, 500), broker_down=st.booleans())
    def start(self, who: int, pages: int, broker_down: bool) -> AuditId:
        caller = self.callers[who]
        self.queue.refuse_with = "connection refused" if broker_down else None
        try:
            started = audits.start_audit(
                AuditRequest(url="https://retro-clock.example/", max_pages=pages),
                caller,
                uow=self.uow(),
                clock=self.clock,
                queue=self.queue,
                metrics=self.metrics,
            )
        except DomainError as error:
            assert error.code in (ErrorCode.INSUFFICIENT_CREDITS, ErrorCode.DISPATCH_FAILED)
            return AuditId(-1)
        self.transitions[started.audit.id] = 0
        return started.audit.id

    def _audit(self, audit_id: AuditId):  # type: ignore[no-untyped-def]
        with self.uow() as u:
            return u.audits.get_any(audit_id)

    @rule(audit_id=audits)
    def begin(self, audit_id: AuditId) -> None:
        if audit_id < 0:
            return
        before = self._audit(audit_id)
        audits.begin_audit(audit_id, uow=self.uow(), clock=self.clock)
        if before.status is AuditStatus.QUEUED:
            self.transitions[audit_id] += 1

    @rule(audit_id=audits, fetched=st.integers(0, 60), not_modified=st.integers(0, 60))
    def progress(self, audit_id: AuditId, fetched: int, not_modified: int) -> None:
        if audit_id < 0 or self._audit(audit_id).status is not AuditStatus.RUNNING:
            return
        audit = self._audit(audit_id)
        crawled = min(audit.max_pages, audit.pages_crawled + fetched)
        nm = min(crawled, audit.pages_not_modified + not_modified)
        audits.record_progress(
            audit_id, pages_crawled=crawled, pages_not_modified=nm, uow=self.uow(), clock=self.clock
        )
        self.transitions[audit_id] += 1

    @rule(audit_id=audits, partial=st.booleans(), score=st.integers(0, 100))
    def finish(self, audit_id: AuditId, partial: bool, score: int) -> None:
        if audit_id < 0 or self._audit(audit_id).status is not AuditStatus.RUNNING:
            return
        audits.stop_crawling(audit_id, partial=partial, uow=self.uow(), clock=self.clock)
        audits.publish_report(
            audit_id, health_score=score, uow=self.uow(), clock=self.clock, metrics=self.metrics
        )
        self.transitions[audit_id] += 2

    @rule(audit_id=audits, who=st.sampled_from([0, 1]))
    def cancel(self, audit_id: AuditId, who: int) -> None:
        if audit_id < 0:
            return
        ended = self._audit(audit_id).status.ended
        try:
            audits.cancel_audit(
                audit_id, self.callers[who], uow=self.uow(), clock=self.clock, metrics=self.metrics
            )
        except DomainError as error:
            assert ended and error.code is ErrorCode.CONFLICT
        else:
            assert not ended
            self.transitions[audit_id] += 1

    @rule(audit_id=consumes(audits))
    def crash_and_fail(self, audit_id: AuditId) -> None:
        if audit_id < 0:
            return
        ended = self._audit(audit_id).status.ended
        fail = "reaped: lease expired"
        audits.fail_audit(audit_id, fail, uow=self.uow(), clock=self.clock, metrics=self.metrics)
        audits.fail_audit(
            audit_id, fail, uow=self.uow(), clock=self.clock, metrics=self.metrics
        )  # redelivery
        if not ended:
            self.transitions[audit_id] += 1

    @invariant()
    def balances_add_up(self) -> None:
        if not hasattr(self, "uow"):
            return
        with self.uow() as u:
            for caller in self.callers:
                entries = u.credits.entries(caller.user_id)
                by_kind = Counter[EntryKind]()
                for entry in entries:
                    by_kind[entry.kind] += entry.amount
                open_holds = sum(
                    -e.amount
                    for e in entries
                    if e.kind is EntryKind.RESERVE and not u.credits.is_settled(e.reference)
                )
                balance = u.credits.balance(caller.user_id)
                assert balance == sum(e.amount for e in entries) >= 0
                assert balance == self.grants[caller.user_id] + by_kind[EntryKind.CHARGE] - open_holds
                assert by_kind[EntryKind.GRANT] == self.grants[caller.user_id]
                assert by_kind[EntryKind.RELEASE] <= -by_kind[EntryKind.RESERVE]

    @invariant()
    def the_credits_charged_metric_counts_every_charge_once(self) -> None:
        if not hasattr(self, "uow"):
            return
        with self.uow() as u:
            charged = -sum(
                e.amount
                for caller in self.callers
                for e in u.credits.entries(caller.user_id)
                if e.kind is EntryKind.CHARGE
            )
        assert self.metrics.credits_tenths == charged

    @invariant()
    def audits_are_consistent(self) -> None:
        if not hasattr(self, "uow"):
            return
        with self.uow() as u:
            for audit_id, transitions in self.transitions.items():
                audit = u.audits.get_any(AuditId(audit_id))
                assert audit.version == transitions
                assert audit.status.ended == (audit.finished_at is not None)
                settled = u.credits.is_settled(f"audit:{audit_id}")
                assert settled == audit.status.ended, "an ended audit never keeps an open reservation"
                if settled:
                    charged = -sum(
                        e.amount
                        for e in u.credits.entries(audit.payer_id)
                        if e.key == f"audit:{audit_id}:charge"
                    )
                    assert 0 <= charged <= audit.credits_reserved
                    assert charged <= audit.pages_crawled * 10 + 9


TestAuditCreditMachine = AuditCreditMachine.TestCase


def test_a_refused_reservation_creates_nothing() -> None:
    store, clock, queue = MemoryStore(), FixedClock(), MemoryTaskQueue()
    accounts.create_user(
        "poor@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    team = accounts.create_team(
        "Poor", owner_email="poor@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock
    )
    with MemoryUnitOfWork(store) as u:
        caller = Caller(u.users.by_email("poor@retro-clock.example").id, team.id)
    with pytest.raises(DomainError) as caught:
        audits.start_audit(
            AuditRequest(url="https://retro-clock.example/"),
            caller,
            uow=MemoryUnitOfWork(store),
            clock=clock,
            queue=queue,
        )
    assert caught.value.code is ErrorCode.INSUFFICIENT_CREDITS
    with MemoryUnitOfWork(store) as u:
        assert u.audits.list(TeamAuditQuery(team=team.id)) == ([], 0)
    assert queue.pending() == []


def test_a_dispatch_failure_fails_the_audit_and_refunds_everything() -> None:
    store, clock, queue = MemoryStore(), FixedClock(), MemoryTaskQueue()
    accounts.create_user(
        "rich@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    team = accounts.create_team(
        "Rich", owner_email="rich@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock
    )
    accounts.grant_credits(
        "rich@retro-clock.example", credits(1000), key="g1", uow=MemoryUnitOfWork(store), clock=clock
    )
    with MemoryUnitOfWork(store) as u:
        caller = Caller(u.users.by_email("rich@retro-clock.example").id, team.id)
    queue.refuse_with = "connection refused"
    with pytest.raises(DomainError) as caught:
        audits.start_audit(
            AuditRequest(url="https://retro-clock.example/"),
            caller,
            uow=MemoryUnitOfWork(store),
            clock=clock,
            queue=queue,
        )
    assert (caught.value.code, caught.value.status) == (ErrorCode.DISPATCH_FAILED, 503)
    with MemoryUnitOfWork(store) as u:
        [audit], _ = u.audits.list(TeamAuditQuery(team=team.id))
        assert audit.status is AuditStatus.FAILED
        assert audit.failure_reason == "dispatch_failed: connection refused"
        assert u.credits.balance(caller.user_id) == credits(1000)
