"""The payment provider (docs/rest-api.md "Billing") and the billing records: checkout, subscription and
portal links, and the provider's events read into the domain's provider-neutral `PaymentEvent`s."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from attrs import frozen

from siteaudit.domain.billing import (
    BillingAccount,
    CheckoutSession,
    PackOffer,
    PaymentEvent,
    PlanChoice,
    PlanPrice,
    SubscriptionStatus,
)
from siteaudit.domain.ids import UserId


@frozen(kw_only=True)
class Sale:
    """What one checkout sells: a pack (`offer`) or a subscription (`choice`)."""

    offer: PackOffer | None = None
    choice: PlanChoice | None = None


@frozen
class CheckoutOrder(Sale):
    """A `Sale` to one customer, and where the provider sends the buyer back."""

    user_id: UserId
    email: str
    customer_id: str
    success_url: str
    cancel_url: str


@frozen
class CheckoutLink:
    session_id: str
    url: str


class PaymentProvider(Protocol):
    @property
    def name(self) -> str:
        """`stripe` or `local`: stored with each billing account and checkout session."""
        ...

    def create_customer(self, *, user_id: UserId, email: str) -> str:
        """The provider's customer for the account (made once per account: asking again for the same
        `user_id` may return the same customer). Raises PaymentProviderFailed."""
        ...

    def offers(self, choice: PlanChoice) -> bool:
        """Whether a price is configured for the plan x tier x interval combination."""
        ...

    def prices(self) -> Mapping[PlanChoice, PlanPrice]:
        """What the combinations offered cost, as far as the provider says (empty when it says nothing or
        cannot be asked now: prices are shown to people, never charged from here)."""
        ...

    def checkout_link(self, order: CheckoutOrder) -> CheckoutLink:
        """A checkout session for the order; nothing is charged until it completes at the provider.
        Raises PriceNotConfigured for a combination not offered, PaymentProviderFailed."""
        ...

    def change_subscription(self, *, subscription_id: str, choice: PlanChoice) -> SubscriptionStatus:
        """Move a live subscription to the choice's price (the provider prorates); its status after the
        change. Raises PriceNotConfigured for a combination not offered, PaymentProviderFailed."""
        ...

    def portal_link(self, *, customer_id: str, return_url: str) -> str:
        """The provider's customer portal (invoices, payment method, cancellation). Raises
        PaymentProviderFailed."""
        ...

    def read_event(self, payload: bytes, signature: str) -> PaymentEvent | None:
        """The event a webhook delivered, its signature checked over the raw bytes (with the
        provider's time tolerance); None for an event type billing does not act on. Raises
        InvalidPaymentSignature."""
        ...


class BillingRepository(Protocol):
    def get(self, user_id: UserId) -> BillingAccount | None: ...

    def by_customer(self, provider: str, customer_id: str) -> BillingAccount | None: ...

    def add(self, account: BillingAccount) -> bool:
        """Stage a new account; False, changing nothing, when the person already has one."""
        ...

    def save(self, account: BillingAccount) -> None:
        """Stage an update. Raises ConcurrentUpdate unless the stored version is `account.version - 1`."""
        ...

    def add_session(self, session: CheckoutSession) -> None: ...

    def session(self, session_id: str) -> CheckoutSession | None: ...

    def save_session(self, session: CheckoutSession) -> None:
        """Stage an update of a stored session. Raises NotFound."""
        ...

    def with_paid_period(self, *, ending_after: datetime) -> Sequence[BillingAccount]:
        """The accounts whose latest paid period ends after `ending_after`."""
        ...

    def record_event(self, event_id: str, *, at: datetime) -> bool:
        """Remember a payment event's id; False, changing nothing, when it was recorded before."""
        ...
