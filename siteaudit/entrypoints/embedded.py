"""`siteaudit serve`: the embedded default in one process (API, SQLite database, in-process workers and
the monitoring scheduler)."""

import errno
import json
import logging
import socket
import socketserver
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from siteaudit.adapters.rest.errors import envelope
from siteaudit.bootstrap import App
from siteaudit.domain.account import LOCAL_OWNER_EMAIL, LOCAL_TEAM
from siteaudit.domain.error import HTTP_STATUS, ErrorCode
from siteaudit.entrypoints.output import echo
from siteaudit.entrypoints.scheduler import start_scheduler
from siteaudit.entrypoints.worker import start_worker
from siteaudit.ports.application import Admin, IssuedKey
from siteaudit.settings import Settings

KEY_VARIABLE = "SITEAUDIT_API_KEY"  # the variable the CLI client reads, and the curl examples use
LOST_KEY_COMMAND = f"siteaudit admin rotate-key {LOCAL_OWNER_EMAIL} --team {LOCAL_TEAM}"


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


# What the HTTP server itself answers when the request line or the headers do not parse, before the
# service sees the request (http.server's limits: 65,536 bytes a line, 100 headers).
PARSER_ERRORS: Final[dict[int, tuple[ErrorCode, str]]] = {
    400: (ErrorCode.BAD_REQUEST, "the request line or a header does not parse"),
    414: (ErrorCode.URI_TOO_LONG, "the request line is longer than 65,536 bytes"),
    431: (ErrorCode.HEADERS_TOO_LARGE, "a header line is longer than 65,536 bytes, or there are over 100"),
    505: (ErrorCode.HTTP_VERSION_NOT_SUPPORTED, "only HTTP/1.0 and HTTP/1.1 are served"),
}


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the access log middleware logs requests
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The server's own refusals in the error envelope every other answer uses (docs/rest-api.md
        "Errors and limits"), instead of http.server's HTML page."""
        error, why = PARSER_ERRORS.get(code, PARSER_ERRORS[400])
        if self.request_version == "HTTP/0.9":  # a request line that did not parse: still a status line
            self.request_version = self.protocol_version
        body = json.dumps(envelope(error, why)).encode()
        self.send_response(HTTP_STATUS[error])
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
_log = logging.getLogger(__name__)


def _header_safe(text: str) -> bool:
    """No CR, LF or other control character, and latin-1 (what wsgiref writes headers in)."""
    return all((" " <= c <= "\xff" and c != "\x7f") or c == "\t" for c in text)


class UnsafeHeader(Exception):
    """A status or header that would split the answer or not encode: a bug, never written."""


def checked_headers(service: WsgiApp) -> WsgiApp:
    """docs/security.md (`next`): a response whose status or a header would split the answer or not
    encode is never written; a clean 500 in the error envelope goes out instead (logged: a bug to fix)."""

    def start(start_response: Callable[..., Any]) -> Callable[..., Any]:
        def checked(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            bad = [name for name, value in headers if not (_header_safe(name) and _header_safe(value))]
            if bad or not _header_safe(status):
                raise UnsafeHeader(", ".join(repr(name) for name in bad) or "status")
            return start_response(status, headers, exc_info)

        return checked

    def checked_service(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        try:
            return service(environ, start(start_response))
        except UnsafeHeader as unsafe:
            _log.error("response not written: unsafe header %s", unsafe)
        answer = json.dumps(envelope(ErrorCode.INTERNAL_ERROR, "The answer could not be written.")).encode()
        start_response(
            "500 Internal Server Error",
            [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))],
        )
        return [answer]

    return checked_service


class CannotListen(Exception):
    """The address could not be bound; the message says why in one line."""


def listen(app: App, host: str, port: int) -> WSGIServer:
    """The server bound to host:port (not serving yet). Raises CannotListen."""
    try:
        return make_server(
            host,
            port,
            checked_headers(app.service()),
            server_class=_ThreadingServer,
            handler_class=_QuietHandler,
        )
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            why = (
                "the port is in use (another siteaudit serve?); choose another with --port or SITEAUDIT_PORT"
            )
        else:
            why = error.strerror or str(error)
        raise CannotListen(f"cannot listen on {host}:{port}: {why}") from None


def _admin(app: App) -> Admin:
    """What the embedded server's first run and greetings use of the application: the local owner, whose
    key it is and the password link (docs/architecture.md "Roles")."""
    return app.application


def greeting(app: App, base: str, issued: IssuedKey | None) -> str:
    """What serve prints once listening: whose the new key is, and curl lines that work when pasted."""
    settings = app.settings
    lines = [f"siteaudit is serving {base} (database: {settings.database_url})", ""]
    if issued is not None:
        holder = _admin(app).whoami(issued.raw)
        lines += [
            f"A local owner account was created with {settings.starting_credits:,} credits: "
            f"{holder.email}, team {holder.team_name}, plan {settings.local_owner_plan}.",
            "Its API key, shown only this once:",
            "",
            f"    {issued.raw}",
            "",
            "Try:",
            f"  export {KEY_VARIABLE}={issued.raw}",
        ]
    else:
        lines += [f"Try, with your key in {KEY_VARIABLE} (export {KEY_VARIABLE}=sk_...):"]
    auth = f'-H "Authorization: Bearer ${KEY_VARIABLE}"'
    lines += [
        f"  curl -s {base}/account {auth}",
        f"  curl -s {base}/crawls {auth} -H 'Content-Type: application/json' "
        '-d \'{"url": "https://example.com/", "max_pages": 50}\'',
        f"  curl -s {base}/crawls/1/report {auth}",
        f"Lost the local owner's key? `{LOST_KEY_COMMAND}` revokes it and prints a new one.",
        f"The API is described at {base}/openapi.json. Stop with Ctrl-C.",
    ]
    return "\n".join(lines)


def app_greeting(app: App, origin: str, *, first_run: bool) -> str:
    """Where the app is, and on the first start a one-time link to choose the local owner's password."""
    base = app.settings.public_url.rstrip("/") or origin
    if not first_run:
        return (
            f"The app: {base}/app/ (a password for someone? "
            f"`siteaudit admin password-link EMAIL` or `siteaudit admin set-password EMAIL`)"
        )
    link = _admin(app).password_link(LOCAL_OWNER_EMAIL)
    path = link[link.index("/app/") :]
    return (
        f"The app: {base}/app/ . Choose the local owner's password there with this link "
        f"(it works once, for an hour):\n\n    {base}{path}\n"
    )


def mcp_greeting(app: App, origin: str) -> str | None:
    """Where AI agents reach the tool server, and the command that configures them (docs/agents.md);
    None when SITEAUDIT_MCP_HTTP turned `/mcp` off."""
    if not app.settings.mcp_http:
        return None
    base = app.settings.public_url.rstrip("/") or origin
    return f"MCP for AI agents: {base}/mcp . Configure your agents with: siteaudit connect --server {base}"


def serving_note(settings: Settings) -> Path | None:
    """Where a `serve` on a SQLite database notes the address it serves at, beside the database, so that
    `siteaudit admin password-link` in another shell links to the running port (None for other
    databases: a shared service sets SITEAUDIT_PUBLIC_URL)."""
    url = settings.database_url
    if not url.startswith("sqlite:///"):
        return None
    return Path(url.removeprefix("sqlite:///") + ".serving")


def running_origin(settings: Settings) -> str | None:
    """The address a `serve` on this database noted (see `serving_note`), None when none runs there: no
    note, not an http address, or nothing answers a connection at it (a `serve` that was killed)."""
    note = serving_note(settings)
    try:
        origin = note.read_text().strip() if note is not None else ""
    except OSError:
        return None
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname or len(origin) > 300:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname, port), timeout=1.0):
            return f"{parts.scheme}://{parts.netloc}"
    except (OSError, ValueError):
        return None


def serve(app: App, server: WSGIServer, *, host: str) -> None:
    """Create the local owner on an empty database, say how to call the API, and serve until Ctrl-C."""
    settings = app.settings
    issued = _admin(app).ensure_local_owner(
        plan=settings.local_owner_plan, starting_credits=settings.starting_credits
    )
    echo(greeting(app, f"http://{host}:{server.server_port}/v1", issued))
    echo(app_greeting(app, f"http://{host}:{server.server_port}", first_run=issued is not None))
    mcp = mcp_greeting(app, f"http://{host}:{server.server_port}")
    if mcp is not None:
        echo(mcp)
    worker, periodic = start_worker(app, threads=settings.worker_threads)
    scheduler = start_scheduler(app)  # monitoring audits and the daily ownership re-checks
    note = serving_note(settings)
    if note is not None:
        with suppress(OSError):  # only a convenience for `admin password-link`
            note.write_text(f"http://{host}:{server.server_port}\n")
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            echo("stopping")
        finally:
            scheduler.stop()
            periodic.stop()
            worker.stop()
            if note is not None:
                note.unlink(missing_ok=True)
