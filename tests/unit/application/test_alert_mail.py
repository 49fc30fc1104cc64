"""The monitoring alert mail into a real SMTP server (aiosmtpd on 127.0.0.1): a scheduled audit of a
site with `alert_email` that ends with new errors mails the team owner once; the SMTP mailer's STARTTLS
and login; the log-only mailer."""

import logging
import re
import socket
import ssl
from collections.abc import Iterator
from datetime import timedelta
from email import message_from_bytes
from typing import Any

import falcon.testing
import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword
from pytest_httpserver import HTTPServer

from siteaudit.adapters.mail import LogMailer, SmtpMailer, SmtpServer
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.audit import AuditStatus, AuditTrigger
from siteaudit.domain.ids import AuditId
from siteaudit.domain.site import Monitoring, VerifyMethod
from siteaudit.ports.application import AuditQuery
from siteaudit.services import events
from siteaudit.services.accounts.usecases import GetAccount
from siteaudit.services.audits.usecases import GetAudit
from siteaudit.services.indexnow import indexnow
from siteaudit.services.indexnow.usecases import GetIndexNowStatus, SetIndexNowAuto
from siteaudit.services.sites.usecases import RegisterSite, UpdateSite, VerifySite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL
from tests.unit.application.test_application_doors import owner
from tests.unit.web.conftest import PASSWORD, Browser

ONE_DAY = timedelta(days=1)
HOME = (
    "<!doctype html><html lang=en><head><title>Retro Clock</title><meta name=description "
    'content="Clocks of every era, restored."></head><body><h1>Clocks</h1>'
    '<a href="/clocks/1">one</a> <a href="/clocks/2">two</a></body></html>'
)
CLOCK = (
    "<!doctype html><html lang=en><head><title>Clock {n}</title><meta name=description "
    'content="A restored clock."></head><body><h1>Clock {n}</h1><a href="/">home</a></body></html>'
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Inbox:
    def __init__(self) -> None:
        self.mails: list[Envelope] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Envelope) -> str:
        self.mails.append(envelope)
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[Controller, Inbox]]:
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield controller, inbox
    finally:
        controller.stop()


def serve_site(httpserver: HTTPServer, *, broken: bool) -> None:
    httpserver.clear_all_handlers()
    httpserver.no_handler_status_code = 404
    httpserver.expect_request("/").respond_with_data(HOME, content_type="text/html; charset=utf-8")
    httpserver.expect_request("/clocks/1").respond_with_data(
        CLOCK.format(n=1), content_type="text/html; charset=utf-8"
    )
    if not broken:
        httpserver.expect_request("/clocks/2").respond_with_data(
            CLOCK.format(n=2), content_type="text/html; charset=utf-8"
        )


def test_a_scheduled_audit_with_new_errors_mails_the_owner_once(
    httpserver: HTTPServer, smtp: tuple[Controller, Inbox]
) -> None:
    controller, inbox = smtp
    clock = FixedClock()
    app = bootstrap(
        Settings(
            database_url="memory://",
            allow_networks=("127.0.0.0/8",),
            **UNPACED_LOCAL,
            smtp_url=f"smtp://127.0.0.1:{controller.port}?starttls=false",
            smtp_from="alerts@siteaudit.example",
            public_url="https://audit.example",
        ),
        clock=clock,
        queue=MemoryTaskQueue(),
    )
    application = app.application
    caller = owner(app)
    serve_site(httpserver, broken=False)
    registered = application.handle(RegisterSite(httpserver.url_for("/"), max_pages=10), caller)
    proof = registered.verify
    httpserver.expect_request(proof.path).respond_with_data(registered.verify_token)
    application.handle(VerifySite(registered.id, VerifyMethod.FILE), caller)
    site = application.handle(UpdateSite(registered.id, monitoring=Monitoring.DAILY), caller)
    assert site.next_crawl_at is not None

    def scheduled_audit(at_days: int) -> int:
        assert site.next_crawl_at is not None
        started = application.dispatch_due_site_audits(site.next_crawl_at + at_days * ONE_DAY)
        assert len(started.started) == 1, started
        audit_id = started.started[0]
        for _ in range(10):
            if application.run_crawl_slice(audit_id).next != "slice":
                break
        application.finalize_audit(audit_id)
        audit = application.handle(GetAudit(audit_id), caller)
        assert (audit.status, audit.trigger) == (AuditStatus.DONE, AuditTrigger.SCHEDULE.value)
        return int(audit_id)

    scheduled_audit(0)  # the first: nothing to compare with
    assert inbox.mails == []
    serve_site(httpserver, broken=True)
    httpserver.expect_request(proof.path).respond_with_data(registered.verify_token)
    worse = scheduled_audit(1)
    application.finalize_audit(type(site.id)(worse))  # finalised again: still one mail
    assert len(inbox.mails) == 1
    envelope = inbox.mails[0]
    mail = message_from_bytes(envelope.original_content or b"")
    assert envelope.mail_from == "alerts@siteaudit.example"
    with app.uow() as uow:
        owner_email = uow.users.get(uow.teams.get(caller.team_id).owner_id).email
    assert envelope.rcpt_tos == [owner_email]
    body = mail.get_payload()
    assert isinstance(body, str)
    assert "new error" in str(mail["Subject"]) and site.url in str(mail["Subject"])
    assert httpserver.url_for("/clocks/2") in body
    assert application.list_audits(AuditQuery(site_id=site.id), caller).total == 2
    _the_link_leads_through_sign_in_to_the_report(
        app, body, worse, owner_email, httpserver.url_for("/clocks/2")
    )

    # alert_email off: the next worse audit mails nobody.
    application.handle(UpdateSite(site.id, alert_email=False), caller)
    serve_site(httpserver, broken=False)
    httpserver.expect_request(proof.path).respond_with_data(registered.verify_token)
    scheduled_audit(2)
    serve_site(httpserver, broken=True)
    scheduled_audit(3)
    assert len(inbox.mails) == 1


def _the_link_leads_through_sign_in_to_the_report(
    app: App, body: str, audit_id: int, email: str, new_error_url: str
) -> None:
    """The mail's link opens the report page in the app: a browser without a session is asked to sign in
    and comes back to the report, which shows what got worse."""
    found = re.search(r"The report: (\S+)", body)
    assert found is not None and found.group(1) == f"https://audit.example/app/audits/{audit_id}"
    path = found.group(1).removeprefix("https://audit.example")
    app.application.set_password(email, PASSWORD)
    browser = Browser(falcon.testing.TestClient(app.service()))
    asked = browser.get(path)
    assert asked.status_code == 303
    assert asked.headers["Location"] == f"/app/sign-in?next=%2Fapp%2Faudits%2F{audit_id}"
    browser.get("/app/sign-in", next=path)
    assert f'name="next" value="{path}"' in browser.page
    signed = browser.post("/app/sign-in", {"email": email, "password": PASSWORD, "next": path})
    assert (signed.status_code, signed.headers["Location"]) == (303, path)
    report = browser.get(path)
    assert report.status_code == 200
    assert f"<h1>Audit #{audit_id}</h1>" in report.text
    assert 'id="diff-new"' in report.text and new_error_url in report.text


class Crash(Exception):
    """The process dying at that point: nothing after it runs."""


def test_a_crash_around_the_alert_mail_is_made_good_by_the_redelivery_and_mails_once(
    httpserver: HTTPServer, smtp: tuple[Controller, Inbox], monkeypatch: pytest.MonkeyPatch
) -> None:
    controller, inbox = smtp
    app = bootstrap(
        Settings(
            database_url="memory://",
            allow_networks=("127.0.0.0/8",),
            **UNPACED_LOCAL,
            smtp_url=f"smtp://127.0.0.1:{controller.port}?starttls=false",
            smtp_from="alerts@siteaudit.example",
        ),
        clock=FixedClock(),
        queue=MemoryTaskQueue(),
    )
    application = app.application
    caller = owner(app)
    serve_site(httpserver, broken=False)
    site = application.handle(RegisterSite(httpserver.url_for("/"), max_pages=10), caller)
    application.verify_site_by_hand(site.id, "the test serves the site")
    site = application.handle(UpdateSite(site.id, monitoring=Monitoring.DAILY), caller)

    def crawled(at_days: int) -> AuditId:
        assert site.next_crawl_at is not None
        audit_id = application.dispatch_due_site_audits(site.next_crawl_at + at_days * ONE_DAY).started[0]
        while application.run_crawl_slice(audit_id).next == "slice":
            pass
        return audit_id

    def balance() -> float:
        return application.handle(GetAccount(), caller).balance

    application.finalize_audit(crawled(0))
    application.handle(SetIndexNowAuto(site.id, True), caller)  # its handler runs after the mail's
    serve_site(httpserver, broken=True)
    worse = crawled(1)

    def dies(*args: object, **kwargs: object) -> None:
        raise Crash

    # Dies after the audit's transaction committed, before the mail: none is sent, the message is retried
    # (the IndexNow handler, which runs all the same, dies before it records its part).
    with monkeypatch.context() as patched:
        patched.setattr(events, "mail_site_alert", dies)
        patched.setattr(indexnow, "Submission", dies)  # what the handler records
        with pytest.raises(Crash):
            application.finalize_audit(worse)
    assert application.handle(GetAudit(worse), caller).status is AuditStatus.DONE and inbox.mails == []
    charged = balance()
    # The redelivery sends it, and then dies after the mail (in the IndexNow handler): retried again.
    with monkeypatch.context() as patched:
        patched.setattr(indexnow, "Submission", dies)  # what the handler records
        with pytest.raises(Crash):
            application.finalize_audit(worse)
    assert len(inbox.mails) == 1
    application.finalize_audit(worse)  # the last delivery: the IndexNow handler does its part
    application.finalize_audit(worse)  # and once more: nothing more
    assert len(inbox.mails) == 1 and balance() == charged
    recent = application.handle(GetIndexNowStatus(site.id), caller).recent
    assert [(s.crawl_id, s.status) for s in recent] == [(worse, "key_unverified")]


def test_the_smtp_mailer_uses_starttls_and_logs_in(tmp_path: Any) -> None:
    authority = trustme.CA()
    cert = authority.issue_cert("127.0.0.1")
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(server_context)
    client_context = ssl.create_default_context()
    authority.configure_trust(client_context)
    inbox = Inbox()
    logins: list[tuple[bytes, bytes]] = []

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        assert isinstance(data, LoginPassword)
        logins.append((data.login, data.password))
        return AuthResult(success=data.password == b"s3cret")

    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=free_port(),
        tls_context=server_context,
        require_starttls=True,
        authenticator=authenticate,
        auth_require_tls=True,
    )
    controller.start()
    try:
        server = SmtpServer.from_url(
            f"smtp://alerts%40shop:s3cret@127.0.0.1:{controller.port}", sender="alerts@siteaudit.example"
        )
        assert (server.user, server.starttls, server.implicit_tls) == ("alerts@shop", True, False)
        SmtpMailer(server, context=client_context).send(
            to="owner@retro-clock.example", subject="hi", text="x"
        )
    finally:
        controller.stop()
    assert logins == [(b"alerts@shop", b"s3cret")]
    assert [m.rcpt_tos for m in inbox.mails] == [["owner@retro-clock.example"]]


def test_without_an_smtp_server_mails_are_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="siteaudit.mail"):
        LogMailer().send(to="owner@retro-clock.example", subject="siteaudit: worse", text="the body")
    assert "owner@retro-clock.example" in caplog.text and "the body" in caplog.text
    app = bootstrap(Settings(database_url="memory://"))
    assert isinstance(app.application.mailer, LogMailer)  # type: ignore[attr-defined]
