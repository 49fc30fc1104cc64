"""Staging access, end to end (docs/security.md "Staging access"): a staging site behind basic auth, a
header and a cookie, with a redirect and a link to another origin that records what it receives. The
site's audits, and an audit of its origin started with POST /v1/crawls, reach every page, robots.txt and
the sitemap with the access; the other origin never sees it; no log line, answer or stored byte holds a
value. With `render`, the browser's requests are judged the same way."""

import asyncio
import base64
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from attrs import evolve
from crawl_doubles import RESOLVER, Answer, Crawl, SiteServer, html, redirect

from siteaudit.adapters.answers import converter
from siteaudit.adapters.http.fetcher import FetchLimits, HttpxFetcher
from siteaudit.adapters.render.playwright import CHROMIUM, PlaywrightRenderer
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.access import access_of
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.crawl import Scope
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.network import AddressPolicy, FetchResponse
from siteaudit.domain.render import RenderBudget
from siteaudit.domain.site import SiteNotVerified, VerifyMethod
from siteaudit.entrypoints.worker import start_worker
from siteaudit.ports.network import Fetcher
from siteaudit.ports.render import BrowserRequest
from siteaudit.services.access.usecases import GetSiteAccess, RemoveSiteAccess, SetSiteAccess
from siteaudit.services.audits.usecases import GetAudit, GetReport, StartAudit
from siteaudit.services.crawl import run_crawl_slice
from siteaudit.services.crawl.render import BrowserGuard
from siteaudit.services.sites.usecases import CrawlSite, RegisterSite, VerifySite
from siteaudit.settings import Settings
from tests.local_sites import SERVER_POLL_S, UNPACED_LOCAL

USER, PASSWORD = "preview", "staging-password-5b9e"
TOKEN, COOKIE = "preview-token-c41a", "gate-cookie-77d0"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SECRETS = (PASSWORD, TOKEN, COOKIE, BASIC.split()[1])
PROOF = "/.well-known/siteaudit-site-verification.txt"


def let_in(headers: Mapping[str, str]) -> bool:
    return (
        headers.get("authorization") == BASIC
        and headers.get("x-preview-token") == TOKEN
        and headers.get("cookie") == f"gate={COOKIE}"
    )


def gated(answer: Answer) -> Callable[[str, Mapping[str, str]], Answer]:
    def route(path: str, headers: Mapping[str, str]) -> Answer:
        if let_in(headers):
            return answer
        return Answer(401, "who are you?", {"WWW-Authenticate": 'Basic realm="staging"'})

    return route


def staging_site(site: SiteServer, there: str) -> None:
    here = site.url("/", host="127.0.0.1").rstrip("/")
    pages = {
        "/": html(
            '<h1>Staging</h1><a href="/clocks/1">clock 1</a> <a href="/away">away</a> '
            f'<a href="{there}/direct">direct</a>',
            head="<title>Staging clocks</title>",
        ),
        "/clocks/1": html('<h1>Clock 1</h1><a href="/">home</a>', head="<title>Clock 1</title>"),
        "/clocks/2": html('<h1>Clock 2</h1><a href="/">home</a>', head="<title>Clock 2</title>"),
        "/away": redirect(f"{there}/landing", 302),
        "/moved.xml": redirect(f"{there}/landing.xml", 302),
        "/robots.txt": Answer(
            200,
            f"User-agent: *\nAllow: /\nSitemap: {here}/map.xml\nSitemap: {here}/moved.xml\n",
            {"Content-Type": "text/plain"},
        ),
        "/map.xml": Answer(
            200,
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{here}/clocks/2</loc></url></urlset>",
            {"Content-Type": "application/xml"},
        ),
    }
    site.routes.update({path: gated(answer) for path, answer in pages.items()})


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


class Elsewhere:
    """Another origin on the staging server's port (so the crawler follows a redirect there: it keeps to
    80, 443 and the site's own port), at 127.0.0.2: every request it receives, with its headers."""

    def __init__(self, port: int) -> None:
        self.hits: list[tuple[str, dict[str, str]]] = []
        received = self.hits

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                received.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                body = b"<!doctype html><html><body><h1>Elsewhere</h1></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.2", port), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.2:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": SERVER_POLL_S}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@pytest.fixture
def other() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


@pytest.fixture
def elsewhere(site: SiteServer) -> Iterator[Elsewhere]:
    server = Elsewhere(site.port)
    yield server
    server.close()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    built = bootstrap(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}",
            allow_networks=("127.0.0.0/8",),
            **UNPACED_LOCAL,
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


def finished(app: App, caller: Caller, audit_id: AuditId) -> None:
    deadline = time.monotonic() + 60
    while app.application.handle(GetAudit(audit_id), caller).status is not AuditStatus.DONE:
        assert time.monotonic() < deadline, "the audit did not finish"
        time.sleep(0.05)


def test_a_newcomer_audits_a_staging_site_behind_basic_auth_and_the_other_origin_gets_nothing(
    app: App, site: SiteServer, elsewhere: Elsewhere, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    application, caller = app.application, owner(app)
    staging_site(site, elsewhere.url)
    home = site.url("/", host="127.0.0.1")
    registered = application.handle(RegisterSite(home, max_pages=20), caller)
    site_id = SiteId(registered.id)
    asked = SetSiteAccess(
        site_id,
        basic_auth_user=USER,
        basic_auth_password=PASSWORD,
        headers=(f"X-Preview-Token: {TOKEN}",),
        cookies=(f"gate={COOKIE}",),
    )
    with pytest.raises(SiteNotVerified):
        application.handle(asked, caller)  # only a verified site takes an access
    with pytest.raises(ValidationFailed) as refused:
        application.handle(evolve(asked, headers=("Host: evil.example",)), caller)
    assert list(refused.value.fields) == ["headers"]
    # The proof is served outside the gate (or use the dns proof): then the access can be set.
    site.routes[PROOF] = Answer(200, registered.verify_token, {"Content-Type": "text/plain"})
    application.handle(VerifySite(site_id, VerifyMethod.FILE), caller)
    status = application.handle(asked, caller)
    assert (status.kinds, status.headers, status.cookies) == (("basic_auth", "headers", "cookies"), 1, 1)
    assert status.sent_to == home.rstrip("/")
    shown = converter.unstructure(application.handle(GetSiteAccess(site_id), caller))
    assert shown["kinds"] == ["basic_auth", "headers", "cookies"]
    assert not any(secret in str(shown) for secret in (*SECRETS, USER))

    started = application.handle(CrawlSite(site_id, max_pages=20), caller)
    finished(app, caller, AuditId(started.crawl_id))

    answered = dict(site.statuses)
    for path in ("/", "/clocks/1", "/clocks/2", "/robots.txt", "/map.xml", "/moved.xml", "/away"):
        assert answered.get(path) in (200, 302), (path, site.statuses)
    assert all(let_in(hit.headers) for hit in site.hits if hit.path != PROOF)
    # Both redirects to the other origin were followed there, without the access.
    assert sorted(path for path, _ in elsewhere.hits) == ["/landing", "/landing.xml"]
    for path, headers in elsewhere.hits:
        assert not {"authorization", "x-preview-token", "cookie"} & set(headers), (path, headers)
        assert not any(secret in value for value in headers.values() for secret in SECRETS)
    report = str(converter.unstructure(application.handle(GetReport(AuditId(started.crawl_id)), caller)))
    assert "Clock 2" in report or "clocks/2" in report
    assert not any(secret in report for secret in SECRETS)

    # An audit of the same origin started on POST /v1/crawls sends the team's access too.
    site.hits.clear()
    plain = application.handle(StartAudit(url=home, max_pages=5), caller)
    finished(app, caller, AuditId(plain.crawl_id))
    assert site.hits and all(let_in(hit.headers) for hit in site.hits)

    # Removed: the next audit sends nothing (and is refused by the staging server).
    application.handle(RemoveSiteAccess(site_id), caller)
    assert application.handle(GetSiteAccess(site_id), caller).kinds == ()
    site.hits.clear()
    again = application.handle(CrawlSite(site_id, max_pages=5), caller)
    finished(app, caller, AuditId(again.crawl_id))
    assert site.hits and not any("authorization" in hit.headers for hit in site.hits)

    logged = caplog.text + "\n".join(str(r.args) for r in caplog.records)
    assert "audit" in logged.lower()  # the capture saw the audits' lines
    assert not any(secret in logged for secret in SECRETS)
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("siteaudit.sqlite3*") if p.is_file())
    assert not any(secret.encode() in stored for secret in (*SECRETS, f"X-Preview-Token: {TOKEN}"))


# --- rendering -------------------------------------------------------------------------------------------


def loopback(connections: int) -> Fetcher:
    limits = FetchLimits(connect_s=2.0, read_s=5.0, deadline_s=5.0, max_connections=connections)
    return HttpxFetcher(RESOLVER, AddressPolicy.from_setting("127.0.0.1/32"), limits=limits)


@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="chromium is not installed")
@pytest.mark.xdist_group("chromium")
def test_with_render_the_browser_sends_the_access_to_the_site_only_on_every_hop(
    site: SiteServer, other: SiteServer
) -> None:
    there = other.url("/pixel.png", host="127.0.0.1")
    site.routes["/"] = gated(html('<h1>Staging</h1><p>Rendered.</p><img src="/own.png"><img src="/go.png">'))
    site.routes["/own.png"] = gated(Answer(200, b"\x89PNG", {"Content-Type": "image/png"}))
    site.routes["/go.png"] = gated(redirect(there, 302))
    other.routes["/pixel.png"] = Answer(200, b"\x89PNG", {"Content-Type": "image/png"})
    crawl = Crawl(site.url("/"), max_pages=3, render=True)
    access = access_of(
        site.url("/").rstrip("/"),
        basic_auth_user=USER,
        basic_auth_password=PASSWORD,
        headers=[f"X-Preview-Token: {TOKEN}"],
        cookies=[f"gate={COOKIE}"],
    )
    pool = PlaywrightRenderer(max_tabs=1)
    try:
        deps = evolve(
            crawl.deps(),
            renderer=pool,
            render_third_party=True,
            render_budget=RenderBudget(time_s=8.0),
            fetcher_factory=loopback,
        )
        for _ in range(20):
            if run_crawl_slice(crawl.audit_id, deps, access=access).next != "slice":
                break
    finally:
        asyncio.run(pool.aclose())
    assert {"/", "/own.png", "/go.png"} <= set(site.paths()), site.paths()
    assert all(let_in(hit.headers) for hit in site.hits), [(h.path, h.headers) for h in site.hits]
    assert other.paths() == ["/pixel.png"]
    assert not {"authorization", "x-preview-token", "cookie"} & set(other.hits[0].headers)


def test_the_browsers_requests_carry_the_access_to_the_site_only_and_no_hop_elsewhere_does(
    site: SiteServer, other: SiteServer
) -> None:
    """What the browser of a rendered page asks is answered by `BrowserGuard` (chromium or not): each hop
    judged again, so a redirect to another origin arrives there without the access."""
    there = other.url("/pixel.png", host="127.0.0.1")
    site.routes["/own.png"] = gated(Answer(200, b"\x89PNG", {"Content-Type": "image/png"}))
    site.routes["/go.png"] = gated(redirect(there, 302))
    other.routes["/pixel.png"] = Answer(200, b"\x89PNG", {"Content-Type": "image/png"})
    own = site.url("/", host="127.0.0.1").rstrip("/")
    access = access_of(
        own,
        basic_auth_user=USER,
        basic_auth_password=PASSWORD,
        headers=[f"X-Preview-Token: {TOKEN}"],
        cookies=[f"gate={COOKIE}"],
    )

    async def browse() -> list[int | None]:
        fetcher = loopback(2)
        guard = BrowserGuard(
            fetcher,
            scope=lambda: Scope.of(own + "/"),
            allowed=lambda url: True,
            access=access,
            third_party=True,
        )
        try:
            answers = [await guard(BrowserRequest(f"{own}{path}")) for path in ("/own.png", "/go.png")]
            answers.append(await guard(BrowserRequest(there)))
        finally:
            await fetcher.aclose()
        return [a.status if isinstance(a, FetchResponse) else None for a in answers]

    assert asyncio.run(browse()) == [200, 200, 200]
    assert site.paths() == ["/own.png", "/go.png"]
    assert all(let_in(hit.headers) for hit in site.hits)
    assert other.paths() == ["/pixel.png", "/pixel.png"]
    for hit in other.hits:
        assert not {"authorization", "x-preview-token", "cookie"} & set(hit.headers), hit.headers
