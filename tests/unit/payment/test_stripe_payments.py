"""The Stripe provider through /v1 and the webhook endpoint, against a local stand-in of the Stripe API
(the SDK's API base pointed at 127.0.0.1) and webhooks signed with Stripe's documented scheme."""

import re
import time
from datetime import UTC, datetime
from typing import Any

import falcon.testing
import pytest
from attrs import frozen
from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.payment.stripe import PriceTable
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.billing import Interval, Pack, PlanChoice, PlanName, Tier
from siteaudit.domain.credit import credits
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from siteaudit.services.billing.billing import WEBHOOK_LIMIT, webhook_bucket
from siteaudit.settings import Settings
from tests.unit.payment.stripe_standin import (
    StripeStandIn,
    checkout_object,
    event,
    invoice_object,
    signature,
    subscription_object,
)

OWNER = "owner@retro-clock.example"
MEMBER = "member@retro-clock.example"
SECRET_KEY = "sk_test_RetroClock0123456789"
WEBHOOK_SECRET = "whsec_RetroClockSigningSecret"
PRICES = "starter:10k:monthly=price_starter_10k_monthly, growth:50k:yearly=price_growth_50k_yearly"
STARTER_10K = {"plan": "starter", "tier": "10k", "interval": "monthly"}
GROWTH_50K = {"plan": "growth", "tier": "50k", "interval": "yearly"}
WEBHOOK = "/billing/stripe/webhook"


@frozen
class Shop:
    app: App
    client: falcon.testing.TestClient
    stripe: StripeStandIn
    owner_key: str
    member_key: str

    def post(self, path: str, body: Any = None, *, key: str | None = None) -> Any:
        return self.client.simulate_post(
            f"/v1{path}", json=body, headers={"Authorization": f"Bearer {key or self.owner_key}"}
        )

    def deliver(self, payload: bytes, *, secret: str = WEBHOOK_SECRET, at: int | None = None) -> Any:
        return self.client.simulate_post(
            WEBHOOK,
            body=payload,
            headers={
                "Stripe-Signature": signature(payload, secret, at=at),
                "Content-Type": "application/json",
            },
        )

    def balance(self) -> float:
        answer = self.client.simulate_get(
            "/v1/account", headers={"Authorization": f"Bearer {self.owner_key}"}
        )
        return float(answer.json["balance"])

    def plan(self) -> str:
        (person,) = [p for p in self.app.application.list_users() if p.user.email == OWNER]
        return person.user.plan

    def customer(self) -> str:
        (call,) = [c for c in self.stripe.calls if c.path == "/v1/customers"]
        assert call.form["email"] == OWNER
        return f"cus_RetroClock{self.stripe.calls.index(call) + 1:04d}"


@pytest.fixture
def shop(httpserver: HTTPServer) -> Shop:
    stripe = StripeStandIn(httpserver).install()
    clock = FixedClock()
    app = bootstrap(
        Settings(
            database_url="memory://",
            payment_provider="stripe",
            stripe_secret_key=SECRET_KEY,
            stripe_webhook_secret=WEBHOOK_SECRET,
            stripe_prices=PRICES,
            stripe_api_base=stripe.api_base,
            public_url="https://audit.retro-clock.example",
        ),
        clock=clock,
        queue=MemoryTaskQueue(),
    )
    for email, plan in ((OWNER, "free"), (MEMBER, "free")):
        accounts.create_user(email, plan=plan, uow=app.uow(), clock=clock, secrets=SystemSecrets())
    accounts.create_team("Retro Clock", owner_email=OWNER, uow=app.uow(), clock=clock)
    accounts.add_member("Retro Clock", MEMBER, uow=app.uow())
    accounts.grant_credits(OWNER, credits(100), key="start", uow=app.uow(), clock=clock)

    def key(email: str) -> str:
        return keys.create_settings_key(
            email, "Retro Clock", uow=app.uow(), clock=clock, secrets=app.secrets
        ).raw

    return Shop(app, falcon.testing.TestClient(app.rest_api()), stripe, key(OWNER), key(MEMBER))


def error(result: Any) -> tuple[int, str]:
    return result.status_code, result.json["error"]["code"]


def buy_pack(shop: Shop, pack: str = "small") -> str:
    """Open a pack checkout; the Stripe session id."""
    link = shop.post("/billing/checkout", {"pack": pack})
    assert link.status_code == 200, link.text
    session = link.json["url"].rsplit("/", 1)[1]
    assert link.json == {"url": f"https://checkout.stripe.com/c/pay/{session}"}
    return str(session)


# --- the API calls -----------------------------------------------------------------------------------------


def test_a_pack_checkout_makes_one_customer_and_a_payment_session_at_the_spec_price(shop: Shop) -> None:
    buy_pack(shop, "small")
    buy_pack(shop, "large")
    assert shop.stripe.paths() == ["/v1/customers", "/v1/checkout/sessions", "/v1/checkout/sessions"]
    customer_call, small, large = shop.stripe.calls
    assert customer_call.headers["Authorization"] == f"Bearer {SECRET_KEY}"
    user_id = customer_call.form["metadata[siteaudit_user_id]"]
    assert customer_call.headers["Idempotency-Key"] == f"siteaudit-customer-{user_id}"
    customer = shop.customer()
    assert small.form == {
        "customer": customer,
        "client_reference_id": user_id,
        "success_url": "https://audit.retro-clock.example/app/billing?checkout=done",
        "cancel_url": "https://audit.retro-clock.example/app/billing?checkout=cancelled",
        "mode": "payment",
        "line_items[0][price_data][currency]": "usd",
        "line_items[0][price_data][unit_amount]": "900",
        "line_items[0][price_data][product_data][name]": "5,000 siteaudit credits (small pack)",
        "line_items[0][quantity]": "1",
        "metadata[siteaudit_user_id]": user_id,
        "metadata[kind]": "pack",
        "metadata[pack]": "small",
    }
    assert large.form["line_items[0][price_data][unit_amount]"] == "2900"
    assert large.form["metadata[pack]"] == "large"


def test_a_subscription_checkout_uses_the_price_table(shop: Shop) -> None:
    link = shop.post("/billing/subscribe", GROWTH_50K)
    assert link.status_code == 200, link.text
    assert link.json["url"].startswith("https://checkout.stripe.com/c/pay/cs_test_")
    session = shop.stripe.calls[-1]
    assert session.path == "/v1/checkout/sessions"
    assert session.form["mode"] == "subscription"
    assert session.form["line_items[0][price]"] == "price_growth_50k_yearly"
    assert session.form["subscription_data[metadata][choice]"] == "growth:50k:yearly"


def test_a_combination_missing_from_the_price_table_is_not_offered(shop: Shop) -> None:
    result = shop.post("/billing/subscribe", {"plan": "starter", "tier": "2.5m", "interval": "yearly"})
    assert error(result) == (422, "price_not_configured")
    assert shop.stripe.calls == []  # refused before any customer is made


def test_a_stripe_error_answers_502_without_the_key(shop: Shop) -> None:
    shop.stripe.fail_next = (400, "invalid_request_error", f"No such customer; key {SECRET_KEY}")
    result = shop.post("/billing/checkout", {"pack": "small"})
    assert error(result) == (502, "payment_provider_failed")
    assert SECRET_KEY not in result.text
    assert buy_pack(shop)  # the next try works


def test_the_portal_opens_for_the_customer_after_a_paid_checkout(shop: Shop) -> None:
    assert error(shop.post("/billing/portal")) == (409, "no_billing_account")
    session = buy_pack(shop)
    assert error(shop.post("/billing/portal")) == (409, "no_billing_account")  # not paid yet
    customer = shop.customer()
    assert (
        shop.deliver(
            event("evt_paid", "checkout.session.completed", checkout_object(session, customer), created=1)
        ).status_code
        == 200
    )
    portal = shop.post("/billing/portal")
    assert portal.status_code == 200, portal.text
    assert portal.json["url"].startswith("https://billing.stripe.com/p/session/test_")
    call = shop.stripe.calls[-1]
    assert call.path == "/v1/billing_portal/sessions"
    assert call.form == {"customer": customer, "return_url": "https://audit.retro-clock.example/app/billing"}


def test_members_who_do_not_own_the_team_reach_no_stripe_endpoint(shop: Shop) -> None:
    for path, body in (
        ("/billing/checkout", {"pack": "small"}),
        ("/billing/subscribe", STARTER_10K),
        ("/billing/portal", None),
    ):
        assert error(shop.post(path, body, key=shop.member_key)) == (403, "not_team_owner")
    assert shop.stripe.calls == []


# --- webhooks ---------------------------------------------------------------------------------------------


def test_a_paid_pack_credits_once_however_often_and_however_it_is_reported(shop: Shop) -> None:
    session = buy_pack(shop)
    customer = shop.customer()
    before = shop.balance()
    completed = event(
        "evt_completed", "checkout.session.completed", checkout_object(session, customer), created=10
    )
    first = shop.deliver(completed)
    assert first.status_code == 200, first.text
    assert first.json == {"received": True, "outcome": "applied"}
    assert shop.balance() == before + 5_000
    replay = shop.deliver(completed)
    assert replay.json == {"received": True, "outcome": "duplicate"}
    # The same payment reported by a second event (delayed payment methods) credits nothing more.
    second = shop.deliver(
        event(
            "evt_async",
            "checkout.session.async_payment_succeeded",
            checkout_object(session, customer),
            created=11,
        )
    )
    assert second.json == {"received": True, "outcome": "duplicate"}
    assert shop.balance() == before + 5_000


def test_an_unpaid_checkout_credits_only_when_its_payment_succeeds(shop: Shop) -> None:
    session = buy_pack(shop, "large")
    customer = shop.customer()
    before = shop.balance()
    waiting = shop.deliver(
        event(
            "evt_unpaid",
            "checkout.session.completed",
            checkout_object(session, customer, paid=False, pack="large"),
            created=10,
        )
    )
    assert waiting.json["outcome"] == "ignored"
    assert shop.balance() == before
    shop.deliver(
        event(
            "evt_paid_later",
            "checkout.session.async_payment_succeeded",
            checkout_object(session, customer, pack="large"),
            created=20,
        )
    )
    assert shop.balance() == before + 25_000


def test_a_bad_missing_stale_or_tampered_signature_is_refused_and_credits_nothing(shop: Shop) -> None:
    session = buy_pack(shop)
    customer = shop.customer()
    before = shop.balance()
    payload = event(
        "evt_forged", "checkout.session.completed", checkout_object(session, customer), created=10
    )
    for result in (
        shop.deliver(payload, secret="whsec_SomebodyElse"),
        shop.deliver(payload, at=int(time.time()) - 600),  # outside the 5-minute tolerance: a replay
        shop.deliver(payload, at=int(time.time()) + 3600),  # dated an hour ahead
        shop.client.simulate_post(WEBHOOK, body=payload),
        shop.client.simulate_post(
            WEBHOOK,
            body=payload.replace(b'"small"', b'"large"'),
            headers={"Stripe-Signature": signature(payload, WEBHOOK_SECRET)},
        ),
        shop.client.simulate_post(
            WEBHOOK, body=b"not json", headers={"Stripe-Signature": signature(b"not json", WEBHOOK_SECRET)}
        ),
    ):
        assert error(result) == (400, "invalid_signature")
    assert shop.balance() == before
    assert shop.deliver(payload).json["outcome"] == "applied"  # the genuine event still applies
    assert shop.balance() == before + 5_000


@pytest.mark.parametrize("offset_s", [-3600, -330, 330, 3600, 86_400])
def test_a_signature_dated_beyond_the_tolerance_either_way_is_refused(shop: Shop, offset_s: int) -> None:
    session = buy_pack(shop)
    before = shop.balance()
    payload = event(
        "evt_skewed", "checkout.session.completed", checkout_object(session, shop.customer()), created=10
    )
    assert error(shop.deliver(payload, at=int(time.time()) + offset_s)) == (400, "invalid_signature")
    assert shop.balance() == before


@pytest.mark.parametrize("offset_s", [-240, 0, 240])
def test_a_signature_dated_within_the_tolerance_either_way_is_accepted(shop: Shop, offset_s: int) -> None:
    session = buy_pack(shop)
    before = shop.balance()
    payload = event(
        "evt_in_time", "checkout.session.completed", checkout_object(session, shop.customer()), created=10
    )
    assert shop.deliver(payload, at=int(time.time()) + offset_s).json["outcome"] == "applied"
    assert shop.balance() == before + 5_000


def post_webhook(shop: Shop, payload: bytes, signature_header: str | None, address: str) -> Any:
    headers = {"Content-Type": "application/json"}
    if signature_header is not None:
        headers["Stripe-Signature"] = signature_header
    return shop.client.simulate_post(WEBHOOK, body=payload, headers=headers, remote_addr=address)


def test_a_flood_of_unsigned_or_badly_signed_posts_writes_nothing_not_even_a_rate_bucket(shop: Shop) -> None:
    session = buy_pack(shop)
    before = shop.balance()
    payload = event(
        "evt_flood", "checkout.session.completed", checkout_object(session, shop.customer()), created=10
    )
    address = "203.0.113.7"
    forged = signature(payload, "whsec_SomebodyElse")
    for number in range(WEBHOOK_LIMIT.count + 50):
        header = (None, forged, "t=1,v1=00", signature(payload, WEBHOOK_SECRET, at=1))[number % 4]
        assert error(post_webhook(shop, payload, header, address)) == (400, "invalid_signature")
    now = shop.app.clock.now()
    untouched = shop.app.limiter.peek(webhook_bucket(address), WEBHOOK_LIMIT, now=now)
    never_used = shop.app.limiter.peek(webhook_bucket("192.0.2.99"), WEBHOOK_LIMIT, now=now)
    assert untouched == never_used  # nothing was counted for the address
    assert shop.balance() == before
    # Nothing of the event was kept either: the genuine one still applies, once.
    assert (
        post_webhook(shop, payload, signature(payload, WEBHOOK_SECRET), address).json["outcome"] == "applied"
    )
    assert shop.balance() == before + 5_000


def test_validly_signed_posts_are_limited_per_client_address(shop: Shop) -> None:
    session = buy_pack(shop)
    payload = event(
        "evt_replayed", "checkout.session.completed", checkout_object(session, shop.customer()), created=10
    )
    header = signature(payload, WEBHOOK_SECRET)  # one captured signature, replayed within its tolerance
    answers = [post_webhook(shop, payload, header, "203.0.113.7") for _ in range(WEBHOOK_LIMIT.count + 1)]
    taken = [a.json["outcome"] for a in answers if a.status_code == 200]
    # The clock stands still: the bucket's whole depth is taken at once (the GCRA's burst), then refused.
    assert len(taken) >= WEBHOOK_LIMIT.count - 1
    assert taken[0] == "applied" and set(taken[1:]) == {"duplicate"}
    refused = answers[-1]
    assert error(refused) == (429, "rate_limited")
    assert int(refused.headers["Retry-After"]) >= 1
    # Another address (another of the provider's senders) has its own allowance.
    assert post_webhook(shop, payload, header, "198.51.100.20").status_code == 200


def test_events_for_other_customers_or_of_other_types_are_acknowledged_and_ignored(shop: Shop) -> None:
    session = buy_pack(shop)
    before = shop.balance()
    stranger = shop.deliver(
        event("evt_x", "checkout.session.completed", checkout_object(session, "cus_Stranger"), created=10)
    )
    assert stranger.json["outcome"] == "ignored"
    invoice = shop.deliver(event("evt_inv", "invoice.paid", {"id": "in_1", "object": "invoice"}, created=10))
    assert invoice.json["outcome"] == "ignored"
    assert shop.balance() == before


def test_subscription_events_set_and_end_the_plan(shop: Shop) -> None:
    link = shop.post("/billing/subscribe", STARTER_10K)
    assert link.status_code == 200
    customer = shop.customer()
    before = shop.balance()
    session = link.json["url"].rsplit("/", 1)[1]
    paid = checkout_object(session, customer, mode="subscription", pack=None)
    assert shop.deliver(event("evt_s0", "checkout.session.completed", paid, created=99)).status_code == 200
    assert shop.balance() == before  # a subscription's checkout credits nothing...
    assert shop.post("/billing/portal").status_code == 200  # ...but it is a first purchase
    sub = "sub_RetroClock"
    price = "price_starter_10k_monthly"
    shop.deliver(
        event(
            "evt_s1",
            "customer.subscription.created",
            subscription_object(sub, customer, "active", price),
            created=100,
        )
    )
    assert shop.plan() == "starter"
    assert error(shop.post("/billing/subscribe", GROWTH_50K)) == (409, "subscription_exists")
    # A plan change made in the portal arrives as an update with the new price.
    shop.deliver(
        event(
            "evt_s2",
            "customer.subscription.updated",
            subscription_object(sub, customer, "active", "price_growth_50k_yearly"),
            created=200,
        )
    )
    assert shop.plan() == "growth"
    shop.deliver(
        event(
            "evt_s3",
            "customer.subscription.deleted",
            subscription_object(sub, customer, "canceled", "price_growth_50k_yearly"),
            created=300,
        )
    )
    assert shop.plan() == "free"
    assert shop.post("/billing/subscribe", GROWTH_50K).status_code == 200  # ended: a new one may start


def test_reordered_subscription_events_leave_the_plan_they_end_with(shop: Shop) -> None:
    shop.post("/billing/subscribe", STARTER_10K)
    customer = shop.customer()
    sub = "sub_Reordered"
    price = "price_starter_10k_monthly"
    created = event(
        "evt_r1",
        "customer.subscription.created",
        subscription_object(sub, customer, "active", price),
        created=100,
    )
    updated = event(
        "evt_r2",
        "customer.subscription.updated",
        subscription_object(sub, customer, "past_due", price),
        created=200,
    )
    deleted = event(
        "evt_r3",
        "customer.subscription.deleted",
        subscription_object(sub, customer, "canceled", price),
        created=300,
    )
    assert shop.deliver(deleted).json["outcome"] == "applied"
    assert shop.deliver(updated).json["outcome"] == "ignored"  # an ended subscription never comes back
    assert shop.deliver(created).json["outcome"] == "ignored"
    # Even an update stamped the same second as the deletion cannot revive it.
    same_second = event(
        "evt_r4",
        "customer.subscription.updated",
        subscription_object(sub, customer, "active", price),
        created=300,
    )
    assert shop.deliver(same_second).json["outcome"] == "ignored"
    assert shop.plan() == "free"
    for payload in (deleted, updated, created):
        assert shop.deliver(payload).json["outcome"] == "duplicate"
    assert shop.plan() == "free"


def test_a_stale_update_does_not_undo_a_newer_one(shop: Shop) -> None:
    shop.post("/billing/subscribe", STARTER_10K)
    customer = shop.customer()
    sub = "sub_Stale"
    newer = event(
        "evt_n",
        "customer.subscription.updated",
        subscription_object(sub, customer, "active", "price_growth_50k_yearly"),
        created=200,
    )
    older = event(
        "evt_o",
        "customer.subscription.created",
        subscription_object(sub, customer, "active", "price_starter_10k_monthly"),
        created=100,
    )
    shop.deliver(newer)
    assert shop.deliver(older).json["outcome"] == "ignored"
    assert shop.plan() == "growth"


JAN_1 = 1_798_761_600  # 2027-01-01 00:00 UTC
FEB_1 = 1_801_440_000
MAR_1 = 1_803_859_200


def test_a_paid_invoice_grants_its_tier_once_however_often_it_is_reported(shop: Shop) -> None:
    shop.post("/billing/subscribe", STARTER_10K)
    customer = shop.customer()
    sub, price = "sub_Invoices", "price_starter_10k_monthly"
    before = shop.balance()
    first = invoice_object(customer, sub, price, start=JAN_1, end=FEB_1, reason="subscription_create")
    assert shop.deliver(event("evt_i1", "invoice.paid", first, created=JAN_1)).json["outcome"] == "applied"
    assert shop.balance() == before + 10_000
    assert shop.deliver(event("evt_i1", "invoice.paid", first, created=JAN_1)).json["outcome"] == "duplicate"
    # The same invoice reported by another event: the month is granted already.
    assert shop.deliver(event("evt_i1b", "invoice.paid", first, created=JAN_1)).json["outcome"] == "duplicate"
    assert shop.balance() == before + 10_000
    renewal = invoice_object(customer, sub, price, start=FEB_1, end=MAR_1)
    assert shop.deliver(event("evt_i2", "invoice.paid", renewal, created=FEB_1)).json["outcome"] == "applied"
    assert shop.balance() == before + 20_000
    # A proration invoice, an invoice of another reason or of an unknown price grants nothing.
    for n, (obj, reason) in enumerate(
        (
            (
                invoice_object(customer, sub, price, start=FEB_1 + 99, end=MAR_1, proration=True),
                "subscription_cycle",
            ),
            (invoice_object(customer, sub, price, start=FEB_1 + 99, end=MAR_1), "subscription_update"),
            (
                invoice_object(customer, sub, "price_unknown", start=FEB_1 + 99, end=MAR_1),
                "subscription_cycle",
            ),
        )
    ):
        obj["billing_reason"] = reason
        assert (
            shop.deliver(event(f"evt_x{n}", "invoice.paid", obj, created=FEB_1)).json["outcome"] == "ignored"
        )
    assert shop.balance() == before + 20_000


def test_after_a_cancellation_a_yearly_tier_grants_until_its_paid_year_ends(shop: Shop) -> None:
    shop.post("/billing/subscribe", GROWTH_50K)
    customer = shop.customer()
    sub, price = "sub_Yearly", "price_growth_50k_yearly"
    clock = shop.app.clock
    assert isinstance(clock, FixedClock)
    year_end = JAN_1 + 365 * 86_400
    clock.set(datetime.fromtimestamp(JAN_1, UTC))
    before = shop.balance()
    paid = invoice_object(customer, sub, price, start=JAN_1, end=year_end, reason="subscription_create")
    shop.deliver(event("evt_y1", "invoice.paid", paid, created=JAN_1))
    assert shop.balance() == before + 50_000
    shop.deliver(
        event(
            "evt_y2",
            "customer.subscription.deleted",
            subscription_object(sub, customer, "canceled", price),
            created=JAN_1 + 5,
        )
    )
    assert shop.plan() == "free"
    granted = 0
    for _ in range(15):  # monthly passes, past the paid year
        clock.advance(days=30)
        granted += shop.app.application.grant_subscription_months(clock.now())
    assert granted == 11
    assert shop.balance() == before + 12 * 50_000


# --- settings ----------------------------------------------------------------------------------------------


def test_the_price_table_reads_plans_and_optional_pack_prices() -> None:
    table = PriceTable.parse("starter:10k:monthly=price_a\n growth:2.5m:yearly=price_b,pack:small=price_c")
    assert table.plans == {
        PlanChoice(PlanName.STARTER, Tier.T10K, Interval.MONTHLY): "price_a",
        PlanChoice(PlanName.GROWTH, Tier.T2_5M, Interval.YEARLY): "price_b",
    }
    assert table.packs == {Pack.SMALL: "price_c"}
    assert table.choice_of("price_b") == PlanChoice(PlanName.GROWTH, Tier.T2_5M, Interval.YEARLY)
    assert PriceTable.parse("").plans == {}


@pytest.mark.parametrize(
    "text", ["starter:10k:monthly", "scale:10k:monthly=price_a", "pack:medium=price_a", "starter:10k=price_a"]
)
def test_a_bad_price_table_entry_stops_the_start(text: str) -> None:
    with pytest.raises(ValueError, match="SITEAUDIT_STRIPE_PRICES"):
        PriceTable.parse(text)


def test_a_configured_pack_price_is_used_instead_of_the_inline_one(httpserver: HTTPServer) -> None:
    from siteaudit.adapters.payment.stripe import StripePayments
    from siteaudit.domain.billing import PACKS
    from siteaudit.domain.ids import UserId
    from siteaudit.ports.payment import CheckoutOrder

    stripe = StripeStandIn(httpserver).install()
    payments = StripePayments(
        secret_key=SECRET_KEY,
        webhook_secret=WEBHOOK_SECRET,
        prices=PriceTable.parse("pack:large=price_pack_large"),
        api_base=stripe.api_base,
    )
    link = payments.checkout_link(
        CheckoutOrder(
            UserId(7),
            OWNER,
            "cus_Seven",
            "https://a.example/ok",
            "https://a.example/no",
            offer=PACKS[Pack.LARGE],
        )
    )
    assert link.url == f"https://checkout.stripe.com/c/pay/{link.session_id}"
    form = stripe.calls[-1].form
    assert form["line_items[0][price]"] == "price_pack_large"
    assert not any(k.startswith("line_items[0][price_data]") for k in form)
    assert SECRET_KEY not in repr(payments)


def test_stripe_without_its_secrets_refuses_to_start() -> None:
    with pytest.raises(ValueError, match="SITEAUDIT_STRIPE_SECRET_KEY"):
        bootstrap(Settings(database_url="memory://", payment_provider="stripe"), queue=MemoryTaskQueue())
    with pytest.raises(ValueError, match="SITEAUDIT_PAYMENT_PROVIDER"):
        bootstrap(Settings(database_url="memory://", payment_provider="paypal"), queue=MemoryTaskQueue())


def test_stripe_keys_and_signing_secrets_never_reach_the_logs() -> None:
    from siteaudit.adapters.log import redact

    line = redact(
        "key sk_live_51HRetroClock0123456789 restricted rk_live_51HRetroClockABCDEFG "
        f"test {SECRET_KEY} hook {WEBHOOK_SECRET}"
    )
    for secret in ("51HRetroClock0123456789", "51HRetroClockABCDEFG", SECRET_KEY, WEBHOOK_SECRET):
        assert secret not in line
    assert redact("sk_" + "A" * 40).startswith("sk_AAAAAAAAA")  # API keys keep their prefix, as before


def test_switching_from_the_local_provider_to_stripe_starts_a_new_billing_account(shop: Shop) -> None:
    import re

    local = bootstrap(
        Settings(database_url="memory://"), uow=shop.app.uow, crawl=shop.app.crawl, queue=MemoryTaskQueue()
    )
    local_client = falcon.testing.TestClient(local.rest_api())
    auth = {"Authorization": f"Bearer {shop.owner_key}"}
    local.application.set_password(OWNER, "correct horse battery staple")
    signed = local.application.sign_in(OWNER, "correct horse battery staple")
    session = {"Cookie": f"siteaudit_session={signed.token}"}  # the test checkout is for its buyer
    link = local_client.simulate_post("/v1/billing/subscribe", json=STARTER_10K, headers=auth).json["url"]
    path = link.removeprefix("http://127.0.0.1:8080")
    page = local_client.simulate_get(path, headers=session)
    token = re.search(r'name="token" value="([0-9a-f]+)"', page.text)
    assert token
    local_client.simulate_post(
        path,
        body=f"token={token.group(1)}",
        headers={"Content-Type": "application/x-www-form-urlencoded", **session},
    )
    assert shop.plan() == "starter"
    assert error(local_client.simulate_post("/v1/billing/subscribe", json=GROWTH_50K, headers=auth)) == (
        409,
        "subscription_exists",
    )
    # The operator now sells through Stripe: the test subscription and purchase do not count there.
    assert error(shop.post("/billing/portal")) == (409, "no_billing_account")
    assert shop.post("/billing/subscribe", GROWTH_50K).status_code == 200
    assert shop.stripe.paths() == ["/v1/customers", "/v1/checkout/sessions"]
    assert error(shop.post("/billing/portal")) == (409, "no_billing_account")


# --- plan changes made in the app (SPEC 4.10) ---------------------------------------------------------------


def test_a_plan_change_in_the_app_moves_the_stripe_item_to_the_new_price_at_once(shop: Shop) -> None:
    from siteaudit.domain.account import NotTeamOwner
    from siteaudit.domain.billing import NoSubscription, PriceNotConfigured

    application = shop.app.application
    owner = application.authenticate(shop.owner_key)
    growth = PlanChoice(PlanName.GROWTH, Tier.T50K, Interval.YEARLY)
    with pytest.raises(NoSubscription):
        application.billing_change_plan(growth, owner)  # nothing to change before a subscription
    shop.post("/billing/subscribe", STARTER_10K)
    customer = shop.customer()
    sub = subscription_object("sub_Changing", customer, "active", "price_starter_10k_monthly")
    shop.stripe.subscriptions["sub_Changing"] = sub
    shop.deliver(event("evt_c1", "customer.subscription.created", sub, created=int(time.time()) - 60))
    assert shop.plan() == "starter"
    with pytest.raises(PriceNotConfigured):
        application.billing_change_plan(PlanChoice(PlanName.GROWTH, Tier.T1M, Interval.MONTHLY), owner)
    status = application.billing_change_plan(growth, owner)
    assert status.plan == "growth" and shop.plan() == "growth"
    assert status.subscription is not None and status.subscription.choice == growth
    (update,) = [c for c in shop.stripe.calls if c.path == "/v1/subscriptions/sub_Changing" and c.form]
    assert update.form == {
        "items[0][id]": "si_RetroClock",
        "items[0][price]": "price_growth_50k_yearly",
        "proration_behavior": "create_prorations",
        "metadata[choice]": "growth:50k:yearly",
    }
    # Stripe's own webhook about the same change leaves the same plan.
    changed = shop.deliver(
        event("evt_c2", "customer.subscription.updated", sub, created=int(time.time()) - 1)
    )
    assert changed.status_code == 200 and shop.plan() == "growth"
    with pytest.raises(NotTeamOwner):
        application.billing_change_plan(STARTER, application.authenticate(shop.member_key))


def test_a_stripe_error_during_a_plan_change_changes_nothing(shop: Shop) -> None:
    from siteaudit.domain.billing import PaymentProviderFailed

    application = shop.app.application
    owner = application.authenticate(shop.owner_key)
    shop.post("/billing/subscribe", STARTER_10K)
    sub = subscription_object("sub_Missing", shop.customer(), "active", "price_starter_10k_monthly")
    shop.deliver(event("evt_m1", "customer.subscription.created", sub, created=int(time.time()) - 60))
    with pytest.raises(PaymentProviderFailed):  # the stand-in does not know this subscription: 404
        application.billing_change_plan(PlanChoice(PlanName.GROWTH, Tier.T50K, Interval.YEARLY), owner)
    assert shop.plan() == "starter"


STARTER = PlanChoice(PlanName.STARTER, Tier.T10K, Interval.MONTHLY)


def test_the_app_leads_to_stripe_checkout_through_a_plain_link(shop: Shop) -> None:
    """The billing page's forms may only post to the app itself (CSP form-action 'self', which browsers
    also apply to a form's redirect), so a Stripe link is handed over as a link to follow."""
    from tests.unit.web.conftest import PASSWORD, Browser

    shop.app.application.set_password(OWNER, PASSWORD)
    browser = Browser(falcon.testing.TestClient(shop.app.service()))
    browser.sign_in()
    page = browser.get("/app/billing").text
    assert "Test mode." not in page
    answer = browser.post("/app/billing", {"action": "checkout", "pack": "large"})
    assert answer.status_code == 200
    (call,) = [c for c in shop.stripe.calls if c.path == "/v1/checkout/sessions"]
    assert call.form["success_url"] == "https://audit.retro-clock.example/app/billing?checkout=done"
    found = re.search(r'id="continue" href="(https://checkout\.stripe\.com/c/pay/cs_test_\w+)"', answer.text)
    assert found, answer.text
    assert "Your checkout is ready" in answer.text


def test_the_billing_page_shows_the_prices_stripe_states_and_what_each_tier_gives(shop: Shop) -> None:
    from tests.unit.web.conftest import PASSWORD, Browser

    shop.stripe.prices.update(
        {
            "price_starter_10k_monthly": (1_900, "usd"),
            "price_growth_50k_yearly": (49_000, "eur"),
            "price_other": (5, "usd"),
        }
    )
    shop.app.application.set_password(OWNER, PASSWORD)
    browser = Browser(falcon.testing.TestClient(shop.app.service()))
    browser.sign_in()
    page = browser.get("/app/billing").text
    assert '<td data-label="Starter, monthly" class="num">19.00 USD a month</td>' in page
    assert '<td data-label="Growth, yearly" class="num">490.00 EUR a year</td>' in page
    assert page.count("not offered") == 6 * 4 - 2  # every other combination of the table
    assert '<td data-label="Credits a month" class="num">2,500,000</td>' in page
    browser.get("/app/billing")
    assert shop.stripe.paths().count("/v1/prices") == 1  # kept, not asked at every page


def test_when_stripe_cannot_say_its_prices_the_billing_page_still_shows(shop: Shop) -> None:
    from tests.unit.web.conftest import PASSWORD, Browser

    shop.app.application.set_password(OWNER, PASSWORD)
    browser = Browser(falcon.testing.TestClient(shop.app.service()))
    browser.sign_in()
    shop.stripe.fail_next = (400, "invalid_request_error", "No such thing")  # not retried by the SDK
    page = browser.get("/app/billing")
    assert page.status_code == 200 and "Prices are shown at checkout." in page.text
    assert (
        "not offered" not in page.text
        and '<td data-label="Credits a month" class="num">10,000</td>' in page.text
    )
