"""The app's billing page (SPEC 4.10) over the embedded application with the local test provider: the
owner's purchases go through the provider's links and credit once; members see why they cannot buy."""

import re
from urllib.parse import urlencode

from tests.unit.web.conftest import MEMBER, OWNER, PASSWORD, Browser, Site

_TOKEN = re.compile(r'name="token" value="([0-9a-f]+)"')


def balance(browser: Browser) -> str:
    browser.get("/app/billing")
    found = re.search(r'id="balance">([0-9,.]+)<', browser.page)
    assert found, browser.page
    return found.group(1)


def open_checkout(browser: Browser, location: str) -> tuple[str, str]:
    """The local TEST PURCHASE page's path, and the token of its form as `browser` opens it."""
    path = location.removeprefix("http://127.0.0.1:8080")
    page = browser.get(path)
    token = _TOKEN.search(page.text)
    assert token, page.text
    return path, token.group(1)


def complete(browser: Browser, location: str) -> tuple[int, str]:
    """Open the local TEST PURCHASE page and press its button, as a browser would."""
    path, token = open_checkout(browser, location)
    done = browser.post(path, {"token": token})
    return done.status_code, done.text


def test_the_owner_sees_plan_credits_and_every_purchase_form(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    answer = browser.get("/app/billing")
    assert answer.status_code == 200
    page = answer.text
    assert 'id="current-plan">growth<' in page and 'id="balance">5,000<' in page
    assert "Test mode." in page
    for button in ('id="buy-small"', 'id="buy-large"', 'id="subscribe"'):
        assert button in page
    assert 'id="portal"' not in page  # before the first purchase
    assert page.count('name="csrf"') >= 5  # the switcher, sign-out, two packs, subscribe
    assert 'href="/app/billing" data-label="Billing" aria-current="page"' in page


def test_a_small_pack_bought_through_the_test_checkout_credits_once(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/billing")
    answer = browser.post("/app/billing", {"action": "checkout", "pack": "small"})
    assert answer.status_code == 303
    location = answer.headers["Location"]
    assert location.startswith("http://127.0.0.1:8080/app/test-checkout/cs_local_")
    status, text = complete(browser, location)
    assert status == 200 and "Test purchase completed" in text
    path = location.removeprefix("http://127.0.0.1:8080")
    again = browser.post(path, {"token": "0"})
    assert again.status_code == 200 and "Already completed" in again.text  # a re-post credits nothing
    assert "10,000 credits" in again.text
    returned = browser.get("/app/billing", checkout="done")
    assert "the purchase is complete" in returned.text
    assert balance(browser) == "10,000"
    browser.get("/app/billing", checkout="done")  # the return page reloaded
    assert balance(browser) == "10,000"
    assert 'id="portal"' in browser.page  # after the first purchase


def test_the_test_checkout_is_only_for_the_person_signed_in_who_asked_for_it(site: Site) -> None:
    site.app.application.create_user("rival@other-shop.example", plan="growth")
    site.app.application.create_team("Other Shop", owner_email="rival@other-shop.example")
    site.app.application.set_password("rival@other-shop.example", PASSWORD)
    owner = site.browser()
    owner.sign_in()
    owner.get("/app/billing")
    location = owner.post("/app/billing", {"action": "checkout", "pack": "small"}).headers["Location"]
    path, token = open_checkout(owner, location)
    signed_out = site.browser(address="203.0.113.7")
    shown = signed_out.get(path)
    assert shown.status_code == 303
    assert shown.headers["Location"] == "/app/sign-in?" + urlencode({"next": path})
    assert token not in shown.text
    posted = signed_out.post(path, {"token": token})
    assert posted.status_code == 303 and "Test purchase completed" not in posted.text
    for email in (MEMBER, "rival@other-shop.example"):  # of the team, or another team's owner
        other = site.browser(address="203.0.113.8")
        other.sign_in(email)
        assert other.get(path).status_code == 404
        refused = other.post(path, {"token": token})
        assert refused.status_code == 404 and "Test purchase completed" not in refused.text
    assert balance(owner) == "5,000"  # nothing was bought
    signed_out.get("/app/sign-in", next=path)
    signed = signed_out.post("/app/sign-in", {"email": OWNER, "password": PASSWORD, "next": path})
    assert signed.headers["Location"] == path  # signing in leads back to the checkout
    assert complete(signed_out, location)[0] == 200  # the owner, in any browser once signed in
    assert balance(owner) == "10,000"


def test_a_cancelled_checkout_says_nothing_was_charged(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    page = browser.get("/app/billing", checkout="cancelled").text
    assert "nothing was charged" in page
    assert balance(browser) == "5,000"


def test_a_subscription_sets_the_plan_and_is_then_changed_in_the_app(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/billing")
    answer = browser.post(
        "/app/billing", {"action": "subscribe", "plan": "starter", "tier": "10k", "interval": "yearly"}
    )
    assert answer.status_code == 303
    assert complete(browser, answer.headers["Location"])[0] == 200
    page = browser.get("/app/billing").text
    assert 'id="current-plan">starter<' in page and "starter, tier 10k, yearly" in page
    assert "Change plan or tier" in page and 'id="subscribe"' not in page
    assert '<option value="yearly" selected>' in page  # the form starts from the current choice
    changed = browser.post(
        "/app/billing", {"action": "change", "plan": "growth", "tier": "150k", "interval": "yearly"}
    )
    assert changed.status_code == 303 and changed.headers["Location"] == "/app/billing?checkout=changed"
    page = browser.get("/app/billing", checkout="changed").text
    assert "Your subscription is changed" in page
    assert 'id="current-plan">growth<' in page and "growth, tier 150k, yearly" in page
    browser.get("/app/billing")
    portal = browser.post("/app/billing", {"action": "portal"})
    assert portal.status_code == 303 and portal.headers["Location"] == "http://127.0.0.1:8080/app/billing"


def test_a_second_subscription_is_refused_with_the_reason(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/billing")
    form = {"action": "subscribe", "plan": "growth", "tier": "50k", "interval": "monthly"}
    complete(browser, browser.post("/app/billing", form).headers["Location"])
    browser.get("/app/billing")
    refused = browser.post("/app/billing", form)
    assert refused.status_code == 409 and "already has a subscription" in refused.text


def test_a_change_without_a_subscription_says_to_subscribe(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/billing")
    form = {"action": "change", "plan": "growth", "tier": "50k", "interval": "monthly"}
    refused = browser.post("/app/billing", form)
    assert refused.status_code == 409 and "subscribe instead" in refused.text


def test_a_member_sees_who_buys_and_cannot_post_a_purchase(site: Site) -> None:
    browser = site.browser()
    browser.sign_in(MEMBER)
    page = browser.get("/app/billing").text
    assert 'id="not-owner"' in page and "owner@retro-clock.example" in page
    assert 'id="buy-small"' not in page and 'id="subscribe"' not in page
    refused = browser.post("/app/billing", {"action": "checkout", "pack": "small"})
    assert refused.status_code == 403 and "owner" in refused.text


def test_purchases_need_the_csrf_token_and_known_choices(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/billing")
    assert (
        browser.post("/app/billing", {"action": "checkout", "pack": "small"}, csrf="0" * 64).status_code
        == 403
    )
    browser.get("/app/billing")
    assert browser.post("/app/billing", {"action": "checkout", "pack": "huge"}).status_code == 400
    browser.get("/app/billing")
    assert browser.post("/app/billing", {"action": "refund"}).status_code == 400
    assert balance(browser) == "5,000"
