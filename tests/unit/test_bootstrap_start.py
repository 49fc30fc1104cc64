"""Building the application loads no certificate bundle: the HTTP clients that would (IndexNow, the search
console) are made on first use. Every CLI command, every gunicorn worker and every test builds one; two
bundles cost it tens of milliseconds each."""

from typing import Any

import httpcore2
import pytest

from siteaudit.adapters.console.google import GoogleEndpoints
from siteaudit.adapters.console.providers import ConsoleClients
from siteaudit.adapters.http.indexnow import HttpxIndexNowClient
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.settings import Settings


@pytest.fixture
def bundle_loads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each default client context made from here on (httpx2 asks httpcore2 for it when a client is made)."""
    loads: list[bool] = []
    made = httpcore2.default_ssl_context

    def counting(**options: Any) -> Any:
        loads.append(True)
        return made(**options)

    monkeypatch.setattr(httpcore2, "default_ssl_context", counting)
    return loads


def test_building_the_application_loads_no_certificate_bundle(bundle_loads: list[bool]) -> None:
    bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())
    bundle_loads.clear()  # the first build in a process made the crawler's verifying context, kept for good

    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())

    assert app.application is not None
    assert bundle_loads == []


def test_the_indexnow_client_and_the_console_clients_make_their_client_once_on_first_use(
    bundle_loads: list[bool],
) -> None:
    indexnow = HttpxIndexNowClient("https://indexnow.example/indexnow")
    endpoints = GoogleEndpoints(
        api="https://console.example/api",
        inspect="https://console.example/inspect",
        token="https://console.example/token",
        revoke="https://console.example/revoke",
    )
    console = ConsoleClients(endpoints, client_id="id", client_secret="secret")
    assert bundle_loads == []

    assert indexnow._client is indexnow._client
    assert console._http is console._http
    assert len(bundle_loads) == 2
    indexnow.close()
    indexnow.close()  # closing twice, or before any use, is harmless
    HttpxIndexNowClient().close()
