"""A whole audit of a generated site through the production path, with workers killed mid-run.

    python benchmarks/scale_audit.py [--pages 100000] [--kills 2] [--concurrency 20] [--smoke]
                                     [--gunicorn-workers 2] [--shared-workers] [--keep-logs]

Everything is the real thing, on this machine: a PostgreSQL database of its own (random name, dropped at
the end), RabbitMQ queue names of its own (SITEAUDIT_QUEUE_PREFIX, deleted at the end), the REST service
under gunicorn (`siteaudit.entrypoints.wsgi:create_app()`), two crawling `siteaudit worker` processes
(`--queues crawl,webhooks`) and one that only finalises (`--queues finalize`: docs/operations.md; with
`--shared-workers`, two workers taking every queue, one of which finalises after crawling), and the
team, key and credits made with `siteaudit admin ...` commands. The site is served by a process of its
own (asyncio, raw HTTP/1.1 keep-alive, pages generated from their path): `--pages` URLs in all, a home
page, /category/{j}, /blog/{k}, /product/{i} and a few /discontinued/{m} links that answer 404, with
titles, descriptions, headings and body text, deliberate SEO problems (missing or duplicate descriptions
and titles, missing or double h1, thin pages, over-long titles, broken links), 10-20 links a page (a
binary tree over the pages makes every URL reachable, the rest are pseudo-random), robots.txt and a
sitemap (an index of 50,000-URL files past 50,000 pages). The site is registered and verified by the
file proof its server serves, so the audit may go past 500 pages; the benchmark lifts the audit's own
pacing with the operator setting SITEAUDIT_UNPACED_HOSTS=127.0.0.1 and sets the shared host limit for
that host high (SITEAUDIT_HOST_LIMITS), so the crawl runs as fast as the machine lets it.

The audit is started with `POST /v1/crawls`. While it crawls, the worker process holding the audit's
lease is killed with SIGKILL `--kills` times (at evenly spaced shares of the pages) and a replacement
started each time. Each kill lands mid-crawl whatever the machine's speed: at the kill's share of the
pages the site holds its answers (page requests past that point wait) until the kill has been made,
then answers again. Short SITEAUDIT_LEASE_S/REAP_* settings let the reaper take the killed slice over within seconds
(recovery does not rely on the broker redelivering the message). When the report is ready the
benchmark reads it through REST: the report (repeated, for its p99), every page of the issue and page
lists (200 a request, each request timed; the reads rotate over reader keys of the team so that no key
meets the 60-a-minute limit) and the templates.

Printed: wall time (crawl and finalisation), pages/s, CPU ms per page of the REST service, the workers
(the killed ones up to their kill), the database's backends and the site server, peak RSS per worker
(which crawled, which finalised: the one whose log has the audit's end),
database bytes per page, p99 (and p50, max) of the report and list reads; checks: the audit is complete
and exact after the kills (every URL of the site crawled once, the page list equal to the site's URL
set, no duplicate rows) and credits exact (charged == pages crawled, one credit each: the site sends no
validators, so no page answers 304). Targets: report p99 < 50 ms, every list's p99 < 100 ms (stated
for 500,000 pages). Exits 0 whatever the figures, 1 when the audit did not end or a check failed.
`--smoke` (bench-smoke): 300 pages at concurrency 2, one kill.
"""

import argparse
import asyncio
import contextlib
import http.client
import json
import math
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ADMIN_URL = os.environ.get("SITEAUDIT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
BROKER_URL = os.environ.get("SITEAUDIT_BENCH_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/%2F")
ROOT = Path(__file__).resolve().parent.parent
QUEUE_BASES = ("crawl", "finalize", "webhooks")
PER_PAGE = 200  # the lists' maximum
REPORT_READS = 200
TEMPLATE_READS = 50
TARGET_REPORT_MS = 50.0
TARGET_LIST_MS = 100.0
SITEMAP_CHUNK = 50_000
CLK = os.sysconf("SC_CLK_TCK")

# --- the site ------------------------------------------------------------------------------------------

_WORD_TEXT = (
    "clock watch dial hand spring gear brass oak walnut cuckoo pendulum chime alarm quartz mantel wall "
    "vintage restored antique movement escapement bezel crown crystal strap case face numeral roman "
    "luminous tick tock hour minute second repair service warranty delivery gift collector rare mint "
    "original signed maker workshop london paris geneva black forest mechanism weight chain key winding "
    "battery silent sweep date moon phase calendar tourbillon enamel porcelain painted carved inlay veneer"
)
WORDS = _WORD_TEXT.split()


class Layout:
    """URL index g in [0, n): 0 the home page, then categories, blog posts, products, discontinued (404)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.categories = max(1, n // 100)
        self.missing = max(1, n // 1000)
        self.posts = n // 10
        self.products = n - 1 - self.categories - self.posts - self.missing
        if self.products < 1:
            raise SystemExit("--pages: at least 20")
        self.html = n - self.missing  # indexes below this answer 200

    def path(self, g: int) -> str:
        if g == 0:
            return "/"
        g -= 1
        for prefix, count in (
            ("category", self.categories),
            ("blog", self.posts),
            ("product", self.products),
        ):
            if g < count:
                return f"/{prefix}/{g}"
            g -= count
        return f"/discontinued/{g}"

    def index(self, path: str) -> int | None:
        if path == "/":
            return 0
        parts = path.split("/")
        if len(parts) != 3 or not parts[2].isdigit():
            return None
        number, base = int(parts[2]), 1
        for prefix, count in (
            ("category", self.categories),
            ("blog", self.posts),
            ("product", self.products),
            ("discontinued", self.missing),
        ):
            if parts[1] == prefix:
                return base + number if number < count else None
            base += count
        return None

    def links(self, g: int) -> list[int]:
        chooser = random.Random(g * 7919 + 17)
        tree = [c for c in (2 * g + 1, 2 * g + 2) if c < self.n]
        extra = [chooser.randrange(self.n) for _ in range(chooser.randint(8, 16))]
        return [0, *range(1, 1 + min(4, self.categories)), *tree, *extra]

    def page(self, g: int, origin: str) -> bytes:
        chooser = random.Random(g)
        path = self.path(g)
        kind, _, number_text = path.strip("/").partition("/")
        number = int(number_text) if number_text else 0
        name = " ".join(chooser.choice(WORDS).title() for _ in range(3))
        words = 120 + chooser.randrange(400)
        title = f"{name} | Retro Clocks"
        description: str | None = f"{name}: {' '.join(chooser.choice(WORDS) for _ in range(18))}."
        headings = [f"<h1>{name}</h1>"]
        if kind == "product":
            if number % 7 == 3:
                description = None  # missing description
            if number % 11 == 5:
                title = "Product"  # duplicate title
            if number % 13 == 6:
                headings = []  # no h1
            if number % 17 == 2:
                words = 15  # thin
            if number % 19 == 7:
                title = f"{name} - {' '.join(WORDS[:20])} | Retro Clocks"  # too long
        elif kind == "category":
            title = f"Category {number}: {name}"
            description = "Browse our categories of clocks."  # the same on every category page
        elif kind == "blog":
            title = f"Blog: {name} ({number})"
            if number % 5 == 1:
                headings.append(f"<h1>More about {name}</h1>")  # two h1
        elif not kind:
            title, name = "Retro Clocks: restored antique and vintage clocks", "Retro Clocks"
        body = " ".join(chooser.choice(WORDS) for _ in range(words))
        paragraphs = "".join(f"<p>{body[i : i + 400]}</p>" for i in range(0, len(body), 400))
        anchors = "".join(
            f'<li><a href="{self.path(t)}">{self.path(t).strip("/") or "home"}</a></li>'
            for t in self.links(g)
        )
        meta = f'<meta name="description" content="{description}">' if description else ""
        html = (
            f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>{meta}'
            f'<link rel="canonical" href="{origin}{path}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
            f"<body><header><nav><ul>{anchors}</ul></nav></header><main>{''.join(headings)}"
            f"<h2>Details</h2>{paragraphs}<h2>Delivery</h2><p>Shipped in 3 days, insured.</p></main>"
            "<footer><p>Retro Clocks, 1 Clock Lane</p></footer></body></html>"
        )
        return html.encode()

    def sitemaps(self, origin: str) -> dict[str, bytes]:
        head = '<?xml version="1.0" encoding="UTF-8"?>\n'
        urls = [f"{origin}{self.path(g)}" for g in range(self.html)]
        chunks = [urls[i : i + SITEMAP_CHUNK] for i in range(0, len(urls), SITEMAP_CHUNK)]

        def urlset(chunk: list[str]) -> bytes:
            body = "".join(f"<url><loc>{u}</loc></url>" for u in chunk)
            return (
                f'{head}<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'
            ).encode()

        if len(chunks) == 1:
            return {"/sitemap.xml": urlset(chunks[0])}
        files = {f"/sitemap-{i}.xml": urlset(chunk) for i, chunk in enumerate(chunks)}
        index = "".join(f"<sitemap><loc>{origin}{name}</loc></sitemap>" for name in files)
        files["/sitemap.xml"] = (
            f'{head}<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{index}</sitemapindex>'
        ).encode()
        return files


def serve_site(n: int, token_file: str, holds: list[int]) -> None:
    """The site server's process: prints its port, then serves until killed.

    Hold points, so that each kill lands mid-crawl however fast or slow the machine is: page requests
    (the layout's paths, 404s included; not robots.txt, sitemaps or the proof) are numbered as they
    arrive, and the ones numbered `holds[k]` and after wait until hold k is released. The benchmark
    reads `GET /.bench/holds` (`{"waiting": [requests held at each hold point]}`) and, once it has
    killed the worker the held requests came from, sends `GET /.bench/release/{k}`."""
    layout = Layout(n)
    state: dict[str, Any] = {}
    taken = [0]  # page requests numbered so far
    waiting = [0] * len(holds)
    gates: list[asyncio.Event] = []

    async def held(path: str) -> None:
        if layout.index(path) is None:
            return
        number, taken[0] = taken[0], taken[0] + 1
        for k, at in enumerate(holds):
            if number >= at and not gates[k].is_set():
                waiting[k] += 1
                try:
                    await gates[k].wait()
                finally:
                    waiting[k] -= 1

    def control(path: str) -> tuple[bytes, bytes, bytes]:
        if path.startswith("/.bench/release/"):
            gates[int(path.rsplit("/", 1)[1])].set()
        return b"200 OK", b"application/json", json.dumps({"taken": taken[0], "waiting": waiting}).encode()

    def answer(path: str) -> tuple[bytes, bytes, bytes]:
        origin = state["origin"]
        if path == "/robots.txt":
            body = f"User-agent: *\nDisallow: /cart/\nSitemap: {origin}/sitemap.xml\n".encode()
            return b"200 OK", b"text/plain", body
        if path == "/.well-known/siteaudit-site-verification.txt":
            with contextlib.suppress(OSError):
                return b"200 OK", b"text/plain", Path(token_file).read_bytes()
        if path in state["sitemaps"]:
            return b"200 OK", b"application/xml", state["sitemaps"][path]
        g = layout.index(path.split("?", 1)[0])
        if g is None or g >= layout.html:
            return (
                b"404 Not Found",
                b"text/html; charset=utf-8",
                b"<html><body><h1>Not found</h1></body></html>",
            )
        return b"200 OK", b"text/html; charset=utf-8", layout.page(g, origin)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, target, _ = head.split(b"\r\n", 1)[0].split(b" ", 2)
                path = target.decode("latin-1")
                if path.startswith("/.bench/"):
                    status, kind, body = control(path)
                else:
                    await held(path.split("?", 1)[0])
                    status, kind, body = answer(path)
                close = b"connection: close" in head.lower()
                writer.write(
                    b"HTTP/1.1 "
                    + status
                    + b"\r\nContent-Type: "
                    + kind
                    + b"\r\nContent-Length: "
                    + str(len(body)).encode()
                    + (b"\r\nConnection: close" if close else b"")
                    + b"\r\n\r\n"
                    + (b"" if method == b"HEAD" else body)
                )
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        gates.extend(asyncio.Event() for _ in holds)
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
        port = server.sockets[0].getsockname()[1]
        state["origin"] = f"http://127.0.0.1:{port}"
        state["sitemaps"] = layout.sitemaps(state["origin"])
        print(port, flush=True)
        await server.serve_forever()

    asyncio.run(main())


# --- processes and their figures ------------------------------------------------------------------------


def proc_cpu_s(pid: int) -> float | None:
    """utime + stime (+ reaped children's) of a live process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(v) for v in fields[11:15]) / CLK


def proc_hwm_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def tree_pids(pid: int) -> list[int]:
    found = [pid]
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                for child in (task / "children").read_text().split():
                    found.extend(tree_pids(int(child)))
    return found


class Sampler:
    """Every 0.5 s: the CPU of every process of each group (the database's backends found in
    pg_stat_activity), kept per pid, so processes that end (killed workers, closed backends) still count
    with their last reading; and the peak RSS of each worker."""

    def __init__(self, dsn: str, database: str) -> None:
        import psycopg

        self.connection = psycopg.connect(dsn, autocommit=True)
        self.own = self.connection.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        self.database = database
        self.groups: dict[str, list[int]] = {"service": [], "workers": [], "site": []}
        self.cpu: dict[str, dict[int, float]] = {name: {} for name in (*self.groups, "postgres")}
        self.hwm: dict[int, float] = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def sample(self) -> None:
        with self.lock:
            rows = self.connection.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> %s", (self.database, self.own)
            ).fetchall()
            for name, roots in (*self.groups.items(), ("postgres", [row[0] for row in rows])):
                for root in roots:
                    for pid in tree_pids(root) if name == "service" else [root]:
                        cpu = proc_cpu_s(pid)
                        if cpu is not None:
                            self.cpu[name][pid] = max(cpu, self.cpu[name].get(pid, 0.0))
                        if name == "workers":
                            hwm = proc_hwm_mb(pid)
                            if hwm is not None:
                                self.hwm[pid] = max(hwm, self.hwm.get(pid, 0.0))

    def _run(self) -> None:
        while not self.stopped.wait(0.5):
            with contextlib.suppress(Exception):
                self.sample()

    def totals(self) -> dict[str, float]:
        self.sample()
        with self.lock:  # the sampling thread adds the pids it finds
            return {name: sum(per_pid.values()) for name, per_pid in self.cpu.items()}

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.connection.close()


def siteaudit_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from siteaudit.entrypoints.cli import main; main()", *args]


def admin(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run(
        siteaudit_command("admin", *args, "--json"), env=env, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise SystemExit(f"siteaudit admin {' '.join(args)}: {done.stdout}{done.stderr}")
    return json.loads(done.stdout)


def listener() -> socket.socket:
    """A socket listening on a free port of 127.0.0.1, for gunicorn to serve (`--bind fd://N`, passed
    down): a port found free and bound by gunicorn later may be taken in between on a shared machine."""
    server = socket.create_server(("127.0.0.1", 0), backlog=2048)
    server.set_inheritable(True)
    return server


class Rest:
    def __init__(self, port: int) -> None:
        self.port = port

    def call(self, method: str, path: str, key: str, body: Any = None) -> tuple[int, Any, float]:
        """(status, JSON answer, seconds): one request on a fresh connection, as a client would."""
        headers = {"Authorization": f"Bearer {key}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        took = time.perf_counter() - started
        return response.status, (json.loads(raw) if raw else None), took

    def ok(self, method: str, path: str, key: str, body: Any = None) -> Any:
        status, answer, _ = self.call(method, path, key, body)
        if status >= 300:
            raise SystemExit(f"{method} {path}: {status} {answer}")
        return answer


@contextlib.contextmanager
def database(*, keep: bool = False) -> Iterator[tuple[str, str]]:
    import psycopg
    from psycopg import sql

    name = f"siteaudit_scale_{secrets.token_hex(5)}"
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin_db:
        admin_db.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    user = info.get("user", "postgres")
    password = f":{info['password']}" if info.get("password") else ""
    where = f"{info.get('host', '127.0.0.1')}:{info.get('port', 5432)}"
    try:
        yield name, f"postgresql+psycopg://{user}{password}@{where}/{name}"
    finally:
        if keep:
            print(f"database {name} kept: drop it with DROP DATABASE {name} WITH (FORCE)")
        else:
            with psycopg.connect(ADMIN_URL, autocommit=True) as admin_db:
                admin_db.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def delete_queues(prefix: str) -> None:
    import pika

    connection = pika.BlockingConnection(pika.URLParameters(BROKER_URL))
    try:
        channel = connection.channel()
        for base in QUEUE_BASES:
            for suffix in ("", ".DQ", ".XQ"):
                channel.queue_delete(f"{prefix}{base}{suffix}")
    finally:
        connection.close()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))] if ordered else 0.0


def timing_line(name: str, seconds: list[float], target_ms: float) -> tuple[str, bool]:
    p99 = percentile(seconds, 0.99) * 1000
    met = p99 < target_ms
    return (
        f"  {name:<10} {len(seconds):>6} requests  p50 {percentile(seconds, 0.5) * 1000:7.1f} ms  "
        f"p99 {p99:7.1f} ms  max {max(seconds, default=0) * 1000:7.1f} ms   target p99 < {target_ms:.0f} ms: "
        f"{'ok' if met else 'OVER'}"
    ), met


# --- the run --------------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    import psycopg

    n = args.pages
    layout = Layout(n)
    work = Path(tempfile.mkdtemp(prefix="siteaudit-scale-"))
    token_file = work / "token.txt"
    prefix = f"siteaudit_scale_{secrets.token_hex(4)}_"
    processes: list[subprocess.Popen[bytes]] = []
    logs: list[Any] = []

    def spawn(
        command: list[str], env: dict[str, str], log_name: str, pass_fds: tuple[int, ...] = ()
    ) -> subprocess.Popen[bytes]:
        log = open(work / log_name, "ab")  # noqa: SIM115 (closed at the end)
        logs.append(log)
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, pass_fds=pass_fds)
        processes.append(process)
        return process

    print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
    print(
        f"site: {n:,} URLs ({layout.categories:,} categories, {layout.posts:,} blog posts, "
        f"{layout.products:,} products, {layout.missing:,} answering 404); work dir {work}",
        flush=True,
    )
    # The site holds its answers at each kill's share of the pages until that kill has landed.
    kill_at = [n * (k + 1) // (args.kills + 1) for k in range(args.kills)]
    site = subprocess.Popen(
        [
            *(sys.executable, __file__, "--serve-site", str(n), "--token-file", str(token_file)),
            *("--hold-at", ",".join(map(str, kill_at))),
        ],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    processes.append(site)
    assert site.stdout is not None
    site_port = int(site.stdout.readline())
    origin = f"http://127.0.0.1:{site_port}"
    sampler = None
    ok = True
    try:
        with database(keep=args.keep_database) as (db_name, db_url):
            dsn = db_url.replace("postgresql+psycopg://", "postgresql://")
            lease_s = args.lease_s
            env = {k: v for k, v in os.environ.items() if not k.startswith("SITEAUDIT_")}
            env.update(
                PYTHONPATH=str(ROOT),
                SITEAUDIT_DATABASE_URL=db_url,
                SITEAUDIT_BROKER_URL=BROKER_URL,
                SITEAUDIT_QUEUE_PREFIX=prefix,
                SITEAUDIT_SECRET_KEY="c2NhbGUtYXVkaXQtYmVuY2htYXJrLWtleS0wMDAwMDA=",
                SITEAUDIT_ALLOW_NETWORKS="127.0.0.0/8",
                SITEAUDIT_UNPACED_HOSTS="127.0.0.1",
                SITEAUDIT_HOST_LIMITS="127.0.0.1=100000",
                SITEAUDIT_LEASE_S=str(lease_s),
                SITEAUDIT_REAP_GRACE_S="2",
                SITEAUDIT_REAP_EVERY_S="2",
                SITEAUDIT_REAP_MAX_ATTEMPTS="10",
                SITEAUDIT_HANDOVER_S=str(max(120, n // 250)),
                SITEAUDIT_CRAWL_TIME_CAP_S="86400",
                SITEAUDIT_METRICS="false",
                SITEAUDIT_LOG_LEVEL="info",
            )
            migrated = subprocess.run(siteaudit_command("migrate"), env=env, capture_output=True, text=True)
            if migrated.returncode != 0:
                raise SystemExit(f"migrate: {migrated.stdout}{migrated.stderr}")
            owner, team = "owner@scale.example", "Scale"
            admin(env, "create-user", owner, "--plan", "scale")
            admin(env, "create-team", team, "--owner", owner)
            granted = n + 1000
            admin(env, "grant-credits", owner, str(granted))
            key = admin(env, "create-key", owner, "--team", team)["api_key"]

            sampler = Sampler(dsn, db_name)
            api = listener()
            api_port = api.getsockname()[1]
            service = spawn(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "--workers",
                    str(args.gunicorn_workers),
                    "--bind",
                    f"fd://{api.fileno()}",
                    "--timeout",
                    "300",
                    "siteaudit.entrypoints.wsgi:create_app()",
                ],
                env,
                "gunicorn.log",
                pass_fds=(api.fileno(),),
            )
            api.close()  # gunicorn's now
            sampler.groups["service"].append(service.pid)
            sampler.groups["site"].append(site.pid)
            workers: list[subprocess.Popen[bytes]] = []
            worker_logs: dict[int, tuple[str, str]] = {}  # pid: (role, log name)

            def start_worker(*queues: str) -> subprocess.Popen[bytes]:
                log_name = f"worker-{len(sampler.groups['workers'])}.log"
                options = ["--queues", ",".join(queues)] if queues else []
                worker = spawn(siteaudit_command("worker", *options), env, log_name)
                sampler.groups["workers"].append(worker.pid)
                worker_logs[worker.pid] = ("every queue" if not queues else "+".join(queues), log_name)
                return worker

            # The workers that crawl (and are killed); with the split, one more that only finalises.
            crawling: tuple[str, ...] = () if args.shared_workers else ("crawl", "webhooks")
            workers = [start_worker(*crawling), start_worker(*crawling)]
            if not args.shared_workers:
                start_worker("finalize")
            sampler.start()
            rest = Rest(api_port)
            deadline = time.monotonic() + 180  # a loaded machine boots gunicorn's workers slowly
            while True:
                with contextlib.suppress(OSError):
                    if rest.call("GET", "/v1/health", key)[0] == 200:
                        break
                if time.monotonic() > deadline or service.poll() is not None:
                    raise SystemExit(f"gunicorn did not start; see {work / 'gunicorn.log'}")
                time.sleep(0.3)

            registered = rest.ok("POST", "/v1/sites", key, {"url": f"{origin}/"})
            token_file.write_text(registered["verify_token"] + "\n")
            rest.ok("POST", f"/v1/sites/{registered['id']}/verify", key, {"method": "file"})
            cap = min(500_000, n + max(10, n // 100))
            base = sampler.totals()
            started = time.perf_counter()
            audit = rest.ok(
                "POST",
                "/v1/crawls",
                key,
                {"url": f"{origin}/", "max_pages": cap, "concurrency": args.concurrency},
            )
            audit_id = int(audit.get("crawl_id") or audit.get("id"))
            print(
                f"audit {audit_id}: {origin}/ max_pages {cap:,}, concurrency {args.concurrency}, "
                f"{args.kills} kill(s); "
                + ("2 workers" if args.shared_workers else "2 crawling workers + 1 finalising")
                + f", gunicorn {args.gunicorn_workers} sync workers",
                flush=True,
            )

            poll = psycopg.connect(dsn, autocommit=True)

            def progress() -> tuple[str, int]:
                row = poll.execute(
                    "SELECT status, pages_crawled FROM audits WHERE id = %s", (audit_id,)
                ).fetchone()
                assert row is not None
                return str(row[0]), int(row[1])

            def site_holds(path: str = "/.bench/holds") -> list[int]:
                """Page requests the site holds at each kill's point (`serve_site`), or releases one."""
                connection = http.client.HTTPConnection("127.0.0.1", site_port, timeout=60)
                try:
                    connection.request("GET", path)
                    return list(json.loads(connection.getresponse().read())["waiting"])
                finally:
                    connection.close()

            kills: list[dict[str, Any]] = []
            finalizing_at = None
            last_print = time.perf_counter()
            timeout_s = args.timeout or max(600, n / 5)
            while True:
                status, crawled = progress()
                now = time.perf_counter()
                for kill in kills:
                    if kill["recovered"] is None and (crawled > kill["at"] + 20 or status == "done"):
                        kill["recovered"] = now - kill["t"]
                        print(f"  crawling again {kill['recovered']:.1f} s after the kill", flush=True)
                if status in ("done", "failed", "cancelled"):
                    break
                if status == "finalizing" and finalizing_at is None:
                    finalizing_at = now
                if now - started > timeout_s:
                    print(f"no end after {timeout_s:.0f} s: status {status}, {crawled:,} pages")
                    return 1
                if len(kills) < args.kills and status == "running" and site_holds()[len(kills)]:
                    # The crawl is held at this kill's point: the lease holder (`host:pid:token`) runs the
                    # slice whose requests the site holds. Killed, then the site released.
                    holding = poll.execute(
                        "SELECT holder FROM audit_leases WHERE audit_id = %s", (audit_id,)
                    ).fetchone()
                    holder_pid = holding[0].split(":")[1] if holding and holding[0] else ""
                    chosen = [w for w in workers if str(w.pid) == holder_pid]
                    if chosen:
                        victim = chosen[0]
                        sampler.sample()  # its CPU and peak RSS up to the kill
                        victim.send_signal(signal.SIGKILL)
                        victim.wait()
                        workers.remove(victim)
                        workers.append(start_worker(*crawling))
                        kills.append({"at": crawled, "t": now, "recovered": None})
                        site_holds(f"/.bench/release/{len(kills) - 1}")
                        print(
                            f"  killed worker {victim.pid} (SIGKILL, the lease holder) at {crawled:,} pages "
                            f"stored, the site holding its answers after {kill_at[len(kills) - 1]:,} page "
                            "requests; replacement started, site released",
                            flush=True,
                        )
                if now - last_print > 15:
                    last_print = now
                    print(f"  {now - started:6.0f} s  {status:<10} {crawled:>8,} pages", flush=True)
                time.sleep(0.5)
            wall = time.perf_counter() - started
            crawl_wall = (finalizing_at or time.perf_counter()) - started
            used = {name: value - base.get(name, 0.0) for name, value in sampler.totals().items()}
            hwm = dict(sampler.hwm)
            row = poll.execute(
                "SELECT status, pages_crawled, pages_not_modified, partial, failure_reason, credits_reserved "
                "FROM audits WHERE id = %s",
                (audit_id,),
            ).fetchone()
            assert row is not None
            status, crawled, not_modified, partial, failure, reserved = row
            db_bytes = int(poll.execute("SELECT pg_database_size(%s)", (db_name,)).fetchone()[0])  # type: ignore[index]
            rows, distinct = poll.execute(
                "SELECT count(*), count(DISTINCT u.url) FROM crawl_pages p "
                "JOIN crawl_urls u ON u.audit_id = p.audit_id AND u.id = p.url_id WHERE p.audit_id = %s",
                (audit_id,),
            ).fetchone()  # type: ignore[misc]
            charged_tenths = -int(
                poll.execute(
                    "SELECT coalesce(sum(amount), 0) FROM credit_entries WHERE reference = %s",
                    (f"audit:{audit_id}",),
                ).fetchone()[0]  # type: ignore[index]
            )
            print(
                f"audit {audit_id} {status}{' partial' if partial else ''}{f' ({failure})' if failure else ''}"
            )
            pages_s = crawled / wall if wall else 0.0
            print(
                f"wall {wall:.1f} s (crawl {crawl_wall:.1f} s, finalisation {wall - crawl_wall:.1f} s)   "
                f"{crawled:,} pages   {pages_s:.1f} pages/s overall, {crawled / crawl_wall:.1f} while crawling"
            )
            per_page = max(1, crawled)
            print(
                "CPU per page: "
                + ", ".join(
                    f"{label} {used[name] * 1000 / per_page:.2f} ms"
                    for label, name in (
                        ("service (gunicorn)", "service"),
                        ("workers", "workers"),
                        ("PostgreSQL backends", "postgres"),
                        ("site server", "site"),
                    )
                )
            )
            ended = f"audit {audit_id} ended: "
            finalised_by = [
                pid
                for pid, (_, log_name) in worker_logs.items()
                if ended in (work / log_name).read_text(errors="replace")
            ]
            print(
                "peak RSS per worker process: "
                + ", ".join(
                    f"{pid} ({worker_logs[pid][0]}{', finalised' if pid in finalised_by else ''}) {mb:.0f} MB"
                    for pid, mb in sorted(hwm.items())
                )
                + f" (max {max(hwm.values(), default=0):.0f} MB)"
            )
            crawlers = [mb for pid, mb in hwm.items() if pid not in finalised_by]
            print(
                "peak RSS of the worker that finalised: "
                + (", ".join(f"{hwm.get(pid, 0):.0f} MB" for pid in finalised_by) or "not found in the logs")
                + f"; of the others: {min(crawlers, default=0):.0f}-{max(crawlers, default=0):.0f} MB"
            )
            print(f"database {db_bytes / 1e6:.1f} MB, {db_bytes / per_page:,.0f} bytes per page")

            # --- the reads ---
            report = rest.ok("GET", f"/v1/crawls/{audit_id}/report", key)
            totals = report.get("issue_counts") or {}
            issue_total = int(sum(v for v in totals.values() if isinstance(v, int))) if totals else 0
            expected_reads = (
                REPORT_READS
                + TEMPLATE_READS
                + math.ceil(per_page / PER_PAGE)
                + math.ceil(max(issue_total, per_page * 3) / PER_PAGE)
            )
            readers = max(2, math.ceil(expected_reads / 50))
            reader_keys = make_reader_keys(env, team, readers)
            turn = iter(range(10**9))

            def read(path: str) -> tuple[Any, float]:
                while True:
                    status_code, answer, took = rest.call(
                        "GET", path, reader_keys[next(turn) % len(reader_keys)]
                    )
                    if status_code == 429:
                        time.sleep(0.2)  # not timed: a key met its limit
                        continue
                    if status_code != 200:
                        raise SystemExit(f"GET {path}: {status_code} {answer}")
                    return answer, took

            before_reads = sampler.totals()["service"]
            times: dict[str, list[float]] = {"report": [], "templates": [], "issues": [], "pages": []}
            for _ in range(REPORT_READS):
                times["report"].append(read(f"/v1/crawls/{audit_id}/report")[1])
            for _ in range(TEMPLATE_READS):
                templates, took = read(f"/v1/crawls/{audit_id}/templates")
                times["templates"].append(took)
            listed: list[str] = []
            issues_listed = 0
            sampled: dict[str, str] = {}
            for name in ("pages", "issues"):
                # Every page of the list in order, until --list-budget-s; then evenly spaced pages to the
                # last one (a deep OFFSET costs more the deeper it is: the tail must be measured too).
                page, budget_end, last_page = 1, time.perf_counter() + args.list_budget_s, None
                while True:
                    answer, took = read(f"/v1/crawls/{audit_id}/{name}?page={page}&per_page={PER_PAGE}")
                    times[name].append(took)
                    items = answer.get("items") or answer.get("data") or []
                    last_page = int((answer.get("meta") or {}).get("last_page") or page)
                    if name == "pages":
                        listed.extend(item["url"] for item in items)
                    else:
                        issues_listed += len(items)
                    if page >= last_page or not items:
                        break
                    if time.perf_counter() > budget_end:
                        rest_pages = last_page - page
                        step = max(1, rest_pages // 20)
                        spots = sorted({*range(page + step, last_page, step), last_page})
                        for spot in spots:
                            times[name].append(
                                read(f"/v1/crawls/{audit_id}/{name}?page={spot}&per_page={PER_PAGE}")[1]
                            )
                        sampled[name] = (
                            f"{page} of {last_page} pages in order within the {args.list_budget_s:.0f} s budget, "
                            f"then {len(spots)} evenly spaced to the last"
                        )
                        break
                    page += 1
            read_cpu = sampler.totals()["service"] - before_reads
            reads = sum(len(v) for v in times.values())
            print(
                f"reads through REST ({len(reader_keys)} reader keys, one request at a time; service CPU "
                f"{read_cpu * 1000 / max(1, reads):.1f} ms a request):"
            )
            met = True
            for name, target in (
                ("report", TARGET_REPORT_MS),
                ("templates", TARGET_LIST_MS),
                ("issues", TARGET_LIST_MS),
                ("pages", TARGET_LIST_MS),
            ):
                line, good = timing_line(name, times[name], target)
                met &= good
                print(line)
            for name, how in sampled.items():
                print(f"  {name}: {how}")
            template_count = len(
                templates.get("templates", templates) if isinstance(templates, dict) else templates
            )
            print(
                f"  {issues_listed:,} issues listed, {len(listed):,} pages listed, {template_count} templates"
            )

            # --- the checks ---
            expected = {f"{origin}{layout.path(g)}" for g in range(n)}
            listed_set = set(listed)
            stored = {
                url
                for (url,) in poll.execute(
                    "SELECT u.url FROM crawl_pages p JOIN crawl_urls u ON u.audit_id = p.audit_id "
                    "AND u.id = p.url_id WHERE p.audit_id = %s",
                    (audit_id,),
                )
            }
            checks = {
                "audit done": status == "done",
                f"pages crawled == reachable URLs ({crawled:,} == {n:,})": crawled == n,
                f"page rows distinct ({rows:,} rows, {distinct:,} URLs)": rows == distinct == crawled,
                f"stored page URLs == the site's URLs ({len(expected - stored):,} missing, "
                f"{len(stored - expected):,} unexpected)": stored == expected,
                f"credits charged == pages ({charged_tenths / 10:g} == {crawled - not_modified:,} + "
                f"0.2 x {not_modified})": charged_tenths == -(-(crawled * 10 - not_modified * 8) // 10) * 10,
                f"kills recovered ({sum(k['recovered'] is not None for k in kills)} of {args.kills})": (
                    len(kills) == args.kills and all(k["recovered"] is not None for k in kills)
                ),
            }
            if "pages" not in sampled:
                checks[
                    f"REST page list == the site's URLs ({len(listed):,} listed, {len(listed_set):,} distinct, "
                    f"{len(expected - listed_set):,} missing, {len(listed_set - expected):,} unexpected)"
                ] = listed_set == expected and len(listed) == len(listed_set)
            account = rest.ok("GET", "/v1/account", key)
            checks[f"owner's balance == granted - charged ({account['balance']:g})"] = (
                account["balance"] * 10 == granted * 10 - charged_tenths
            )
            for name, good in checks.items():
                print(f"  check {'ok  ' if good else 'FAIL'} {name}")
                ok &= good
            print(
                f"targets (stated for 500,000 pages; this run {n:,}): report p99 < {TARGET_REPORT_MS:.0f} ms, "
                f"lists p99 < {TARGET_LIST_MS:.0f} ms: {'met' if met else 'NOT met'}"
            )
            print(f"reserved {reserved / 10:g} credits, charged {charged_tenths / 10:g}")
            print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
            poll.close()
            sampler.stop()
            sampler = None
            for process in processes:
                if process.poll() is None:
                    process.terminate()
            for process in processes:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=20)
    finally:
        if sampler is not None:
            sampler.stop()
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        for log in logs:
            log.close()
        with contextlib.suppress(Exception):
            delete_queues(prefix)
        if not args.keep_logs:
            for path in work.iterdir():
                path.unlink()
            work.rmdir()
    return 0 if ok else 1


def make_reader_keys(env: dict[str, str], team: str, count: int) -> list[str]:
    """Keys of `count` members of the team (the same use cases as `siteaudit admin create-user`,
    `add-member` and `create-key`, in this process: hundreds of CLI starts would take minutes)."""
    from siteaudit.adapters.memory.queue import MemoryTaskQueue
    from siteaudit.bootstrap import bootstrap
    from siteaudit.settings import Settings

    application = bootstrap(Settings.from_env(env), queue=MemoryTaskQueue()).application
    made = []
    for i in range(count):
        email = f"reader{i}@scale.example"
        application.create_user(email, plan="free")
        application.add_member(team, email)
        made.append(application.create_key(email, team).raw)
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000, help="URLs of the generated site")
    parser.add_argument("--kills", type=int, default=2, help="workers killed (SIGKILL) mid-crawl")
    parser.add_argument("--concurrency", type=int, default=20, help="the audit's connections (1-20)")
    parser.add_argument("--gunicorn-workers", type=int, default=2)
    parser.add_argument(
        "--shared-workers",
        action="store_true",
        help="2 workers taking every queue (the default: 2 crawling workers and 1 that only finalises)",
    )
    parser.add_argument("--timeout", type=float, default=0, help="seconds before giving up (0: from --pages)")
    parser.add_argument("--smoke", action="store_true", help="300 pages, one kill (bench-smoke)")
    parser.add_argument(
        "--list-budget-s",
        type=float,
        default=600.0,
        help="seconds per list (issues, pages) read in order before sampling evenly spaced pages",
    )
    parser.add_argument(
        "--lease-s",
        type=float,
        default=15.0,
        help="SITEAUDIT_LEASE_S of the run: a killed slice is taken over this long (+ 2 s grace) after its last beat",
    )
    parser.add_argument("--keep-database", action="store_true", help="leave the database for inspection")
    parser.add_argument("--keep-logs", action="store_true", help="keep the processes' logs (work dir)")
    parser.add_argument("--serve-site", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--token-file", help=argparse.SUPPRESS)
    parser.add_argument("--hold-at", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_site:
        serve_site(args.serve_site, args.token_file, [int(at) for at in args.hold_at.split(",") if at])
        return 0
    if args.smoke:
        args.pages, args.kills = 300, 1
        args.concurrency = 2  # a light load on a CI machine (the site's hold points place the kill)
    if args.pages > 500_000:
        parser.error("--pages: at most 500,000 (the scale plan's page cap)")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
