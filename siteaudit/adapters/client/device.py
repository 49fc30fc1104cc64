"""The device login (docs/security.md "Device login") as a client speaks it: `POST /v1/device/start`, one poll
of `POST /v1/device/token`, and `POST /v1/device/cancel`. No key is sent: the login is how a machine gets one.
Nothing is retried here (`slow_down`, a rate-limited start and the other answers are the caller's to act on,
RFC 8628 3.5)."""

from typing import Any, Final

import httpx2 as httpx
from attrs import field, frozen

from siteaudit.adapters.answers import converter
from siteaudit.adapters.client.transport import USER_AGENT, Unreachable, error_from, retry_after_s
from siteaudit.ports.application import DeviceLoginStarted

START_PATH: Final = "/device/start"
# An MCP `initialize` request (MCP specification, lifecycle): what `siteaudit connect` sends to `/mcp` to
# learn that an MCP endpoint is there before it asks for a key
# (docs/agents.md#siteaudit-connect-and-siteaudit-disconnect).
MCP_INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "siteaudit-connect", "version": "1"},
    },
}
TOKEN_PATH: Final = "/device/token"
CANCEL_PATH: Final = "/device/cancel"
CANCEL_TIMEOUT_S: Final = 5.0  # asked after Ctrl-C: a person is waiting for the prompt back


@frozen
class Granted:
    api_key: str = field(repr=False)
    team_id: int
    team_name: str


class DeviceClient:
    """Calls under `base_url` (the service's `/v1`)."""

    def __init__(self, base_url: str, *, timeout_s: float = 30.0, http: httpx.Client | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http or httpx.Client(timeout=timeout_s, trust_env=False, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def _post(self, path: str, body: dict[str, str], timeout_s: float | None = None) -> Any:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        timeout: Any = httpx.USE_CLIENT_DEFAULT if timeout_s is None else timeout_s
        try:
            response = self._http.post(self.base_url + path, json=body, headers=headers, timeout=timeout)
        except httpx.HTTPError as error:
            raise Unreachable(self.base_url, str(error) or type(error).__name__) from None
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if response.status_code >= 400:
            raise error_from(response.status_code, answer, retry_after_s(response))
        if not isinstance(answer, dict):
            raise error_from(500, None, None)
        return answer

    def mcp_refusal(self, mcp_url: str) -> str | None:
        """Why `mcp_url` is not an MCP endpoint (None: it is). It is one when it answers `initialize`
        with JSON-RPC (JSON or server-sent events), or 401: the key this login is about to get is missing,
        which a siteaudit `/mcp` says before anything else. Raises Unreachable."""
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json, text/event-stream"}
        try:
            with self._http.stream("POST", mcp_url, json=MCP_INITIALIZE, headers=headers) as response:
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                status = response.status_code
                head = b"" if kind == "text/event-stream" else response.read()[:4096]
        except httpx.HTTPError as error:
            raise Unreachable(mcp_url, str(error) or type(error).__name__) from None
        if status == 401:
            return None
        if status < 300 and (kind == "text/event-stream" or b'"jsonrpc"' in head):
            return None
        return f"answered {status}{f' ({kind})' if kind else ''} to an MCP initialize request"

    def start(self, client_name: str) -> DeviceLoginStarted:
        """A new login (the port's value: the wire carries its fields as they are). Raises the DomainError
        the service answered, or Unreachable."""
        started: DeviceLoginStarted = converter.structure(
            self._post(START_PATH, {"client_name": client_name}), DeviceLoginStarted
        )
        return started

    def poll(self, device_code: str) -> Granted:
        """One poll: the key once approved. Otherwise raises the error the service answered, whose
        `code` is `authorization_pending`, `slow_down`, `access_denied`, `expired_token`,
        `invalid_grant` (or another code of docs/rest-api.md "Errors and limits"), or Unreachable."""
        answer = self._post(TOKEN_PATH, {"device_code": device_code})
        team = answer["team"]
        return Granted(api_key=str(answer["api_key"]), team_id=int(team["id"]), team_name=str(team["name"]))

    def cancel(self, device_code: str) -> str:
        """Give the login up (Ctrl-C while waiting): the code can no longer be approved. Returns the
        login's state now (`denied`, or `expired`). Raises the service's error (`invalid_grant` once the
        code was exchanged) or Unreachable, within CANCEL_TIMEOUT_S."""
        answer = self._post(CANCEL_PATH, {"device_code": device_code}, CANCEL_TIMEOUT_S)
        return str(answer.get("status", ""))
