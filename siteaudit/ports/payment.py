"""The payment provider (SPEC 4.10): links to checkout, subscriptions and the billing portal."""

from typing import Protocol


class PaymentProvider(Protocol):
    def checkout_link(self, *, customer_email: str, pack: str, credits: int, price_cents: int) -> str:
        """A one-time credit-pack checkout URL; nothing is charged until checkout completes there."""
        ...

    def subscription_link(self, *, customer_email: str, plan: str, tier: str, interval: str) -> str:
        """A subscription checkout URL. Raises PriceNotConfigured (422) for a combination not offered."""
        ...

    def portal_link(self, *, customer_id: str) -> str:
        """The provider's customer portal (invoices, payment method, cancellation)."""
        ...
