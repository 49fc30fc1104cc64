"""Billing (SPEC 4.10) through /v1 with the local test provider: every status and code, and the TEST
PURCHASE page end to end (the balance rises once)."""

import re
from typing import Any

import falcon.testing
import pytest

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.credit import credits
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from siteaudit.settings import Settings
from tests.unit.rest.conftest import World

OWNER = "owner@retro-clock.example"
PASSWORD = "correct horse battery staple"
STARTER_10K = {"plan": "starter", "tier": "10k", "interval": "monthly"}


def post(world: World, path: str, body: Any = None, *, key: str | None = None) -> Any:
    return world.client.simulate_post(f"/v1{path}", json=body, headers=world.auth(key or world.owner_key))


def error(result: Any) -> tuple[int, str]:
    return result.status_code, result.json["error"]["code"]


def balance(world: World, key: str | None = None) -> float:
    answer = world.client.simulate_get("/v1/account", headers=world.auth(key or world.owner_key))
    return float(answer.json["balance"])


def checkout_path(url: str) -> str:
    match = re.fullmatch(r"http://127\.0\.0\.1:8080(/app/test-checkout/cs_local_[0-9a-f]{32})", url)
    assert match, url
    return match.group(1)


# (world, email) -> the world and its session token. The world is kept beside its id: an id alone is
# reused by a later world once the first is collected, whose database knows no such session.
_SESSIONS: dict[tuple[int, str], tuple[World, str]] = {}


def signed_in(world: World, email: str = OWNER) -> dict[str, str]:
    """The Cookie header of an app session of `email`: the test checkout page is for its buyer only."""
    known = _SESSIONS.get((id(world), email))
    if known is None or known[0] is not world:
        world.app.application.set_password(email, PASSWORD)
        known = world, world.app.application.sign_in(email, PASSWORD).token
        _SESSIONS[id(world), email] = known
    return {"Cookie": f"siteaudit_session={known[1]}"}


def open_page(world: World, path: str) -> tuple[Any, str]:
    page = world.client.simulate_get(path, headers=signed_in(world))
    assert page.status_code == 200, page.text
    token = re.search(r'name="token" value="([0-9a-f]{64})"', page.text)
    assert token
    return page, token.group(1)


def complete(world: World, path: str, token: str, **headers: str) -> Any:
    return world.client.simulate_post(
        path,
        body=f"token={token}",
        headers={"Content-Type": "application/x-www-form-urlencoded", **signed_in(world), **headers},
    )


def plan_of(world: World, email: str = OWNER) -> str:
    (user,) = [u for u in world.app.application.list_users() if u.user.email == email]
    return user.user.plan


# --- who may call --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/billing/checkout", {"pack": "small"}),
        ("/billing/subscribe", STARTER_10K),
        ("/billing/portal", None),
    ],
)
def test_a_member_who_does_not_own_the_team_is_refused(world: World, path: str, body: Any) -> None:
    assert error(post(world, path, body, key=world.member_key)) == (403, "not_team_owner")


def test_the_billing_endpoints_need_a_key(world: World) -> None:
    result = world.client.simulate_post("/v1/billing/checkout", json={"pack": "small"})
    assert error(result) == (401, "unauthenticated")


# --- bodies ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (None, "body"),
        ({}, "pack"),
        ({"pack": "medium"}, "pack"),
        ({"pack": None}, "pack"),
        ({"pack": "small", "coupon": "FREE"}, "coupon"),
    ],
)
def test_a_pack_that_is_not_small_or_large_answers_validation_failed(
    world: World, body: Any, field: str
) -> None:
    result = post(world, "/billing/checkout", body)
    assert error(result) == (422, "validation_failed")
    assert field in result.json["error"]["fields"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tier": "10k", "interval": "monthly"}, "plan"),
        ({"plan": "scale", "tier": "10k", "interval": "monthly"}, "plan"),
        ({"plan": "starter", "tier": "20k", "interval": "monthly"}, "tier"),
        ({"plan": "starter", "tier": "10k", "interval": "weekly"}, "interval"),
    ],
)
def test_a_plan_tier_or_interval_outside_the_spec_answers_validation_failed(
    world: World, body: Any, field: str
) -> None:
    result = post(world, "/billing/subscribe", body)
    assert error(result) == (422, "validation_failed")
    assert field in result.json["error"]["fields"]


# --- the local provider, end to end ----------------------------------------------------------------------


def test_buying_a_small_pack_through_the_test_checkout_credits_the_owner_once(world: World) -> None:
    before = balance(world)
    link = post(world, "/billing/checkout", {"pack": "small"})
    assert link.status_code == 200, link.text
    assert set(link.json) == {"url"}
    path = checkout_path(link.json["url"])
    assert balance(world) == before  # nothing is bought until the checkout completes

    page, token = open_page(world, path)
    assert "TEST PURCHASE" in page.text
    assert "5,000" in page.text and "9.00 USD" in page.text and OWNER in page.text
    done = complete(world, path, token)
    assert done.status_code == 200, done.text
    assert "Test purchase completed" in done.text
    assert balance(world) == before + 5_000

    again = complete(world, path, token)  # the button pressed twice, or the form re-sent
    assert again.status_code == 200
    assert "Already completed" in again.text
    assert balance(world) == before + 5_000
    closed = world.client.simulate_get(path, headers=signed_in(world))
    assert closed.status_code == 404  # a completed checkout is closed


def test_a_large_pack_adds_25000_credits(world: World) -> None:
    before = balance(world)
    path = checkout_path(post(world, "/billing/checkout", {"pack": "large"}).json["url"])
    _, token = open_page(world, path)
    assert complete(world, path, token).status_code == 200
    assert balance(world) == before + 25_000


def test_a_wrong_missing_or_stale_form_token_buys_nothing(world: World) -> None:
    before = balance(world)
    path = checkout_path(post(world, "/billing/checkout", {"pack": "small"}).json["url"])
    _, first = open_page(world, path)
    _, second = open_page(world, path)  # reloading issues a new token; the old one no longer counts
    for token in ("0" * 64, "", first):
        refused = complete(world, path, token)
        assert refused.status_code == 400, token
        assert "TEST PURCHASE" in refused.text
    assert balance(world) == before
    assert complete(world, path, second).status_code == 200
    assert balance(world) == before + 5_000


def test_a_form_posted_from_another_site_buys_nothing(world: World) -> None:
    before = balance(world)
    path = checkout_path(post(world, "/billing/checkout", {"pack": "small"}).json["url"])
    _, token = open_page(world, path)
    refused = complete(world, path, token, Origin="https://evil.example")
    assert refused.status_code == 403
    assert balance(world) == before
    assert complete(world, path, token, Origin="http://falconframework.org").status_code == 200
    assert balance(world) == before + 5_000


def test_an_unknown_or_malformed_checkout_session_answers_404_pages(world: World) -> None:
    for path in ("/app/test-checkout/cs_local_" + "0" * 32, "/app/test-checkout/cs-local.x!"):
        page = world.client.simulate_get(path, headers=signed_in(world))
        assert page.status_code == 404
        assert page.headers["content-type"].startswith("text/html")
        assert complete(world, path, "0" * 64).status_code == 404


def test_the_checkout_page_is_never_framed_runs_no_script_and_is_not_cached(world: World) -> None:
    path = checkout_path(post(world, "/billing/checkout", {"pack": "small"}).json["url"])
    page, _ = open_page(world, path)
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    assert "script" not in page.text.lower()
    nonce = re.search(r"style-src 'nonce-([^']+)'", policy)
    assert nonce and f'<style nonce="{nonce.group(1)}">' in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "same-origin"
    assert page.headers["cache-control"] == "no-store"


def test_the_portal_needs_a_completed_purchase_first(world: World) -> None:
    assert error(post(world, "/billing/portal")) == (409, "no_billing_account")
    path = checkout_path(post(world, "/billing/checkout", {"pack": "small"}).json["url"])
    assert error(post(world, "/billing/portal")) == (409, "no_billing_account")  # opened, not paid
    _, token = open_page(world, path)
    complete(world, path, token)
    portal = post(world, "/billing/portal")
    assert portal.status_code == 200, portal.text
    assert portal.json == {"url": "http://127.0.0.1:8080/app/billing"}


def test_a_test_subscription_sets_the_plan_and_a_second_one_is_refused(world: World) -> None:
    assert plan_of(world) == "growth"
    link = post(world, "/billing/subscribe", {"plan": "starter", "tier": "50k", "interval": "yearly"})
    assert link.status_code == 200, link.text
    path = checkout_path(link.json["url"])
    page, token = open_page(world, path)
    assert "starter" in page.text and "50k" in page.text and "yearly" in page.text
    assert complete(world, path, token).status_code == 200
    assert plan_of(world) == "starter"
    status = world.app.application.billing_status(world.app.application.authenticate(world.owner_key))
    assert status.subscription is not None and status.subscription.choice is not None
    assert status.subscription.choice.key == "starter:50k:yearly"
    assert status.has_purchased and status.provider == "local"
    assert error(post(world, "/billing/subscribe", STARTER_10K)) == (409, "subscription_exists")
    assert post(world, "/billing/portal").status_code == 200


def test_the_local_provider_accepts_no_webhooks(world: World) -> None:
    result = world.client.simulate_post(
        "/billing/stripe/webhook", body=b'{"id": "evt_1"}', headers={"Stripe-Signature": "t=1,v1=00"}
    )
    assert error(result) == (400, "invalid_signature")


# --- no provider ------------------------------------------------------------------------------------------


@pytest.fixture
def unsold() -> tuple[falcon.testing.TestClient, str, str]:
    clock = FixedClock()
    app = bootstrap(
        Settings(database_url="memory://", payment_provider="none"), clock=clock, queue=MemoryTaskQueue()
    )
    accounts.create_user(OWNER, plan="growth", uow=app.uow(), clock=clock, secrets=SystemSecrets())
    accounts.create_team("Retro Clock", owner_email=OWNER, uow=app.uow(), clock=clock)
    accounts.grant_credits(OWNER, credits(10), key="start", uow=app.uow(), clock=clock)
    key = keys.create_settings_key(OWNER, "Retro Clock", uow=app.uow(), clock=clock, secrets=app.secrets).raw
    app.application.set_password(OWNER, PASSWORD)
    session = app.application.sign_in(OWNER, PASSWORD).token
    return falcon.testing.TestClient(app.rest_api()), key, session


def test_without_a_provider_nothing_is_offered(unsold: tuple[falcon.testing.TestClient, str, str]) -> None:
    client, key, session = unsold
    headers = {"Authorization": f"Bearer {key}"}
    for path, body, expected in (
        ("/v1/billing/checkout", {"pack": "small"}, (422, "price_not_configured")),
        ("/v1/billing/subscribe", STARTER_10K, (422, "price_not_configured")),
        ("/v1/billing/portal", None, (409, "no_billing_account")),
    ):
        result = client.simulate_post(path, json=body, headers=headers)
        assert error(result) == expected, path
    page = client.simulate_get(
        "/app/test-checkout/cs_local_" + "0" * 32, headers={"Cookie": f"siteaudit_session={session}"}
    )
    assert page.status_code == 404


def test_postgresql_sells_nothing_unless_a_provider_is_chosen() -> None:
    assert Settings(database_url="postgresql+psycopg://x@127.0.0.1/x").payments == "none"
    assert Settings(database_url="sqlite:////tmp/x.sqlite3").payments == "local"
    assert Settings(database_url="memory://").payments == "local"
    assert Settings(database_url="postgresql+psycopg://x@h/x", payment_provider="Stripe").payments == "stripe"
