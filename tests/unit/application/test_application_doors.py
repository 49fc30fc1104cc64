"""The application interface and its one implementation, through the doors that call it: the Dramatiq
actors (a verify token sealed in the message), and a verified site's crawler secret derived, never stored."""

import hashlib
import hmac
import inspect
import time

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.identity import USER_AGENT, VERIFY_HEADER
from siteaudit.domain.ids import AuditId
from siteaudit.domain.site import VerifyMethod
from siteaudit.entrypoints.worker import start_worker
from siteaudit.ports.application import Application
from siteaudit.services.application import LocalApplication
from siteaudit.services.audits.usecases import GetAudit, GetReport, StartAudit
from siteaudit.services.sites import site as sites
from siteaudit.services.sites.usecases import RegisterSite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL

PAGE = (
    "<!doctype html><html lang=en><head><title>Retro Clock</title></head><body><h1>Clocks</h1></body></html>"
)


def public_methods(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}


def test_the_one_implementation_offers_exactly_the_use_cases_of_the_interface() -> None:
    assert public_methods(LocalApplication) == public_methods(Application)  # type: ignore[type-abstract]


def test_the_use_cases_keep_their_signatures() -> None:
    for name in public_methods(Application):  # type: ignore[type-abstract]
        promised = inspect.signature(getattr(Application, name))
        given = inspect.signature(getattr(LocalApplication, name))
        assert list(promised.parameters) == list(given.parameters), name
        assert promised.return_annotation == given.return_annotation, name


@pytest.fixture
def site(httpserver: HTTPServer) -> HTTPServer:
    def page(request: Request) -> Response:
        return Response(PAGE, content_type="text/html; charset=utf-8")

    httpserver.expect_request("/").respond_with_handler(page)
    httpserver.no_handler_status_code = 404  # robots.txt and sitemaps: none
    return httpserver


def owner(app: App) -> Caller:
    issued = app.application.ensure_local_owner(plan="scale", starting_credits=1_000)
    assert issued is not None
    return app.application.authenticate(issued.raw)


def fetched(server: HTTPServer, path: str) -> list[Request]:
    return [request for request, _ in server.log if request.path == path]


def test_a_verify_token_travels_sealed_to_the_crawl_slice_actor_and_reaches_the_audited_site(
    site: HTTPServer,
) -> None:
    app = bootstrap(Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL))
    caller = owner(app)
    worker, periodic = start_worker(app, threads=1, webhooks_every_s=3600.0)
    try:
        token = "retro-clock-verify-token"
        started = app.application.handle(
            StartAudit(url=site.url_for("/"), max_pages=5, verify_token=token), caller
        )
        deadline = time.monotonic() + 30
        while app.application.handle(GetAudit(started.crawl_id), caller).status is not AuditStatus.DONE:
            assert time.monotonic() < deadline, "the audit did not finish"
            time.sleep(0.05)
    finally:
        periodic.stop()
        worker.stop()
    requests = fetched(site, "/")
    assert requests
    assert {r.headers.get(VERIFY_HEADER) for r in requests} == {token}
    assert {r.headers.get("User-Agent") for r in requests} == {USER_AGENT}
    assert app.application.handle(GetReport(AuditId(started.crawl_id)), caller).totals.pages == 1


def test_an_audit_of_a_verified_site_sends_the_crawler_secret_derived_from_the_secret_key(
    site: HTTPServer,
) -> None:
    key = SecretBox.generate_key()
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL, secret_key=key),
        queue=MemoryTaskQueue(),
    )
    caller = owner(app)
    registered = sites.register_site(
        RegisterSite(site.url_for("/")), caller, uow=app.uow(), clock=app.clock, secrets=app.secrets
    )
    with app.uow() as uow:
        verified, _ = uow.sites.get(registered.id, team=caller.team_id).verify(
            VerifyMethod.FILE, now=app.clock.now()
        )
        uow.sites.save(verified)
        uow.commit()
    secret_ref = verified.crawler_secret_ref
    started = app.application.handle(StartAudit(site_id=registered.id, max_pages=5), caller)
    app.application.run_crawl_slice(AuditId(started.crawl_id))

    expected = hmac.new(key.encode(), f"crawler:{secret_ref}".encode(), hashlib.sha256)
    assert {r.headers.get(VERIFY_HEADER) for r in fetched(site, "/")} == {expected.hexdigest()}


def test_a_plain_audit_sends_no_verify_header(site: HTTPServer) -> None:
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL),
        queue=MemoryTaskQueue(),
    )
    caller = owner(app)
    started = app.application.handle(StartAudit(url=site.url_for("/"), max_pages=5), caller)
    progress = app.application.run_crawl_slice(AuditId(started.crawl_id))

    assert (progress.audit_id, progress.pages_crawled, progress.next) == (started.crawl_id, 1, "finalize")
    assert {r.headers.get(VERIFY_HEADER) for r in fetched(site, "/")} == {None}
    assert app.application.finalize_audit(AuditId(started.crawl_id)).status is AuditStatus.DONE


def test_sealing_opens_only_under_the_same_key() -> None:
    box = SecretBox(SecretBox.generate_key())
    sealed = box.seal("retro-clock-verify-token")

    assert sealed != "retro-clock-verify-token"
    assert box.unseal(sealed) == "retro-clock-verify-token"
    assert box.derive("crawler:ref") == box.derive("crawler:ref") != box.derive("crawler:other")


@pytest.mark.parametrize(("queued_s", "redispatched"), [(60.0, 1), (1800.0, 0)])
def test_the_reaper_settings_reach_the_reaper(queued_s: float, redispatched: int) -> None:
    clock = FixedClock()
    app = bootstrap(
        Settings(database_url="memory://", reap_queued_s=queued_s),
        clock=clock,
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({"retro-clock.example": ["93.184.215.14"]}),
    )
    caller = owner(app)
    app.application.handle(StartAudit(url="https://retro-clock.example/"), caller)
    clock.advance(61)

    assert app.application.reap_stalled_audits().slices == redispatched
