"""Benchmark: how many polite audits one worker process carries, on the embedded default.

    .venv/bin/python benchmarks/worker_capacity.py [--pages 60] [--rps3 1,8,16,24,48] [--rps10 1,4,8,12,16]
        [--threads N] [--beside REF] [--workers 1,2,4 [--per-worker 24]] [--smoke]

N audits of N different local hosts at once, each at its `max_rps`, in ONE process with default settings:
`siteaudit serve` (SQLite file, in-process queue, its worker threads, the REST API the audits are started
and watched through). Each host is a threaded stdlib server on its own loopback address (127.0.0.11,
127.0.0.12, ...: one host each, so the per-host limit shared across audits never binds) serving a site of
`--pages` pages (a home page linking every page, each page linking home and its neighbours; robots.txt and
the sitemaps answer 404). Audits at `max_rps` 3 (the cap of an unverified site) are plain-URL audits;
audits at 10 are audits of registered sites verified by hand (`siteaudit admin verify-site --by-hand`).

For each N it prints: the aggregate pages/s from the first start to the last audit done, against
N x max_rps (the rate the audits ask for; the target is >= 90 % at 24 x 3 and 12 x 10), how long the
slowest audit took against one audit alone, how far apart the audits were created, how long each took
from its creation to its end, how long after its creation its site saw its first request and how long after
its last request it ended (mean and max: each audit's fixed cost at either end), the process's CPU (share of one core, and ms per page) and its
RSS (now, above the idle process, per running audit; target <= 10 MB per audit).
`--beside REF` (a git commit, e.g. the one before a change) also starts a `siteaudit serve` of that commit's
`siteaudit` package (its own database) and runs every round on it first, then on this tree, each line
labelled: a before/after pair measured side by side in one run.

`--workers 1,2,4` (production mode; needs PostgreSQL and RabbitMQ as `scale_audit.py` does, whose helpers it
uses): a database and queue prefix of its own, `siteaudit migrate`, members, credits and keys made with
`siteaudit admin` (a key per 40 audits: 60 requests a minute per key), gunicorn (2 sync workers), then for
each K: K `siteaudit worker` processes with default settings (started, waited for as consumers of the crawl
queue, stopped after the round), N = `--per-worker` (24) x K plain-URL audits at max_rps 3 of N sites (one
asyncio process serves them all, one loopback address each) started through `POST /v1/crawls`. Printed per
K: aggregate pages/s (pages over first creation to last end, from the database), the ratio to K = 1 against
the targets (>= 1.8x at 2, >= 3.4x at 4), the CPU of the workers (each), gunicorn, the database's backends
and the site server (share of a core, ms per page), how busy the machine's cores were (every process), and
the workers' RSS; a missed target says whether the machine was CPU-bound.
`--smoke` runs N = 1 and 2 at max_rps 10 on 10-page sites, then the production mode at K = 1 with 2 audits
(`make bench-smoke`). Exits 0 whatever the figures.
"""

import argparse
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

TICKS = os.sysconf("SC_CLK_TCK")
SOURCE = Path(__file__).resolve().parents[1]  # the tree whose `siteaudit` is measured
FIRST_ADDRESS = 11  # 127.0.0.11, 127.0.0.12, ...
TARGET_SHARE = 0.90
RSS_PER_AUDIT_TARGET_MB = 10


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a crawler that closed its connection first: nothing to report


def page_of(target: str, pages: int) -> tuple[int, bytes]:
    """(status, HTML) of a path of a site of `pages` pages: a home page linking every page, each page
    linking home and its neighbours; anything else (robots.txt, the sitemaps) 404."""
    path = target.split("?", 1)[0]
    number = 0 if path == "/" else int(path[3:]) if path[3:].isdigit() else -1
    if path != "/" and not (path.startswith("/p/") and 0 < number < pages):
        body, status = "<h1>Not here</h1>", 404
    elif number == 0:
        links = "".join(f'<li><a href="/p/{n}">Clock {n}</a></li>' for n in range(1, pages))
        body, status = f"<h1>Retro clocks</h1><ul>{links}</ul>", 200
    else:
        near = "".join(f'<a href="/p/{m}">Clock {m}</a> ' for m in (number - 1, number + 1) if 0 < m < pages)
        body, status = f'<h1>Clock {number}</h1><p>Hand built.</p>{near}<a href="/">Home</a>', 200
    raw = (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Clock {number} of the "
        f"retro workshop</title><meta name=description content='Clock {number}, hand built.'>"
        f"</head><body>{body}</body></html>"
    ).encode()
    return status, raw


class Site:
    """A small site on its own loopback address; `hits` counts the requests it answered, `requests` holds
    when (epoch seconds) since it was last cleared."""

    def __init__(self, address: str, pages: int) -> None:
        self.hits = 0
        self.requests: list[float] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                site.hits += 1
                site.requests.append(time.time())
                status, raw = page_of(self.path, pages)
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = _QuietServer((address, 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://{address}:{self._server.server_address[1]}/"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


class Service:
    """`siteaudit serve` in a process of its own, with default settings but for the ones a local run needs."""

    def __init__(self, work: Path, threads: int | None, source: Path = SOURCE) -> None:
        self.log = work / "serve.log"
        # Run in `work`: `python -c` puts the working directory first on sys.path, so started in a checkout
        # it would import that checkout's package whatever PYTHONPATH says (--beside measured this tree twice).
        self.work = work
        for _ in range(5):
            self.port = free_port()
            self.env = self._env(work, threads, source)
            self._check_package(source)
            self.process = subprocess.Popen(
                [*self.cli(), "serve"],
                env=self.env,
                cwd=work,
                stdout=self.log.open("wb"),
                stderr=subprocess.STDOUT,
            )
            key = self._key()
            if key is not None:
                break
            # Another process took the port found free before `serve` bound it (a shared machine): again,
            # on a fresh database (the local owner's key is shown once, by the serve that made it).
            for made in work.glob("siteaudit.sqlite3*"):
                made.unlink()
        else:
            raise SystemExit("siteaudit serve found its port taken five times")
        self.key = key
        self.http = httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}/v1",
            headers={"Authorization": f"Bearer {self.key}"},
            timeout=120,  # a loaded machine with audits running answers slowly; only a hang should meet it
        )

    def _env(self, work: Path, threads: int | None, source: Path) -> dict[str, str]:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SITEAUDIT_")},
            "SITEAUDIT_DATABASE_URL": f"sqlite:///{work / 'siteaudit.sqlite3'}",
            "SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8",
            "SITEAUDIT_PORT": str(self.port),
            "SITEAUDIT_STARTING_CREDITS": "10000000",
            "SITEAUDIT_LOG_LEVEL": "warning",
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")])),
        }
        if threads is not None:
            env["SITEAUDIT_WORKER_THREADS"] = str(threads)
        return env

    @staticmethod
    def cli() -> list[str]:
        return [
            sys.executable,
            "-c",
            "import sys; from siteaudit.entrypoints.cli import main; sys.argv[0] = 'siteaudit'; main()",
        ]

    def _key(self) -> str | None:
        """The local owner's key once the service answers; None when its port was taken."""
        deadline = time.monotonic() + 180  # as gunicorn's wait below: a loaded machine boots slowly
        while time.monotonic() < deadline:
            found = re.search(r"\bsk_[A-Za-z0-9_\-]+", self.log.read_text(errors="replace"))
            if found and self._up():
                return found.group(0)
            if self.process.poll() is not None:
                if "the port is in use" in self.log.read_text(errors="replace"):
                    return None
                break
            time.sleep(0.2)
        self.process.kill()  # hung at its start: not left behind
        self.process.wait()
        raise SystemExit(f"siteaudit serve did not start:\n{self.log.read_text(errors='replace')[-3000:]}")

    def _up(self) -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/v1/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def _check_package(self, source: Path) -> None:
        imported = subprocess.run(
            [sys.executable, "-c", "import siteaudit; print(siteaudit.__file__)"],
            env=self.env,
            cwd=self.work,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if not Path(imported).resolve().is_relative_to(source.resolve()):
            raise SystemExit(f"the service would import {imported}, not the package under {source}")

    def admin(self, *args: str) -> None:
        subprocess.run(
            [*self.cli(), "admin", *args], env=self.env, cwd=self.work, check=True, capture_output=True
        )

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def call(service: Service, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One API request, again after the API's own rate limit answers 429 (its Retry-After)."""
    while True:
        answer = service.http.request(method, path, **kwargs)
        if answer.status_code != 429:
            return answer
        time.sleep(float(answer.headers.get("Retry-After", "1")))


def start(service: Service, site: Site, *, rps: float, pages: int, site_id: int | None) -> int:
    body: dict[str, Any] = {"max_pages": pages + 10, "max_rps": rps}
    if site_id is None:
        answer = call(service, "POST", "/crawls", json={"url": site.url, **body})
    else:
        answer = call(service, "POST", f"/sites/{site_id}/crawls", json=body)
    assert answer.status_code == 202, answer.text
    assert answer.json()["max_rps"] == rps, answer.text  # the rate asked is the rate granted
    return int(answer.json()["crawl_id"])


def verified_site(service: Service, site: Site) -> int:
    answer = call(service, "POST", "/sites", json={"url": site.url, "max_rps": 10})  # audits are capped at it
    assert answer.status_code in (200, 201), answer.text
    site_id = int(answer.json()["id"])
    service.admin("verify-site", str(site_id), "--by-hand", "--reason", "worker_capacity benchmark")
    return site_id


def run_round(
    service: Service, sites: list[Site], *, n: int, rps: float, pages: int, site_ids: dict[int, int]
) -> dict[str, float]:
    pid = service.process.pid
    cpu0, rss0 = cpu_s(pid), rss_mb(pid)
    for site in sites[:n]:
        site.requests.clear()
    started = time.monotonic()
    ids = [
        start(service, sites[k], rps=rps, pages=pages, site_id=site_ids.get(k) if rps > 3 else None)
        for k in range(n)
    ]
    finished: dict[int, float] = {}  # seconds from the first audit's creation to its end (the API's times)
    peak_rss = rss0
    pages_done: dict[int, int] = {}
    first_created: float | None = None
    lasted: dict[int, float] = {}  # seconds from each audit's creation to its end
    while len(finished) < n:
        time.sleep(2.0)  # the API's own rate limit allows a request every second or so
        peak_rss = max(peak_rss, rss_mb(pid))
        listing = call(service, "GET", "/crawls", params={"per_page": 100}).json()["data"]
        ours = [row for row in listing if int(row["crawl_id"]) in ids]
        created = {
            int(row["crawl_id"]): datetime.fromisoformat(row["created_at"]).timestamp() for row in ours
        }
        if first_created is None:
            first_created = min(created.values())
        for row in ours:
            crawl = int(row["crawl_id"])
            if crawl not in finished and row["status"] in ("done", "failed", "cancelled"):
                finished[crawl] = datetime.fromisoformat(row["finished_at"]).timestamp() - first_created
                lasted[crawl] = finished[crawl] + first_created - created[crawl]
                pages_done[crawl] = int(row["pages_crawled"])
                if row["status"] != "done":
                    print(f"  audit {crawl} ended {row['status']}", flush=True)
        if time.monotonic() - started > 3600:
            raise SystemExit("an audit did not end within an hour")
    wall = max(finished.values())
    assert first_created is not None
    # Each audit's fixed cost at either end: creation to its site's first request, last request to its end.
    to_first = [min(sites[k].requests) - created[ids[k]] for k in range(n)]
    after_last = [finished[ids[k]] + first_created - max(sites[k].requests) for k in range(n)]
    total = sum(pages_done.values())
    cpu, window = cpu_s(pid) - cpu0, time.monotonic() - started
    return {
        "wall": wall,
        "pages": total,
        "slowest": wall,
        "fastest": min(finished.values()),
        "created_over": max(finished[c] - lasted[c] for c in finished),  # the last creation after the first
        "shortest": min(lasted.values()),
        "longest": max(lasted.values()),
        "to_first": sum(to_first) / n,
        "to_first_max": max(to_first),
        "after_last": sum(after_last) / n,
        "after_last_max": max(after_last),
        "cpu": cpu,
        "window": window,  # what the CPU was measured over (the round, polls included)
        "rss_before": rss0,
        "rss_peak": peak_rss,
    }


def report(n: int, rps: float, figures: dict[str, float], alone: float | None, idle_rss: float) -> None:
    rate = figures["pages"] / figures["wall"]
    asked = n * rps
    share = rate / asked
    cpu_share = figures["cpu"] / figures["window"]
    per_audit = (figures["rss_peak"] - idle_rss) / n
    slowdown = f", {figures['slowest'] / alone:.1f}x one alone" if alone else ""
    print(
        f"N={n:>3} at max_rps {rps:g}: aggregate {rate:6.1f} pages/s of {asked:5.0f} asked ({share:4.0%}"
        f"{'' if share >= TARGET_SHARE else ', under 90 %'}); slowest audit {figures['slowest']:.0f} s{slowdown}; "
        f"created over {figures['created_over']:.1f} s, each {figures['shortest']:.1f}-{figures['longest']:.1f} s "
        f"from its creation to its end (first request {figures['to_first']:.2f} s after it, at most "
        f"{figures['to_first_max']:.2f}; end {figures['after_last']:.2f} s after the last request, at most "
        f"{figures['after_last_max']:.2f}); "
        f"worker CPU {cpu_share:4.0%} of a core ({figures['cpu'] * 1000 / max(1, figures['pages']):.1f} ms/page); "
        f"RSS {figures['rss_peak']:.0f} MB peak, {per_audit:+.1f} MB per audit above idle "
        f"(target <= {RSS_PER_AUDIT_TARGET_MB})",
        flush=True,
    )


@contextmanager
def sites_on_loopback(count: int, pages: int) -> Iterator[list[Site]]:
    sites = [Site(f"127.0.0.{FIRST_ADDRESS + k}", pages) for k in range(count)]
    try:
        yield sites
    finally:
        for site in sites:
            site.close()


# --- the production mode: PostgreSQL, RabbitMQ, gunicorn and K `siteaudit worker` processes -------------

PER_WORKER = 24  # audits per worker process at max_rps 3
SCALE_TARGETS = {2: 1.8, 4: 3.4}  # aggregate pages/s against K = 1's


def serve_sites(count: int, pages: int) -> None:
    """The sites' process (production mode): `count` sites on 127.0.0.11, 127.0.0.12, ... served by one
    asyncio loop (raw HTTP/1.1, keep-alive); prints their URLs as one JSON line, then serves until killed."""
    import asyncio

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, target, _ = head.split(b"\r\n", 1)[0].split(b" ", 2)
                status, body = page_of(target.decode("latin-1"), pages)
                writer.write(
                    b"HTTP/1.1 "
                    + (b"200 OK" if status == 200 else b"404 Not Found")
                    + b"\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\n\r\n"
                    + (b"" if method == b"HEAD" else body)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def run() -> None:
        urls = []
        for k in range(count):
            address = f"127.0.0.{FIRST_ADDRESS + k}"
            server = await asyncio.start_server(handle, address, 0, backlog=256)
            urls.append(f"http://{address}:{server.sockets[0].getsockname()[1]}/")
        print(json.dumps(urls), flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of every core since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return sum(values) - idle, sum(values)


def crawl_consumers(prefix: str) -> int:
    import pika
    from scale_audit import BROKER_URL

    connection = pika.BlockingConnection(pika.URLParameters(BROKER_URL))
    try:
        frame = connection.channel().queue_declare(f"{prefix}crawl", passive=True)
        return int(frame.method.consumer_count)
    except Exception:
        return 0
    finally:
        if connection.is_open:
            connection.close()


def production(counts: list[int], *, pages: int, rps: float, per_worker: int) -> None:
    import psycopg
    import scale_audit as sa

    largest = max(counts) * per_worker
    work = Path(tempfile.mkdtemp(prefix="siteaudit-capacity-prod-"))
    prefix = f"siteaudit_capacity_{secrets.token_hex(4)}_"
    processes: list[subprocess.Popen[bytes]] = []
    sites = subprocess.Popen(
        [sys.executable, __file__, "--serve-sites", str(largest), "--pages", str(pages)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(sa.ROOT)},
    )
    processes.append(sites)
    assert sites.stdout is not None
    urls: list[str] = json.loads(sites.stdout.readline())
    sampler = None
    finished = False
    print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
    try:
        with sa.database() as (db_name, db_url):
            env = {k: v for k, v in os.environ.items() if not k.startswith("SITEAUDIT_")}
            env.update(
                PYTHONPATH=str(sa.ROOT),
                SITEAUDIT_DATABASE_URL=db_url,
                SITEAUDIT_BROKER_URL=sa.BROKER_URL,
                SITEAUDIT_QUEUE_PREFIX=prefix,
                SITEAUDIT_SECRET_KEY="d29ya2VyLWNhcGFjaXR5LWJlbmNobWFyay1rZXktMDA=",
                SITEAUDIT_ALLOW_NETWORKS="127.0.0.0/8",
                SITEAUDIT_METRICS="false",
                SITEAUDIT_LOG_LEVEL="warning",
            )
            migrated = subprocess.run(
                sa.siteaudit_command("migrate"), env=env, capture_output=True, text=True
            )
            if migrated.returncode != 0:
                raise SystemExit(f"migrate: {migrated.stdout}{migrated.stderr}")
            # 60 requests a minute per key, one key per user and team: a member per 40 audits (each pays
            # for its own plain-URL audits), so that starting them never waits.
            team, members = "Capacity", [f"member{i}@capacity.example" for i in range(1 + largest // 40)]
            keys = []
            for i, member in enumerate(members):
                sa.admin(env, "create-user", member, "--plan", "free")
                if i == 0:
                    sa.admin(env, "create-team", team, "--owner", member)
                else:
                    sa.admin(env, "add-member", team, member)
                sa.admin(env, "grant-credits", member, str(sum(counts) * min(40, largest) * (pages + 10)))
                keys.append(sa.admin(env, "create-key", member, "--team", team)["api_key"])
            dsn = db_url.replace("postgresql+psycopg://", "postgresql://")
            sampler = sa.Sampler(dsn, db_name)
            api = sa.listener()
            api_port = api.getsockname()[1]
            log = (work / "gunicorn.log").open("ab")
            gunicorn = subprocess.Popen(
                [
                    *(sys.executable, "-m", "gunicorn", "--workers", "2", "--bind", f"fd://{api.fileno()}"),
                    *("--timeout", "300", "siteaudit.entrypoints.wsgi:create_app()"),
                ],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(api.fileno(),),
            )
            api.close()  # gunicorn's now
            processes.append(gunicorn)
            sampler.groups["service"].append(gunicorn.pid)
            sampler.groups["site"].append(sites.pid)
            sampler.start()
            rest = sa.Rest(api_port)
            deadline = time.monotonic() + 180  # a loaded machine boots gunicorn's workers slowly
            while not _answers(rest, keys[0]):
                if time.monotonic() > deadline or gunicorn.poll() is not None:
                    raise SystemExit(f"gunicorn did not start; see {work / 'gunicorn.log'}")
                time.sleep(0.3)
            poll = psycopg.connect(dsn, autocommit=True)
            print(
                f"production path: PostgreSQL, RabbitMQ, gunicorn (2 sync workers), K `siteaudit worker` "
                f"processes with default settings; {os.cpu_count()} cores on this machine; N = {per_worker} x K "
                f"audits at max_rps {rps:g} of N sites of {pages} pages (one loopback address each, "
                f"served by one asyncio process)",
                flush=True,
            )
            base: dict[str, float] | None = None
            for k in counts:
                workers = []
                for w in range(k):
                    out = (work / f"worker-{k}-{w}.log").open("ab")
                    worker = subprocess.Popen(
                        sa.siteaudit_command("worker"), env=env, stdout=out, stderr=subprocess.STDOUT
                    )
                    workers.append(worker)
                    processes.append(worker)
                sampler.groups["workers"] = [w.pid for w in workers]
                deadline = time.monotonic() + 180
                while crawl_consumers(prefix) < k:
                    if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
                        raise SystemExit(f"workers did not start; see {work}")
                    time.sleep(0.5)
                time.sleep(2.0)  # the workers' first reaper and webhook rounds
                idle_rss = {w.pid: rss_mb(w.pid) for w in workers}
                figures = production_round(
                    rest, keys, poll, sampler, urls[: k * per_worker], rps=rps, pages=pages
                )
                report_production(k, per_worker, rps, figures, idle_rss, base)
                if base is None:
                    base = figures
                for worker in workers:
                    worker.terminate()
                for worker in workers:
                    try:
                        worker.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        worker.kill()
                        worker.wait()
            poll.close()
            print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
            finished = True
    finally:
        if sampler is not None:
            sampler.stop()
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        with suppress(Exception):
            sa.delete_queues(prefix)
        if finished:
            for path in work.iterdir():
                path.unlink()
            work.rmdir()
        else:
            print(f"logs kept in {work}", flush=True)


def _answers(rest: Any, key: str) -> bool:
    try:
        return bool(rest.call("GET", "/v1/health", key)[0] == 200)
    except OSError:
        return False


def production_round(
    rest: Any, keys: list[str], poll: Any, sampler: Any, urls: list[str], *, rps: float, pages: int
) -> dict[str, Any]:
    from concurrent.futures import ThreadPoolExecutor

    before, busy0, rss_peak = sampler.totals(), machine_busy(), {}
    per_worker0 = dict(sampler.cpu["workers"])
    window0 = time.monotonic()

    def start_one(index: int) -> int:
        key = keys[index // 40]
        while True:
            status, answer, _ = rest.call(
                "POST", "/v1/crawls", key, {"url": urls[index], "max_pages": pages + 10, "max_rps": rps}
            )
            if status != 429:
                break
            time.sleep(1.0)
        assert status == 202 and answer["max_rps"] == rps, (status, answer)
        return int(answer["crawl_id"])

    with ThreadPoolExecutor(4) as pool:
        ids = list(pool.map(start_one, range(len(urls))))
    while True:
        time.sleep(1.0)
        for pid in sampler.groups["workers"]:
            with suppress(OSError):
                rss_peak[pid] = max(rss_peak.get(pid, 0.0), rss_mb(pid))
        rows = poll.execute(
            "SELECT count(*) FILTER (WHERE status NOT IN ('done', 'failed', 'cancelled')) FROM audits "
            "WHERE id = ANY(%s)",
            (ids,),
        ).fetchone()
        if rows[0] == 0:
            break
        if time.monotonic() - window0 > 3600:
            raise SystemExit("an audit did not end within an hour")
    after, busy1 = sampler.totals(), machine_busy()
    with sampler.lock:  # the sampling thread adds the pids it finds
        per_worker_cpu = {
            pid: cpu - per_worker0.get(pid, 0.0)
            for pid, cpu in sampler.cpu["workers"].items()
            if pid in sampler.groups["workers"]
        }
    window = time.monotonic() - window0
    first, last, fastest, total, bad = poll.execute(
        "SELECT min(extract(epoch FROM created_at)), max(extract(epoch FROM finished_at)), "
        "min(extract(epoch FROM finished_at)), sum(pages_crawled), count(*) FILTER (WHERE status <> 'done') "
        "FROM audits WHERE id = ANY(%s)",
        (ids,),
    ).fetchone()
    return {
        "n": len(ids),
        "wall": float(last) - float(first),
        "fastest": float(fastest) - float(first),
        "pages": int(total),
        "not_done": int(bad),
        "cpu": {name: after[name] - before.get(name, 0.0) for name in after},
        "window": window,
        "machine": (busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]),
        "rss_peak": rss_peak,
        "per_worker_cpu": per_worker_cpu,
    }


def report_production(
    k: int, per_worker: int, rps: float, figures: dict[str, Any], idle_rss: dict[int, float], base: Any
) -> None:
    n, pages, wall, window = figures["n"], figures["pages"], figures["wall"], figures["window"]
    rate = pages / wall
    cpu = figures["cpu"]
    cores = os.cpu_count() or 1
    ratio = ""
    if base is not None:
        scale = rate / (base["pages"] / base["wall"])
        target = SCALE_TARGETS.get(k)
        verdict = (
            "" if target is None else f" (target >= {target}x: {'met' if scale >= target else 'MISSED'})"
        )
        ratio = f"; {scale:.2f}x K=1{verdict}"
    ours = sum(cpu[name] for name in ("workers", "service", "postgres", "site"))
    not_done = f", {figures['not_done']} not done" if figures["not_done"] else ""
    print(
        f"K={k} N={n:>3} at max_rps {rps:g}: aggregate {rate:6.1f} pages/s of {n * rps:4.0f} asked "
        f"({rate / (n * rps):4.0%}){ratio}; audits ended {figures['fastest']:.0f}-{wall:.0f} s after the first "
        f"start{not_done}",
        flush=True,
    )
    print(
        "  CPU (share of one core over the round, ms per page): "
        + ", ".join(
            f"{label} {cpu[name] / window:4.0%} {cpu[name] * 1000 / max(1, pages):.1f} ms"
            for label, name in (
                (f"{k} worker(s)", "workers"),
                ("gunicorn", "service"),
                ("PostgreSQL backends", "postgres"),
                ("site server", "site"),
            )
        )
        + f" (each worker: {', '.join(f'{c / window:.0%}' for c in figures['per_worker_cpu'].values())})"
        + f"; together {ours / window:.2f} of {cores} cores; the machine's cores "
        f"{figures['machine']:.0%} busy (every process, other users' too)",
        flush=True,
    )
    peaks = figures["rss_peak"]
    per_audit = [(peaks[pid] - idle_rss.get(pid, peaks[pid])) / per_worker for pid in peaks]
    print(
        f"  worker RSS: idle {min(idle_rss.values(), default=0):.0f}-{max(idle_rss.values(), default=0):.0f} MB, "
        f"peak {min(peaks.values(), default=0):.0f}-{max(peaks.values(), default=0):.0f} MB, "
        f"{max(per_audit, default=0):+.1f} MB per running audit above idle (worst worker, {per_worker} audits each)",
        flush=True,
    )
    if base is not None and k in SCALE_TARGETS and rate / (base["pages"] / base["wall"]) < SCALE_TARGETS[k]:
        if figures["machine"] >= 0.85 or ours / window >= 0.85 * cores:
            print(
                f"  target missed while CPU-bound: the machine's {cores} cores were {figures['machine']:.0%} busy; "
                f"{k} worker processes cannot scale past the cores they get",
                flush=True,
            )
        else:
            print(
                f"  target missed with the machine's cores {figures['machine']:.0%} busy: not CPU-bound",
                flush=True,
            )


def main() -> None:
    options = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options.add_argument("--pages", type=int, default=60, help="pages of each site")
    options.add_argument("--rps3", default="1,8,16,24,48", help="audit counts at max_rps 3")
    options.add_argument("--rps10", default="1,4,8,12,16", help="audit counts at max_rps 10")
    options.add_argument(
        "--threads", type=int, default=None, help="SITEAUDIT_WORKER_THREADS (default: its default)"
    )
    options.add_argument(
        "--beside",
        default="",
        help="also run every round on this git commit's siteaudit first (before/after)",
    )
    options.add_argument(
        "--workers",
        default="",
        help="production mode: K `siteaudit worker` processes, e.g. 1,2,4 (PostgreSQL, RabbitMQ, gunicorn)",
    )
    options.add_argument(
        "--per-worker", type=int, default=PER_WORKER, help="production mode: audits per worker process"
    )
    options.add_argument(
        "--smoke",
        action="store_true",
        help="N = 1 and 2 at max_rps 10, 10-page sites; then the production mode at K=1, 2 audits",
    )
    options.add_argument("--serve-sites", type=int, help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.serve_sites:
        serve_sites(args.serve_sites, args.pages)
        return
    if args.smoke:
        embedded([(10.0, [1, 2])], pages=10, threads=args.threads)
        production([1], pages=10, rps=3.0, per_worker=2)
        return
    if args.workers:
        counts = [int(k) for k in args.workers.split(",") if k.strip()]
        production(counts, pages=args.pages, rps=3.0, per_worker=args.per_worker)
        return
    rounds: list[tuple[float, list[int]]] = [
        (3.0, [int(n) for n in args.rps3.split(",") if n.strip()]),
        (10.0, [int(n) for n in args.rps10.split(",") if n.strip()]),
    ]
    embedded(rounds, pages=args.pages, threads=args.threads, beside=args.beside)


def checkout(ref: str, into: Path) -> Path:
    """The `siteaudit` package of git commit `ref`, unpacked under `into`; returns the tree's root."""
    archive = subprocess.run(
        ["git", "-C", str(SOURCE), "archive", ref, "siteaudit"], check=True, capture_output=True
    ).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def embedded(
    rounds: list[tuple[float, list[int]]], *, pages: int, threads: int | None, beside: str = ""
) -> None:
    largest = max(max(ns) for _, ns in rounds if ns)
    verified = max((max(ns) for rps, ns in rounds if rps > 3 and ns), default=0)
    with (
        tempfile.TemporaryDirectory(prefix="siteaudit-capacity-") as tmp,
        sites_on_loopback(largest, pages) as sites,
    ):
        work = Path(tmp)
        (work / "this").mkdir()
        services = {"": Service(work / "this", threads)}
        try:
            if beside:
                (work / "before").mkdir()
                before = Service(work / "before", threads, checkout(beside, work / "source"))
                services = {f"{beside}: ": before, "this tree: ": services[""]}
            site_ids = {
                label: {k: verified_site(service, sites[k]) for k in range(verified)}
                for label, service in services.items()
            }
            time.sleep(1.0)
            idle = {label: rss_mb(service.process.pid) for label, service in services.items()}
            print(
                f"`siteaudit serve` (embedded default, {os.cpu_count()} cores on this machine, worker threads "
                f"{threads or 'default'}), idle RSS {', '.join(f'{label}{rss:.0f} MB' for label, rss in idle.items())}; "
                f"sites of {pages} pages, {pages + 4} requests an audit with the host files",
                flush=True,
            )
            for rps, counts in rounds:
                alone: dict[str, float] = {}
                for n in counts:
                    for label, service in services.items():
                        figures = run_round(
                            service, sites, n=n, rps=rps, pages=pages, site_ids=site_ids[label]
                        )
                        print(label, end="")
                        report(n, rps, figures, alone.get(label), idle[label])
                        if n == 1:
                            alone[label] = figures["slowest"]
        finally:
            for service in services.values():
                service.stop()


if __name__ == "__main__":
    main()
