"""The app's mails through the real SMTP adapter into a real SMTP server (aiosmtpd on 127.0.0.1): a
password reset asked for on the page arrives with a link that sets the password once."""

import re
from collections.abc import Iterator
from email import message_from_bytes

import falcon.testing
import pytest
from aiosmtpd.controller import Controller

from siteaudit.adapters.mail import SmtpMailer, SmtpServer
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.settings import Settings
from tests.unit.application.test_alert_mail import Inbox, free_port
from tests.unit.web.conftest import OWNER, PASSWORD, Browser, quick_hasher


@pytest.fixture
def smtp() -> Iterator[tuple[Controller, Inbox]]:
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield controller, inbox
    finally:
        controller.stop()


def test_a_reset_asked_for_on_the_page_arrives_by_smtp_and_sets_the_password_once(
    smtp: tuple[Controller, Inbox],
) -> None:
    controller, inbox = smtp
    mailer = SmtpMailer(
        SmtpServer(host="127.0.0.1", port=controller.port, starttls=False, sender="app@retro-clock.example")
    )
    app = bootstrap(
        Settings(
            database_url="memory://", public_url="https://audit.retro-clock.example", cookie_secure="false"
        ),
        queue=MemoryTaskQueue(),
        mailer=mailer,
        hasher=quick_hasher(),
    )
    app.application.create_user(OWNER)
    browser = Browser(falcon.testing.TestClient(app.service()))
    browser.get("/app/forgot")
    assert (
        browser.post("/app/forgot", {"email": OWNER.upper()}).headers["Location"]
        == "/app/sign-in?done=reset-sent"
    )
    assert len(inbox.mails) == 1 and inbox.mails[0].rcpt_tos == [OWNER]
    body = message_from_bytes(inbox.mails[0].original_content or b"").get_payload(decode=True)
    assert isinstance(body, bytes)
    link = re.search(r"https://audit\.retro-clock\.example/app/password\?token=([0-9a-f]{64})", body.decode())
    assert link is not None
    browser.get("/app/password", token=link.group(1))
    form = {"token": link.group(1), "password": PASSWORD, "repeat": PASSWORD}
    assert browser.post("/app/password", form).headers["Location"] == "/app/sign-in?done=password-set"
    assert browser.sign_in().headers["Location"] == "/app/account"
    assert browser.post("/app/password", form).status_code == 422
