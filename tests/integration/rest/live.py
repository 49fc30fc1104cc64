"""Live servers for the REST integration tests: a threaded WSGI server on 127.0.0.1, seed data, fakes."""

import socket
import socketserver
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from attrs import frozen

from siteaudit.bootstrap import App
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import AuditId, RecheckId
from siteaudit.ports.ratelimit import Limit, RateDecision
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from tests.local_sites import SERVER_POLL_S

PUBLIC_NAME = "retro-clock.example"  # the one name the fuzzed server resolves, to a public address


class AllowAllLimiter:
    """A rate limiter that never refuses, so a fuzzer's thousands of requests are not throttled."""

    def __init__(self) -> None:
        self.hits = 0
        self._lock = threading.Lock()

    def _decision(self, limit: Limit) -> RateDecision:
        return RateDecision(True, limit.count, limit.count - 1, limit.interval_s, 0.0)

    def hit(self, bucket: str, limit: Limit, *, now: datetime) -> RateDecision:
        with self._lock:
            self.hits += 1
        return self._decision(limit)

    def peek(self, bucket: str, limit: Limit, *, now: datetime) -> RateDecision:
        return self._decision(limit)


@frozen
class Keys:
    owner: str  # owns team Retro Clock, plenty of credits
    member: str  # a member of Retro Clock
    rival: str  # owns team Other Shop


def seed(app: App) -> Keys:
    """Two teams, three people with credits and one Settings key each, through the services."""
    clock, secrets = app.clock, app.secrets
    for email, plan in (
        ("owner@retro-clock.example", "scale"),
        ("member@retro-clock.example", "starter"),
        ("rival@other-shop.example", "growth"),
    ):
        accounts.create_user(email, plan=plan, uow=app.uow(), clock=clock, secrets=secrets)
        accounts.grant_credits(email, credits(50_000), key=f"start:{email}", uow=app.uow(), clock=clock)
    accounts.create_team("Retro Clock", owner_email="owner@retro-clock.example", uow=app.uow(), clock=clock)
    accounts.create_team("Other Shop", owner_email="rival@other-shop.example", uow=app.uow(), clock=clock)
    accounts.add_member("Retro Clock", "member@retro-clock.example", uow=app.uow())

    def key(email: str, team: str) -> str:
        return keys.create_settings_key(email, team, uow=app.uow(), clock=clock, secrets=secrets).raw

    return Keys(
        owner=key("owner@retro-clock.example", "Retro Clock"),
        member=key("member@retro-clock.example", "Retro Clock"),
        rival=key("rival@other-shop.example", "Other Shop"),
    )


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the app writes its own access log
        pass


class StatusCounter:
    """WSGI middleware counting answers by status code (what the server really sent, not what a client saw)."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self.statuses: Counter[int] = Counter()
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def counting_start_response(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            with self._lock:
                self.statuses[int(status.split()[0])] += 1
            return start_response(status, headers, *exc)

        return self.app(environ, counting_start_response)

    @property
    def total(self) -> int:
        return sum(self.statuses.values())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve(wsgi_app: Callable[..., Iterable[bytes]]) -> Iterator[str]:
    """Serve `wsgi_app` on a free 127.0.0.1 port from a background thread; yields the base URL."""
    server = make_server("127.0.0.1", 0, wsgi_app, server_class=_ThreadingServer, handler_class=_QuietHandler)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": SERVER_POLL_S},
        name="rest-live-server",
        daemon=True,
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _page(title: str, body: str, *, description: str | None = None) -> bytes:
    meta = f'<meta name="description" content="{description}">' if description else ""
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>{meta}</head>"
        f"<body>{body}</body></html>"
    ).encode()


SITE_PAGES: dict[str, bytes] = {
    "/": _page(
        "Retro Clock",
        '<h1>Clocks</h1><a href="/products/1">One</a> <a href="/products/2">Two</a> '
        '<a href="/about">About</a> <a href="/gone">Old page</a>',
        description="Restored clocks from the sixties and seventies, with a year of warranty.",
    ),
    "/products/1": _page("Clock", "<h1>Flip clock</h1><p>Orange.</p><a href='/'>Home</a>"),
    "/products/2": _page("Clock", "<h1>Cuckoo</h1><p>Wooden.</p><a href='/'>Home</a>"),
    "/about": _page("About", "<p>We repair clocks.</p><img src='/shop.png'>"),
}


def retro_clock_site(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """A small site with a few findings: duplicate titles, missing descriptions, a broken link."""
    body = SITE_PAGES.get(environ.get("PATH_INFO", "/"))
    if body is None:
        start_response("404 Not Found", [("Content-Type", "text/html; charset=utf-8")])
        return [_page("Not found", "<p>Nothing here.</p>")]
    start_response(
        "200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))]
    )
    return [body]


def drain(app: App) -> int:
    """Run every message waiting on the app's MemoryTaskQueue, as the in-process worker would."""
    queue = app.queue
    handled = 0
    while (message := queue.take()) is not None:  # type: ignore[attr-defined]
        actor, argument = message
        if actor == "crawl_slice":
            assert argument is not None
            token = queue.verify_token(argument)  # type: ignore[attr-defined]
            app.application.run_crawl_slice(AuditId(argument), verify_token=token)
        elif actor == "finalize_audit":
            assert argument is not None
            app.application.finalize_audit(AuditId(argument))
        elif actor == "deliver_webhooks":
            app.application.deliver_webhooks()
        elif actor == "run_recheck":
            assert argument is not None
            app.application.run_recheck(RecheckId(argument))
        handled += 1
    return handled


@contextmanager
def gunicorn(
    factory: str,
    *,
    workers: int,
    env: dict[str, str],
    pythonpath: Iterable[str] = (),
    timeout_s: float = 120.0,  # each worker imports the whole service; 4 of them on 2 busy cores are slow
) -> Iterator[str]:
    """Run `gunicorn factory` (sync workers) on a free 127.0.0.1 port until /v1/health answers; yields
    the base URL. The server is stopped (SIGTERM, then SIGKILL) on exit."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    port = free_port()
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "--workers",
        str(workers),
        "--worker-class",
        "sync",
        "--bind",
        f"127.0.0.1:{port}",
        "--backlog",
        "2048",
        "--log-level",
        "warning",
        # On SIGTERM the master waits this long for its workers, then kills them: an idle worker that is
        # slow to exit cost each test module the whole default 30 s (nothing here checks a graceful stop).
        "--graceful-timeout",
        "3",
        factory,
    ]
    path = os.pathsep.join([*pythonpath, os.environ.get("PYTHONPATH", "")])
    # Its own process group: should the master not stop in time, its workers are killed with it rather than
    # left running (holding memory and the port) after the test.
    process = subprocess.Popen(command, env={**os.environ, **env, "PYTHONPATH": path}, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with status {process.returncode}")
            try:
                with urllib.request.urlopen(f"{base}/v1/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not answer /v1/health in time")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(
                process.pid, signal.SIGKILL
            )  # the master and its workers (not reaped yet: still its group)
            process.wait()


def every_worker_answers(base: str, workers: int, *, timeout_s: float = 120.0) -> None:
    """Bursts of concurrent GET /v1/health until `workers` distinct worker processes have answered one
    (the test app's X-Worker-Pid header). `gunicorn()` returns at the first answer, when the other workers
    may still be importing the service; a test that counts which processes served it waits here first."""
    import time

    import httpx2

    pids: set[str] = set()
    lock = threading.Lock()
    deadline = time.monotonic() + timeout_s

    def one(start: threading.Barrier) -> None:
        start.wait()
        response = httpx2.get(f"{base}/v1/health", timeout=60)
        with lock:
            pids.add(response.headers.get("X-Worker-Pid", ""))

    while len(pids) < workers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(pids)} of {workers} gunicorn workers answered in time")
        burst = 4 * workers
        start = threading.Barrier(burst)
        threads = [threading.Thread(target=one, args=(start,)) for _ in range(burst)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
