"""Stripe behind the payment port, through the official `stripe` SDK.

- One Stripe customer per person, made at the first checkout (an idempotency key per person, so two
  first checkouts at once make one customer).
- Checkout Sessions: `payment` mode for the two packs (the pack's price id from the price table, or the
  pack's list price inline), `subscription` mode for plan x tier x interval from the price table.
- Billing-portal sessions for the customer.
- Webhooks verified with `stripe.Webhook.construct_event` (HMAC-SHA256 of `t.payload`, five minutes'
  tolerance, to which a timestamp more than five minutes ahead is refused too), then read into the
  domain's provider-neutral events.

API shapes used (Stripe API reference): POST /v1/customers -> {id}; POST /v1/checkout/sessions -> {id,
url}; POST /v1/billing_portal/sessions -> {url}; events {id, type, created, data: {object}} where a
checkout session has {id, mode, payment_status, customer, client_reference_id, metadata} and a
subscription {id, status, customer, items: {data: [{price: {id}}]}, metadata}; an `invoice.paid` invoice
{customer, billing_reason, subscription (or parent.subscription_details.subscription), lines: {data:
[{period: {start, end}, price: {id} (or pricing.price_details.price), proration}]}}: the line's period
is the one paid for (the invoice's own period_start/period_end name the previous one).
"""

import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Final

import stripe

from siteaudit.domain.billing import (
    CheckoutCompleted,
    InvalidPaymentSignature,
    Pack,
    PaidPeriod,
    PaymentEvent,
    PaymentProviderFailed,
    PlanChoice,
    PlanPrice,
    PriceNotConfigured,
    PurchaseKind,
    Subscription,
    SubscriptionChanged,
    SubscriptionPaid,
    SubscriptionStatus,
)
from siteaudit.domain.ids import UserId
from siteaudit.ports.payment import CheckoutLink, CheckoutOrder

# Stripe's default: a signature dated more than this before or after now is refused, both ways
# (docs/security.md, "Outbound addresses and signatures"); the SDK checks only the past.
TOLERANCE_S: Final = 300
CHECKOUT_EVENTS: Final = frozenset({"checkout.session.completed", "checkout.session.async_payment_succeeded"})
SUBSCRIPTION_EVENTS: Final = frozenset(
    {
        "customer.subscription.created",
        "customer.subscription.updated",
        "customer.subscription.deleted",
        "customer.subscription.paused",
        "customer.subscription.resumed",
    }
)
INVOICE_PAID: Final = "invoice.paid"
# The invoices that pay a period: the first one and each renewal. A plan change's proration invoice
# pays the rest of a period already granted; its new tier grants from the next renewal.
PERIOD_INVOICES: Final = frozenset({"subscription_create", "subscription_cycle"})
USER_KEY: Final = "siteaudit_user_id"
PRICES_KEPT_S: Final = 600.0  # how long the prices Stripe stated are shown before asking again


class PriceTable:
    """SITEAUDIT_STRIPE_PRICES: `plan:tier:interval=price_id` entries (and optionally `pack:small=...`,
    `pack:large=...`), separated by commas, spaces or new lines. Raises ValueError on a bad entry."""

    def __init__(self, plans: Mapping[PlanChoice, str], packs: Mapping[Pack, str]) -> None:
        self.plans = MappingProxyType(dict(plans))
        self.packs = MappingProxyType(dict(packs))
        self._by_price = {price: choice for choice, price in self.plans.items()}

    @classmethod
    def parse(cls, text: str) -> "PriceTable":
        plans: dict[PlanChoice, str] = {}
        packs: dict[Pack, str] = {}
        for entry in text.replace(",", " ").split():
            key, equals, price = entry.partition("=")
            if not equals or not price.strip():
                raise ValueError(f"SITEAUDIT_STRIPE_PRICES: {entry!r} is not key=price_id")
            try:
                if key.startswith("pack:"):
                    packs[Pack(key.removeprefix("pack:"))] = price.strip()
                else:
                    plans[PlanChoice.from_key(key)] = price.strip()
            except ValueError:
                raise ValueError(
                    f"SITEAUDIT_STRIPE_PRICES: {key!r} is neither plan:tier:interval (for example "
                    "starter:10k:monthly) nor pack:small / pack:large"
                ) from None
        return cls(plans, packs)

    def choice_of(self, price_id: str) -> PlanChoice | None:
        return self._by_price.get(price_id)


def _failed(error: stripe.StripeError) -> PaymentProviderFailed:
    # The SDK's message may quote request details; the class name and HTTP status say enough.
    return PaymentProviderFailed(f"Stripe answered {type(error).__name__} (HTTP {error.http_status})")


class StripePayments:
    name: str = "stripe"

    def __init__(
        self,
        *,
        secret_key: str,
        webhook_secret: str,
        prices: PriceTable,
        api_base: str = "",
        max_network_retries: int = 2,
    ) -> None:
        if not secret_key or not webhook_secret:
            raise ValueError("Stripe needs SITEAUDIT_STRIPE_SECRET_KEY and SITEAUDIT_STRIPE_WEBHOOK_SECRET")
        self._client = stripe.StripeClient(
            secret_key,
            base_addresses={"api": api_base} if api_base else None,
            max_network_retries=max_network_retries,
        )
        self._webhook_secret = webhook_secret
        self.table = prices
        self._prices: tuple[float, Mapping[PlanChoice, PlanPrice]] | None = None

    def __repr__(self) -> str:
        return "StripePayments(...)"  # never the keys

    def create_customer(self, *, user_id: UserId, email: str) -> str:
        try:
            customer = self._client.v1.customers.create(
                params={"email": email, "metadata": {USER_KEY: str(user_id)}},
                options={"idempotency_key": f"siteaudit-customer-{user_id}"},
            )
        except stripe.StripeError as error:
            raise _failed(error) from None
        return str(customer.id)

    def offers(self, choice: PlanChoice) -> bool:
        return choice in self.table.plans

    def prices(self) -> Mapping[PlanChoice, PlanPrice]:
        """The price table's prices as Stripe states them (GET /v1/prices, one call, kept PRICES_KEPT_S
        seconds); empty, and asked again next time, when Stripe cannot be reached."""
        now = time.monotonic()
        if self._prices is not None and now - self._prices[0] < PRICES_KEPT_S:
            return self._prices[1]
        try:
            listed = self._client.v1.prices.list(params={"active": True, "limit": 100})
        except stripe.StripeError:
            return {}
        found = {}
        for price in listed.data:
            choice = self.table.choice_of(str(price.id))
            amount = getattr(price, "unit_amount", None)
            if choice is not None and isinstance(amount, int):
                found[choice] = PlanPrice(choice, amount, str(price.currency))
        self._prices = (now, MappingProxyType(found))
        return self._prices[1]

    def checkout_link(self, order: CheckoutOrder) -> CheckoutLink:
        metadata = {USER_KEY: str(order.user_id)}
        params: dict[str, Any] = {
            "customer": order.customer_id,
            "client_reference_id": str(order.user_id),
            "success_url": order.success_url,
            "cancel_url": order.cancel_url,
        }
        if order.offer is not None:
            pack = order.offer
            price = self.table.packs.get(pack.pack)
            item: dict[str, Any] = (
                {"price": price, "quantity": 1}
                if price
                else {
                    "price_data": {
                        "currency": pack.currency,
                        "unit_amount": pack.price_cents,
                        "product_data": {"name": f"{pack.credits:,} siteaudit credits ({pack.pack} pack)"},
                    },
                    "quantity": 1,
                }
            )
            params |= {
                "mode": "payment",
                "line_items": [item],
                "metadata": metadata | {"kind": PurchaseKind.PACK.value, "pack": pack.pack.value},
            }
        else:
            assert order.choice is not None
            price = self.table.plans.get(order.choice)
            if price is None:
                raise PriceNotConfigured(f"the {order.choice.key} subscription")
            plan_metadata = metadata | {"kind": PurchaseKind.SUBSCRIPTION.value, "choice": order.choice.key}
            params |= {
                "mode": "subscription",
                "line_items": [{"price": price, "quantity": 1}],
                "metadata": plan_metadata,
                "subscription_data": {"metadata": plan_metadata},
            }
        try:
            session = self._client.v1.checkout.sessions.create(params=params)  # type: ignore[arg-type]
        except stripe.StripeError as error:
            raise _failed(error) from None
        if not session.url:
            raise PaymentProviderFailed("the checkout session came without a url")
        return CheckoutLink(str(session.id), str(session.url))

    def change_subscription(self, *, subscription_id: str, choice: PlanChoice) -> SubscriptionStatus:
        """The subscription's one item moved to the choice's price, prorated (Stripe's default), its
        metadata naming the new choice as a checkout's does."""
        price = self.table.plans.get(choice)
        if price is None:
            raise PriceNotConfigured(f"the {choice.key} subscription")
        try:
            current = self._client.v1.subscriptions.retrieve(subscription_id)
            listed = ((current.to_dict().get("items") or {}).get("data")) or []
            items = [item for item in listed if isinstance(item, dict) and item.get("id")]
            if len(items) != 1:
                raise PaymentProviderFailed(f"the subscription has {len(items)} items, not one")
            updated = self._client.v1.subscriptions.update(
                subscription_id,
                params={
                    "items": [{"id": str(items[0]["id"]), "price": price}],
                    "proration_behavior": "create_prorations",
                    "metadata": {"choice": choice.key},
                },
            )
        except stripe.StripeError as error:
            raise _failed(error) from None
        try:
            return SubscriptionStatus(str(updated["status"]))
        except ValueError:
            raise PaymentProviderFailed("the subscription came back with an unknown status") from None

    def portal_link(self, *, customer_id: str, return_url: str) -> str:
        try:
            portal = self._client.v1.billing_portal.sessions.create(
                params={"customer": customer_id, "return_url": return_url}
            )
        except stripe.StripeError as error:
            raise _failed(error) from None
        return str(portal.url)

    def read_event(self, payload: bytes, signature: str) -> PaymentEvent | None:
        try:
            event = stripe.Webhook.construct_event(
                payload, signature, self._webhook_secret, tolerance=TOLERANCE_S
            )
        except stripe.SignatureVerificationError:
            raise InvalidPaymentSignature("the Stripe-Signature header does not match") from None
        except ValueError:
            raise InvalidPaymentSignature("the body is not a Stripe event") from None
        if _signed_at(signature) > time.time() + TOLERANCE_S:  # the same clock as the SDK's past check
            raise InvalidPaymentSignature("the Stripe-Signature timestamp is in the future")
        # Verified: the raw JSON is Stripe's, read plainly rather than through the SDK's objects.
        body: dict[str, Any] = json.loads(payload)
        kind, event_id = str(event.type), str(event.id)
        at = datetime.fromtimestamp(int(body.get("created", 0)), UTC)
        obj: dict[str, Any] = (body.get("data") or {}).get("object") or {}
        if kind in CHECKOUT_EVENTS:
            return self._checkout(event_id, obj, at)
        if kind in SUBSCRIPTION_EVENTS:
            return self._subscription(event_id, obj, at)
        if kind == INVOICE_PAID:
            return self._invoice(event_id, obj)
        return None

    def _invoice(self, event_id: str, obj: Mapping[str, Any]) -> SubscriptionPaid | None:
        """A paid invoice of a first or renewed period; None for any other invoice."""
        customer = _id(obj.get("customer"))
        if customer is None or obj.get("billing_reason") not in PERIOD_INVOICES:
            return None
        details = (obj.get("parent") or {}).get("subscription_details") or {}
        subscription = _id(obj.get("subscription")) or _id(details.get("subscription"))
        for line in (obj.get("lines") or {}).get("data") or []:
            line = line or {}
            item = (line.get("parent") or {}).get("subscription_item_details") or {}
            if line.get("proration") or item.get("proration"):
                continue
            price = _id(line.get("price")) or _id(
                ((line.get("pricing") or {}).get("price_details") or {}).get("price")
            )
            choice = None if price is None else self.table.choice_of(price)
            period = line.get("period") or {}
            start, end = period.get("start"), period.get("end")
            owner = subscription or _id(line.get("subscription")) or _id(item.get("subscription"))
            if choice is None or owner is None or not isinstance(start, int) or not isinstance(end, int):
                continue
            if end <= start:
                continue
            metadata = obj.get("metadata") or {}
            return SubscriptionPaid(
                event_id=event_id,
                customer_id=customer,
                period=PaidPeriod(
                    subscription_id=owner,
                    choice=choice,
                    start=datetime.fromtimestamp(start, UTC),
                    end=datetime.fromtimestamp(end, UTC),
                ),
                user_id=_user(metadata.get(USER_KEY)),
            )
        return None

    def _checkout(self, event_id: str, obj: Mapping[str, Any], at: datetime) -> CheckoutCompleted | None:
        customer = _id(obj.get("customer"))
        if customer is None:
            return None
        metadata = obj.get("metadata") or {}
        pack = metadata.get("pack")
        return CheckoutCompleted(
            event_id=event_id,
            session_id=str(obj["id"]),
            customer_id=customer,
            kind=PurchaseKind.SUBSCRIPTION if obj.get("mode") == "subscription" else PurchaseKind.PACK,
            paid=obj.get("payment_status") in ("paid", "no_payment_required"),
            at=at,
            user_id=_user(metadata.get(USER_KEY) or obj.get("client_reference_id")),
            pack=Pack(pack) if pack in {p.value for p in Pack} else None,
        )

    def _subscription(
        self, event_id: str, obj: Mapping[str, Any], at: datetime
    ) -> SubscriptionChanged | None:
        customer = _id(obj.get("customer"))
        try:
            status = SubscriptionStatus(str(obj.get("status")))
        except ValueError:
            return None
        if customer is None:
            return None
        items = (obj.get("items") or {}).get("data") or []
        prices = [_id((item or {}).get("price")) for item in items]
        choice = next((c for c in map(self.table.choice_of, filter(None, prices)) if c is not None), None)
        metadata = obj.get("metadata") or {}
        if choice is None and metadata.get("choice"):
            try:
                choice = PlanChoice.from_key(str(metadata["choice"]))
            except ValueError:
                choice = None
        return SubscriptionChanged(
            event_id=event_id,
            customer_id=customer,
            subscription=Subscription(id=str(obj["id"]), status=status, as_of=at, choice=choice),
            user_id=_user(metadata.get(USER_KEY)),
        )


def _signed_at(header: str) -> int:
    """The `t=` timestamp of a Stripe-Signature header the SDK has verified: the first, as the SDK reads."""
    pairs = (item.partition("=") for item in header.split(","))
    return next(int(value) for name, _, value in pairs if name == "t")


def _id(value: Any) -> str | None:
    """An id field, whether Stripe sent the id or the expanded object."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, Mapping) and isinstance(value.get("id"), str):
        return str(value["id"])
    return None


def _user(value: Any) -> UserId | None:
    try:
        return UserId(int(value))
    except (TypeError, ValueError):
        return None
