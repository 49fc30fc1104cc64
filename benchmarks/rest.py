"""The REST hot path on PostgreSQL under gunicorn, as production runs it, against bare Falcon apps.

    python benchmarks/rest.py [--seconds 10] [--connections 64] [--pages 2000] [--keys 1000] [--profile]
                              [--workers 2xcores] [--threads 4] [--settings sync,gthread] [--before DIR]

Creates a database of its own (random name) on SITEAUDIT_BENCH_POSTGRES_URL (default: the local server,
user postgres), migrates it, writes one finished audit (a synthetic site through the SQL crawl store, the
page checks' issues, then `finalize_audit`) and a team of `--keys` members with one API key each, and
drops it all at the end. Then, for each gunicorn setting (by default `--workers` = 2 x cores sync
workers, then as many gthread workers of `--threads` threads), three apps under the same setting:

- siteaudit: the production app with security on (bearer keys looked up by hash, team membership, the
  shared PostgreSQL rate limiter: one statement; the unit of work, the services, the views);
- bare-psycopg: a bare Falcon app with one psycopg connection per worker answering the same rows with the
  same SQL the store runs (the audit row; the issue count and the first page of issues), no security;
- bare-constant: a bare Falcon app answering the very same JSON bodies as constants;
- with `--before DIR`, siteaudit-before: the production app of the `siteaudit` package in DIR (an earlier
  commit's, `git archive <commit> siteaudit | tar -x -C DIR`), run first under each setting, so that a
  change's before/after pair is measured side by side in one run; its answers must be the same bytes.

Load comes from `wrk` in another process (`apt-get install wrk`) with `--connections` connections (64 by
default), requests rotating over the keys so that no key meets its 60-a-minute limit (every answer must be
200). Prints, per setting, requests/s and p99 latency per endpoint and app, then for siteaudit its ratio
to bare-psycopg's requests/s and its p99 over the bare app's (bare-psycopg's) p99, beside the targets:
/v1/crawls/{id} >= 40 % and /v1/crawls/{id}/issues >= 55 % of bare-psycopg's requests/s, p99 at most
2 x the bare app's. `--profile` adds the CPU a request costs in-process (Falcon's test client, 1,000
requests) and in PostgreSQL, each app measured in a fresh process of its own (with `--before`, that
package's app too, the three alternated twice), and a cProfile listing (in process time) of the
siteaudit endpoints served in-process.
The machine's load (`uptime`) is printed before and after: on a shared machine the figures are noisy.
Exits 0 whatever the figures.
"""

import argparse
import cProfile
import json
import os
import pstats
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import falcon
import psycopg
from psycopg import sql

ADMIN_URL = os.environ.get("SITEAUDIT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
SECRET_KEY = "bench-secret-key-not-for-production"
SITE = "https://retro-clock.example"
ROOT = Path(__file__).resolve().parent.parent
ENDPOINTS = ("/v1/crawls/{id}", "/v1/crawls/{id}/issues")
APPS = ("siteaudit", "bare-psycopg", "bare-constant")
# Issue 18's targets: requests/s as a share of bare-psycopg's, and p99 at most this many times its p99.
TARGET_RATIO = {"/v1/crawls/{id}": 0.40, "/v1/crawls/{id}/issues": 0.55}
TARGET_P99_FACTOR = 2.0


# --- the three apps (gunicorn factories: `gunicorn 'benchmarks.rest:siteaudit_app()'`) ---------------


def siteaudit_app() -> Any:
    """The production app as bootstrap should wire it for PostgreSQL (the SQL rate limiter included)."""
    from siteaudit.adapters.memory.queue import MemoryTaskQueue
    from siteaudit.bootstrap import bootstrap
    from siteaudit.settings import Settings

    settings = Settings.from_env()
    return _booted(
        bootstrap(
            settings, **_sql_parts(settings.database_url, settings.secret_key), queue=MemoryTaskQueue()
        ).rest_api()
    )


def _booted(app: Any) -> Any:
    """Say this worker is ready (a file named after its pid): load starts once every worker is."""
    Path(os.environ["BENCH_BOOTED"], str(os.getpid())).touch()
    return app


def _sql_parts(url: str, secret_key: str) -> dict[str, Any]:
    from siteaudit.adapters.sql import engine_for, sql_crawl_store, sql_unit_of_work_factory
    from siteaudit.adapters.sql.ratelimit import SqlRateLimiter

    engine = engine_for(url)
    return {
        "uow": sql_unit_of_work_factory(engine, secret_key=secret_key, migrate=False),
        "crawl": sql_crawl_store(engine, migrate=False),
        "limiter": SqlRateLimiter(engine),
    }


_AUDIT_SQL = (
    "SELECT id, site_id, url, trigger, status, pages_crawled, max_pages, credits_reserved, created_at,"
    " started_at, finished_at, archived_at, failure_reason, verify_token_set, max_rps, concurrency"
    " FROM audits WHERE id = %s AND team_id = %s"
)
_ISSUE_COUNT_SQL = "SELECT count(*) FROM crawl_issues WHERE audit_id = %s"
_ISSUES_SQL = (
    "SELECT i.check_code, i.severity, u.url, i.template, i.details FROM crawl_issues i"
    " JOIN crawl_urls u ON u.audit_id = i.audit_id AND u.id = i.url_id WHERE i.audit_id = %s"
    " ORDER BY i.severity, i.check_code, i.url_id, i.id LIMIT 50 OFFSET 0"
)
_SEVERITIES = {0: "error", 1: "warning", 2: "notice"}


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


class _BareAudit:
    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        row = self.conn.execute(_AUDIT_SQL, (crawl_id, 1)).fetchone()
        if row is None:
            raise falcon.HTTPNotFound()
        (id_, site, url, trigger, status, crawled, max_pages, reserved, created, started, finished, archived,
         reason, token_set, max_rps, concurrency) = row  # fmt: skip
        resp.media = {
            "crawl_id": id_, "site_id": site, "site_url": url, "trigger": trigger, "status": status,
            "pages_crawled": crawled, "max_pages": max_pages, "credits_reserved": reserved / 10,
            "created_at": _time(created), "started_at": _time(started), "finished_at": _time(finished),
            "archived_at": _time(archived), "failure_reason": reason, "verify_token_set": token_set,
            "max_rps": max_rps, "concurrency": concurrency,
            "duration_s": None if finished is None or started is None else (finished - started).total_seconds(),
            "pages_per_minute": None,
        }  # fmt: skip


class _BareIssues:
    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        total_row = self.conn.execute(_ISSUE_COUNT_SQL, (crawl_id,)).fetchone()
        assert total_row is not None
        rows = self.conn.execute(_ISSUES_SQL, (crawl_id,)).fetchall()
        total = int(total_row[0])
        resp.media = {
            "data": [
                {"check_code": c, "severity": _SEVERITIES[s], "url": u, "template": t, "details": d}
                for c, s, u, t, d in rows
            ],
            "meta": {"current_page": 1, "per_page": 50, "total": total, "last_page": max(1, -(-total // 50))},
        }


def bare_psycopg_app() -> falcon.App:
    return _booted(_bare_psycopg(os.environ["BENCH_DSN"]))


def _bare_psycopg(dsn: str) -> falcon.App:
    conn = psycopg.connect(dsn, autocommit=True)
    app = falcon.App()
    app.add_route("/v1/crawls/{crawl_id:int}", _BareAudit(conn))
    app.add_route("/v1/crawls/{crawl_id:int}/issues", _BareIssues(conn))
    return app


class _Constant:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        resp.data = self.body
        resp.content_type = falcon.MEDIA_JSON


def bare_constant_app() -> falcon.App:
    bodies = json.loads(Path(os.environ["BENCH_BODIES"]).read_text())
    app = falcon.App()
    app.add_route("/v1/crawls/{crawl_id:int}", _Constant(bodies["audit"].encode()))
    app.add_route("/v1/crawls/{crawl_id:int}/issues", _Constant(bodies["issues"].encode()))
    return _booted(app)


# --- the data -----------------------------------------------------------------------------------------


def _database(name: str) -> tuple[str, str]:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    password = f":{info['password']}" if info.get("password") else ""
    url = (
        f"postgresql+psycopg://{info.get('user', 'postgres')}{password}@{info.get('host', '127.0.0.1')}"
        f":{info.get('port', 5432)}/{name}"
    )
    return url, psycopg.conninfo.make_conninfo(ADMIN_URL, dbname=name)


def _facts(i: int, pages: int) -> Any:
    from siteaudit.domain.facts import HtmlFacts, Image, Link, LinkKind, PageFacts

    path = "/" if i == 0 else f"/products/{1000 + i}" if i % 3 else f"/blog/restoring-clock-{i}"
    url = SITE + path
    if i and i % 50 == 1:
        return PageFacts(url=url, depth=1, status_code=404, final_url=url, content_type="text/html")
    links = (
        Link(target=SITE + "/"),
        *(Link(target=f"{SITE}/products/{1000 + (i * 7 + k) % pages}") for k in range(4)),
        Link(target=f"{SITE}/img/{i}.jpg", kind=LinkKind.IMG),
    )
    html = HtmlFacts(
        titles=("Clock",) if i % 10 == 3 else (f"Retro clock {i} | Retro Clock",),
        meta_descriptions=()
        if i % 4 == 0
        else (f"A restored clock, number {i}, shipped from our workshop.",),
        h1s=(f"Retro clock {i}",),
        heading_levels=(1, 2),
        lang="en",
        viewport="width=device-width, initial-scale=1",
        meta_charset="utf-8",
        canonicals=(url,),
        links=links,
        images=(Image(f"{SITE}/img/{i}.jpg", has_alt=i % 5 != 0, width="640", height="480"),),
        word_count=120 + i % 400,
        text_chars=(120 + i % 400) * 6,
        fingerprint=f"{i * 2654435761 % 2**64:016x}",
    )
    return PageFacts(
        url=url, depth=1 + i % 4, status_code=200, final_url=url, content_type="text/html", html=html
    )


def prepare(url: str, pages: int, key_count: int) -> tuple[int, list[str]]:
    """A finished audit of `pages` pages and `key_count` API keys of its team; returns (audit id, keys)."""
    from siteaudit.adapters.system import FixedClock, SystemSecrets
    from siteaudit.domain.audit import Audit
    from siteaudit.domain.checks import PageContext, check_page
    from siteaudit.domain.credit import credits
    from siteaudit.domain.ids import AuditId, TeamId, UserId
    from siteaudit.domain.thresholds import Thresholds
    from siteaudit.services import account as accounts
    from siteaudit.services import audit as audits
    from siteaudit.services import finalize
    from siteaudit.services import key as keys

    parts = _sql_parts(url, SECRET_KEY)
    uow, crawl = parts["uow"], parts["crawl"]
    clock, secrets_ = FixedClock(), SystemSecrets()
    owner = "owner@retro-clock.example"
    accounts.create_user(owner, plan="scale", uow=uow(), clock=clock, secrets=secrets_)
    accounts.create_team("Bench", owner_email=owner, uow=uow(), clock=clock)
    accounts.grant_credits(owner, credits(1_000_000), key="bench", uow=uow(), clock=clock)
    with uow() as work:
        audit = work.audits.add(
            Audit(
                id=AuditId(0), team_id=TeamId(1), user_id=UserId(1), payer_id=UserId(1), url=SITE + "/",
                origin=SITE, created_at=clock.now(), max_pages=pages, credits_reserved=credits(pages),
            )
        )  # fmt: skip
        work.credits.reserve(
            UserId(1), credits(pages), reference=audits.audit_reference(audit.id), at=clock.now()
        )
        work.commit()
    audits.begin_audit(audit.id, uow=uow(), clock=clock)
    context, limits = PageContext(start_url=SITE + "/"), Thresholds()
    for low in range(0, pages, 500):
        facts = [_facts(i, pages) for i in range(low, min(low + 500, pages))]
        crawl.write_pages(audit.id, facts)
        crawl.write_links(audit.id, [(p.url, link) for p in facts if p.html for link in p.html.links])
        crawl.write_issues(
            audit.id, [i for p in facts for i in check_page(p, thresholds=limits, context=context)]
        )
    audits.record_progress(audit.id, pages_crawled=pages, pages_not_modified=0, uow=uow(), clock=clock)
    audits.stop_crawling(audit.id, partial=False, uow=uow(), clock=clock)
    clock.advance(600)
    finalize.finalize_audit(audit.id, uow=uow(), crawl=crawl, clock=clock)
    made = [keys.create_settings_key(owner, "Bench", uow=uow(), clock=clock, secrets=secrets_).raw]
    for n in range(1, key_count):
        email = f"member{n}@retro-clock.example"
        accounts.create_user(email, plan="free", uow=uow(), clock=clock, secrets=secrets_)
        accounts.add_member("Bench", email, uow=uow())
        made.append(keys.create_settings_key(email, "Bench", uow=uow(), clock=clock, secrets=secrets_).raw)
    return int(audit.id), made


# --- load -----------------------------------------------------------------------------------------------

_WRK_SCRIPT = """
local keys = {}
for line in io.lines(os.getenv("BENCH_KEYS")) do keys[#keys + 1] = line end
local threads = 0
function setup(thread) thread:set("offset", threads * 7919); threads = threads + 1 end
local i = 0
request = function()
  i = i + 1
  local key = keys[((offset or 0) + i) % #keys + 1]
  return wrk.format("GET", nil, {["Authorization"] = "Bearer " .. key})
end
"""


@contextmanager
def gunicorn(
    factory: str,
    env: dict[str, str],
    *,
    workers: int = 1,
    worker_class: str = "sync",
    threads: int = 1,
    source: Path = ROOT,
) -> Iterator[str]:
    # gunicorn serves a socket bound here (`fd://`): a port found free and bound by gunicorn later may
    # be taken in between on a shared machine.
    listening = socket.create_server(("127.0.0.1", 0), backlog=2048)
    listening.set_inheritable(True)
    port = listening.getsockname()[1]
    command = [
        str(Path(sys.executable).with_name("gunicorn")), "--workers", str(workers),
        "--worker-class", worker_class, "--threads", str(threads),
        "--bind", f"fd://{listening.fileno()}", "--log-level", "warning", factory,
    ]  # fmt: skip
    booted = Path(env["BENCH_BOOTED"])
    shutil.rmtree(booted, ignore_errors=True)
    booted.mkdir()
    with listening:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, **env, "PYTHONPATH": os.pathsep.join(dict.fromkeys((str(source), str(ROOT))))},
            pass_fds=(listening.fileno(),),
        )
    base = f"http://127.0.0.1:{port}"
    try:
        # Every worker booted (a loaded machine boots several slowly): load on a half-booted server
        # would measure the imports.
        deadline = time.monotonic() + 180
        while len(list(booted.iterdir())) < workers:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{factory} did not start {workers} workers")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()  # never leave an arbiter (and its workers) behind
            process.wait()


def wrk(url: str, *, seconds: float, connections: int, env: dict[str, str]) -> tuple[float, float, int]:
    """(requests/s, p99 ms, answers that were not 2xx) of one wrk run."""
    command = [
        "wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency",
        "-s", env["BENCH_SCRIPT"], url,
    ]  # fmt: skip
    out = subprocess.run(
        command, capture_output=True, text=True, check=True, env={**os.environ, **env}
    ).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:.*", out)
    failures = int(bad.group(1)) if bad else 0
    if errors:
        print(f"    wrk: {errors.group(0)}")
    return rate, p99, failures


def _backends_cpu(admin: psycopg.Connection, database: str) -> float:
    """Seconds of CPU the PostgreSQL backends of `database` (but `admin`'s own) have used, from /proc: the
    server's share of a request, which the server on this machine spends beside the app."""
    me = admin.execute("SELECT pg_backend_pid()").fetchone()
    pids = admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> %s", (database, me[0] if me else 0)
    ).fetchall()
    ticks = 0
    for (pid,) in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # another machine's server, or a backend gone meanwhile
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def _siteaudit_client(url: str) -> Any:
    import falcon.testing

    from siteaudit.adapters.memory.queue import MemoryTaskQueue
    from siteaudit.bootstrap import bootstrap
    from siteaudit.settings import Settings

    settings = Settings(database_url=url, secret_key=SECRET_KEY)
    return falcon.testing.TestClient(
        bootstrap(settings, **_sql_parts(url, SECRET_KEY), queue=MemoryTaskQueue()).rest_api()
    )


def cpu_a_request(app: str, client: Any, dsn: str, audit_id: int, keys: list[str]) -> None:
    """Print the CPU a request of each endpoint costs in-process (Falcon's test client) and in PostgreSQL:
    less at the mercy of the machine's load than requests/s under wrk."""
    database = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(dsn, autocommit=True) as admin:
        for template in ENDPOINTS:
            path = template.format(id=audit_id)
            for n in range(1_200):
                if n == 200:
                    server, ours = _backends_cpu(admin, str(database)), time.process_time()
                headers = {"Authorization": f"Bearer {keys[n % len(keys)]}"}
                assert client.simulate_get(path, headers=headers).status_code == 200
            # Seconds over 1,000 requests: milliseconds a request.
            ours, server = time.process_time() - ours, _backends_cpu(admin, str(database)) - server
            print(f"  {app:16} {template:24} CPU a request: {ours:.3f} ms in-process + {server:.3f} ms"
                  f" of PostgreSQL = {ours + server:.3f} ms (1,000 requests)", flush=True)  # fmt: skip


def profile(url: str, dsn: str, audit_id: int, keys: list[str], *, before: str, keys_file: Path) -> None:
    # Each app's CPU a request in a fresh process of its own (this one's heap, grown by writing the audit,
    # would make its garbage collector's passes dearer), with `--before` that package's app too (one
    # process imports one `siteaudit`), alternated, twice.
    apps = [("siteaudit-before", before), ("siteaudit", str(ROOT)), ("bare-psycopg", str(ROOT))]
    for _ in range(2 if before else 1):
        for app, source in apps[0 if before else 1 :]:
            command = [sys.executable, __file__, "--cpu-of", app, url, dsn, str(audit_id), str(keys_file)]
            paths = os.pathsep.join(dict.fromkeys((source, str(ROOT))))
            subprocess.run(command, check=True, cwd=source, env={**os.environ, "PYTHONPATH": paths})
    client = _siteaudit_client(url)
    for template in ENDPOINTS:
        path = template.format(id=audit_id)
        # In process time: a wall-clock profile charges the waits for the server (and for the cores, on a
        # loaded machine) to whichever psycopg call was on the stack, and hid where our CPU goes.
        profiler = cProfile.Profile(time.process_time)
        for n in range(600):
            headers = {"Authorization": f"Bearer {keys[n % len(keys)]}"}
            if n == 100:
                profiler.enable()
            assert client.simulate_get(path, headers=headers).status_code == 200
        profiler.disable()
        print(f"\n--- {template}: 500 requests in-process (Falcon test client), by own CPU time ---")
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(30)
        # By cumulative CPU too: the share of each step of a request (the key gate, the unit of work and
        # its read, the answer).
        print(f"\n--- {template}: the same requests by cumulative CPU time ---")
        stats.sort_stats("cumulative").print_stats(40)


def load() -> str:
    """The load averages (1, 5, 15 minutes), as `uptime` prints them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


Results = dict[tuple[str, str], tuple[float, float, int]]


def measure(
    setting: dict[str, Any], *, audit_id: int, keys: list[str], work: Path, env: dict[str, str], args: Any
) -> Results:
    """Every app under one gunicorn setting: (requests/s, p99 ms, failures) per (app, endpoint)."""
    results: Results = {}
    factories = {
        "siteaudit-before": "benchmarks.rest:siteaudit_app()",
        "siteaudit": "benchmarks.rest:siteaudit_app()",
        "bare-psycopg": "benchmarks.rest:bare_psycopg_app()",
        "bare-constant": "benchmarks.rest:bare_constant_app()",
    }
    apps = ("siteaudit-before", *APPS) if args.before else APPS
    for app in apps:
        source = Path(args.before) if app == "siteaudit-before" else ROOT
        with gunicorn(factories[app], env, **setting, source=source) as base:
            if app.startswith("siteaudit"):
                bodies = _bodies(base, audit_id, keys[0])
                if not (work / "bodies.json").exists():  # the constant app's bodies
                    (work / "bodies.json").write_bytes(bodies)
                elif (work / "bodies.json").read_bytes() != bodies:
                    print(f"  {app} answers other bytes than siteaudit-before", flush=True)
            for endpoint in ENDPOINTS:
                target = base + endpoint.format(id=audit_id)
                # Warm up: every worker booted and connected (gunicorn answers once ONE worker is up).
                warm_up = max(1.0, min(2.0, args.seconds / 4))
                wrk(target, seconds=warm_up, connections=args.connections, env=env)
                results[app, endpoint] = wrk(
                    target, seconds=args.seconds, connections=args.connections, env=env
                )
                rate, p99, failures = results[app, endpoint]
                print(f"  {app:16} {endpoint:24} {rate:8.0f} req/s   p99 {p99:7.1f} ms"
                      + (f"   {failures} NOT 2xx" if failures else ""), flush=True)  # fmt: skip
    return results


def _bodies(base: str, audit_id: int, key: str) -> bytes:
    """The answers of both endpoints, as bytes: the constant app's bodies, and the before/after check."""
    bodies = {}
    for label, endpoint in zip(("audit", "issues"), ENDPOINTS, strict=True):
        request = urllib.request.Request(
            base + endpoint.format(id=audit_id), headers={"Authorization": f"Bearer {key}"}
        )
        with urllib.request.urlopen(request) as answer:
            bodies[label] = answer.read().decode()
    return json.dumps(bodies).encode()


def verdicts(results: Results) -> None:
    for app, endpoint in [(a, e) for a in ("siteaudit-before", "siteaudit") for e in ENDPOINTS]:
        if (app, endpoint) not in results:
            continue
        rate, p99, failures = results[app, endpoint]
        bare_rate, bare_p99, _ = results["bare-psycopg", endpoint]
        constant = results["bare-constant", endpoint][0]
        if not (bare_rate and bare_p99 and constant):
            # A machine so loaded that wrk saw no answer in time (a smoke run's one second): nothing to compare.
            print(
                f"  {app:16} {endpoint:24} no ratio: a bare app answered nothing within wrk's run", flush=True
            )
            continue
        ratio, slower = rate / bare_rate, p99 / bare_p99
        target = TARGET_RATIO[endpoint]
        passed = ratio >= target and slower <= TARGET_P99_FACTOR and failures == 0
        print(
            f"  {app:16} {endpoint:24} {ratio:5.0%} of bare-psycopg req/s (target >= {target:.0%}), "
            f"p99 {p99:.1f} ms = {slower:.1f}x bare-psycopg's {bare_p99:.1f} ms "
            f"(target <= {TARGET_P99_FACTOR:g}x), {rate / constant:4.0%} of bare-constant: "
            f"{'ok' if passed else 'MISSED'}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    cores = os.cpu_count() or 1
    parser.add_argument("--seconds", type=float, default=10.0, help="load per endpoint and app")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--pages", type=int, default=2_000, help="pages of the audit (issues follow)")
    parser.add_argument("--keys", type=int, default=1_000, help="API keys the load rotates over")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--before", default="", help="a directory holding an earlier commit's siteaudit package, run beside"
    )
    parser.add_argument("--workers", type=int, default=2 * cores, help="gunicorn workers per app")
    parser.add_argument("--threads", type=int, default=4, help="threads per gthread worker")
    parser.add_argument(
        "--settings", default="sync,gthread", help="gunicorn worker classes to run, in order (sync, gthread)"
    )
    args = parser.parse_args()
    settings = [c.strip() for c in args.settings.split(",") if c.strip()]
    if not settings or any(c not in ("sync", "gthread") for c in settings):
        parser.error("--settings takes sync and/or gthread")
    if shutil.which("wrk") is None:
        parser.error("wrk is not installed: apt-get install wrk")

    print(f"load average before: {load()} on {cores} cores", flush=True)
    name = f"siteaudit_bench_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url, dsn = _database(name)
    work = Path(tempfile.mkdtemp(prefix="siteaudit-bench-"))
    try:
        from siteaudit.adapters.sql import dispose_engines, migrate

        migrate(url)
        print(f"writing an audit of {args.pages:,} pages and {args.keys} keys ...", flush=True)
        audit_id, keys = prepare(url, args.pages, args.keys)
        dispose_engines()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("ANALYZE")
        (work / "keys").write_text("\n".join(keys) + "\n")
        (work / "script.lua").write_text(_WRK_SCRIPT)
        env = {
            "SITEAUDIT_DATABASE_URL": url,
            "SITEAUDIT_SECRET_KEY": SECRET_KEY,
            "SITEAUDIT_LOG_LEVEL": "warning",
            "BENCH_DSN": dsn,
            "BENCH_KEYS": str(work / "keys"),
            "BENCH_SCRIPT": str(work / "script.lua"),
            "BENCH_BODIES": str(work / "bodies.json"),
            "BENCH_BOOTED": str(work / "booted"),
        }
        for worker_class in settings:
            threads = args.threads if worker_class == "gthread" else 1
            label = f"{args.workers} {worker_class} workers" + (
                f" x {threads} threads" if worker_class == "gthread" else ""
            )
            print(f"\naudit {audit_id}; {label}; {args.connections} connections, {args.seconds:g} s per "
                  f"endpoint and app", flush=True)  # fmt: skip
            setting = {"workers": args.workers, "worker_class": worker_class, "threads": threads}
            results = measure(setting, audit_id=audit_id, keys=keys, work=work, env=env, args=args)
            verdicts(results)
        print(f"\nload average after: {load()}")
        if args.profile:
            profile(url, dsn, audit_id, keys, before=args.before, keys_file=work / "keys")
        dispose_engines()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        drop(name)


def drop(name: str) -> None:
    """Drop the benchmark's database, retrying a while: a shared server may be out of connections."""
    for attempt in range(30):
        try:
            with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            return
        except psycopg.OperationalError:
            if attempt == 29:
                raise
            time.sleep(2)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--cpu-of"]:  # `profile`'s measure of one app, in a process of its own
        app, url, dsn, audit, keys_file = sys.argv[2:7]
        keys = Path(keys_file).read_text().split()
        if app == "bare-psycopg":
            import falcon.testing

            client = falcon.testing.TestClient(_bare_psycopg(dsn))
        else:
            client = _siteaudit_client(url)
        cpu_a_request(app, client, dsn, int(audit), keys)
    else:
        main()
