"""`ConsoleProviders` of a deployment: Google (OAuth grants and the service account) and the demo."""

import threading
from typing import Any

import httpx2 as httpx
from attrs import define, field

from siteaudit.adapters.console.demo import DemoSearchConsole
from siteaudit.adapters.console.google import (
    GoogleEndpoints,
    GoogleSearchConsole,
    oauth_credentials,
    revoke_token,
    service_account_credentials,
)
from siteaudit.ports.searchconsole import ConsoleError, SearchConsole, SiteContext


@define(eq=False)
class ConsoleClients:
    """Builds console clients over one shared httpx2 client (timeouts, connection reuse)."""

    _endpoints: GoogleEndpoints
    _client_id: str = field(default="", kw_only=True)
    _client_secret: str = field(default="", kw_only=True)
    _service_account_file: str = field(default="", kw_only=True)
    _row_limit: int = field(default=25_000, kw_only=True)
    _timeout_s: float = field(default=30.0, kw_only=True)
    _client: httpx.Client | None = field(init=False, default=None)
    _lock: threading.Lock = field(init=False, factory=threading.Lock)
    _service_account: Any = field(init=False, default=None)

    @property
    def _http(self) -> httpx.Client:
        # Made on first use: a client loads the CA bundle (tens of milliseconds), and building the
        # application (every CLI command, every gunicorn worker, every test) should not pay for it.
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout_s, follow_redirects=False)
            return self._client

    def oauth(self, refresh_token: str) -> SearchConsole:
        credentials = oauth_credentials(
            refresh_token,
            endpoints=self._endpoints,
            client_id=self._client_id,
            client_secret=self._client_secret,
        )
        return GoogleSearchConsole(credentials, self._endpoints, self._http, row_limit=self._row_limit)

    def service_account(self) -> SearchConsole | None:
        if not self._service_account_file:
            return None
        if self._service_account is None:
            try:
                self._service_account = service_account_credentials(
                    self._service_account_file, endpoints=self._endpoints
                )
            except (OSError, ValueError) as exc:
                raise ConsoleError(f"the service-account key file cannot be read: {exc}") from None
        return GoogleSearchConsole(
            self._service_account, self._endpoints, self._http, row_limit=self._row_limit
        )

    def demo(self, context: SiteContext) -> SearchConsole:
        return DemoSearchConsole(context)

    def revoke(self, refresh_token: str) -> None:
        revoke_token(refresh_token, endpoints=self._endpoints, client=self._http)
