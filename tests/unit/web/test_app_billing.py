"""The app's billing page (SPEC 4.10) over the embedded application with the local test provider: the
owner's purchases go through the provider's links and credit once; members see why they cannot buy."""

import re
from typing import Any
from urllib.parse import urlencode

import pytest

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
    starter = {"action": "subscribe", "plan": "starter", "tier": "10k", "interval": "yearly"}
    asked = browser.post("/app/billing", starter)  # the owner's plan is growth: starter is lower
    assert asked.status_code == 200 and "Lower your plan?" in asked.text
    assert "Your plan goes from growth to starter: at most 10,000 pages an audit (now 100,000)" in asked.text
    answer = browser.post("/app/billing", {**starter, "confirmed": "yes"})
    assert answer.status_code == 303
    assert complete(browser, answer.headers["Location"])[0] == 200
    page = browser.get("/app/billing").text
    assert 'id="current-plan">starter<' in page and "starter, tier 10k, yearly" in page
    assert "Change plan or tier" in page and 'id="subscribe"' not in page
    assert '<option value="yearly" selected>' in page  # the form starts from the current choice
    choice = {"action": "change", "plan": "growth", "tier": "150k", "interval": "yearly"}
    changed = browser.post("/app/billing", choice)
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


def subscribe(browser: Browser, tier: str, interval: str) -> None:
    browser.get("/app/billing")
    choice = {"action": "subscribe", "plan": "growth", "tier": tier, "interval": interval}
    answer = browser.post("/app/billing", choice)
    assert answer.status_code == 303, answer.text
    assert complete(browser, answer.headers["Location"])[0] == 200


def renewal_form(browser: Browser) -> dict[str, str]:
    browser.get("/app/billing")
    found = re.search(r'name="paid_from" value="([^"]+)"', browser.page)
    assert found, browser.page
    return {"action": "renew", "paid_from": found.group(1)}


def test_a_monthly_tier_grants_its_credits_for_each_paid_period_once(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    subscribe(browser, "10k", "monthly")
    assert balance(browser) == "15,000"  # 5,000 before, and the first month's 10,000
    assert 'id="tier-credits">10,000<' in browser.page and 'id="paid-period"' in browser.page
    assert site.app.application.grant_subscription_months(site.clock.now()) == 0  # granted already
    renew = renewal_form(browser)
    site.clock.advance(minutes=1)
    done = browser.post("/app/billing", renew)
    assert done.headers["Location"] == "/app/billing?checkout=renewed"
    assert balance(browser) == "25,000"
    replayed = browser.post("/app/billing", renew)  # the same form again: the same renewal
    assert replayed.headers["Location"] == "/app/billing?checkout=renewed-before"
    assert balance(browser) == "25,000"
    for days in (10, 40, 400):  # no month of a monthly period but its first, none after it
        site.clock.advance(days=days)
        assert site.app.application.grant_subscription_months(site.clock.now()) == 0
    browser.sign_in()  # the session ended meanwhile
    assert balance(browser) == "25,000"


def test_a_yearly_tier_grants_its_credits_monthly_for_the_paid_year_only(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    subscribe(browser, "50k", "yearly")
    assert balance(browser) == "55,000"
    application = site.app.application
    granted = []
    for _ in range(14):  # a pass a day, across the year and past its end
        for _ in range(31):
            site.clock.advance(days=1)
            granted.append(application.grant_subscription_months(site.clock.now()))
    assert sum(granted) == 11 and max(granted) == 1  # the other 11 months, each once
    browser.sign_in()  # the session ended meanwhile
    assert balance(browser) == f"{5_000 + 12 * 50_000:,}"


def test_the_tiers_and_both_kinds_of_credits_are_explained(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    page = browser.get("/app/billing").text
    shown = re.findall(
        r'<td><strong>([0-9.km]+)</strong></td>\s*<td data-label="Credits a month" class="num">([0-9,]+)<',
        page,
    )
    assert shown == [
        ("10k", "10,000"), ("50k", "50,000"), ("150k", "150,000"), ("500k", "500,000"), ("1m", "1,000,000"),
        ("2.5m", "2,500,000"),
    ]  # fmt: skip
    assert (
        "grants that many credits at the start of each month of the subscription (yearly ones monthly too)"
        in page
    )
    assert "<strong>Your credits</strong> are yours" in page and "<strong>Team credits</strong>" in page
    assert 'id="ask-owner"' not in page


def test_a_member_of_an_owner_without_credits_is_told_whom_to_ask(site: Site) -> None:
    site.app.application.create_user("broke@retro-clock.example", plan="free")
    site.app.application.create_team("Broke Team", owner_email="broke@retro-clock.example")
    site.app.application.add_member("Broke Team", MEMBER)
    member = site.browser()
    member.sign_in(MEMBER)
    member.get("/app/billing")
    team = re.search(r'<option value="(\d+)"[^>]*>Broke Team<', member.page)
    assert team, member.page
    member.post("/app/team", {"team_id": team.group(1), "next": "/app/billing"})
    page = member.get("/app/billing").text
    assert 'id="ask-owner"' in page and "broke@retro-clock.example" in page
    assert "charged to them" in page
    account = member.get("/app/account").text
    assert 'id="ask-owner"' in account and "charged to the owner, broke@retro-clock.example" in account
    assert "<strong>Team credits</strong> are the team owner's credits" in account
    member.post("/app/team", {"team_id": "1", "next": "/app/account"})  # Retro Clock's owner has credits
    assert 'id="ask-owner"' not in member.get("/app/account").text


def test_a_lower_tier_says_what_it_takes_away_before_changing(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    subscribe(browser, "150k", "monthly")
    browser.get("/app/billing")
    lower = {"action": "change", "plan": "growth", "tier": "10k", "interval": "monthly"}
    asked = browser.post("/app/billing", lower)
    assert "Each month grants 10,000 credits instead of 150,000." in asked.text
    assert "growth, tier 150k, monthly" in browser.get("/app/billing").text  # unchanged until confirmed
    browser.post("/app/billing", {**lower, "confirmed": "yes"})
    assert "growth, tier 10k, monthly" in browser.get("/app/billing").text


def test_a_crash_between_the_checkouts_events_is_mended_by_pressing_again_and_grants_once(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    from siteaudit.services.billing import billing as billing_services

    browser = site.browser()
    browser.sign_in()
    browser.get("/app/billing")
    answer = browser.post(
        "/app/billing", {"action": "subscribe", "plan": "growth", "tier": "10k", "interval": "monthly"}
    )
    path, token = open_checkout(browser, answer.headers["Location"])
    real = billing_services._local_period

    def dies(*args: Any) -> Any:
        raise RuntimeError("the process died here")

    monkeypatch.setattr(billing_services, "_local_period", dies)  # after the checkout's event applied
    crashed = browser.post(path, {"token": token})
    assert crashed.status_code == 500  # the service answered for the dead process
    monkeypatch.setattr(billing_services, "_local_period", real)
    assert balance(browser) == "5,000"  # the checkout completed, its first period not yet paid
    for _ in range(2):  # pressed again (the form posted anew), then once more
        again = browser.post(path, {"token": "0"})
        assert again.status_code == 200 and "Already completed" in again.text
    assert balance(browser) == "15,000"  # the first month, once
