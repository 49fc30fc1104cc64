"""A running service on 127.0.0.1 (the Falcon app in a thread, memory storage), a small site to audit on
127.0.0.1, two teams with keys, and a crawler the tests drive slice by slice."""

import threading
from collections.abc import Iterator

import pytest
from attrs import frozen

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import App, bootstrap
from siteaudit.settings import Settings
from tests.integration.rest.live import Keys, drain, retro_clock_site, seed, serve


@frozen
class Service:
    app: App
    base_url: str  # ends in /v1
    site_url: str  # the small site to audit, on 127.0.0.1
    keys: Keys

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/v1")

    def crawl(self) -> int:
        """Run every queued crawl slice and finalisation now, as a worker would."""
        return drain(self.app)


class Crawler:
    """Drains the service's queue every `every_s` in a thread, as the in-process worker does."""

    def __init__(self, service: Service, every_s: float = 0.2) -> None:
        self.service = service
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-crawler", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.service.crawl()

    def __enter__(self) -> "Crawler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    with serve(retro_clock_site) as url:
        yield url + "/"


@pytest.fixture
def service(site_url: str) -> Iterator[Service]:
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), slice_pages=2),
        queue=MemoryTaskQueue(),
    )
    keys = seed(app)
    with serve(app.rest_api()) as root:
        yield Service(app=app, base_url=root + "/v1", site_url=site_url, keys=keys)
