"""Streamable HTTP at `/mcp` on the same Falcon (WSGI) service as `/v1`.

The SDK serves HTTP as an ASGI app. Each request here is handed to a fresh stateless session manager
(`stateless=True`: no session outlives its request, so any gunicorn worker can answer any request) on an
event loop that runs in a thread of this process, started on first use in each process (gunicorn forks
its workers after loading the app). The answer streams back through WSGI as it is written, so progress
notifications of a long call arrive while it runs (server-sent events).

Before the SDK sees a request: the `Origin` check the MCP specification asks of HTTP servers (a
present Origin must be one of the allowed origins, else 403), then the same bearer key rules as `/v1`
(team scope, revoked and removed-member keys refused, the per-key limit, and for `verify_site`,
`inspect_urls` and the IndexNow calls that reach out the stricter limit of their REST endpoint), with `X-Request-ID` and the access log from the REST middleware.

A 401 carries `WWW-Authenticate: Bearer realm="siteaudit"` (RFC 6750 section 3), with
`error="invalid_token"` when a key was sent but is not one that works (revoked, replaced, unknown) and no
error when none was sent (RFC 6750 3.1: a request without credentials gets no error code); the body is the
`/v1` error envelope as before. It names no `resource_metadata` (the MCP authorization specification's
OAuth discovery): keys come from the app or `siteaudit connect`, there is no authorization server to find
(docs/agents.md "Transports").
"""

import os
import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import falcon
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from siteaudit.adapters import strict_json
from siteaudit.adapters.mcp.derived import declared_limits
from siteaudit.adapters.mcp.server import build_server
from siteaudit.adapters.mcp.tools import HAND_WRITTEN_BY_NAME
from siteaudit.adapters.rest.errors import answer, envelope
from siteaudit.adapters.rest.middleware import Authentication
from siteaudit.domain.account import Caller
from siteaudit.domain.error import Unauthenticated, ValidationFailed
from siteaudit.ports.application import CallerApi
from siteaudit.ports.clock import Clock
from siteaudit.ports.ratelimit import Limit, RateLimiter

MCP_PATH: Final = "/mcp"
REALM: Final = "siteaudit"
MAX_BODY: Final = 4 * 1024 * 1024
CALLER_KEY: Final = "siteaudit.caller"
# The stricter REST limits some hand-written tools share with their endpoint (docs/rest-api.md
# "Endpoints"), by the bucket name REST uses; the declared use cases' are their bindings' (`declared_limits`).
_LIMITS: Final[dict[str, Limit]] = {}
EXTRA_LIMITS: Final[dict[str, tuple[str, Limit]]] = {
    name: (spec.limited[0], _LIMITS[spec.limited[0]])
    for name, spec in HAND_WRITTEN_BY_NAME.items()
    if spec.limited[0]
}
_END: Final = object()


def caller_in_scope(ctx: ServerRequestContext[Any, Any]) -> Caller:
    """The caller the Falcon door authenticated, carried in the ASGI scope of the request."""
    request = ctx.request
    caller = getattr(request, "scope", {}).get(CALLER_KEY) if request is not None else None
    if not isinstance(caller, Caller):
        raise Unauthenticated()
    return caller


class EventLoopThread:
    """One event loop per process, in a daemon thread, started on first use (and again in a forked child)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._portal: BlockingPortal | None = None
        self._context: AbstractContextManager[BlockingPortal] | None = None

    def portal(self) -> BlockingPortal:
        with self._lock:
            if self._portal is None or self._pid != os.getpid():
                self._context = start_blocking_portal()
                self._portal = self._context.__enter__()
                self._pid = os.getpid()
            return self._portal


class Exchange:
    """One HTTP request through the SDK's ASGI handler: its answer's status, headers and body chunks."""

    def __init__(
        self, server: Server[Any], portal: BlockingPortal, scope: dict[str, Any], body: bytes
    ) -> None:
        self._messages: queue.Queue[Any] = queue.Queue()
        self._body = body
        self._future: Future[None] = portal.start_task_soon(self._run, server, scope)
        self._future.add_done_callback(lambda _: self._messages.put(_END))

    async def _receive(self) -> dict[str, Any]:
        if self._body is not None:
            body, self._body = self._body, None  # type: ignore[assignment]
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def _send(self, message: dict[str, Any]) -> None:
        self._messages.put(message)

    async def _run(self, server: Server[Any], scope: dict[str, Any]) -> None:
        manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=False)
        async with manager.run():
            await manager.handle_request(scope, self._receive, self._send)  # type: ignore[arg-type]

    def start(self) -> tuple[int, list[tuple[str, str]]]:
        message = self._messages.get()
        if message is _END or message.get("type") != "http.response.start":
            self._future.result()  # raises what the handler raised
            return 500, []
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])]
        return int(message["status"]), headers

    def body(self) -> Iterator[bytes]:
        finished = False
        try:
            while not finished:
                message = self._messages.get()
                if message is _END:
                    finished = True
                elif message.get("type") == "http.response.body":
                    if message.get("body"):
                        yield bytes(message["body"])
                    finished = not message.get("more_body", False)
        finally:
            if not finished and not self._future.done():
                self._future.cancel()  # the client went away mid-answer: stop the call


def asgi_scope(req: falcon.Request, caller: Caller) -> dict[str, Any]:
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in req.headers.items()
        if name.lower() != "authorization"  # the key stops at the door
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": req.method,
        "scheme": req.scheme,
        "path": MCP_PATH,
        "raw_path": MCP_PATH.encode(),
        "root_path": "",
        "query_string": req.query_string.encode("latin-1"),
        "headers": headers,
        "client": (req.remote_addr or "", 0),
        "server": (req.host, req.port),
        "state": {},
        CALLER_KEY: caller,
    }


def read_message(body: bytes) -> tuple[Any, ValidationFailed | None]:
    """The JSON-RPC message of a request body, or why it is refused: the body rules of `/v1`
    (docs/security.md, "Strict JSON bodies"), a bad string named by its path (`params.arguments.url`)."""
    try:
        message = strict_json.loads(body)
    except ValidationFailed as refused:
        return None, refused
    bad_text = strict_json.not_text_at(message)
    if bad_text is not None:
        return None, ValidationFailed({strict_json.field_name(bad_text): strict_json.NOT_TEXT})
    return message, None


def tool_called(message: Any) -> str | None:
    """The tool a JSON-RPC `tools/call` message names, if it is one."""
    if isinstance(message, dict) and message.get("method") == "tools/call":
        name = (message.get("params") or {}).get("name")
        return name if isinstance(name, str) else None
    return None


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL or an Origin header, lower-case (a public URL may carry a path)."""
    parts = urlsplit(url.strip())
    return f"{parts.scheme}://{parts.netloc}".lower()


def bearer_challenge(authorization: str | None) -> str:
    """The `WWW-Authenticate` value of a 401 (RFC 6750 section 3): the realm, and `invalid_token` only
    when the request carried a bearer key (a request without credentials gets no error code, 3.1)."""
    scheme, _, raw = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        return f'Bearer realm="{REALM}"'
    return (
        f'Bearer realm="{REALM}", error="invalid_token", '
        'error_description="the API key is unknown, revoked or replaced"'
    )


class McpEndpoint:
    """`/mcp`: the origin check, the key, then the SDK. Marked public so the REST middleware leaves the
    key to this resource (which asks the same `Authentication` after the origin check)."""

    public = True

    def __init__(
        self,
        server: Server[Any],
        authentication: Authentication,
        allowed_origins: Sequence[str],
        loop: EventLoopThread | None = None,
        extra_limits: Mapping[str, tuple[str, Limit]] = EXTRA_LIMITS,
    ) -> None:
        self.server = server
        self.extra_limits = extra_limits
        self.authentication = authentication
        self.allowed_origins = frozenset(origin_of(o) for o in allowed_origins)
        self.loop = loop or EventLoopThread()

    def _origin_allowed(self, req: falcon.Request) -> bool:
        origin = req.get_header("Origin")
        return origin is None or origin_of(origin) in self.allowed_origins

    # POST only: a stateless server has no session to DELETE and no stream to GET that anything could
    # ever be written to (the transport lets a server answer 405 to both); Falcon answers 405.
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not self._origin_allowed(req):
            answer(resp, 403, envelope("forbidden_origin", "this Origin may not call the tool server"))
            return
        if (req.content_length or 0) > MAX_BODY:
            answer(resp, 413, envelope("payload_too_large", "the request body is too large"))
            return
        body = req.bounded_stream.read(MAX_BODY + 1)
        if len(body) > MAX_BODY:
            answer(resp, 413, envelope("payload_too_large", "the request body is too large"))
            return
        message, refused = read_message(body)
        try:
            self.authentication.identify(req, resp, self.extra_limits.get(tool_called(message) or ""))
        except Unauthenticated:
            resp.set_header("WWW-Authenticate", bearer_challenge(req.get_header("Authorization")))
            raise
        if refused is not None:  # after the key: a caller without one is told that first
            raise refused
        exchange = Exchange(self.server, self.loop.portal(), asgi_scope(req, req.context.caller), body)
        status, headers = exchange.start()
        resp.status = status
        for name, value in headers:
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                resp.set_header(name, value)
        resp.stream = exchange.body()


def mount_mcp(
    api: "falcon.App[Any, Any]",
    application: CallerApi,
    *,
    clock: Clock,
    limiter: RateLimiter,
    trusted_proxies: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    poll_s: float = 2.0,
) -> McpEndpoint:
    """Serve the tool server at `/mcp` on `api`."""
    server = build_server(application, caller_of=caller_in_scope, now=clock.now, poll_s=poll_s)
    authentication = Authentication(application.authenticate, limiter, clock, trusted_proxies)
    limits = {**EXTRA_LIMITS, **declared_limits(application.use_cases())}
    endpoint = McpEndpoint(server, authentication, allowed_origins, extra_limits=limits)
    api.add_route(MCP_PATH, endpoint)
    return endpoint
