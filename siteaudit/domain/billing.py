# Over 400 lines: packs, plans, tiers, subscriptions and payment events are one set of money rules.
"""Billing (docs/rest-api.md "Billing"): credit packs, plan subscriptions, the billing account, and payment
events.

A payment provider (Stripe, or the local test provider of the embedded default) tells the service what
happened as provider-neutral `PaymentEvent`s; the service applies them with the rules here. Events may
come twice and in any order:

- a paid pack checkout credits its account once: the ledger entry is keyed by the checkout session
  (`purchase_key`), so a replayed event, or two events reporting the same payment (Stripe's
  `checkout.session.completed` and `checkout.session.async_payment_succeeded`), credit once;
- a subscription's paid period (Stripe's `invoice.paid`, the local provider's TEST renewal) grants its
  tier's credits for each month of the period, keyed by the subscription and the month's start
  (`month_grant_key`), so a replayed event, a second report of the same invoice or a scheduler pass
  running twice grants a month once; no month after the paid period ends is ever granted, so a
  cancelled subscription's credits end with the period it paid for;
- a subscription's state is taken only when it is not older than the one recorded, and an ended
  subscription never comes back (providers never reactivate a cancelled subscription), so a stale
  `updated` arriving after `deleted` cannot give the plan back.
"""

import calendar
import enum
import hashlib
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Final, Self

from attrs import evolve, frozen

from siteaudit.domain.credit import credits
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import UserId

FREE_PLAN: Final = "free"  # the plan an account falls back to when its subscription ends


class Pack(enum.StrEnum):
    """A one-time credit pack."""

    SMALL = "small"
    LARGE = "large"


@frozen
class PackOffer:
    pack: Pack
    credits: int  # whole credits
    price_cents: int
    currency: str = "usd"

    @property
    def tenths(self) -> int:
        return credits(self.credits)


PACKS: Final[Mapping[Pack, PackOffer]] = MappingProxyType(
    {
        Pack.SMALL: PackOffer(Pack.SMALL, credits=5_000, price_cents=900),
        Pack.LARGE: PackOffer(Pack.LARGE, credits=25_000, price_cents=2_900),
    }
)


class PlanName(enum.StrEnum):
    """The plans a subscription can buy."""

    STARTER = "starter"
    GROWTH = "growth"


class Tier(enum.StrEnum):
    T10K = "10k"
    T50K = "50k"
    T150K = "150k"
    T500K = "500k"
    T1M = "1m"
    T2_5M = "2.5m"


# What a tier gives: its number of credits every month of the subscription, yearly ones included.
TIER_CREDITS: Final[Mapping[Tier, int]] = MappingProxyType(
    {
        Tier.T10K: 10_000,
        Tier.T50K: 50_000,
        Tier.T150K: 150_000,
        Tier.T500K: 500_000,
        Tier.T1M: 1_000_000,
        Tier.T2_5M: 2_500_000,
    }
)
# No paid period grants more months than a yearly one has (a malformed period cannot mint credits).
MAX_MONTHS_PER_PERIOD: Final = 12


class Interval(enum.StrEnum):
    MONTHLY = "monthly"
    YEARLY = "yearly"


@frozen
class PlanChoice:
    """One plan x tier x interval combination; `key` is how the price table names it."""

    plan: PlanName
    tier: Tier
    interval: Interval

    @property
    def key(self) -> str:
        return f"{self.plan}:{self.tier}:{self.interval}"

    @classmethod
    def from_key(cls, key: str) -> "PlanChoice":
        """Raises ValueError for anything but `plan:tier:interval` of known values."""
        plan, tier, interval = key.strip().split(":")
        return cls(PlanName(plan), Tier(tier), Interval(interval))


@frozen
class PlanPrice:
    """What the provider charges for a combination, as it says (shown to people, never relied on)."""

    choice: PlanChoice
    amount_cents: int
    currency: str

    @property
    def label(self) -> str:
        per = "a year" if self.choice.interval is Interval.YEARLY else "a month"
        return f"{self.amount_cents / 100:,.2f} {self.currency.upper()} {per}"


class PurchaseKind(enum.StrEnum):
    PACK = "pack"
    SUBSCRIPTION = "subscription"


class SubscriptionStatus(enum.StrEnum):
    """Stripe's subscription statuses; the local provider uses `active` and `canceled`."""

    INCOMPLETE = "incomplete"
    INCOMPLETE_EXPIRED = "incomplete_expired"
    TRIALING = "trialing"
    ACTIVE = "active"
    PAST_DUE = "past_due"
    CANCELED = "canceled"
    UNPAID = "unpaid"
    PAUSED = "paused"


ENDED: Final = frozenset({SubscriptionStatus.CANCELED, SubscriptionStatus.INCOMPLETE_EXPIRED})
# While a payment is being retried (past_due) the plan stays; unpaid or paused takes it away.
GIVES_PLAN: Final = frozenset(
    {SubscriptionStatus.ACTIVE, SubscriptionStatus.TRIALING, SubscriptionStatus.PAST_DUE}
)


@frozen
class Subscription:
    """A subscription as its latest applied event showed it at `as_of` (the event's time)."""

    id: str
    status: SubscriptionStatus
    as_of: datetime
    choice: PlanChoice | None = None  # None: a price this service's table does not name

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    @property
    def gives_plan(self) -> bool:
        return self.status in GIVES_PLAN and self.choice is not None


def add_months(moment: datetime, months: int) -> datetime:
    """`moment` that many calendar months later, its day clamped to the month's length (Jan 31 + 1
    month is Feb 28 or 29), as providers anchor billing cycles."""
    index = moment.month - 1 + months
    year, month = moment.year + index // 12, index % 12 + 1
    return moment.replace(year=year, month=month, day=min(moment.day, calendar.monthrange(year, month)[1]))


@frozen
class PaidPeriod:
    """A period of a subscription its provider reports paid: `start` (inclusive) to `end` (exclusive),
    at the choice (plan, tier, interval) the invoice charged for."""

    subscription_id: str
    choice: PlanChoice
    start: datetime
    end: datetime

    @property
    def credits_per_month(self) -> int:
        """Whole credits each month of the period grants."""
        return TIER_CREDITS[self.choice.tier]

    def month_starts(self) -> tuple[datetime, ...]:
        """When each month of the period begins, the first at `start`; at most MAX_MONTHS_PER_PERIOD."""
        starts = []
        for k in range(MAX_MONTHS_PER_PERIOD):
            moment = add_months(self.start, k)
            if moment >= self.end:
                break
            starts.append(moment)
        return tuple(starts)

    def due(self, now: datetime) -> tuple[datetime, ...]:
        """The months of the period that have begun by `now`."""
        return tuple(moment for moment in self.month_starts() if moment <= now)


def month_grant_key(subscription_id: str, month_start: datetime) -> str:
    """The ledger idempotency key of one month of a subscription's credits (a subscription id too long
    for the ledger's key column is named by its SHA-256)."""
    name = (
        subscription_id
        if len(subscription_id) <= 100
        else hashlib.sha256(subscription_id.encode()).hexdigest()
    )
    return f"subscription:{name}:{month_start.isoformat()}"


class PriceNotConfigured(DomainError):
    code = ErrorCode.PRICE_NOT_CONFIGURED

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is not offered: no price is configured for it")
        self.what = what


class SubscriptionExists(DomainError):
    code = ErrorCode.SUBSCRIPTION_EXISTS
    default_message = (
        "the account already has a subscription; change its plan or tier in the app or the billing portal"
    )


class NoBillingAccount(DomainError):
    code = ErrorCode.NO_BILLING_ACCOUNT
    default_message = "there is no billing account before the first purchase"


class NoSubscription(DomainError):
    """A plan change asked for while the account has no live subscription (subscribe instead)."""

    code = ErrorCode.CONFLICT
    default_message = "the account has no live subscription to change; subscribe instead"


class InvalidPaymentSignature(DomainError):
    code = ErrorCode.INVALID_SIGNATURE

    def __init__(self, why: str) -> None:
        super().__init__(f"the payment event was refused: {why}")


class PaymentProviderFailed(DomainError):
    code = ErrorCode.PAYMENT_PROVIDER_FAILED

    def __init__(self, why: str) -> None:
        super().__init__(f"the payment provider did not answer as expected: {why}; try again shortly")


@frozen
class BillingAccount:
    """A person's account at the payment provider: one customer, at most one live subscription."""

    user_id: UserId
    provider: str
    customer_id: str
    subscription: Subscription | None = None
    purchased_at: datetime | None = None  # the first completed purchase
    version: int = 0
    paid_period: PaidPeriod | None = None  # the latest period a subscription paid for
    paid_months: int = 0  # how many months of `paid_period` are granted (the ledger's keys decide)

    def paid(self, period: PaidPeriod) -> Self:
        """The account after a paid period is reported: the period that ends last is kept (an older
        invoice reported late leaves the newer period), itself when nothing changes."""
        current = self.paid_period
        if current is not None and (current == period or period.end < current.end):
            return self
        return evolve(self, paid_period=period, paid_months=0, version=self.version + 1)

    def months_owed(self, now: datetime) -> tuple[datetime, ...]:
        """The months of the paid period that have begun by `now` and are not counted as granted."""
        if self.paid_period is None:
            return ()
        return self.paid_period.due(now)[self.paid_months :]

    def check_can_subscribe(self) -> None:
        """Raises SubscriptionExists while a subscription has not ended (one per account)."""
        if self.subscription is not None and not self.subscription.ended:
            raise SubscriptionExists()

    def check_has_purchased(self) -> None:
        if self.purchased_at is None:
            raise NoBillingAccount()

    def purchased(self, at: datetime) -> Self:
        if self.purchased_at is not None:
            return self
        return evolve(self, purchased_at=at, version=self.version + 1)

    def record(self, incoming: Subscription) -> Self:
        """The account after a subscription event, or itself when the event is stale (see the module)."""
        current = self.subscription
        if current is not None:
            if current.id == incoming.id:
                if current.ended:
                    return self
                if not incoming.ended and incoming.as_of < current.as_of:
                    return self
            else:
                if incoming.ended:
                    return self  # another subscription's end changes nothing about this one
                if not current.ended and incoming.as_of < current.as_of:
                    return self
        if current == incoming:
            return self
        return evolve(self, subscription=incoming, version=self.version + 1)

    @property
    def plan(self) -> str | None:
        """The plan the subscription gives, FREE_PLAN once it ended, None without a subscription."""
        if self.subscription is None:
            return None
        if self.subscription.gives_plan:
            assert self.subscription.choice is not None
            return self.subscription.choice.plan.value
        return FREE_PLAN


@frozen
class CheckoutSession:
    """A checkout this service opened at the provider: what it sells to whom. `form_token_hash` is the
    SHA-256 of the single-use token of the local test checkout page ("" when none is outstanding)."""

    id: str
    provider: str
    user_id: UserId
    kind: PurchaseKind
    url: str
    created_at: datetime
    pack: Pack | None = None
    choice: PlanChoice | None = None
    form_token_hash: str = ""
    completed_at: datetime | None = None


def purchase_key(session_id: str) -> str:
    """The ledger idempotency key of a pack bought through one checkout session."""
    return f"purchase:{session_id}"


# --- what a provider reports ---------------------------------------------------------------------------


@frozen
class CheckoutCompleted:
    """A checkout session finished. `paid` False: the payment is still on its way (delayed methods)."""

    event_id: str
    session_id: str
    customer_id: str
    kind: PurchaseKind
    paid: bool
    at: datetime
    user_id: UserId | None = None  # what the session said when it was made (metadata)
    pack: Pack | None = None


@frozen
class SubscriptionChanged:
    event_id: str
    customer_id: str
    subscription: Subscription
    user_id: UserId | None = None


@frozen
class SubscriptionPaid:
    """A subscription's period was paid (Stripe's `invoice.paid` for a new or renewed period; the local
    provider's TEST renewal): its months' tier credits are granted as they begin."""

    event_id: str
    customer_id: str
    period: PaidPeriod
    user_id: UserId | None = None


PaymentEvent = CheckoutCompleted | SubscriptionChanged | SubscriptionPaid


class Fulfilment(enum.StrEnum):
    """What applying one payment event did."""

    APPLIED = "applied"
    DUPLICATE = "duplicate"  # this event id, or the payment it reports, was applied before
    IGNORED = "ignored"  # not ours, not paid yet, or stale
