"""`siteaudit serve`: the embedded default in one process (API, SQLite database, in-process workers and
the monitoring scheduler)."""

import errno
import json
import logging
import socketserver
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import click

from siteaudit.bootstrap import App
from siteaudit.domain.account import LOCAL_OWNER_EMAIL, LOCAL_TEAM
from siteaudit.entrypoints.scheduler import start_scheduler
from siteaudit.entrypoints.worker import start_worker
from siteaudit.ports.application import IssuedKey

KEY_VARIABLE = "SITEAUDIT_API_KEY"  # the variable the CLI client reads, and the curl examples use
LOST_KEY_COMMAND = f"siteaudit admin rotate-key {LOCAL_OWNER_EMAIL} --team {LOCAL_TEAM}"


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the access log middleware logs requests
        pass


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
        answer = json.dumps(
            {"error": {"code": "internal_error", "message": "The answer could not be written."}}
        ).encode()
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


def greeting(app: App, base: str, issued: IssuedKey | None) -> str:
    """What serve prints once listening: whose the new key is, and curl lines that work when pasted."""
    settings = app.settings
    lines = [f"siteaudit is serving {base} (database: {settings.database_url})", ""]
    if issued is not None:
        holder = app.application.whoami(issued.raw)
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
    link = app.application.password_link(LOCAL_OWNER_EMAIL)
    path = link[link.index("/app/") :]
    return (
        f"The app: {base}/app/ . Choose the local owner's password there with this link "
        f"(it works once, for an hour):\n\n    {base}{path}\n"
    )


def serve(app: App, server: WSGIServer, *, host: str) -> None:
    """Create the local owner on an empty database, say how to call the API, and serve until Ctrl-C."""
    settings = app.settings
    issued = app.application.ensure_local_owner(
        plan=settings.local_owner_plan, starting_credits=settings.starting_credits
    )
    click.echo(greeting(app, f"http://{host}:{server.server_port}/v1", issued))
    click.echo(app_greeting(app, f"http://{host}:{server.server_port}", first_run=issued is not None))
    worker, periodic = start_worker(app, threads=settings.worker_threads)
    scheduler = start_scheduler(app)  # monitoring audits and the daily ownership re-checks
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("stopping")
        finally:
            scheduler.stop()
            periodic.stop()
            worker.stop()
