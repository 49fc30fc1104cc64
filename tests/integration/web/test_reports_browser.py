"""The reports in a real browser (Debian's chromium through chromedriver, as `test_browser.py`), against
the whole service over a SQLite file: the audits list, a running audit, a report and its drill-down at
1280x900 and 390x844 (no horizontal overflow, one h1, every control labelled, the actions reachable by
keyboard, screenshots under /tmp/app-shots/); the mail's link opened on a phone through sign-in; the fix
prompt copied; the issues downloaded as CSV; another team's audit a 404 page."""

import csv
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.credit import credits
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.services.audits.usecases import GetReport
from siteaudit.settings import Settings
from tests.integration.rest import live
from tests.integration.web.test_browser import (
    CHROMEDRIVER,
    CHROMIUM,
    PASSWORD,
    SHOTS,
    WIDTHS,
    _serve_on,
    submit,
)
from tests.unit.services.test_archive import a_site, run_audit

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

OWNER = "owner@retro-clock.example"
RIVAL = "rival@other-shop.example"
SITE = "https://retro-clock.example"


@frozen
class Service:
    app: App
    base: str
    first: AuditId
    worse: AuditId
    running: AuditId
    theirs: AuditId
    no_score: AuditId


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    port = live.free_port()
    base = f"http://127.0.0.1:{port}"
    database = tmp_path_factory.mktemp("reports") / "siteaudit.sqlite3"
    settings = Settings(database_url=f"sqlite:///{database}", public_url=base)
    app = bootstrap(settings, queue=MemoryTaskQueue(), resolver=StaticResolver({}))
    application = app.application
    for email, team in ((OWNER, "Retro Clock"), (RIVAL, "Other Shop")):
        application.create_user(email, plan="growth")
        application.set_password(email, PASSWORD)
        application.create_team(team, owner_email=email)
        application.grant_credits(email, credits(5_000), idempotency_key=f"start:{email}")
    owner, rival = Caller(UserId(1), TeamId(1)), Caller(UserId(2), TeamId(2))
    clock = FixedClock(datetime.now(UTC))
    many = tuple(f"/gone/{n}" for n in range(30))  # enough issue rows and pages to page through
    first = run_audit(app.uow, app.crawl, clock, owner, a_site(broken=("/gone",)))
    worse = run_audit(app.uow, app.crawl, clock, owner, a_site(broken=many, title='=HYPERLINK("x")'))
    theirs = run_audit(app.uow, app.crawl, clock, rival, a_site("https://other-shop.example"))
    json_only = PageFacts(f"{SITE}/api", depth=0, status_code=200, content_type="application/json")
    no_score = run_audit(app.uow, app.crawl, clock, owner, [json_only])
    with app.uow() as uow:
        running = uow.audits.add(
            Audit(
                id=AuditId(0), team_id=TeamId(1), user_id=UserId(1), payer_id=UserId(1), url=f"{SITE}/",
                origin=SITE, created_at=datetime.now(UTC) - timedelta(minutes=4), max_pages=500,
                status=AuditStatus.RUNNING, started_at=datetime.now(UTC) - timedelta(minutes=4),
                pages_crawled=120,
            )
        ).id  # fmt: skip
        uow.commit()
    app.crawl.frontier_add(running, [(f"{SITE}/queued/{n}", 2) for n in range(42)])
    with _serve_on(live, app.service(), port):
        yield Service(app, base, first, worse, running, theirs, no_score)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    profile = tempfile.mkdtemp(prefix="siteaudit-chromium-")
    downloads = tempfile.mkdtemp(prefix="siteaudit-downloads-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--window-size=1280,900",
    ):  # fmt: skip
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"download.default_directory": downloads})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    driver.downloads = Path(downloads)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        shutil.rmtree(downloads, ignore_errors=True)


def sign_in(driver: Any, service: Service, email: str = OWNER, *, then: str = "/app/account") -> None:
    driver.delete_all_cookies()
    driver.get(f"{service.base}/app/sign-in?next={then}")
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    submit(driver, driver.find_element(By.CSS_SELECTOR, "main button[type=submit]"))


def open_page(driver: Any, service: Service, path: str) -> None:
    driver.get(service.base + path)
    WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")


_UNLABELLED = """
return Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea, button'))
  .filter(c => !(c.labels && c.labels.length) && !c.getAttribute('aria-label') && !c.textContent.trim()
               && !c.hidden)
  .map(c => c.outerHTML);
"""
_OVERFLOW = "return document.documentElement.scrollWidth - document.documentElement.clientWidth;"


def check_and_shoot(driver: Any, name: str) -> None:
    """At both widths: no horizontal overflow, one h1, every control labelled; a whole-page screenshot."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    original = driver.get_window_size()
    for label, (width, height) in WIDTHS.items():
        driver.set_window_size(width, height)
        time.sleep(0.2)
        assert driver.execute_script(_OVERFLOW) <= 0, (name, label, "scrolls sideways")
        assert len(driver.find_elements(By.TAG_NAME, "h1")) == 1, (name, label)
        assert driver.execute_script(_UNLABELLED) == [], (name, label)
        full = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, max(height, int(full) + 140))
        driver.save_screenshot(str(SHOTS / f"{name}-{label}.png"))
    driver.set_window_size(original["width"], original["height"])


def reachable_by_keyboard(driver: Any, wanted: set[str], *, presses: int = 400) -> set[str]:
    """Tab from the top of the page; the ids of `wanted` that took the focus. A page with a running audit
    reloads itself every 5 s (its refresh meta): a walk the reload cut short (the focused element gone, or the
    new page not ready for keys yet) starts again from the top."""
    for _ in range(3):
        try:
            return _tab_through(driver, wanted, presses)
        except (StaleElementReferenceException, ElementNotInteractableException):
            continue
    return _tab_through(driver, wanted, presses)


def _tab_through(driver: Any, wanted: set[str], presses: int) -> set[str]:
    driver.find_element(By.TAG_NAME, "body").click()
    driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    seen: set[str] = set()
    body = driver.switch_to.active_element
    for _ in range(presses):
        body.send_keys(Keys.TAB)
        body = driver.switch_to.active_element
        seen.add(body.get_attribute("id") or "")
        if wanted <= seen:
            break
    return wanted & seen


def test_the_audits_list_at_both_widths_with_a_running_audits_progress(
    browser: Any, service: Service
) -> None:
    sign_in(browser, service)
    open_page(browser, service, "/app/audits")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Audits"
    live_line = browser.find_element(By.ID, f"live-{service.running}").text
    assert "120 of 500 pages" in live_line and "42 queued" in live_line
    refresh = browser.find_element(By.CSS_SELECTOR, "meta[http-equiv=refresh]").get_attribute("content")
    assert refresh == "5"
    assert f"#{service.theirs}" not in browser.find_element(By.TAG_NAME, "main").text
    check_and_shoot(browser, "audits")
    assert reachable_by_keyboard(browser, {"filter-site", "filter-status", "apply-filters"}) == {
        "filter-site",
        "filter-status",
        "apply-filters",
    }
    open_page(browser, service, "/app/audits?status=done")
    assert f"#{service.running}" not in browser.find_element(By.TAG_NAME, "main").text
    check_and_shoot(browser, "audits-done")
    open_page(browser, service, f"/app/audits/{service.running}")
    assert "42 URLs found and waiting" in browser.find_element(By.ID, "live-queue").text
    check_and_shoot(browser, "audit-running")


def test_the_report_page_at_both_widths_with_its_drill_down(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    open_page(browser, service, f"/app/audits/{service.worse}")
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Audit #{service.worse}"
    assert browser.find_element(By.ID, "health-score").text.split("/")[0].isdigit()
    assert "errors" in browser.find_element(By.ID, "diff-new").text
    check_and_shoot(browser, "audit-report")
    wanted = {"filter-issues", "filter-pages", "copy-prompt", "download-issues-csv", "download-links-jsonl"}
    assert reachable_by_keyboard(browser, wanted) == wanted
    # Drill down from a template group to its rows, then page through them.
    first_group = browser.find_element(By.CSS_SELECTOR, "details.group[open] td a")
    check = first_group.text
    submit(browser, first_group)
    assert check in browser.find_element(By.ID, "issue-filter").text
    check_and_shoot(browser, "audit-report-rows")
    open_page(browser, service, f"/app/audits/{service.worse}?status_code=404")
    pager = browser.find_elements(By.CSS_SELECTOR, "nav[aria-label='Page list pages'] a[rel=next]")
    assert pager, "30 broken pages are more than one page of 25"
    submit(browser, pager[0])
    assert "Page 2 of 2" in browser.find_element(By.ID, "pages").text


def test_an_audit_without_a_score_says_why_at_both_widths(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    open_page(browser, service, f"/app/audits/{service.no_score}")
    assert browser.find_element(By.ID, "health-score").text == "none"
    warning = browser.find_element(By.ID, "coverage-warning").text
    assert "no health score" in warning.lower()
    assert "claims nothing new and nothing fixed" in browser.find_element(By.ID, "diff-none").text
    check_and_shoot(browser, "audit-no-score")


def test_the_fix_prompt_is_copied_by_its_button(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    browser.execute_cdp_cmd(
        "Browser.grantPermissions",
        {"origin": service.base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    open_page(browser, service, f"/app/audits/{service.worse}")
    button = browser.find_element(By.ID, "copy-prompt")
    assert button.is_displayed()  # the script ran: the page's policy lets our own file run
    button.click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "copy-status").text)
    assert browser.find_element(By.ID, "copy-status").text == "Copied."
    copied = browser.execute_async_script(
        "const done = arguments[0]; navigator.clipboard.readText().then(done, e => done('error ' + e));"
    )
    assert (
        copied
        == service.app.application.handle(GetReport(service.worse), Caller(UserId(1), TeamId(1))).fix_prompt
    )


def test_the_mail_link_on_a_phone_signs_in_and_downloads_the_issues(browser: Any, service: Service) -> None:
    browser.delete_all_cookies()
    browser.set_window_size(*WIDTHS["phone"])
    try:
        browser.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(browser.downloads)}
        )
        link = f"{service.base}/app/audits/{service.worse}"  # what the alert mail links to
        browser.get(link)
        assert browser.current_url.startswith(f"{service.base}/app/sign-in?next=")
        browser.find_element(By.NAME, "email").send_keys(OWNER)
        browser.find_element(By.NAME, "password").send_keys(PASSWORD)
        submit(browser, browser.find_element(By.CSS_SELECTOR, "main button[type=submit]"))
        assert browser.current_url == link
        assert browser.find_element(By.TAG_NAME, "h1").text == f"Audit #{service.worse}"
        browser.find_element(By.ID, "download-issues-csv").click()
        target = browser.downloads / f"crawl-{service.worse}-issues.csv"
        WebDriverWait(browser, 20).until(lambda d: target.exists() and target.stat().st_size > 0)
        time.sleep(0.5)
        rows = list(csv.reader(target.open(newline="")))
        assert rows[0] == ["check_code", "severity", "url", "template", "details"]
        assert any(row[2] == f"{SITE}/gone/7" for row in rows[1:])
        titles = [row[4] for row in rows[1:] if row[0] == "title_too_short"]
        assert all(not cell.startswith("title==") for cell in titles)
    finally:
        browser.set_window_size(*WIDTHS["desktop"])


def test_another_teams_audit_is_a_404_page(browser: Any, service: Service) -> None:
    sign_in(browser, service)
    for path in (f"/app/audits/{service.theirs}", f"/app/audits/{service.theirs}/export?kind=pages"):
        open_page(browser, service, path)
        assert browser.find_element(By.TAG_NAME, "h1").text == "Something is not right"
        assert "other-shop.example" not in browser.page_source
    check_and_shoot(browser, "audit-404")
    sign_in(browser, service, RIVAL)
    open_page(browser, service, f"/app/audits/{service.worse}")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Something is not right"
    open_page(browser, service, f"/app/audits/{service.theirs}")
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Audit #{service.theirs}"


def test_the_service_root_leads_to_sign_in(browser: Any, service: Service) -> None:
    browser.delete_all_cookies()
    browser.get(service.base + "/")
    assert browser.current_url == f"{service.base}/app/sign-in"
