"""Billing records and the one fulfilment: the same contract on memory, SQLite and PostgreSQL, and a
payment event delivered twice at the same moment credits once."""

import threading
from datetime import timedelta

import pytest
from attrs import evolve
from sql_backend import T0, Backend, people
from sqlalchemy import Engine

from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql import SqlCrawlStore, SqlUnitOfWork
from siteaudit.adapters.system import FixedClock
from siteaudit.domain.billing import (
    BillingAccount,
    CheckoutCompleted,
    CheckoutSession,
    Fulfilment,
    Interval,
    Pack,
    PaidPeriod,
    PlanChoice,
    PlanName,
    PurchaseKind,
    Subscription,
    SubscriptionChanged,
    SubscriptionPaid,
    SubscriptionStatus,
    Tier,
    add_months,
)
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.billing.billing import fulfil, grant_subscription_months

GROWTH = PlanChoice(PlanName.GROWTH, Tier.T150K, Interval.MONTHLY)


def _session(owner_id: int, session_id: str = "cs_test_RetroClock") -> CheckoutSession:
    return CheckoutSession(
        id=session_id,
        provider="stripe",
        user_id=owner_id,  # type: ignore[arg-type]
        kind=PurchaseKind.PACK,
        url=f"https://checkout.stripe.com/c/pay/{session_id}",
        created_at=T0,
        pack=Pack.SMALL,
    )


def test_a_billing_account_reads_back_and_saves_only_from_the_version_it_read(backend: Backend) -> None:
    owner, member, _ = people(backend)
    account = BillingAccount(owner.id, "stripe", "cus_RetroClock")
    with backend.uow() as uow:
        assert uow.billing.get(owner.id) is None
        assert uow.billing.add(account)
        assert not uow.billing.add(BillingAccount(owner.id, "stripe", "cus_Other"))  # one per person
        uow.commit()
    subscribed = account.record(
        Subscription("sub_1", SubscriptionStatus.ACTIVE, T0 + timedelta(hours=1), GROWTH)
    )
    subscribed = evolve(subscribed, purchased_at=T0)  # one change: one version
    with backend.uow() as uow:
        assert uow.billing.get(owner.id) == account
        assert uow.billing.by_customer("stripe", "cus_RetroClock") == account
        assert uow.billing.by_customer("local", "cus_RetroClock") is None
        assert uow.billing.get(member.id) is None
        uow.billing.save(subscribed)
        uow.commit()
    with backend.uow() as uow:
        assert uow.billing.get(owner.id) == subscribed
        with pytest.raises(ConcurrentUpdate):
            uow.billing.save(subscribed)  # from a version that moved on
        ended = subscribed.record(
            Subscription("sub_1", SubscriptionStatus.CANCELED, T0 + timedelta(hours=2), None)
        )
        uow.billing.save(ended)
        uow.commit()
    with backend.uow() as uow:
        assert uow.billing.get(owner.id) == ended


def test_checkout_sessions_and_event_ids(backend: Backend) -> None:
    owner, _, _ = people(backend)
    session = _session(owner.id)
    with backend.uow() as uow:
        uow.billing.add_session(session)
        assert uow.billing.record_event("stripe:evt_1", at=T0)
        assert not uow.billing.record_event("stripe:evt_1", at=T0)
        uow.commit()
    with backend.uow() as uow:
        assert uow.billing.session(session.id) == session
        assert uow.billing.session("cs_unknown") is None
        assert not uow.billing.record_event("stripe:evt_1", at=T0)
        assert uow.billing.record_event("local:evt_1", at=T0)
        done = evolve(session, form_token_hash="", completed_at=T0)
        uow.billing.save_session(done)
        with pytest.raises(NotFound):
            uow.billing.save_session(evolve(session, id="cs_unknown"))
        uow.commit()
    with backend.uow() as uow:
        assert uow.billing.session(session.id) == done


def _paid(session_id: str, event_id: str) -> CheckoutCompleted:
    return CheckoutCompleted(
        event_id=event_id,
        session_id=session_id,
        customer_id="cus_RetroClock",
        kind=PurchaseKind.PACK,
        paid=True,
        at=T0,
    )


def test_fulfilment_credits_a_pack_once_and_sets_and_ends_the_plan(backend: Backend) -> None:
    owner, _, _ = people(backend)
    clock = FixedClock(T0)
    with backend.uow() as uow:
        uow.billing.add(BillingAccount(owner.id, "stripe", "cus_RetroClock"))
        uow.billing.add_session(_session(owner.id))
        start = uow.credits.balance(owner.id)
        uow.commit()
    outcomes = [
        fulfil(_paid("cs_test_RetroClock", event_id), provider="stripe", uow=backend.uow(), clock=clock)
        for event_id in ("evt_a", "evt_a", "evt_b")
    ]
    assert outcomes == [Fulfilment.APPLIED, Fulfilment.DUPLICATE, Fulfilment.DUPLICATE]
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == start + 50_000
        session = uow.billing.session("cs_test_RetroClock")
        assert session is not None and session.completed_at == T0
    changed = SubscriptionChanged(
        "evt_s", "cus_RetroClock", Subscription("sub_1", SubscriptionStatus.ACTIVE, T0, GROWTH)
    )
    assert fulfil(changed, provider="stripe", uow=backend.uow(), clock=clock) is Fulfilment.APPLIED
    with backend.uow() as uow:
        assert uow.users.get(owner.id).plan == "growth"
    ended = SubscriptionChanged(
        "evt_e", "cus_RetroClock", Subscription("sub_1", SubscriptionStatus.CANCELED, T0, GROWTH)
    )
    assert fulfil(ended, provider="stripe", uow=backend.uow(), clock=clock) is Fulfilment.APPLIED
    with backend.uow() as uow:
        assert uow.users.get(owner.id).plan == "free"


YEARLY = PlanChoice(PlanName.GROWTH, Tier.T50K, Interval.YEARLY)


class Crash(Exception):
    """The process dying between a unit of work's writes and its commit."""


def crashing(uow: UnitOfWork) -> UnitOfWork:
    def commit() -> None:
        raise Crash()

    uow.commit = commit  # type: ignore[method-assign]  # this unit of work dies before it commits
    return uow


def test_a_paid_period_reads_back_and_lists_by_its_end(backend: Backend) -> None:
    owner, member, _ = people(backend)
    period = PaidPeriod("sub_1", YEARLY, T0, add_months(T0, 12))
    with backend.uow() as uow:
        uow.billing.add(BillingAccount(owner.id, "stripe", "cus_RetroClock"))
        uow.billing.add(BillingAccount(member.id, "stripe", "cus_Member"))
        account = uow.billing.get(owner.id)
        assert account is not None
        uow.billing.save(account.paid(period))
        uow.commit()
    with backend.uow() as uow:
        stored = uow.billing.get(owner.id)
        assert stored is not None and stored.paid_period == period
        assert [a.user_id for a in uow.billing.with_paid_period(ending_after=T0)] == [owner.id]
        assert uow.billing.with_paid_period(ending_after=period.end) == []


def test_a_crash_before_the_commit_grants_nothing_and_the_replay_grants_once(backend: Backend) -> None:
    owner, _, _ = people(backend)
    clock = FixedClock(T0)
    with backend.uow() as uow:
        uow.billing.add(BillingAccount(owner.id, "stripe", "cus_RetroClock"))
        start = uow.credits.balance(owner.id)
        uow.commit()
    paid = SubscriptionPaid("evt_inv", "cus_RetroClock", PaidPeriod("sub_1", YEARLY, T0, add_months(T0, 12)))
    with pytest.raises(Crash):
        fulfil(paid, provider="stripe", uow=crashing(backend.uow()), clock=clock)
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == start  # neither the event, the period nor the credits
        account = uow.billing.get(owner.id)
        assert account is not None and account.paid_period is None
    outcomes = [fulfil(paid, provider="stripe", uow=backend.uow(), clock=clock) for _ in range(3)]
    assert outcomes == [Fulfilment.APPLIED, Fulfilment.DUPLICATE, Fulfilment.DUPLICATE]
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == start + 500_000  # 50,000 credits, in tenths
    # Two months later a pass that crashes grants nothing; the next grants both months, once.
    later = add_months(T0, 2)
    calls = iter(range(100))

    def dies_once() -> UnitOfWork:
        uow = backend.uow()
        return crashing(uow) if next(calls) == 1 else uow  # the read, then the first grant dies

    with pytest.raises(Crash):
        grant_subscription_months(later, uow=dies_once)
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == start + 500_000
    assert grant_subscription_months(later, uow=backend.uow) == 2
    with backend.uow() as uow:
        granted = uow.billing.get(owner.id)
        assert granted is not None and granted.paid_months == 3
    assert grant_subscription_months(later, uow=backend.uow) == 0
    with backend.uow() as uow:
        assert uow.billing.get(owner.id) == granted  # nothing owed: the pass wrote nothing
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == start + 3 * 500_000


@pytest.mark.postgres
def test_one_event_delivered_eight_times_at_once_credits_once(postgres_engine: Engine) -> None:
    box = SecretBox(SecretBox.generate_key())
    backend = Backend("postgres", lambda: SqlUnitOfWork(postgres_engine, box), SqlCrawlStore(postgres_engine))
    owner, _, _ = people(backend)
    with backend.uow() as uow:
        uow.billing.add(BillingAccount(owner.id, "stripe", "cus_RetroClock"))
        uow.billing.add_session(_session(owner.id))
        uow.commit()
    clock = FixedClock(T0)
    outcomes: list[Fulfilment] = []
    start = threading.Barrier(8)

    def deliver() -> None:
        start.wait()
        outcome = fulfil(
            _paid("cs_test_RetroClock", "evt_once"), provider="stripe", uow=backend.uow(), clock=clock
        )
        outcomes.append(outcome)

    threads = [threading.Thread(target=deliver) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == sorted([Fulfilment.APPLIED] + [Fulfilment.DUPLICATE] * 7)
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == 50_000
