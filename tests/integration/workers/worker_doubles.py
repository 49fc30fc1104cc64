"""Doubles for the worker tests: a small site and an HTTPS webhook receiver on 127.0.0.1, worker processes
that can be killed and restarted, and the ledger, audit and webhook figures read from PostgreSQL."""

import hashlib
import hmac
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import falcon.testing
import pika
import trustme
from attrs import define, field, frozen
from chaos_worker import build_app
from sqlalchemy import create_engine, text

from siteaudit.bootstrap import App
from siteaudit.domain.credit import credits
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from siteaudit.settings import Settings
from tests.local_sites import SERVER_POLL_S

WORKER_SCRIPT = Path(__file__).with_name("chaos_worker.py")
QUEUE_BASES = ("crawl", "finalize", "webhooks")
STARTING_CREDITS = credits(100_000)

PAGES: Mapping[str, tuple[str, ...]] = {
    "/": ("/clocks", "/about", "/clocks/cuckoo"),
    "/clocks": ("/clocks/cuckoo", "/clocks/mantel", "/"),
    "/clocks/cuckoo": ("/clocks",),
    "/clocks/mantel": ("/clocks",),
    "/about": ("/",),
}


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a worker killed mid-request resets its connection: expected here


class SiteServer:
    """A threaded HTTP server of PAGES (robots.txt and sitemaps answer 404)."""

    def __init__(self) -> None:
        self.hits = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(handler) -> None:  # `self` is the SiteServer
                self.hits += 1
                path = handler.path.split("?", 1)[0]
                links = PAGES.get(path)
                if links is None:
                    body, status, kind = b"not here", 404, "text/plain"
                else:
                    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
                    body = (
                        "<!doctype html><html lang=en><head><meta charset=utf-8>"
                        f"<title>Retro Clock {path}</title><meta name=description content='Clocks {path}'>"
                        f"</head><body><h1>Retro Clock {path}</h1>{anchors}</body></html>"
                    ).encode()
                    status, kind = 200, "text/html; charset=utf-8"
                handler.send_response(status)
                handler.send_header("Content-Type", kind)
                handler.send_header("Content-Length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": SERVER_POLL_S}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@define
class Call:
    body: bytes
    headers: dict[str, str]


class WebhookReceiver:
    """An HTTPS receiver on 127.0.0.1 with a certificate from `ca`; keeps every call's raw body."""

    def __init__(self, ca: trustme.CA) -> None:
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                if len(body) < length:
                    # The sender died mid-request (a SIGKILLed worker): no delivery, as for any receiver.
                    self.close_connection = True
                    return
                with receiver._lock:
                    receiver.calls.append(Call(body, {k.lower(): v for k, v in self.headers.items()}))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(context)
        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": SERVER_POLL_S}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/hooks/audit-ended"

    def by_crawl(self) -> Counter[int]:
        with self._lock:
            return Counter(json.loads(call.body)["crawl_id"] for call in self.calls)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def signature_verifies(secret: str, call: Call) -> bool:
    """What a receiver does with the standard library: HMAC-SHA256 over the raw bytes, constant time."""
    expected = "sha256=" + hmac.new(secret.encode(), call.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), call.headers.get("x-audit-signature", "").encode())


@define
class Workers:
    """`count` worker processes (chaos_worker.py), each restartable after a SIGKILL."""

    env: dict[str, str]
    count: int
    log_dir: Path
    processes: list[subprocess.Popen[bytes]] = field(factory=list)
    kills: int = 0
    _starts: int = 0

    def _spawn(self) -> subprocess.Popen[bytes]:
        self._starts += 1
        log = open(self.log_dir / f"worker-{self._starts}.log", "wb")  # noqa: SIM115 - the child keeps it
        return subprocess.Popen([sys.executable, str(WORKER_SCRIPT)], env=self.env, stdout=log, stderr=log)

    def start(self) -> None:
        self.processes = [self._spawn() for _ in range(self.count)]

    def kill_and_restart(self, index: int) -> None:
        process = self.processes[index]
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        self.kills += 1
        self.processes[index] = self._spawn()

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def log_count(self, needle: str) -> int:
        return sum(path.read_text(errors="replace").count(needle) for path in self.log_dir.glob("*.log"))

    def logs(self) -> str:
        return "\n".join(
            path.read_text(errors="replace")[-3000:] for path in sorted(self.log_dir.glob("*.log"))
        )


def worker_env(
    *, database_url: str, broker_url: str, secret_key: str, prefix: str, ca_file: str, **test: str
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SITEAUDIT_", "WORKER_TEST_"))}
    env.update(
        SITEAUDIT_DATABASE_URL=database_url,
        SITEAUDIT_BROKER_URL=broker_url,
        SITEAUDIT_SECRET_KEY=secret_key,
        SITEAUDIT_ALLOW_NETWORKS="127.0.0.0/8",
        SITEAUDIT_WORKER_THREADS=test.pop("threads", "3"),
        SITEAUDIT_SLICE_PAGES=test.pop("slice_pages", "2"),
        WORKER_TEST_QUEUE_PREFIX=prefix,
        WORKER_TEST_CA_FILE=ca_file,
    )
    env.update({f"WORKER_TEST_{name.upper()}": value for name, value in test.items()})
    return env


def delete_queues(broker_url: str, prefix: str) -> None:
    connection = pika.BlockingConnection(pika.URLParameters(broker_url))
    try:
        channel = connection.channel()
        for base in QUEUE_BASES:
            for suffix in ("", ".DQ", ".XQ"):
                channel.queue_delete(f"{prefix}{base}{suffix}")
    finally:
        connection.close()


def wait_until(condition: Any, *, timeout_s: float, every_s: float = 0.5) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every_s)
    return bool(condition())


@contextmanager
def database(url: str) -> Iterator[Any]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            yield connection
    finally:
        engine.dispose()


def figures(url: str) -> dict[str, Any]:
    """Audits by status, settlements and webhook events per audit, balances against their ledgers."""
    with database(url) as db:
        statuses = dict(db.execute(text("SELECT status, count(*) FROM audits GROUP BY status")).all())
        settlements = dict(
            db.execute(
                text(
                    "SELECT a.id, count(e.id) FROM audits a LEFT JOIN credit_entries e "
                    "ON e.reference = 'audit:' || a.id AND e.kind = 'release' GROUP BY a.id"
                )
            ).all()
        )
        events = dict(
            db.execute(
                text(
                    "SELECT a.id, count(w.id) FROM audits a LEFT JOIN webhook_deliveries w "
                    "ON w.audit_id = a.id GROUP BY a.id"
                )
            ).all()
        )
        balances = db.execute(
            text(
                "SELECT c.user_id, c.balance, coalesce(sum(e.amount), 0) FROM credit_accounts c "
                "LEFT JOIN credit_entries e ON e.account = c.user_id GROUP BY c.user_id, c.balance"
            )
        ).all()
        used = dict(
            db.execute(
                text(
                    "SELECT payer_id, sum(LEAST(credits_reserved, "
                    "CEIL(((pages_crawled - pages_not_modified) * 10 + pages_not_modified * 2) / 10.0) * 10)) "
                    "FROM audits WHERE status IN ('done', 'failed', 'cancelled') GROUP BY payer_id"
                )
            ).all()
        )
        grants = dict(
            db.execute(
                text("SELECT account, sum(amount) FROM credit_entries WHERE kind = 'grant' GROUP BY account")
            ).all()
        )
        reasons = Counter(
            (r or "")[:40]
            for (r,) in db.execute(text("SELECT failure_reason FROM audits WHERE status = 'failed'")).all()
        )
    return {
        "statuses": statuses,
        "settlements": settlements,
        "events": events,
        "balances": [(int(u), int(b), int(s)) for u, b, s in balances],
        "used": {int(k): int(v) for k, v in used.items()},
        "grants": {int(k): int(v) for k, v in grants.items()},
        "failure_reasons": dict(reasons),
    }


def invariant_violations(found: dict[str, Any], *, audits: int) -> list[str]:
    """SECURITY.md section 6: every audit ended, balance = sum of entries = start - used, one settlement
    per audit, at most one webhook event per audit."""
    problems: list[str] = []
    statuses = found["statuses"]
    if sum(statuses.values()) != audits:
        problems.append(f"{sum(statuses.values())} audits stored, {audits} started")
    open_ = {s: n for s, n in statuses.items() if s not in ("done", "failed", "cancelled")}
    if open_:
        problems.append(f"audits not ended: {open_}")
    for user, balance, entries in found["balances"]:
        if balance != entries:
            problems.append(f"user {user}: balance {balance} != sum of entries {entries}")
        expected = found["grants"].get(user, 0) - found["used"].get(user, 0)
        if balance != expected:
            problems.append(f"user {user}: balance {balance} != start - used {expected}")
    twice = {a: n for a, n in found["settlements"].items() if n != 1}
    if twice:
        problems.append(f"{len(twice)} audits not settled exactly once: {dict(list(twice.items())[:5])}")
    events = {a: n for a, n in found["events"].items() if n > 1}
    if events:
        problems.append(f"{len(events)} audits with more than one webhook event")
    return problems


@frozen
class Api:
    """The REST side in the test process, over the same database and queues as the workers."""

    app: App
    client: falcon.testing.TestClient
    keys: tuple[str, ...]  # one Settings key per seeded person
    emails: tuple[str, ...]

    def auth(self, index: int = 0) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[index]}"}


def make_api(
    *,
    database_url: str,
    broker_url: str,
    secret_key: str,
    prefix: str,
    ca_file: str = "",
    people: int = 1,
    duplicate_rate: float = 0.0,
    publish_log: str = "",
) -> Api:
    settings = Settings(
        database_url=database_url,
        broker_url=broker_url,
        secret_key=secret_key,
        allow_networks=("127.0.0.0/8",),
    )
    app = build_app(
        settings, prefix=prefix, ca_file=ca_file, duplicate_rate=duplicate_rate, log_path=publish_log
    )
    emails, raw_keys = [], []
    for n in range(people):
        email, team = f"person{n}@retro-clock.example", f"Retro Clock {n}"
        accounts.create_user(email, plan="growth", uow=app.uow(), clock=app.clock, secrets=app.secrets)
        accounts.create_team(team, owner_email=email, uow=app.uow(), clock=app.clock)
        accounts.grant_credits(email, STARTING_CREDITS, key=f"start:{email}", uow=app.uow(), clock=app.clock)
        raw_keys.append(
            keys.create_settings_key(email, team, uow=app.uow(), clock=app.clock, secrets=app.secrets).raw
        )
        emails.append(email)
    return Api(app, falcon.testing.TestClient(app.rest_api()), tuple(raw_keys), tuple(emails))
