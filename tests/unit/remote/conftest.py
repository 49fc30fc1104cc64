"""A running service on 127.0.0.1 (the Falcon app in a thread, memory storage), a small site to audit on
127.0.0.1 (which can publish more files, an IndexNow key file say), a local IndexNow endpoint, two teams
with keys, and a crawler the tests drive slice by slice."""

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from attrs import frozen

from siteaudit.adapters.mcp.http import mount_mcp
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.ports.ratelimit import RateLimiter
from siteaudit.services.sites.usecases import CrawlSite, RegisterSite
from siteaudit.settings import Settings
from tests.indexnow_endpoint import LocalIndexNow
from tests.integration.rest.live import Keys, drain, retro_clock_site, seed, serve
from tests.local_sites import UNPACED_LOCAL


@frozen
class Service:
    app: App
    base_url: str  # ends in /v1
    site_url: str  # the small site to audit, on 127.0.0.1
    keys: Keys
    indexnow: LocalIndexNow

    def publish(self, path: str, text: str) -> None:
        """Serve `text` at `path` of the small site (until the test ends)."""
        PUBLISHED[path] = text.encode()

    def audited_site(self) -> SiteId:
        """The small site registered by the owner's team, verified (by hand), with one finished audit."""
        application = self.app.application
        owner = application.authenticate(self.keys.owner)
        site = application.handle(RegisterSite(url=self.site_url), owner)
        application.verify_site_by_hand(site.id, "tests")
        application.handle(CrawlSite(site_id=site.id, max_pages=10), owner)
        self.crawl()
        return site.id

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    @property
    def mcp_url(self) -> str:
        return self.root + "/mcp"

    def crawl(self) -> int:
        """Run every queued crawl slice and finalisation now, as a worker would."""
        return drain(self.app)


class Crawler:
    """Runs one queued message (a crawl slice of 2 pages, or a finalisation) every `every_s` in a thread:
    a worker slow enough that an audit is seen running."""

    def __init__(self, service: Service, every_s: float = 0.3) -> None:
        self.service = service
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-crawler", daemon=True)

    def _run(self) -> None:
        queue = self.service.app.queue
        while not self._stop.wait(self.every_s):
            message = queue.take()  # type: ignore[attr-defined]
            if message is None:
                continue
            actor, argument = message
            if actor == "crawl_slice":
                self.service.app.application.run_crawl_slice(AuditId(argument))
            elif actor == "finalize_audit":
                self.service.app.application.finalize_audit(AuditId(argument))

    def __enter__(self) -> "Crawler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


PUBLISHED: dict[str, bytes] = {}  # more files of the small site, by path


def site_and_published(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    body = PUBLISHED.get(environ.get("PATH_INFO", "/"))
    if body is None:
        return retro_clock_site(environ, start_response)
    kind = "text/html; charset=utf-8" if body.lower().startswith(b"<!doctype html") else "text/plain"
    start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body)))])
    return [body]


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    with serve(site_and_published) as url:
        yield url + "/"


ALLOWED_ORIGIN = "https://app.retro-clock.example"


@pytest.fixture
def limiter() -> RateLimiter | None:
    """The service's rate limiter: None, the one bootstrap builds. A module whose tests are not about limits
    but send more calls a minute than a key may (each 429 then costs the CLI its Retry-After second)
    overrides this with one that never refuses."""
    return None


@pytest.fixture
def service(site_url: str, limiter: RateLimiter | None, request: pytest.FixtureRequest) -> Iterator[Service]:
    """The service with /mcp mounted as bootstrap mounts it, but polling audits every 0.1 s, and the small
    site's audits unpaced (tests/local_sites.py: these tests are about what the clients show, not the pace)
    unless the test is marked `paced` (it needs an audit that takes a while)."""
    PUBLISHED.clear()
    indexnow = LocalIndexNow().start()
    settings = Settings(
        database_url="memory://",
        allow_networks=("127.0.0.0/8",),
        slice_pages=2,
        mcp_http=False,
        indexnow_endpoint=indexnow.url,
        **({} if request.node.get_closest_marker("paced") else UNPACED_LOCAL),
    )
    app = bootstrap(settings, queue=MemoryTaskQueue(), **({} if limiter is None else {"limiter": limiter}))
    keys = seed(app)
    api = app.rest_api()
    mount_mcp(
        api,
        app.application,
        clock=app.clock,
        limiter=app.limiter,
        allowed_origins=(ALLOWED_ORIGIN,),
        poll_s=0.1,
    )
    try:
        with serve(api) as root:
            yield Service(app=app, base_url=root + "/v1", site_url=site_url, keys=keys, indexnow=indexnow)
    finally:
        indexnow.stop()
        PUBLISHED.clear()
