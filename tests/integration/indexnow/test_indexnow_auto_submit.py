"""Auto-submit after an audit, on the embedded path (a SQLite file, the in-process broker and worker
threads): a real audit of a local site, its key file read through the SSRF guard, and its new and
changed pages POSTed to a local IndexNow endpoint once per audit."""

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.indexnow import KeyCheckResult
from siteaudit.domain.site import VerifyMethod
from siteaudit.entrypoints.worker import start_worker
from siteaudit.services.audits.usecases import GetAudit, StartAudit
from siteaudit.services.indexnow.usecases import CheckIndexNowKey, GetIndexNowStatus, SetIndexNowAuto
from siteaudit.services.sites.usecases import CrawlSite, RegisterSite, VerifySite
from siteaudit.settings import Settings
from tests.indexnow_endpoint import LocalIndexNow
from tests.local_sites import UNPACED_LOCAL

CLOCK = (
    "<!doctype html><html lang=en><head><title>Clock {n}</title><meta name=description "
    'content="A restored clock."></head><body><h1>Clock {n}</h1><p>{text}</p><a href="/">home</a></body></html>'
)


def home(*clocks: int) -> str:
    links = " ".join(f'<a href="/clocks/{n}">clock {n}</a>' for n in clocks)
    return (
        "<!doctype html><html lang=en><head><title>Retro Clock</title><meta name=description "
        f'content="Clocks of every era, restored."></head><body><h1>Clocks</h1>{links}</body></html>'
    )


def serve(server: HTTPServer, clocks: dict[int, str]) -> None:
    server.clear_all_handlers()
    server.no_handler_status_code = 404
    server.expect_request("/").respond_with_data(home(*clocks), content_type="text/html; charset=utf-8")
    for n, text in clocks.items():
        server.expect_request(f"/clocks/{n}").respond_with_data(
            CLOCK.format(n=n, text=text), content_type="text/html; charset=utf-8"
        )


@pytest.fixture
def endpoint() -> Iterator[LocalIndexNow]:
    server = LocalIndexNow().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def app(tmp_path: Path, endpoint: LocalIndexNow) -> Iterator[App]:
    built = bootstrap(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}",
            allow_networks=("127.0.0.0/8",),
            **UNPACED_LOCAL,
            indexnow_endpoint=endpoint.url,
        )
    )
    worker, periodic = start_worker(built, threads=2, webhooks_every_s=3600.0)
    try:
        yield built
    finally:
        periodic.stop()
        worker.stop()


def owner(app: App) -> Caller:
    issued = app.application.ensure_local_owner(plan="scale", starting_credits=1_000)
    assert issued is not None
    return app.application.authenticate(issued.raw)


def audited(app: App, caller: Caller, site_id: SiteId) -> AuditId:
    started = app.application.handle(CrawlSite(site_id=site_id, max_pages=20), caller)
    deadline = time.monotonic() + 60
    while app.application.handle(GetAudit(AuditId(started.crawl_id)), caller).status is not AuditStatus.DONE:
        assert time.monotonic() < deadline, "the audit did not finish"
        time.sleep(0.05)
    return AuditId(started.crawl_id)


def recent_after(app: App, caller: Caller, site_id: SiteId, audit_id: AuditId) -> str:
    """The status of the automatic submission after `audit_id` (it follows the audit's end at once)."""
    deadline = time.monotonic() + 30
    while True:
        for submission in app.application.handle(GetIndexNowStatus(site_id), caller).recent:
            if submission.crawl_id == audit_id:
                return submission.status
        assert time.monotonic() < deadline, "no automatic submission was recorded"
        time.sleep(0.05)


def test_new_and_changed_pages_are_submitted_after_each_audit_of_a_site_with_auto_on(
    httpserver: HTTPServer, app: App, endpoint: LocalIndexNow
) -> None:
    application, caller = app.application, owner(app)
    serve(httpserver, {1: "Brass.", 2: "Oak."})
    site = application.handle(RegisterSite(httpserver.url_for("/"), max_pages=20), caller)
    status = application.handle(GetIndexNowStatus(site.id), caller)
    key = status.key

    def publish_proofs() -> None:
        httpserver.expect_request(site.verify.path).respond_with_data(site.verify_token)
        httpserver.expect_request(f"/{key}.txt").respond_with_data(key, content_type="text/plain")

    publish_proofs()
    application.handle(VerifySite(site.id, VerifyMethod.FILE), caller)
    checked = application.handle(CheckIndexNowKey(site.id), caller)
    assert checked.result is KeyCheckResult.VERIFIED, checked
    assert checked.key_file_url == httpserver.url_for(f"/{key}.txt")

    # Auto off: an audit submits nothing.
    first = audited(app, caller, site.id)
    application.finalize_audit(first)
    assert endpoint.received == []

    application.handle(SetIndexNowAuto(site.id, True), caller)
    # The first audit ended before auto was turned on: its finalisation, however late (here: again,
    # perhaps while the worker's own is still running), submits nothing.
    application.finalize_audit(first)
    assert endpoint.received == []
    assert all(
        submission.crawl_id != first
        for submission in application.handle(GetIndexNowStatus(site.id), caller).recent
    )

    second = audited(app, caller, site.id)
    assert recent_after(app, caller, site.id, second) == "no_changes"  # the same pages as the first
    assert endpoint.received == []

    serve(httpserver, {1: "Brass.", 2: "Walnut, restored in 2026.", 3: "Porcelain."})
    publish_proofs()
    third = audited(app, caller, site.id)
    assert recent_after(app, caller, site.id, third) == "ok"
    (request,) = endpoint.received
    # The home page (a new link), the changed clock and the new one; not the unchanged clock.
    assert sorted(request.body["urlList"]) == sorted(
        httpserver.url_for(path) for path in ("/", "/clocks/2", "/clocks/3")
    )
    assert request.body["host"] == site.host and request.body["key"] == key
    assert request.body["keyLocation"] == httpserver.url_for(f"/{key}.txt")

    # A redelivered finalisation sends nothing again.
    application.finalize_audit(third)
    time.sleep(0.2)
    assert len(endpoint.received) == 1
    after = application.handle(GetIndexNowStatus(site.id), caller)
    assert after.today.used == 3 and after.last_submit_at is not None
    assert [s.crawl_id for s in after.recent][:2] == [third, second]


def test_a_plain_url_audit_and_an_unverified_key_submit_nothing(
    httpserver: HTTPServer, app: App, endpoint: LocalIndexNow
) -> None:
    application, caller = app.application, owner(app)
    serve(httpserver, {1: "Brass."})
    site = application.handle(RegisterSite(httpserver.url_for("/"), max_pages=20), caller)
    httpserver.expect_request(site.verify.path).respond_with_data(site.verify_token)
    application.handle(VerifySite(site.id, VerifyMethod.FILE), caller)
    application.handle(SetIndexNowAuto(site.id, True), caller)  # the key file is not served
    audit = audited(app, caller, site.id)
    assert recent_after(app, caller, site.id, audit) == "key_unverified"
    plain = application.handle(StartAudit(url=httpserver.url_for("/"), max_pages=5), caller)
    deadline = time.monotonic() + 60
    while application.handle(GetAudit(AuditId(plain.crawl_id)), caller).status is not AuditStatus.DONE:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert endpoint.received == []
