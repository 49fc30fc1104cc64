"""Billing rules: the SPEC's packs, the price-table keys, and subscription events that arrive in any order."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from attrs import evolve
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.domain.billing import (
    MAX_MONTHS_PER_PERIOD,
    PACKS,
    TIER_CREDITS,
    BillingAccount,
    Interval,
    NoBillingAccount,
    Pack,
    PaidPeriod,
    PlanChoice,
    PlanName,
    Subscription,
    SubscriptionExists,
    SubscriptionStatus,
    Tier,
    add_months,
    month_grant_key,
)
from siteaudit.domain.ids import UserId

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
STARTER = PlanChoice(PlanName.STARTER, Tier.T10K, Interval.MONTHLY)
GROWTH = PlanChoice(PlanName.GROWTH, Tier.T2_5M, Interval.YEARLY)
LIVE = [
    s
    for s in SubscriptionStatus
    if s not in (SubscriptionStatus.CANCELED, SubscriptionStatus.INCOMPLETE_EXPIRED)
]


def account() -> BillingAccount:
    return BillingAccount(UserId(1), "stripe", "cus_RetroClock")


def sub(sub_id: str, status: SubscriptionStatus, minute: int, choice: PlanChoice = STARTER) -> Subscription:
    return Subscription(sub_id, status, T0 + timedelta(minutes=minute), choice)


def apply_all(events: list[Subscription]) -> BillingAccount:
    result = account()
    for event in events:
        result = result.record(event)
    return result


def test_the_packs_are_the_spec_packs() -> None:
    assert (PACKS[Pack.SMALL].credits, PACKS[Pack.SMALL].price_cents) == (5_000, 900)
    assert (PACKS[Pack.LARGE].credits, PACKS[Pack.LARGE].price_cents) == (25_000, 2_900)
    assert PACKS[Pack.SMALL].tenths == 50_000


def test_every_combination_has_a_key_that_reads_back() -> None:
    combinations = [PlanChoice(p, t, i) for p in PlanName for t in Tier for i in Interval]
    assert len(combinations) == 2 * 6 * 2
    for choice in combinations:
        assert PlanChoice.from_key(choice.key) == choice
    assert STARTER.key == "starter:10k:monthly"
    with pytest.raises(ValueError):
        PlanChoice.from_key("scale:10k:monthly")


def test_a_live_subscription_blocks_another_and_gives_its_plan() -> None:
    live = account().record(sub("sub_1", SubscriptionStatus.ACTIVE, 0))
    with pytest.raises(SubscriptionExists):
        live.check_can_subscribe()
    assert live.plan == "starter"
    ended = live.record(sub("sub_1", SubscriptionStatus.CANCELED, 5))
    ended.check_can_subscribe()
    assert ended.plan == "free"
    assert account().plan is None  # no subscription: the plan stays whatever it was


def test_unpaid_or_paused_takes_the_plan_but_still_counts_as_a_subscription() -> None:
    for status in (SubscriptionStatus.UNPAID, SubscriptionStatus.PAUSED, SubscriptionStatus.INCOMPLETE):
        held = account().record(sub("sub_1", status, 0))
        assert held.plan == "free"
        with pytest.raises(SubscriptionExists):
            held.check_can_subscribe()
    assert account().record(sub("sub_1", SubscriptionStatus.PAST_DUE, 0)).plan == "starter"


def test_the_portal_needs_a_purchase() -> None:
    with pytest.raises(NoBillingAccount):
        account().check_has_purchased()
    bought = account().purchased(T0)
    bought.check_has_purchased()
    assert bought.purchased(T0 + timedelta(days=1)) == bought  # the first purchase is remembered


def test_each_applied_change_counts_one_version_and_a_repeat_none() -> None:
    once = account().record(sub("sub_1", SubscriptionStatus.ACTIVE, 0))
    assert once.version == 1
    assert once.record(sub("sub_1", SubscriptionStatus.ACTIVE, 0)) is once


@given(
    statuses=st.lists(st.sampled_from(LIVE), min_size=1, max_size=4),
    ends=st.booleans(),
    order=st.randoms(use_true_random=False),
)
def test_one_subscriptions_events_in_any_order_end_in_the_latest_state(
    statuses: list[SubscriptionStatus], ends: bool, order: object
) -> None:
    events = [sub("sub_1", status, minute) for minute, status in enumerate(statuses)]
    if ends:
        events.append(sub("sub_1", SubscriptionStatus.CANCELED, len(events)))
    shuffled = list(events)
    order.shuffle(shuffled)  # type: ignore[attr-defined]
    assert apply_all(shuffled).subscription == events[-1]


def test_an_old_subscription_ending_never_hides_its_successor() -> None:
    events = [
        sub("sub_old", SubscriptionStatus.ACTIVE, 0, STARTER),
        sub("sub_old", SubscriptionStatus.CANCELED, 10, STARTER),
        sub("sub_new", SubscriptionStatus.INCOMPLETE, 20, GROWTH),
        sub("sub_new", SubscriptionStatus.ACTIVE, 21, GROWTH),
    ]
    for order in itertools.permutations(events):
        final = apply_all(list(order))
        assert final.subscription == events[-1], order
        assert final.plan == "growth"


# --- a tier's monthly credits -------------------------------------------------------------------------------


def test_months_are_added_by_the_calendar_with_the_day_clamped() -> None:
    jan_31 = datetime(2027, 1, 31, 9, 30, tzinfo=UTC)
    assert add_months(jan_31, 1) == datetime(2027, 2, 28, 9, 30, tzinfo=UTC)
    assert add_months(jan_31, 13) == datetime(2028, 2, 29, 9, 30, tzinfo=UTC)  # a leap year
    assert add_months(jan_31, 11) == datetime(2027, 12, 31, 9, 30, tzinfo=UTC)
    assert add_months(jan_31, 0) == jan_31


def test_a_monthly_period_has_one_month_and_a_yearly_one_twelve_that_begin_in_turn() -> None:
    start = datetime(2027, 1, 15, tzinfo=UTC)
    monthly = PaidPeriod(
        "sub_1", PlanChoice(PlanName.STARTER, Tier.T10K, Interval.MONTHLY), start, add_months(start, 1)
    )
    yearly = PaidPeriod(
        "sub_1", PlanChoice(PlanName.GROWTH, Tier.T2_5M, Interval.YEARLY), start, add_months(start, 12)
    )
    assert monthly.month_starts() == (start,) and monthly.credits_per_month == 10_000
    assert len(yearly.month_starts()) == 12 and yearly.credits_per_month == 2_500_000
    assert yearly.month_starts()[-1] == datetime(2027, 12, 15, tzinfo=UTC)
    assert yearly.due(start - timedelta(seconds=1)) == ()
    assert yearly.due(datetime(2027, 3, 14, tzinfo=UTC)) == yearly.month_starts()[:2]
    assert yearly.due(datetime(2030, 1, 1, tzinfo=UTC)) == yearly.month_starts()
    decade = PaidPeriod("sub_1", yearly.choice, start, add_months(start, 120))
    assert len(decade.month_starts()) == MAX_MONTHS_PER_PERIOD  # no period mints more than a year


def test_the_period_ending_last_is_kept_and_each_month_has_its_own_key() -> None:
    account = BillingAccount(UserId(1), "stripe", "cus_1")
    choice = PlanChoice(PlanName.STARTER, Tier.T10K, Interval.MONTHLY)
    jan = PaidPeriod("sub_1", choice, datetime(2027, 1, 1, tzinfo=UTC), datetime(2027, 2, 1, tzinfo=UTC))
    feb = PaidPeriod("sub_1", choice, datetime(2027, 2, 1, tzinfo=UTC), datetime(2027, 3, 1, tzinfo=UTC))
    renewed = account.paid(jan).paid(feb)
    assert renewed.paid_period == feb and renewed.version == 2
    assert renewed.paid(jan) is renewed and renewed.paid(feb) is renewed  # late or repeated: no change
    keys = {month_grant_key("sub_1", m) for m in (*jan.month_starts(), *feb.month_starts())}
    assert len(keys) == 2 and all(len(k) <= 200 for k in keys)
    assert len(month_grant_key("sub_" + "x" * 250, jan.start)) <= 200
    assert set(TIER_CREDITS) == set(Tier)


def test_the_months_owed_are_the_begun_ones_not_counted_granted() -> None:
    start = datetime(2027, 1, 15, tzinfo=UTC)
    yearly = PaidPeriod(
        "sub_1", PlanChoice(PlanName.GROWTH, Tier.T50K, Interval.YEARLY), start, add_months(start, 12)
    )
    account = BillingAccount(UserId(1), "stripe", "cus_1").paid(yearly)
    march = datetime(2027, 3, 20, tzinfo=UTC)
    assert account.months_owed(march) == yearly.month_starts()[:3]
    granted = evolve(account, paid_months=3)
    assert granted.months_owed(march) == () and granted.months_owed(datetime(2027, 4, 15, tzinfo=UTC)) == (
        datetime(2027, 4, 15, tzinfo=UTC),
    )
    assert granted.paid(evolve(yearly, end=add_months(start, 13))).paid_months == 0  # a new period: none yet
    assert BillingAccount(UserId(1), "stripe", "cus_1").months_owed(march) == ()
