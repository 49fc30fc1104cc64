"""The local test provider of the embedded default: checkout links open the service's own TEST PURCHASE
page (`/app/test-checkout/{session}`), whose button completes the purchase through the same fulfilment as
Stripe's webhooks. Nothing is charged, ever; it sells every combination."""

from collections.abc import Mapping
from typing import Final

from siteaudit.domain.billing import (
    InvalidPaymentSignature,
    PaymentEvent,
    PlanChoice,
    PlanPrice,
    SubscriptionStatus,
)
from siteaudit.domain.ids import UserId
from siteaudit.ports.clock import Secrets
from siteaudit.ports.payment import CheckoutLink, CheckoutOrder

CHECKOUT_PATH: Final = "/app/test-checkout"
SESSION_PREFIX: Final = "cs_local_"


class LocalPayments:
    name: str = "local"

    def __init__(self, public_url: str, secrets: Secrets) -> None:
        self._base = public_url.rstrip("/")
        self._secrets = secrets

    def create_customer(self, *, user_id: UserId, email: str) -> str:
        return f"cus_local_{user_id}"

    def offers(self, choice: PlanChoice) -> bool:
        return True

    def prices(self) -> Mapping[PlanChoice, PlanPrice]:
        return {}  # nothing is charged

    def checkout_link(self, order: CheckoutOrder) -> CheckoutLink:
        # 128 random bits; only the buyer, signed in to the app, may see and complete it (docs/rest-api.md
        # "Billing").
        session_id = SESSION_PREFIX + self._secrets.token_hex(16)
        return CheckoutLink(session_id, f"{self._base}{CHECKOUT_PATH}/{session_id}")

    def change_subscription(self, *, subscription_id: str, choice: PlanChoice) -> SubscriptionStatus:
        return SubscriptionStatus.ACTIVE  # every combination is sold, nothing is charged

    def portal_link(self, *, customer_id: str, return_url: str) -> str:
        # No portal here: the app's billing page (plan, credits, purchases) stands in for it.
        return return_url

    def read_event(self, payload: bytes, signature: str) -> PaymentEvent | None:
        raise InvalidPaymentSignature("the local test provider sends no webhooks")
