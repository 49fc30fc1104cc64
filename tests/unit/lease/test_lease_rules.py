"""Lease rules: the claim table, renew and release only by the holder, and a Hypothesis state machine that
runs the memory repository against an independent model of the rules."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.domain.audit import ENDED, Audit, AuditStatus
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.lease import Lease, ReapAction, first_claim, is_stalled, reap_action

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
AUDIT = AuditId(42)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def held_by(holder: str | None, *, expires: float, attempts: int = 0) -> Lease:
    return Lease(AUDIT, holder, at(expires), attempts=attempts, version=3)


@pytest.mark.parametrize(
    ("current", "claimed_at", "expected"),
    [
        (held_by(None, expires=10), 5, ("slice-b", 65, 0)),
        (held_by(None, expires=10, attempts=2), 50, ("slice-b", 110, 2)),
        (held_by("slice-b", expires=10), 5, ("slice-b", 65, 0)),
        (held_by("slice-b", expires=10, attempts=1), 50, ("slice-b", 110, 1)),
        (held_by("slice-a", expires=10), 5, None),
        (held_by("slice-a", expires=10), 9.999, None),
        (held_by("slice-a", expires=10), 10, ("slice-b", 70, 1)),
        (held_by("slice-a", expires=10, attempts=2), 40, ("slice-b", 100, 3)),
    ],
)
def test_a_claim_takes_a_free_own_or_expired_lease_and_counts_takeovers_only(
    current: Lease, claimed_at: float, expected: tuple[str, float, int] | None
) -> None:
    lease = current.claimed("slice-b", now=at(claimed_at), until=at(claimed_at + 60))
    if expected is None:
        assert lease is None
    else:
        assert lease is not None
        assert (lease.holder, lease.expires_at, lease.attempts) == (expected[0], at(expected[1]), expected[2])
        assert lease.version == current.version + 1


def test_only_the_holder_renews_or_releases_and_renewing_works_past_the_deadline_until_someone_takes_it() -> (
    None
):
    lease = first_claim(AUDIT, "slice-a", until=at(10))
    assert lease.renewed("slice-b", until=at(70)) is None
    assert lease.released("slice-b", until=at(70)) is None
    late = lease.renewed("slice-a", until=at(80))
    assert late is not None and late.expires_at == at(80) and late.attempts == 0
    released = late.released("slice-a", until=at(200))
    assert released is not None and released.free and released.expires_at == at(200)
    assert released.renewed("slice-a", until=at(300)) is None


def test_a_lease_is_stuck_only_after_its_deadline_plus_the_grace() -> None:
    lease = held_by("slice-a", expires=10)
    assert not lease.stuck(at(14), grace_s=5)
    assert not lease.stuck(at(15), grace_s=5)
    assert lease.stuck(at(15.001), grace_s=5)


@pytest.mark.parametrize(
    ("status", "attempts", "action"),
    [
        (AuditStatus.QUEUED, 0, ReapAction.SLICE),
        (AuditStatus.RUNNING, 2, ReapAction.SLICE),
        (AuditStatus.RUNNING, 3, ReapAction.FAIL),
        (AuditStatus.FINALIZING, 0, ReapAction.FINALIZE),
        (AuditStatus.FINALIZING, 3, ReapAction.FAIL),
        (AuditStatus.DONE, 0, ReapAction.FORGET),
        (AuditStatus.FAILED, 9, ReapAction.FORGET),
        (AuditStatus.CANCELLED, 0, ReapAction.FORGET),
    ],
)
def test_the_reaper_redispatches_by_status_until_the_attempts_are_spent(
    status: AuditStatus, attempts: int, action: ReapAction
) -> None:
    assert reap_action(status, held_by("slice-a", expires=0, attempts=attempts), max_attempts=3) is action


HOLDERS = st.sampled_from(["slice-a", "slice-b", "slice-c"])
AUDITS = st.sampled_from([AuditId(1), AuditId(2)])


class LeaseMachine(RuleBasedStateMachine):
    """The memory repository against a model written from the rules in prose, with a moving clock."""

    def __init__(self) -> None:
        super().__init__()
        self.store = MemoryStore()
        self.now = T0
        # audit -> (holder, expires_at, attempts); the model
        self.model: dict[AuditId, tuple[str | None, datetime, int]] = {}

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    @rule(seconds=st.floats(min_value=0, max_value=40))
    def time_passes(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    @rule(audit=AUDITS, holder=HOLDERS)
    def claim(self, audit: AuditId, holder: str) -> None:
        until = self.now + timedelta(seconds=30)
        with self.uow() as uow:
            lease = uow.leases.claim(audit, holder, now=self.now, until=until)
            uow.commit()
        current = self.model.get(audit)
        if current is None:
            expected: tuple[str | None, datetime, int] | None = (holder, until, 0)
        else:
            owner, expires, attempts = current
            if owner is None or owner == holder:
                expected = (holder, until, attempts)
            elif self.now >= expires:
                expected = (holder, until, attempts + 1)
            else:
                expected = None
        if expected is None:
            assert lease is None
        else:
            assert lease is not None and (lease.holder, lease.expires_at, lease.attempts) == expected
            self.model[audit] = expected

    @rule(audit=AUDITS, holder=HOLDERS, release=st.booleans())
    def renew_or_release(self, audit: AuditId, holder: str, release: bool) -> None:
        until = self.now + timedelta(seconds=60 if release else 30)
        with self.uow() as uow:
            if release:
                done = uow.leases.release(audit, holder, until=until)
            else:
                done = uow.leases.renew(audit, holder, until=until)
            uow.commit()
        current = self.model.get(audit)
        assert done == (current is not None and current[0] == holder)
        if done and current is not None:
            self.model[audit] = (None if release else holder, until, current[2])

    @precondition(lambda self: bool(self.model))
    @rule(grace=st.sampled_from([0.0, 5.0]))
    def reaper_requeues_what_is_stuck(self, grace: float) -> None:
        with self.uow() as uow:
            stuck = list(uow.leases.stuck(self.now, grace_s=grace, limit=10))
            uow.commit()
        expected = {
            a for a, (_, expires, _) in self.model.items() if self.now > expires + timedelta(seconds=grace)
        }
        assert {lease.audit_id for lease in stuck} == expected
        for lease in stuck:
            until = self.now + timedelta(seconds=120)
            with self.uow() as uow:
                taken = uow.leases.requeue(lease, until=until)
                again = uow.leases.requeue(lease, until=until)  # a second reaper with the same reading
                uow.commit()
            assert taken is not None and again is None
            self.model[lease.audit_id] = (None, until, self.model[lease.audit_id][2] + 1)

    @invariant()
    def stored_leases_match_the_model(self) -> None:
        with self.uow() as uow:
            for audit in (AuditId(1), AuditId(2)):
                lease = uow.leases.get(audit)
                current = self.model.get(audit)
                if current is None:
                    assert lease is None
                else:
                    assert lease is not None and (lease.holder, lease.expires_at, lease.attempts) == current


TestLeaseMachine = LeaseMachine.TestCase


def _audit_in(status: AuditStatus) -> Audit:
    return Audit(
        id=AUDIT, team_id=TeamId(1), user_id=UserId(1), payer_id=UserId(1), url="https://retro-clock.example/",
        origin="https://retro-clock.example", created_at=T0, max_pages=10, status=status,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("status", "lease", "now", "stalled"),
    [
        (AuditStatus.QUEUED, None, 10_000, False),  # no lease: no deadline promised yet
        (AuditStatus.RUNNING, held_by("slice-a", expires=10), 9.999, False),
        (AuditStatus.RUNNING, held_by("slice-a", expires=10), 10, True),  # expired, nobody took over
        (AuditStatus.RUNNING, held_by(None, expires=10), 9, False),  # handed over, next message due
        (AuditStatus.RUNNING, held_by(None, expires=10), 11, True),  # the next message never came
        (AuditStatus.QUEUED, held_by(None, expires=10, attempts=1), 11, True),  # adopted, not claimed
        (AuditStatus.FINALIZING, held_by(None, expires=10), 11, True),
        (AuditStatus.FINALIZING, held_by(None, expires=10), 5, False),
        *[(s, held_by("slice-a", expires=10), 1_000, False) for s in sorted(ENDED)],
        *[(s, None, 1_000, False) for s in sorted(ENDED)],
    ],
)
def test_an_audit_is_stalled_once_its_lease_deadline_passed_unless_it_ended(
    status: AuditStatus, lease: Lease | None, now: float, stalled: bool
) -> None:
    assert is_stalled(_audit_in(status), lease, at(now)) is stalled
