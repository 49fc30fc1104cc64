"""The app's pages through falcon.testing: SECURITY 9's rules (headers, sessions, CSRF, throttling,
re-authentication) and each page's one job."""

import re
from typing import Any

import pytest

from siteaudit.domain.account import Caller
from siteaudit.domain.ids import TeamId, UserId
from tests.unit.web.conftest import MEMBER, OWNER, PASSWORD, Browser, Site, attack, quick_hasher

PAGES = (
    "/app/account",
    "/app/keys",
    "/app/webhook",
    "/app/members",
    "/app/sites",
    "/app/billing",
    "/app/device",
)


def v1(site: Site, key: str, path: str = "/v1/account") -> Any:
    browser = site.browser()
    return browser.client.simulate_get(path, headers={"Authorization": f"Bearer {key}"})


def shown_key(page: str) -> str:
    found = re.search(r'id="new-key">(sk_[A-Za-z0-9]{40})<', page)
    assert found, page
    return found.group(1)


def test_every_page_sends_the_security_headers_and_is_never_framed(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    for path in (*PAGES, "/app/sign-in", "/app/forgot", "/app/sign-up"):
        answer = browser.get(path)
        assert answer.status_code == 200, path
        csp = answer.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "script-src" not in csp and "default-src 'none'" in csp
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert answer.headers["Referrer-Policy"] == "same-origin"
        assert answer.headers["Cache-Control"] == "no-store"
        assert answer.headers["X-Content-Type-Options"] == "nosniff"


def test_a_page_without_a_session_leads_to_sign_in_and_back(site: Site) -> None:
    browser = site.browser()
    answer = browser.get("/app/keys")
    assert answer.status_code == 303
    assert answer.headers["Location"] == "/app/sign-in?next=%2Fapp%2Fkeys"
    browser.get("/app/sign-in", next="/app/keys")
    signed = browser.post("/app/sign-in", {"email": OWNER, "password": PASSWORD, "next": "/app/keys"})
    assert signed.headers["Location"] == "/app/keys"


def test_a_next_page_elsewhere_is_never_followed(site: Site) -> None:
    browser = site.browser()
    browser.get("/app/sign-in")
    signed = browser.post("/app/sign-in", {"email": OWNER, "password": PASSWORD, "next": "//evil.example/"})
    assert signed.headers["Location"] == "/app/account"


@pytest.mark.parametrize(
    "target",
    [
        "/app/keys\r\nSet-Cookie: siteaudit_session=planted",
        "/app/keys\nX-Injected: 1",
        "/app/keys\u2028X-Injected: 1",
        "/app/caf\u00e9",
        "//evil.example/app",
        "///evil.example/app",
        "/app//evil.example",
        "/app\\..\\evil",
        "/app/../v1/account",
        "/app/%2e%2e/v1/account",
        "/appx",
        "/application",
        "https://evil.example/app",
        "http:/app/keys",
        "javascript:alert(1)//app",
        "app/keys",
        "",
    ],
)
def test_a_next_page_that_is_not_a_plain_path_of_the_app_leads_to_the_account(
    site: Site, target: str
) -> None:
    browser = site.browser()
    shown = browser.get("/app/sign-in", next=target)
    assert 'name="next" value="/app/account"' in shown.text
    browser.get("/app/sign-in")
    signed = browser.post("/app/sign-in", {"email": OWNER, "password": PASSWORD, "next": target})
    assert signed.status_code == 303
    assert signed.headers["Location"] == "/app/account"
    assert "X-Injected" not in signed.headers
    assert "planted" not in str(signed.headers)
    assert signed.cookies["siteaudit_session"].value != "planted"


@pytest.mark.parametrize(
    "target",
    [
        "/app",
        "/app/keys",
        "/app/billing?checkout=done",
        "/app/device?code=BCDF-GHJK",
        "/app/keys?x=%0d%0aSet-Cookie:%20siteaudit_session=planted",
        "/app/keys%0D%0AX-Injected:%201",
    ],
)
def test_a_next_path_of_the_app_is_followed_with_its_escapes_kept_as_they_are(
    site: Site, target: str
) -> None:
    browser = site.browser()
    browser.get("/app/sign-in")
    signed = browser.post("/app/sign-in", {"email": OWNER, "password": PASSWORD, "next": target})
    assert signed.headers["Location"] == target  # never decoded into the header
    assert "X-Injected" not in signed.headers and "planted" not in signed.headers.get("set-cookie", "")


def test_the_team_switcher_returns_only_to_a_page_of_the_app(site: Site) -> None:
    site.app.application.create_team("Second Shop", owner_email=OWNER)
    browser = site.browser()
    browser.sign_in()
    for target, expected in (
        ("/app/keys?x=1", "/app/keys?done=team"),
        ("/app/keys\r\nX-Injected: 1", "/app/account?done=team"),
        ("//evil.example/app", "/app/account?done=team"),
    ):
        browser.get("/app/keys")
        answer = browser.post("/app/team", {"team_id": "2", "next": target})
        assert answer.status_code == 303
        assert answer.headers["Location"] == expected
        assert "X-Injected" not in answer.headers


def test_the_session_cookie_is_http_only_same_site_and_new_at_every_sign_in(site: Site) -> None:
    browser = site.browser()
    browser.cookies["siteaudit_session"] = "planted-by-someone-else"
    answer = browser.sign_in()
    cookie = answer.cookies["siteaudit_session"]
    assert cookie.http_only and cookie.same_site == "Lax" and not cookie.secure
    assert browser.cookies["siteaudit_session"] != "planted-by-someone-else"
    first = browser.cookies["siteaudit_session"]
    browser.sign_in()
    assert browser.cookies["siteaudit_session"] != first
    stale = site.browser()
    stale.cookies["siteaudit_session"] = first
    assert stale.get("/app/account").status_code == 303  # the earlier session ended


def test_behind_tls_the_cookie_is_secure_with_the_host_prefix() -> None:
    from siteaudit.adapters.memory.queue import MemoryTaskQueue
    from siteaudit.bootstrap import bootstrap
    from siteaudit.settings import Settings

    app = bootstrap(
        Settings(database_url="memory://", public_url="https://audit.retro-clock.example"),
        queue=MemoryTaskQueue(),
        hasher=quick_hasher(),
    )
    app.application.create_user(OWNER)
    app.application.set_password(OWNER, PASSWORD)
    import falcon.testing

    browser = Browser(falcon.testing.TestClient(app.service()))
    answer = browser.sign_in()
    for name in ("__Host-siteaudit_session", "__Host-siteaudit_browser"):
        cookie = answer.cookies[name]
        assert cookie.secure and cookie.http_only and cookie.path == "/" and cookie.same_site == "Lax"
    assert "Strict-Transport-Security" in answer.headers


def test_an_unknown_email_and_a_wrong_password_answer_alike(site: Site) -> None:
    answers = []
    for email in (OWNER, "nobody@retro-clock.example"):
        browser = site.browser(address=f"198.51.100.{len(answers) + 20}")
        answer = browser.sign_in(email=email, password="not the password at all")
        answers.append((answer.status_code, answer.text.replace(email, "EMAIL").replace(browser.csrf(), "T")))
    assert answers[0] == answers[1]
    assert answers[0][0] == 401


def test_twenty_wrong_passwords_from_one_address_are_refused_from_the_sixth_on(site: Site) -> None:
    browser = site.browser()
    statuses = [browser.sign_in(password=f"wrong password {n}").status_code for n in range(20)]
    assert statuses[:5] == [401] * 5
    assert set(statuses[5:]) == {429}
    assert browser.sign_in().status_code == 429  # even the right password waits at this address
    other = site.browser(address="203.0.113.50")
    assert other.sign_in().status_code == 303  # the owner still gets in from elsewhere


def test_an_attack_on_the_account_never_keeps_out_a_browser_that_signed_in_before(site: Site) -> None:
    owner = site.browser(address="203.0.113.9")
    first = owner.sign_in()
    assert first.status_code == 303
    cookie = first.cookies["siteaudit_browser"]
    assert cookie.http_only and cookie.same_site == "Lax" and cookie.max_age >= 90 * 24 * 3600
    owner.get("/app/account")
    owner.post("/app/sign-out", {})
    assert "siteaudit_session" not in owner.cookies and "siteaudit_browser" in owner.cookies
    statuses = attack(site, minutes=30)
    assert statuses[:10] == [401] * 10 and 429 in statuses[10:]  # the account is under attack
    assert owner.sign_in().status_code == 303  # the owner's browser gets in at once
    stranger = site.browser(address="203.0.113.9")  # the right password, from a browser never seen
    refused = stranger.sign_in()
    assert refused.status_code == 429
    wait = int(refused.headers["Retry-After"])
    assert 0 < wait <= 900
    assert f"Try again in {wait} seconds" in refused.text


def test_a_remembered_browser_is_refused_after_its_own_failures_and_only_for_its_account(
    site: Site,
) -> None:
    owner = site.browser(address="203.0.113.9")
    owner.sign_in()
    statuses = [owner.sign_in(password=f"typo {n}").status_code for n in range(7)]
    assert statuses == [401] * 5 + [429] * 2
    assert owner.sign_in().status_code == 429  # its own failures lock it for a while
    other = site.browser(address="203.0.113.9")
    assert other.sign_in().status_code == 303  # the address and the account are not touched
    site.clock.advance(60)
    assert owner.sign_in().status_code == 303
    remembered = owner.cookies["siteaudit_browser"]
    attack(site, minutes=3)
    for forged in (
        remembered[:-1] + ("0" if remembered[-1] != "0" else "1"),  # altered
        remembered.replace(".", ".1", 1),  # another expiry
        "",
    ):
        browser = site.browser(address="203.0.113.9")
        browser.cookies["siteaudit_browser"] = forged
        assert browser.sign_in().status_code == 429, forged
    member = site.browser(address="203.0.113.9")  # remembered, but for another account
    member.sign_in(email=MEMBER)
    assert member.sign_in().status_code == 429
    site.clock.advance(days=181)  # the cookie has ended
    attack(site, minutes=0)
    assert owner.sign_in().status_code == 429


def test_a_form_without_or_with_a_wrong_csrf_token_changes_nothing(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/keys")
    for token in ("", "0" * 64):
        answer = browser.post("/app/keys", {"action": "create"}, csrf=token)
        assert answer.status_code == 403
    assert [k for k in site.app.application.list_keys(OWNER) if k.active] == []
    anonymous = site.browser()
    anonymous.get("/app/sign-in")
    refused = anonymous.post("/app/sign-in", {"email": OWNER, "password": PASSWORD}, csrf="f" * 64)
    assert refused.status_code == 403 and "siteaudit_session" not in anonymous.cookies


def test_a_form_posted_from_another_origin_is_refused(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/keys")
    answer = browser.post("/app/keys", {"action": "create"}, Origin="https://evil.example")
    assert answer.status_code == 403
    assert browser.get("/app/keys").status_code == 200
    same = browser.post("/app/keys", {"action": "create"}, Origin="http://falconframework.org")
    assert same.status_code == 200  # the origin the request was addressed to (falcon.testing's host)


def test_creating_and_rotating_the_settings_key_refuses_the_old_one_at_once(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/keys")
    created = browser.post("/app/keys", {"action": "create"})
    assert created.status_code == 200
    assert created.headers["Cache-Control"] == "no-store"
    first = shown_key(created.text)
    assert v1(site, first).status_code == 200
    assert "Rotate key" in browser.get("/app/keys").text
    assert first not in browser.page  # shown once
    asked = browser.post("/app/keys", {"action": "rotate"})
    assert "Rotate your Settings key?" in asked.text and 'name="confirmed" value="yes"' in asked.text
    assert v1(site, first).status_code == 200  # nothing changes before the confirmation
    rotated = browser.post("/app/keys", {"action": "rotate", "confirmed": "yes"})
    second = shown_key(rotated.text)
    assert v1(site, first).status_code == 401
    assert v1(site, second).json["team_id"] == 1


def test_revoking_a_key_asks_first_and_the_confirmation_revokes_it(site: Site) -> None:
    raw = site.app.application.create_key(OWNER, "Retro Clock")
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/keys")
    asked = browser.post("/app/keys/revoke", {"prefix": raw.key.prefix})
    assert asked.status_code == 200 and "Revoke this key?" in asked.text
    assert f'name="prefix" value="{raw.key.prefix}"' in asked.text
    assert v1(site, raw.raw).status_code == 200
    done = browser.post("/app/keys/revoke", {"prefix": raw.key.prefix, "confirmed": "yes"})
    assert done.headers["Location"] == "/app/keys?done=revoked"
    assert v1(site, raw.raw).status_code == 401


def test_after_a_few_minutes_a_rotation_is_confirmed_then_asks_for_the_password(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    site.clock.advance(minutes=6)
    before = site.app.application.webhook_secret(OWNER)
    browser.get("/app/webhook")
    browser.post("/app/webhook", {"action": "rotate"})
    asked = browser.post("/app/webhook", {"action": "rotate", "confirmed": "yes"})
    assert "Confirm your password" in asked.text and 'name="confirmed" value="yes"' in asked.text
    rotated = browser.post("/app/webhook", {"action": "rotate", "confirmed": "yes", "password": PASSWORD})
    assert site.app.application.webhook_secret(OWNER) != before
    assert site.app.application.webhook_secret(OWNER) in rotated.text


def test_after_a_few_minutes_secrets_and_keys_ask_for_the_password_again(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    site.clock.advance(minutes=6)
    browser.get("/app/webhook")
    asked = browser.post("/app/webhook", {"action": "reveal"})
    assert "Confirm your password" in asked.text and "whsec" not in asked.text
    wrong = browser.post("/app/webhook", {"action": "reveal", "password": "not my password!"})
    assert "That password is wrong." in wrong.text
    right = browser.post("/app/webhook", {"action": "reveal", "password": PASSWORD})
    secret = site.app.application.webhook_secret(OWNER)
    assert secret in right.text


def test_the_webhook_secret_is_revealed_and_rotated(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    before = site.app.application.webhook_secret(OWNER)
    browser.get("/app/webhook")
    assert before not in browser.page
    assert before in browser.post("/app/webhook", {"action": "reveal"}).text
    asked = browser.post("/app/webhook", {"action": "rotate"})
    assert "Rotate your webhook secret?" in asked.text and 'href="/app/webhook" id="cancel"' in asked.text
    assert site.app.application.webhook_secret(OWNER) == before  # nothing changes before the confirmation
    rotated = browser.post("/app/webhook", {"action": "rotate", "confirmed": "yes"})
    after = site.app.application.webhook_secret(OWNER)
    assert after != before and after in rotated.text and before not in rotated.text


def test_a_removed_members_keys_answer_403_team_access_revoked(site: Site) -> None:
    key = site.app.application.create_key(MEMBER, "Retro Clock").raw
    assert v1(site, key).status_code == 200
    member = site.browser(address="198.51.100.8")
    member.sign_in(email=MEMBER)
    member.get("/app/members")
    assert "Remove" not in member.page
    refused = member.post("/app/members/remove", {"user_id": "1"})
    assert refused.status_code == 403
    owner = site.browser()
    owner.sign_in()
    owner.get("/app/members")
    asked = owner.post("/app/members/remove", {"user_id": "2"})
    assert asked.status_code == 200 and "Remove this member?" in asked.text
    assert f"{MEMBER} leaves Retro Clock" in asked.text
    assert v1(site, key).status_code == 200  # still a member until confirmed
    removed = owner.post("/app/members/remove", {"user_id": "2", "confirmed": "yes"})
    assert removed.headers["Location"] == "/app/members?done=removed"
    answer = v1(site, key)
    assert (answer.status_code, answer.json["error"]["code"]) == (403, "team_access_revoked")


def test_an_invitation_mails_a_link_that_sets_the_new_persons_password(site: Site) -> None:
    owner = site.browser()
    owner.sign_in()
    owner.get("/app/members")
    sent = owner.post("/app/members/invite", {"email": "new@retro-clock.example"})
    assert sent.headers["Location"] == "/app/members?done=invited"
    listed = owner.get("/app/members", done="invited").text
    assert "Invitation mailed." in listed and 'id="invite-link"' not in listed
    assert re.search(
        r"new@retro-clock.example</strong> <span class=\"pill\">member</span> <span class=\"pill pending\">invitation pending",
        listed,
    )
    mail = site.mail.sent[-1]
    link = re.search(r"(/app/password\?token=[0-9a-f]+)", mail["text"])
    assert mail["to"] == "new@retro-clock.example" and link
    invited = site.browser(address="198.51.100.9")
    invited.get(link.group(1).split("?")[0], token=link.group(1).split("=")[1])
    token = link.group(1).split("=")[1]
    too_short = invited.post("/app/password", {"token": token, "password": "short", "repeat": "short"})
    assert too_short.status_code == 422
    differ = invited.post("/app/password", {"token": token, "password": PASSWORD, "repeat": PASSWORD + "!"})
    assert differ.status_code == 422 and "The two passwords differ." in differ.text  # the link still works
    done = invited.post("/app/password", {"token": token, "password": PASSWORD, "repeat": PASSWORD})
    assert done.headers["Location"] == "/app/sign-in?done=password-set"
    again = invited.post("/app/password", {"token": token, "password": PASSWORD, "repeat": PASSWORD})
    assert again.status_code == 422  # a link works once
    assert invited.sign_in(email="new@retro-clock.example").status_code == 303
    assert "invitation pending" not in owner.get("/app/members").text  # the password is chosen


def test_without_a_mail_server_the_owner_gets_the_invitation_link_instead(site: Site) -> None:
    site.mail.delivers = False  # as the log-only mailer of a service without SMTP
    owner = site.browser()
    owner.sign_in()
    owner.get("/app/members")
    shown = owner.post("/app/members/invite", {"email": "New@Retro-Clock.example"})
    assert shown.status_code == 200 and "Invitation mailed" not in shown.text
    assert "No mail was sent: this service has no mail server configured" in shown.text
    link = re.search(
        r'id="invite-link">http://127.0.0.1:8080(/app/password\?token=[0-9a-f]{64})<', shown.text
    )
    assert link, shown.text
    assert "invitation pending" in shown.text
    known = owner.post("/app/members/invite", {"email": MEMBER})  # someone with an account: no link
    assert "They already have an account" in known.text and 'id="invite-link"' not in known.text
    invited = site.browser(address="198.51.100.9")
    token = link.group(1).split("=")[1]
    invited.get("/app/password", token=token)
    done = invited.post("/app/password", {"token": token, "password": PASSWORD, "repeat": PASSWORD})
    assert done.headers["Location"] == "/app/sign-in?done=password-set"


def test_a_password_reset_by_mail_ends_every_session(site: Site) -> None:
    signed_in = site.browser()
    signed_in.sign_in()
    forgetful = site.browser(address="198.51.100.10")
    forgetful.get("/app/forgot")
    forgetful.post("/app/forgot", {"email": OWNER})
    forgetful.get("/app/forgot")
    forgetful.post("/app/forgot", {"email": "nobody@retro-clock.example"})
    assert [m["to"] for m in site.mail.sent] == [OWNER]
    token = re.search(r"token=([0-9a-f]+)", site.mail.sent[0]["text"]).group(1)  # type: ignore[union-attr]
    forgetful.get("/app/password", token=token)
    new = "an entirely new passphrase"
    forgetful.post("/app/password", {"token": token, "password": new, "repeat": new})
    assert signed_in.get("/app/account").status_code == 303
    assert forgetful.sign_in(password=new).status_code == 303


def test_sign_out_ends_the_session(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    token = browser.cookies["siteaudit_session"]
    browser.get("/app/account")
    browser.post("/app/sign-out", {})
    again = site.browser()
    again.cookies["siteaudit_session"] = token
    assert again.get("/app/account").status_code == 303


def test_an_idle_session_ends(site: Site) -> None:
    browser = site.browser()
    browser.sign_in()
    site.clock.advance(hours=1)
    assert browser.get("/app/account").status_code == 200
    site.clock.advance(hours=2)
    assert browser.get("/app/account").status_code == 303


def test_sign_up_is_by_invitation_unless_opened(site: Site) -> None:
    browser = site.browser()
    browser.get("/app/sign-up")
    assert "by invitation" in browser.page
    form = {"email": "x@retro-clock.example", "password": PASSWORD, "repeat": PASSWORD}
    refused = browser.post("/app/sign-up", form, csrf=browser.cookies["siteaudit_csrf"])
    assert refused.status_code == 422 and "invitation" in refused.text

    import falcon.testing

    from siteaudit.adapters.memory.queue import MemoryTaskQueue
    from siteaudit.bootstrap import bootstrap
    from siteaudit.settings import Settings

    app = bootstrap(
        Settings(database_url="memory://", app_sign_up="open"), queue=MemoryTaskQueue(), hasher=quick_hasher()
    )
    newcomer = Browser(falcon.testing.TestClient(app.service()))
    newcomer.get("/app/sign-up")
    differ = newcomer.post("/app/sign-up", {**form, "repeat": PASSWORD + "!"})
    assert differ.status_code == 422 and "The two passwords differ." in differ.text
    assert not app.application.list_teams()
    assert newcomer.post("/app/sign-up", form).headers["Location"] == "/app/account"
    assert "x@retro-clock.example" in newcomer.get("/app/account").text
    assert app.application.list_teams()[0].owner_email == "x@retro-clock.example"


def test_the_team_switcher_changes_the_team_of_new_keys_only(site: Site) -> None:
    site.app.application.create_team("Second Shop", owner_email=OWNER)
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/keys")
    first = shown_key(browser.post("/app/keys", {"action": "create"}).text)
    browser.post("/app/team", {"team_id": "2", "next": "/app/keys"})
    browser.get("/app/keys")
    second = shown_key(browser.post("/app/keys", {"action": "create"}).text)
    assert v1(site, first).json["team_id"] == 1
    assert v1(site, second).json["team_id"] == 2


@pytest.fixture
def started(site: Site) -> dict[str, Any]:
    answer = site.browser().client.simulate_post(
        "/v1/device/start",
        json={"client_name": "connect on tea-kettle.local: claude-code"},
        remote_addr="192.0.2.44",
    )
    return answer.json  # type: ignore[no-any-return]


def poll(site: Site, device_code: str) -> Any:
    return site.browser().client.simulate_post("/v1/device/token", json={"device_code": device_code})


def test_the_approval_page_shows_the_client_and_approves_only_on_a_click(
    site: Site, started: dict[str, Any]
) -> None:
    browser = site.browser()
    browser.sign_in()
    shown = browser.get("/app/device", code=started["user_code"])
    assert "connect on tea-kettle.local: claude-code" in shown.text and "192.0.2.44" in shown.text
    assert poll(site, started["device_code"]).status_code == 428  # the link alone approves nothing
    site.clock.advance(5)
    approved = browser.post(
        "/app/device", {"code": started["user_code"], "action": "approve", "team_id": "1"}
    )
    assert "Approved" in approved.text
    granted = poll(site, started["device_code"])
    assert granted.status_code == 200 and granted.json["team"]["name"] == "Retro Clock"


def test_a_denied_device_login_answers_access_denied(site: Site, started: dict[str, Any]) -> None:
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/device")
    browser.post("/app/device", {"code": started["user_code"].lower().replace("-", " "), "action": "look"})
    assert "Approve this device?" in browser.page
    browser.post("/app/device", {"code": started["user_code"], "action": "deny"})
    assert (poll(site, started["device_code"]).json["error"]["code"]) == "access_denied"


def test_approving_for_a_team_one_is_not_in_is_refused(site: Site, started: dict[str, Any]) -> None:
    site.app.application.create_user("rival@other-shop.example")
    site.app.application.create_team("Other Shop", owner_email="rival@other-shop.example")
    browser = site.browser()
    browser.sign_in()
    browser.get("/app/device", code=started["user_code"])
    refused = browser.post("/app/device", {"code": started["user_code"], "action": "approve", "team_id": "2"})
    assert refused.status_code == 404
    assert site.app.application.device_login_to_decide(started["user_code"]).status.value == "pending"


def test_guessing_user_codes_is_throttled(site: Site, started: dict[str, Any]) -> None:
    browser = site.browser()
    browser.sign_in()
    statuses = [browser.get("/app/device", code="BCDF-GHJK").status_code for _ in range(6)]
    browser.get("/app/device")
    guesses = [{"code": "CDFG-HJKL", "action": action, "team_id": "1"} for action in ("approve", "deny")] * 2
    statuses += [browser.post("/app/device", guess).status_code for guess in guesses]
    assert statuses == [404] * 10
    refused = browser.post("/app/device", {"code": started["user_code"], "action": "approve", "team_id": "1"})
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert browser.get("/app/device", code=started["user_code"]).status_code == 429
    other = site.browser(address="203.0.113.77")
    other.sign_in(email=MEMBER)
    assert other.get("/app/device", code=started["user_code"]).status_code == 200  # per address, per person


def test_a_member_who_approved_and_then_left_gets_the_device_access_denied(
    site: Site, started: dict[str, Any]
) -> None:
    site.app.application.approve_device_login(started["user_code"], Caller(UserId(2), TeamId(1)))
    site.app.application.remove_member("Retro Clock", MEMBER)
    assert poll(site, started["device_code"]).json["error"]["code"] == "access_denied"
