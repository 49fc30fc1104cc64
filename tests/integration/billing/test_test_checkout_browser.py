"""The TEST PURCHASE page in a real browser (Debian's headless Chromium through Selenium): the owner opens
the checkout link, signs in to the app on the way (the page is for its buyer only), presses the button
twice over, and the balance rises once."""

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import falcon.testing
import pytest

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import LOCAL_OWNER_EMAIL
from siteaudit.settings import Settings
from tests.local_sites import SERVER_POLL_S

PASSWORD = "correct horse battery staple"
webdriver = pytest.importorskip("selenium.webdriver")
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER), reason="needs Debian's chromium and chromium-driver"
)


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def served() -> Iterator[tuple[App, str, WSGIServer]]:
    server = make_server("127.0.0.1", 0, lambda e, s: service(e, s), handler_class=_Quiet)
    base = f"http://127.0.0.1:{server.server_port}"
    app = bootstrap(
        Settings(database_url="memory://", public_url=base), queue=MemoryTaskQueue()
    )  # memory: the local provider
    service = app.service()  # the app's sign-in and the page
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": SERVER_POLL_S}, daemon=True
    )
    thread.start()
    try:
        yield app, base, server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_pack_bought_in_the_browser_credits_once(
    served: tuple[App, str, WSGIServer], browser: Any, width: int, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    app, base, _ = served
    issued = app.application.ensure_local_owner(plan="free", starting_credits=100)
    assert issued is not None
    client = falcon.testing.TestClient(app.rest_api())
    auth = {"Authorization": f"Bearer {issued.raw}"}
    url = client.simulate_post("/v1/billing/checkout", json={"pack": "small"}, headers=auth).json["url"]
    assert url.startswith(f"{base}/app/test-checkout/cs_local_")

    app.application.set_password(LOCAL_OWNER_EMAIL, PASSWORD)
    browser.set_window_size(width, 900)
    browser.get(url)  # signed out: the app's sign-in first, then back to the checkout
    assert browser.current_url.startswith(f"{base}/app/sign-in?next=")
    browser.find_element(By.NAME, "email").send_keys(LOCAL_OWNER_EMAIL)
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    submit = browser.find_element(By.CSS_SELECTOR, "main button[type=submit]")
    submit.click()
    WebDriverWait(browser, 20).until(gone(submit))
    assert browser.current_url == url
    assert "TEST PURCHASE" in browser.find_element(By.CSS_SELECTOR, ".banner").text
    assert browser.find_element(By.CSS_SELECTOR, ".banner").value_of_css_property("background-color") in (
        "rgba(180, 35, 24, 1)",
        "rgb(180, 35, 24)",
    )  # the nonce'd style block applies under the page's CSP
    browser.save_screenshot(str(tmp_path / f"checkout-{width}.png"))
    button = browser.find_element(By.CSS_SELECTOR, "button[type=submit]")
    button.click()
    WebDriverWait(browser, 20).until(gone(button))  # the answer page loaded
    assert "Test purchase completed" in browser.find_element(By.TAG_NAME, "h1").text
    assert "5,100 credits" in browser.page_source
    browser.save_screenshot(str(tmp_path / f"done-{width}.png"))
    browser.back()  # the form page again, with its spent token
    browser.refresh()
    assert "No test purchase here" in browser.find_element(By.TAG_NAME, "h1").text
    account = client.simulate_get("/v1/account", headers=auth).json
    assert account["balance"] == 5_100


def gone(element: Any) -> Any:
    """A wait condition: the element's document was replaced (chromedriver, caught mid-navigation, may
    say "does not belong to the document" instead of a stale element)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def check(_: Any) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise
        return False

    return check
