"""The issue's "done when" on the site page, in Debian's chromium at phone width: a site owner signs in,
sees the tasks of the site's audit, starts a recheck of a task from the page and watches it finish (the
page follows it with a meta refresh, no script), against the scripted shop on 127.0.0.1."""

import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from pytest_httpserver import HTTPServer
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By  # after test_browser's importorskip
from selenium.webdriver.support.ui import WebDriverWait

from siteaudit.bootstrap import App
from siteaudit.domain.account import LOCAL_OWNER_EMAIL
from tests.integration.rest import live
from tests.integration.web.test_browser import PASSWORD, SHOTS, WIDTHS, browser, page_layout, submit
from tests.unit.tasks.shop import PRODUCTS, Shop, audit, drain, shop_app, verified_site

__all__ = ["browser"]  # the chromium fixture, shared


@pytest.fixture
def shop_service(httpserver: HTTPServer) -> Iterator[tuple[App, Shop, int, str]]:
    shop = Shop(httpserver)
    app = shop_app()
    issued = app.application.ensure_local_owner(plan="scale", starting_credits=1_000)
    assert issued is not None
    caller = app.application.authenticate(issued.raw)
    app.application.set_password(LOCAL_OWNER_EMAIL, PASSWORD)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    with live.serve(app.service()) as base:
        yield app, shop, site.id, base


T = TypeVar("T")


def between_reloads(read: Callable[[], T]) -> T:
    """`read()` of a page that reloads itself while a recheck runs: read again when the reload made its
    element stale."""
    for _ in range(5):
        try:
            return read()
        except StaleElementReferenceException:
            time.sleep(0.2)
    return read()


def test_a_recheck_started_on_a_phone_is_watched_to_its_result(
    browser: Any, shop_service: tuple[App, Shop, int, str]
) -> None:
    app, shop, site_id, base = shop_service
    width, height = WIDTHS["phone"]
    browser.set_window_size(width, height)
    browser.delete_all_cookies()
    browser.get(f"{base}/app/sites/{site_id}")  # signed out: the sign-in page, then back here
    browser.find_element(By.NAME, "email").send_keys(LOCAL_OWNER_EMAIL)
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    submit(browser, browser.find_element(By.CSS_SELECTOR, "main button[type=submit]"))
    assert browser.current_url == f"{base}/app/sites/{site_id}"
    rows = browser.find_element(By.ID, "tasks").text
    assert "meta_description_missing" in rows and "/products/[slug]" in rows
    layout = page_layout(browser)
    assert layout["scroll"] <= layout["client"] and layout["h1"] == 1 and layout["unlabelled"] == [], layout
    shop.product_description = True  # the fix is deployed
    button = browser.find_element(
        By.CSS_SELECTOR, "button[aria-label='Recheck meta_description_missing on /products/[slug]']"
    )
    submit(browser, button)
    status = between_reloads(lambda: browser.find_element(By.ID, "recheck-status").text)
    assert "queued" in status and "this page reloads every few seconds until it ends" in status
    SHOTS.mkdir(parents=True, exist_ok=True)
    between_reloads(
        lambda: browser.find_element(By.ID, "recheck-status").screenshot(
            str(SHOTS / "site-recheck-running-phone.png")
        )
    )
    drain(app)  # the worker's part, while the page waits
    WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: "done" in d.find_element(By.ID, "recheck-status").text
    )  # the page reloaded itself (an element read as it reloads is stale: read again)
    result = browser.find_element(By.ID, "recheck-status").text
    assert "meta_description_missing on /products/[slug]: fixed" in result
    assert f"({len(PRODUCTS)} pages rechecked)" in result
    browser.find_element(By.ID, "recheck-status").screenshot(str(SHOTS / "site-recheck-done-phone.png"))
    browser.find_element(By.ID, "tasks").screenshot(str(SHOTS / "site-tasks-phone.png"))
    before = browser.current_url
    time.sleep(4)  # longer than the refresh: an ended recheck is not reloaded any more
    assert browser.current_url == before and "done" in browser.find_element(By.ID, "recheck-status").text
    browser.set_window_size(*WIDTHS["desktop"])
