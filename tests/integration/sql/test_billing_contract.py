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
    PlanChoice,
    PlanName,
    PurchaseKind,
    Subscription,
    SubscriptionChanged,
    SubscriptionStatus,
    Tier,
)
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.services.billing import fulfil

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
