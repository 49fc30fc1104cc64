"""Log lines people can read: a whole audit of a local site, through the application, writes one info line
per audit event on `siteaudit.audit` (started, each hand-over, ended, webhook delivered or given up), and
none of them names the webhook's full URL or anything secret. The receiver is a recording double (real
deliveries go over https only: `tests/unit/webhook`)."""

import logging
from collections.abc import Sequence

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId
from siteaudit.domain.webhook import MAX_ATTEMPTS, SendOutcome
from siteaudit.services.audits.usecases import CancelAudit, GetReport, StartAudit
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL

LINKS = {"/": ("/clocks", "/about"), "/clocks": ("/clocks/cuckoo",), "/about": (), "/clocks/cuckoo": ()}
HOOK = "https://hooks.retro-clock.example:8443/audit-ended?token=hook-query-s3cret"


class Receiver:
    """The webhook sender's port: every POST answered with `status`."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.sent: list[str] = []

    def send(self, url: str, body: bytes, headers: Sequence[tuple[str, str]]) -> SendOutcome:
        self.sent.append(url)
        return SendOutcome(self.status, duration_ms=3)

    def close(self) -> None:
        return None


@pytest.fixture
def site(httpserver: HTTPServer) -> HTTPServer:
    def page(request: Request) -> Response:
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in LINKS[request.path])
        return Response(
            "<!doctype html><html lang=en><head><title>Retro Clock</title></head>"
            f"<body><h1>Clocks</h1>{anchors}</body></html>",
            content_type="text/html; charset=utf-8",
        )

    for path in LINKS:
        httpserver.expect_request(path).respond_with_handler(page)
    httpserver.no_handler_status_code = 404  # robots.txt, llms.txt and sitemaps: none
    return httpserver


def an_app(receiver: Receiver, clock: FixedClock) -> App:
    return bootstrap(
        Settings(
            database_url="memory://",
            allow_networks=("127.0.0.0/8", "::1/128"),
            **UNPACED_LOCAL,
            slice_pages=2,
        ),
        clock=clock,
        queue=MemoryTaskQueue(),
        webhook_sender=receiver,
    )


def audit_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "siteaudit.audit"]


def test_a_whole_audit_logs_one_readable_info_line_per_event_in_order(
    site: HTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    receiver = Receiver(200)
    siteaudit = an_app(receiver, FixedClock()).application
    issued = siteaudit.ensure_local_owner(plan="scale", starting_credits=1_000)
    assert issued is not None
    me = siteaudit.authenticate(issued.raw)
    url = site.url_for("/")
    caplog.set_level(logging.INFO)

    started = siteaudit.handle(StartAudit(url=url, max_pages=20, max_rps=3, webhook_url=HOOK), me)
    audit_id = AuditId(started.crawl_id)
    while siteaudit.run_crawl_slice(audit_id).next == "slice":
        pass
    done = siteaudit.finalize_audit(audit_id)
    assert siteaudit.deliver_webhooks() == 1

    assert done.status is AuditStatus.DONE and receiver.sent == [HOOK]
    score = siteaudit.handle(GetReport(audit_id), me).health_score
    assert audit_lines(caplog) == [
        f"audit {audit_id} started: {url} (max 20 pages, trigger api)",
        f"audit {audit_id} handed over to the next slice: 2 pages so far",
        f"audit {audit_id} handed over to finalisation: 4 pages, every URL found was visited",
        f"audit {audit_id} ended: done, 4 pages, score {score}, 4 credits charged, took 0.0 s",
        f"audit {audit_id} webhook delivered to https://hooks.retro-clock.example:8443 after 1 attempt",
    ]
    assert {r.levelno for r in caplog.records if r.name == "siteaudit.audit"} == {logging.INFO}
    assert not any("audit-ended" in r.getMessage() or "s3cret" in r.getMessage() for r in caplog.records)


def test_a_cancelled_audit_and_a_webhook_given_up_are_one_line_each(caplog: pytest.LogCaptureFixture) -> None:
    clock = FixedClock()
    receiver = Receiver(503)
    siteaudit = an_app(receiver, clock).application
    issued = siteaudit.ensure_local_owner(plan="scale", starting_credits=1_000)
    assert issued is not None
    me = siteaudit.authenticate(issued.raw)
    caplog.set_level(logging.INFO)

    started = siteaudit.handle(StartAudit(url="http://127.0.0.1:9/", max_pages=10, webhook_url=HOOK), me)
    audit_id = AuditId(started.crawl_id)
    clock.advance(7)
    siteaudit.handle(CancelAudit(audit_id), me)
    for _ in range(MAX_ATTEMPTS):
        assert siteaudit.deliver_webhooks() == 1
        clock.advance(3_600)
    assert siteaudit.deliver_webhooks() == 0

    assert len(receiver.sent) == MAX_ATTEMPTS
    assert audit_lines(caplog) == [
        f"audit {audit_id} started: http://127.0.0.1:9/ (max 10 pages, trigger api)",
        f"audit {audit_id} ended: cancelled, 0 pages, score none, 0 credits charged, never started",
        f"audit {audit_id} webhook to https://hooks.retro-clock.example:8443 given up after 5 attempts "
        "(last: status 503)",
    ]
    assert [r.levelname for r in caplog.records if r.name == "siteaudit.audit"][-1] == "WARNING"
