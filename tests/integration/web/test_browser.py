"""The app in a real browser: Debian's chromium driven by selenium through chromedriver, against the whole
service (the app and /v1) on 127.0.0.1 over a SQLite file. Sign in, the Settings key created and rotated
(the old key answers 401 through /v1 at once), the webhook secret revealed and rotated, a member removed
(their key answers 403), a device login approved while a CLI poll waits, another denied; the SECURITY 9
headers on every page; screenshots of every page at desktop and phone widths under /tmp/app-shots/."""

import json
import os
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import AuditId, TaskKey, TeamId, UserId
from siteaudit.domain.impact import FixImpact, ImpactStatus
from siteaudit.services.accounts.usecases import GetAccount
from siteaudit.services.sites.usecases import RegisterSite
from siteaudit.settings import Settings
from tests.integration.rest import live  # its threaded WSGI server
from tests.local_sites import SERVER_POLL_S

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SHOTS = Path("/tmp/app-shots")
PASSWORD = "correct horse battery staple"
OWNER = "owner@retro-clock.example"
MEMBER = "member@retro-clock.example"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
PAGES = ("account", "keys", "webhook", "members", "sites", "billing", "device")

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("the browser tests need Debian's chromium and chromium-driver (see .ci/run)")
    pytest.skip("chromium and chromedriver are not installed", allow_module_level=True)


@frozen
class Service:
    app: App
    base: str
    member_key: str


def _call(method: str, url: str, *, body: Any = None, key: str = "") -> tuple[int, dict[str, Any], Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read() or b"null")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    port = live.free_port()
    base = f"http://127.0.0.1:{port}"
    database = tmp_path_factory.mktemp("browser") / "siteaudit.sqlite3"
    settings = Settings(database_url=f"sqlite:///{database}", public_url=base, app_reauth_minutes=0)
    # The sites page's trend: a registered site (its name resolves to a public address; nothing connects)
    # with the scores of six finished audits, stored as the audits' end would leave them.
    app = bootstrap(
        settings,
        queue=MemoryTaskQueue(),
        resolver=StaticResolver(
            {name: ["93.184.215.14"] for name in ("retro-clock.example", "shop.retro-clock.example")}
        ),
    )
    application = app.application
    for email, plan in ((OWNER, "growth"), (MEMBER, "starter")):
        application.create_user(email, plan=plan)
        application.set_password(email, PASSWORD)
    application.create_team("Retro Clock", owner_email=OWNER)
    application.add_member("Retro Clock", MEMBER)
    application.grant_credits(OWNER, credits(5_000), idempotency_key="start")
    member_key = application.create_key(MEMBER, "Retro Clock").raw
    owner = Caller(UserId(1), TeamId(1))
    site = application.handle(RegisterSite("https://retro-clock.example/"), owner)
    application.handle(RegisterSite("https://shop.retro-clock.example/"), owner)
    audit_ids = []
    for n, score in enumerate((62, 68, 71, None, 69, 78, 84)):
        moment = datetime(2026, 11, 1 + n, 9, 0, tzinfo=UTC)
        with app.uow() as uow:
            added = uow.audits.add(
                Audit(
                    id=AuditId(0),
                    team_id=TeamId(1),
                    user_id=UserId(1),
                    payer_id=UserId(1),
                    url=site.url,
                    origin="https://retro-clock.example",
                    created_at=moment,
                    max_pages=500,
                    site_id=site.id,
                    status=AuditStatus.DONE,
                    started_at=moment,
                    finished_at=moment,
                    pages_crawled=40,
                    health_score=score,
                )
            )
            uow.commit()
            audit_ids.append(added.id)
    with app.uow() as uow:  # a fixed task's measured clicks, for the fix-impact plot
        uow.fix_impacts.add(
            FixImpact(
                id=0,
                site_id=site.id,
                task_key=TaskKey("0123456789abcdef"),
                code="meta_description_missing",
                template="/products/[slug]",
                source_audit_id=audit_ids[0],
                verified_at=datetime(2026, 10, 1, 9, 0, tzinfo=UTC),
                baseline_clicks_28d=280,
                baseline_impressions_28d=9_000,
                d7=96,
                d14=170,
                d28=352,
                d28_impressions=11_000,
                status=ImpactStatus.MEASURED,
                demo=True,
            )
        )
        uow.commit()
    with _serve_on(live, app.service(), port):
        yield Service(app, base, member_key)


def _serve_on(live: Any, wsgi_app: Any, port: int) -> Any:
    from contextlib import contextmanager
    from wsgiref.simple_server import make_server

    @contextmanager
    def running() -> Iterator[None]:
        server = make_server(
            "127.0.0.1", port, wsgi_app, server_class=live._ThreadingServer, handler_class=live._QuietHandler
        )
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": SERVER_POLL_S},
            name="browser-test-server",
            daemon=True,
        )
        thread.start()
        try:
            yield
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

    return running()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    profile = tempfile.mkdtemp(prefix="siteaudit-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def replaced(page: Any) -> Any:
    """A wait condition: the page's document has been replaced. Chromedriver says so with a stale element
    or, caught mid-navigation, with "does not belong to the document"."""

    def gone(_: Any) -> bool:
        try:
            page.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise
        return False

    return gone


def submit(driver: Any, button: Any) -> None:
    """Click a form's button and wait until the next page has replaced this one."""
    page = driver.find_element(By.TAG_NAME, "html")
    button.click()

    WebDriverWait(driver, 20).until(replaced(page))
    WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")


def open_page(driver: Any, service: Service, path: str) -> None:
    driver.get(service.base + path)


def confirm_password_if_asked(driver: Any) -> None:
    """The server asks for the password before secrets and keys (SECURITY 9; its window is 0 here)."""
    if "Confirm your password" in driver.find_element(By.TAG_NAME, "h1").text:
        driver.find_element(By.NAME, "password").send_keys(PASSWORD)
        submit(driver, driver.find_element(By.CSS_SELECTOR, "main button[type=submit]"))


def sign_in(driver: Any, service: Service, email: str = OWNER) -> None:
    driver.delete_all_cookies()
    open_page(driver, service, "/app/sign-in")
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    submit(driver, driver.find_element(By.CSS_SELECTOR, "main button[type=submit]"))
    assert driver.current_url == service.base + "/app/account"
    assert driver.find_element(By.TAG_NAME, "h1").text == "Account"


def session_cookie(driver: Any) -> str:
    cookie = driver.get_cookie("siteaudit_session")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    return f"siteaudit_session={cookie['value']}"


def shoot(driver: Any, name: str) -> None:
    """The page at desktop and phone widths, whole (the window grows to the page's height)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    original = driver.get_window_size()
    for label, (width, height) in WIDTHS.items():
        driver.set_window_size(width, height)
        full = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, max(height, int(full) + 140))
        driver.save_screenshot(str(SHOTS / f"{name}-{label}.png"))
    driver.set_window_size(original["width"], original["height"])


def test_sign_in_and_every_page_sends_the_security_headers(browser: Any, service: Service) -> None:
    open_page(browser, service, "/app/sign-in")
    shoot(browser, "sign-in")
    open_page(browser, service, "/app/forgot")
    shoot(browser, "forgot")
    sign_in(browser, service)
    cookie = session_cookie(browser)
    for page in PAGES:
        open_page(browser, service, f"/app/{page}")
        assert "Something is not right" not in browser.page_source, page
        for label, (width, height) in WIDTHS.items():  # every page: fits, one h1, every control named
            browser.set_window_size(width, height)
            layout = page_layout(browser)
            assert layout["scroll"] <= layout["client"] and layout["wide"] == [], (page, label, layout)
            assert layout["h1"] == 1 and layout["unlabelled"] == [], (page, label, layout)
        browser.set_window_size(1280, 900)
        shoot(browser, page)
        request = urllib.request.Request(f"{service.base}/app/{page}", headers={"Cookie": cookie})
        with urllib.request.urlopen(request, timeout=10) as answer:
            headers = answer.headers
            assert answer.status == 200
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"], page
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "same-origin"
        assert headers["Cache-Control"] == "no-store"


def test_the_settings_key_is_created_then_rotated_and_the_old_one_refused_at_once(
    browser: Any, service: Service
) -> None:
    sign_in(browser, service)
    open_page(browser, service, "/app/keys")
    submit(browser, browser.find_element(By.ID, "create-key"))
    confirm_password_if_asked(browser)
    shoot(browser, "keys-created")
    first = browser.find_element(By.ID, "new-key").text
    assert first.startswith("sk_") and len(first) == 43
    status, _, account = _call("GET", f"{service.base}/v1/account", key=first)
    assert status == 200 and account["team_id"] == 1
    open_page(browser, service, "/app/keys")
    assert first not in browser.page_source  # shown once
    submit(browser, browser.find_element(By.ID, "rotate-key"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Rotate your Settings key?"
    assert _call("GET", f"{service.base}/v1/account", key=first)[0] == 200  # not before the confirmation
    shoot(browser, "confirm-rotate-key")
    submit(browser, browser.find_element(By.ID, "confirm"))
    confirm_password_if_asked(browser)
    second = browser.find_element(By.ID, "new-key").text
    assert second != first
    status, _, refused = _call("GET", f"{service.base}/v1/account", key=first)
    assert (status, refused["error"]["code"]) == (401, "unauthenticated")
    assert _call("GET", f"{service.base}/v1/account", key=second)[0] == 200


def test_the_webhook_secret_is_revealed_and_rotated(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    open_page(browser, service, "/app/webhook")
    submit(browser, browser.find_element(By.ID, "reveal-secret"))
    shoot(browser, "confirm-password")
    confirm_password_if_asked(browser)
    before = browser.find_element(By.ID, "webhook-secret").text
    assert before == service.app.application.webhook_secret(OWNER)
    shoot(browser, "webhook-revealed")
    submit(browser, browser.find_element(By.ID, "rotate-secret"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Rotate your webhook secret?"
    submit(browser, browser.find_element(By.ID, "confirm"))
    confirm_password_if_asked(browser)
    after = browser.find_element(By.ID, "webhook-secret").text
    assert after != before and after == service.app.application.webhook_secret(OWNER)


def test_approving_a_device_login_while_the_cli_polls(browser: Any, service: Service) -> None:
    status, _, started = _call(
        "POST", f"{service.base}/v1/device/start", body={"client_name": "connect on tea-kettle: claude-code"}
    )
    assert status == 200
    answers: list[tuple[int, Any]] = []

    def cli_polls() -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            code, _, body = _call(
                "POST", f"{service.base}/v1/device/token", body={"device_code": started["device_code"]}
            )
            answers.append((code, body))
            if code != 428:
                return
            time.sleep(started["interval"] + 0.2)

    poller = threading.Thread(target=cli_polls)
    poller.start()
    sign_in(browser, service)
    browser.get(started["verification_uri_complete"])
    assert browser.find_element(By.ID, "client-name").text == "connect on tea-kettle: claude-code"
    assert "127.0.0.1" in browser.page_source
    shoot(browser, "device-approve")
    Select(browser.find_element(By.NAME, "team_id")).select_by_visible_text("Retro Clock")
    submit(browser, browser.find_element(By.ID, "approve"))
    assert browser.find_element(By.TAG_NAME, "h2").text == "Approved"
    shoot(browser, "device-approved")
    poller.join(timeout=100)
    assert answers[0][0] == 428
    status, granted = answers[-1]
    assert status == 200 and granted["team"] == {"id": 1, "name": "Retro Clock"}
    assert _call("GET", f"{service.base}/v1/ping", key=granted["api_key"])[0] == 200
    open_page(browser, service, "/app/keys")
    assert "connect on tea-kettle: claude-code" in browser.page_source


def test_denying_a_device_login_typed_by_hand(browser: Any, service: Service) -> None:
    _, _, started = _call("POST", f"{service.base}/v1/device/start", body={"client_name": "workshop-laptop"})
    sign_in(browser, service)
    open_page(browser, service, "/app/device")
    browser.find_element(By.NAME, "code").send_keys(started["user_code"].lower().replace("-", " "))
    submit(browser, browser.find_element(By.CSS_SELECTOR, "main button[type=submit]"))
    submit(browser, browser.find_element(By.ID, "deny"))
    assert browser.find_element(By.TAG_NAME, "h2").text == "Denied"
    status, _, refused = _call(
        "POST", f"{service.base}/v1/device/token", body={"device_code": started["device_code"]}
    )
    assert (status, refused["error"]["code"]) == (403, "access_denied")


def balance_shown(driver: Any) -> str:
    return str(driver.find_element(By.ID, "balance").text)


def test_buying_a_small_pack_through_the_test_checkout_credits_once(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    open_page(browser, service, "/app/billing")
    before = balance_shown(browser)
    shoot(browser, "billing")
    submit(browser, browser.find_element(By.ID, "buy-small"))
    assert browser.current_url.startswith(service.base + "/app/test-checkout/cs_local_")
    assert "TEST PURCHASE" in browser.find_element(By.CSS_SELECTOR, ".banner").text
    shoot(browser, "test-checkout")
    checkout = browser.current_url
    token = browser.find_element(By.NAME, "token").get_attribute("value")
    submit(browser, browser.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Test purchase completed"
    shoot(browser, "test-checkout-done")
    submit(browser, browser.find_element(By.LINK_TEXT, "Back to billing"))
    assert browser.current_url == service.base + "/app/billing?checkout=done"
    assert "the purchase is complete" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    after = balance_shown(browser)
    assert int(after.replace(",", "")) == int(before.replace(",", "")) + 5_000
    shoot(browser, "billing-done")
    browser.refresh()  # the return page reloaded
    assert balance_shown(browser) == after
    open_page(browser, service, checkout.removeprefix(service.base))  # the checkout link again
    assert browser.find_element(By.TAG_NAME, "h1").text == "No test purchase here"
    # The completed form posted again with its token, as a resubmitting browser would.
    page = browser.find_element(By.TAG_NAME, "html")
    browser.execute_script(
        "const f = document.createElement('form'); f.method = 'post'; f.action = arguments[0];"
        "const t = document.createElement('input'); t.type = 'hidden'; t.name = 'token';"
        "t.value = arguments[1]; f.appendChild(t); document.body.appendChild(f); f.submit();",
        checkout,
        token,
    )
    WebDriverWait(browser, 20).until(replaced(page))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Already completed"
    open_page(browser, service, "/app/billing")
    assert balance_shown(browser) == after
    owner = service.app.application.handle(GetAccount(), Caller(UserId(1), TeamId(1)))
    assert owner.balance == int(after.replace(",", ""))


def test_a_cancelled_checkout_then_a_subscription_changed_in_the_app(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    open_page(browser, service, "/app/billing")
    before = balance_shown(browser)
    submit(browser, browser.find_element(By.ID, "buy-large"))
    submit(browser, browser.find_element(By.LINK_TEXT, "Cancel and go back to billing"))
    assert "nothing was charged" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    assert balance_shown(browser) == before
    for name, value in (("plan", "starter"), ("tier", "10k"), ("interval", "yearly")):
        Select(browser.find_element(By.ID, name)).select_by_value(value)
    submit(browser, browser.find_element(By.ID, "subscribe"))
    # The owner's plan is growth: starter lowers it, and the page says so before anything is bought.
    assert browser.find_element(By.TAG_NAME, "h1").text == "Lower your plan?"
    shoot(browser, "billing-lower-plan")
    submit(browser, browser.find_element(By.ID, "confirm"))
    assert "Billed" in browser.page_source and "yearly" in browser.page_source
    submit(browser, browser.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    submit(browser, browser.find_element(By.LINK_TEXT, "Back to billing"))
    assert browser.find_element(By.ID, "current-plan").text == "starter"
    assert "starter, tier 10k, yearly" in browser.find_element(By.ID, "subscription").text
    Select(browser.find_element(By.ID, "plan")).select_by_value("growth")
    Select(browser.find_element(By.ID, "tier")).select_by_value("150k")
    shoot(browser, "billing-subscribed")
    submit(browser, browser.find_element(By.ID, "change-plan"))
    assert "Your subscription is changed" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    assert browser.find_element(By.ID, "current-plan").text == "growth"
    assert "growth, tier 150k, yearly" in browser.find_element(By.ID, "subscription").text


def test_a_member_sees_who_buys_credits_for_the_team(browser: Any, service: Service) -> None:
    sign_in(browser, service, MEMBER)
    open_page(browser, service, "/app/billing")
    assert OWNER in browser.find_element(By.ID, "not-owner").text
    assert not browser.find_elements(By.ID, "buy-small")
    shoot(browser, "billing-member")


def test_removing_a_member_makes_their_key_answer_403(browser: Any, service: Service) -> None:
    assert _call("GET", f"{service.base}/v1/account", key=service.member_key)[0] == 200
    sign_in(browser, service)
    open_page(browser, service, "/app/members")
    submit(browser, browser.find_element(By.CSS_SELECTOR, f"button[aria-label='Remove {MEMBER}']"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Remove this member?"
    assert _call("GET", f"{service.base}/v1/account", key=service.member_key)[0] == 200
    shoot(browser, "confirm-remove-member")
    submit(browser, browser.find_element(By.ID, "confirm"))
    assert "Member removed" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    assert MEMBER not in browser.find_element(By.TAG_NAME, "main").text
    shoot(browser, "members-removed")
    status, _, refused = _call("GET", f"{service.base}/v1/account", key=service.member_key)
    assert (status, refused["error"]["code"]) == (403, "team_access_revoked")


# --- the site page (docs/app.md, "Sites") -------------------------------------------------------------------


def page_layout(driver: Any) -> dict[str, Any]:
    """What the page looks like to the tests: widths, headings, and controls without a label."""
    return dict(
        driver.execute_script(
            """
            const root = document.documentElement;
            const unlabelled = [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
              .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
              .map(e => e.outerHTML.slice(0, 120));
            const wide = [...document.querySelectorAll('body *')]
              .filter(e => e.getBoundingClientRect().right > root.clientWidth + 1 && !e.closest('.visually-hidden'))
              .map(e => e.tagName + '.' + e.className);
            return {scroll: root.scrollWidth, client: root.clientWidth, h1: document.querySelectorAll('h1').length,
                    unlabelled: unlabelled, wide: wide.slice(0, 5)};
            """
        )
    )


def reached_by_tab(driver: Any, target_ids: set[str], presses: int = 80) -> set[str]:
    """The ids among `target_ids` that keyboard focus reaches by pressing Tab from the top of the page."""
    from selenium.webdriver.common.keys import Keys

    driver.find_element(By.TAG_NAME, "body").click()
    driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    reached = set()
    body = driver.switch_to.active_element
    for _ in range(presses):
        body.send_keys(Keys.TAB)
        body = driver.switch_to.active_element
        ident = body.get_attribute("id")
        if ident in target_ids:
            reached.add(ident)
        if reached == target_ids:
            break
    return reached


def test_the_site_page_at_both_widths(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    open_page(browser, service, "/app/sites")
    submit(browser, browser.find_element(By.LINK_TEXT, "https://retro-clock.example/"))
    assert browser.current_url == service.base + "/app/sites/1"
    assert browser.find_element(By.TAG_NAME, "h1").text == "retro-clock.example"
    trend = browser.find_element(By.CSS_SELECTOR, "#health-trend svg")
    assert trend.get_attribute("role") == "img"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#health-trend circle.dot")) == 6
    assert len(browser.find_elements(By.CSS_SELECTOR, "#health-trend g.gap")) == 1  # the scoreless audit
    assert len(browser.find_elements(By.CSS_SELECTOR, "#impact rect.bar")) == 3
    assert "demo data" in browser.find_element(By.ID, "impact").text
    for label, (width, height) in WIDTHS.items():
        browser.set_window_size(width, height)
        layout = page_layout(browser)
        assert layout["scroll"] <= layout["client"], (label, layout)
        assert layout["h1"] == 1 and layout["unlabelled"] == [], (label, layout)
        box = trend.rect
        assert box["width"] <= width and box["width"] >= min(width - 80, 300), (label, box)
        SHOTS.mkdir(parents=True, exist_ok=True)
        for section in ("health", "impact", "settings"):  # the plots and a form, as large as they show
            browser.find_element(By.ID, section).screenshot(str(SHOTS / f"site-{section}-{label}.png"))
    browser.set_window_size(1280, 900)
    shoot(browser, "site")
    assert reached_by_tab(
        browser, {"verify", "save-settings", "latest-audit", "monitoring", "max-pages"}
    ) == {
        "verify",
        "save-settings",
        "latest-audit",
        "monitoring",
        "max-pages",
    }


def test_a_site_registered_then_verified_in_vain_shows_each_reason(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    open_page(browser, service, "/app/sites")
    shoot(browser, "sites")
    browser.find_element(By.ID, "site-url").send_keys("https://retro-clock.example/shop-two")
    submit(browser, browser.find_element(By.ID, "register-site"))
    assert "already" in browser.find_element(By.CSS_SELECTOR, ".error").text.lower()  # the same host
    open_page(browser, service, "/app/sites/2")
    assert browser.find_element(By.TAG_NAME, "h1").text == "shop.retro-clock.example"
    submit(browser, browser.find_element(By.ID, "verify"))
    reasons = browser.find_element(By.ID, "checks").text
    assert "meta" in reasons and "file" in reasons and "dns" in reasons
    for label, (width, height) in WIDTHS.items():
        browser.set_window_size(width, height)
        layout = page_layout(browser)
        assert layout["scroll"] <= layout["client"] and layout["h1"] == 1, (label, layout)
    browser.set_window_size(1280, 900)
    shoot(browser, "site-unverified")


def test_another_teams_site_is_a_404_page(browser: Any, service: Service) -> None:
    application = service.app.application
    application.create_user("rival@other-shop.example", plan="growth")
    application.set_password("rival@other-shop.example", PASSWORD)
    application.create_team("Other Shop", owner_email="rival@other-shop.example")
    sign_in(browser, service, "rival@other-shop.example")
    open_page(browser, service, "/app/sites/1")
    assert browser.find_element(By.TAG_NAME, "h1").text != "retro-clock.example"
    assert "retro-clock.example" not in browser.page_source
    shoot(browser, "site-of-another-team")
