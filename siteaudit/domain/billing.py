"""Billing (docs/rest-api.md "Billing"): credit packs, plan subscriptions, the billing account, and payment
events.

A payment provider (Stripe, or the local test provider of the embedded default) tells the service what
happened as provider-neutral `PaymentEvent`s; the service applies them with the rules here. Events may
come twice and in any order:

- a paid pack checkout credits its account once: the ledger entry is keyed by the checkout session
  (`purchase_key`), so a replayed event, or two events reporting the same payment (Stripe's
  `checkout.session.completed` and `checkout.session.async_payment_succeeded`), credit once;
- a subscription's state is taken only when it is not older than the one recorded, and an ended
  subscription never comes back (providers never reactivate a cancelled subscription), so a stale
  `updated` arriving after `deleted` cannot give the plan back.
"""

import enum
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


class PriceNotConfigured(DomainError):
    code = ErrorCode.PRICE_NOT_CONFIGURED

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is not offered: no price is configured for it")
        self.what = what


class SubscriptionExists(DomainError):
    code = ErrorCode.SUBSCRIPTION_EXISTS

    def __init__(self) -> None:
        super().__init__(
            "the account already has a subscription; change its plan or tier in the app or the billing portal"
        )


class NoBillingAccount(DomainError):
    code = ErrorCode.NO_BILLING_ACCOUNT

    def __init__(self) -> None:
        super().__init__("there is no billing account before the first purchase")


class NoSubscription(DomainError):
    """A plan change asked for while the account has no live subscription (subscribe instead)."""

    code = ErrorCode.CONFLICT

    def __init__(self) -> None:
        super().__init__("the account has no live subscription to change; subscribe instead")


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


PaymentEvent = CheckoutCompleted | SubscriptionChanged


class Fulfilment(enum.StrEnum):
    """What applying one payment event did."""

    APPLIED = "applied"
    DUPLICATE = "duplicate"  # this event id, or the payment it reports, was applied before
    IGNORED = "ignored"  # not ours, not paid yet, or stale
