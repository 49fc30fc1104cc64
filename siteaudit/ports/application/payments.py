"""What no key calls in billing (`Payments`): the payment provider's webhook and the local provider's test
checkout page (docs/billing.md)."""

from typing import Protocol

from attrs import frozen

from siteaudit.domain.billing import CheckoutSession, Fulfilment
from siteaudit.domain.ids import UserId
from siteaudit.ports.payment import Sale


@frozen
class LocalCheckout(Sale):
    """The local provider's checkout page: the session's `Sale`, to whom, and a single-use form token
    (shown once, only its hash kept) that completing the purchase needs."""

    session: CheckoutSession
    email: str
    form_token: str


@frozen
class LocalCheckoutDone:
    """What completing a local test checkout did; `fulfilment` DUPLICATE when it was completed before."""

    session: CheckoutSession
    fulfilment: Fulfilment
    balance: int  # the buyer's credits afterwards, in tenths


class Payments(Protocol):
    """What no key calls in billing: the payment provider's webhook and the local provider's test checkout
    page (docs/billing.md), served by the REST door."""

    def receive_payment_event(self, payload: bytes, signature: str, client: str) -> Fulfilment:
        """A provider webhook from address `client`: the signature checked over the raw bytes, then
        the address's webhook limit counted (validly signed posts only), then applied once per event
        id (a paid pack credits once; subscription events set and end the plan). Raises
        InvalidPaymentSignature, RateLimited."""
        ...

    def open_test_checkout(self, session_id: str, buyer: UserId) -> LocalCheckout:
        """The local provider's checkout page for an open session `buyer` asked for, with a fresh
        single-use form token. Raises NotFound (unknown, completed or someone else's session, or the
        local provider is not in use)."""
        ...

    def complete_test_checkout(self, session_id: str, form_token: str, buyer: UserId) -> LocalCheckoutDone:
        """Complete a local test purchase `buyer` asked for, through the same fulfilment as the
        provider's webhooks.
        Raises NotFound as above, InvalidPaymentSignature for a wrong or used form token."""
        ...
