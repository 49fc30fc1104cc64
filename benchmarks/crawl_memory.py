"""Benchmark: peak RSS of the crawl engine over a large synthetic site, the crawl data in SQL.

    .venv/bin/python benchmarks/crawl_memory.py [--urls 100000] [--database sqlite:////tmp/crawl_rss.sqlite3]
        [--database postgres] [--slice-pages 5000] [--profile]

The site is generated in process by a Fetcher double (no sockets: the figure is the crawler's own
memory, not a server's): page /p/N links to /p/10N+1 .. /p/10N+10 and back home, robots.txt and the
sitemaps answer 404. Slices run one after another as a worker would run them; the frontier, seen set,
pages, links and issues go to the SQL crawl store: a SQLite file (by default a fresh one in a temporary
directory of its own, removed at the end; a `--database sqlite:///FILE` is removed first), or with
`--database postgres` a fresh database of its own on SITEAUDIT_BENCH_POSTGRES_URL (default: the local
server, user postgres), dropped at the end.

One line per slice (pages so far, the slice's pages/s, RSS now, and where the slice's wall time went:
the crawl store's methods, timed by a thin proxy, against everything else), then the totals: pages/s,
process CPU ms per page, peak RSS (target <= 256 MB at 500,000 URLs) and the store's share of the time.
`--profile` adds a cProfile listing of the whole run (about twice as slow).

The engine reads the frontier's counts after every batch; the store keeps them as counters moved with
the frontier, so a batch costs the same at 500,000 frontier rows as at 5,000. The run checks
that: the first and the last slice's pages/s are printed side by side (target: within 20 %), and the
counters are compared with a real count of the frontier's rows at the end.
"""

import argparse
import cProfile
import os
import pstats
import resource
import secrets
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, cast

import psycopg
from psycopg import sql

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.adapters.sql import dispose_engines, migrate, sql_crawl_store, sql_unit_of_work_factory
from siteaudit.adapters.system import SystemClock
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.network import FetchRequest, FetchResponse
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.network import Fetcher
from siteaudit.services.crawl import CrawlDeps, run_crawl_slice

SITE = "https://retro-clock.example"
T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
ADMIN_URL = os.environ.get("SITEAUDIT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
SECRET_KEY = "bench-secret-key-not-for-production"
RSS_TARGET_MB = 256


class SyntheticSite:
    """A Fetcher double answering a tree-shaped site of `total` pages."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.fetches = 0

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        self.fetches += 1
        path = request.url[len(SITE) :]
        if path == "/":
            number = 0
        elif path.startswith("/p/") and path[3:].isdigit() and int(path[3:]) < self.total:
            number = int(path[3:])
        else:
            return FetchResponse(
                url=request.url, status=404, headers=(("content-type", "text/plain"),), body=b""
            )
        links = "".join(
            f'<li><a href="/p/{child}">Clock model {child}</a></li>'
            for child in range(10 * number + 1, min(10 * number + 11, self.total))
        )
        body = (
            f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Clock {number} of the retro "
            f"workshop</title><meta name=description content='Clock number {number}, hand built.'></head>"
            f"<body><h1>Clock {number}</h1><p>Hand-built clock {number}.</p><ul>{links}</ul>"
            f'<a href="/">Home</a></body></html>'
        ).encode()
        headers = (("content-type", "text/html; charset=utf-8"),)
        return FetchResponse(url=request.url, status=200, headers=headers, body=body, ttfb_ms=1, total_ms=1)

    async def aclose(self) -> None:
        pass


class TimedStore:
    """A CrawlStore proxy adding up the wall time of each method (calls pass through unchanged)."""

    def __init__(self, store: CrawlStore) -> None:
        self._store = store
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._store, name)
        if not callable(target):
            return target

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return target(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - started
                self.calls[name] += 1

        return timed

    def snapshot(self) -> dict[str, float]:
        return dict(self.seconds)


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def database(choice: str) -> Iterator[str]:
    """The SQLAlchemy URL to crawl into: a fresh SQLite file, or a fresh PostgreSQL database (dropped)."""
    if not choice:
        # A file of this run's own: runs at the same time on one machine (CI jobs, other checkouts) would
        # remove and rewrite each other's file at one fixed path.
        with tempfile.TemporaryDirectory(prefix="crawl_memory_") as tmp:
            try:
                yield f"sqlite:///{tmp}/crawl.sqlite3"
            finally:
                dispose_engines()
        return
    if choice != "postgres":
        if choice.startswith("sqlite:////"):
            path = choice.removeprefix("sqlite:///")
            for leftover in (path, f"{path}-wal", f"{path}-shm"):
                if os.path.exists(leftover):
                    os.remove(leftover)
        yield choice
        return
    name = f"siteaudit_bench_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    password = f":{info['password']}" if info.get("password") else ""
    try:
        yield (
            f"postgresql+psycopg://{info.get('user', 'postgres')}{password}@{info.get('host', '127.0.0.1')}"
            f":{info.get('port', 5432)}/{name}"
        )
    finally:
        dispose_engines()
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def make_audit(uow_factory: Callable[[], Any], urls: int) -> AuditId:
    with uow_factory() as uow:
        owner = uow.users.add(User(UserId(0), "owner@retro-clock.example", "scale", T0))
        team = uow.teams.add(Team(TeamId(0), "Retro Clock", owner.id, T0))
        audit = uow.audits.add(
            Audit(
                AuditId(0),
                team.id,
                owner.id,
                owner.id,
                f"{SITE}/",
                SITE,
                T0,
                max_pages=urls,
                concurrency=20,
                max_rps=10.0,
            )
        )
        uow.commit()
    return cast(AuditId, audit.id)


def shares(seconds: dict[str, float], wall: float, top: int = 3) -> str:
    ranked = sorted(seconds.items(), key=lambda item: -item[1])[:top]
    store = sum(seconds.values())
    parts = [f"{name} {spent / wall:.0%}" for name, spent in ranked if spent > 0]
    return f"store {store / wall:.0%} ({', '.join(parts)})"


def crawl(args: argparse.Namespace, url: str) -> None:
    migrate(url)
    uow_factory = sql_unit_of_work_factory(url, secret_key=SECRET_KEY)
    inner = sql_crawl_store(url)
    store = TimedStore(inner)
    audit_id = make_audit(uow_factory, args.urls)
    site = SyntheticSite(args.urls)

    def factory(connections: int) -> Fetcher:
        return site

    deps = CrawlDeps(
        uow=uow_factory,
        crawl=cast(CrawlStore, store),
        fetcher_factory=factory,
        parser=LibraryPageParser(),
        clock=SystemClock(),
        queue=MemoryTaskQueue(),
        limits=CrawlLimits(
            slice_pages=args.slice_pages, slice_seconds=3600, unlimited_rate=True, fetch_images=False
        ),
    )
    before = rss_mb()
    print(
        f"synthetic site: {args.urls:,} URLs on {url.split('://', 1)[0]}; RSS before crawling {before:.0f} MB"
    )
    profiler = cProfile.Profile() if args.profile else None
    started, cpu_started = time.perf_counter(), time.process_time()
    slices = 0
    crawled = 0
    rates: list[float] = []  # pages/s of each slice
    cpus: list[float] = []  # process CPU ms per page of each slice
    while True:
        slice_started, spent_before = time.perf_counter(), store.snapshot()
        cpu_before = time.process_time()
        if profiler is not None:
            profiler.enable()
        outcome = run_crawl_slice(audit_id, deps)
        if profiler is not None:
            profiler.disable()
        slices += 1
        wall = time.perf_counter() - slice_started
        cpu_slice = time.process_time() - cpu_before
        spent = {name: seconds - spent_before.get(name, 0.0) for name, seconds in store.snapshot().items()}
        crawled = outcome.pages_crawled
        rates.append(outcome.fetched / wall)
        cpus.append(cpu_slice * 1000 / max(1, outcome.fetched))
        print(
            f"  slice {slices:>3}: {crawled:>8,} pages, {outcome.fetched / wall:6.0f} pages/s, "
            f"{cpu_slice * 1000 / max(1, outcome.fetched):5.2f} ms CPU/page, "
            f"RSS {rss_mb():4.0f} MB (peak {peak_rss_mb():4.0f}), {shares(spent, wall)}",
            flush=True,
        )
        if outcome.next != "slice":
            break
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    peak = peak_rss_mb()
    stored = store.page_count(audit_id)
    assert crawled == args.urls == stored, (crawled, args.urls, stored)
    print(
        f"crawled {crawled:,} pages in {slices} slices, {elapsed:.0f} s: {crawled / elapsed:.0f} pages/s, "
        f"{cpu * 1000 / crawled:.2f} ms process CPU per page; {stored:,} pages stored"
    )
    print(
        f"peak RSS {peak:.0f} MB (target <= {RSS_TARGET_MB} MB: {'ok' if peak <= RSS_TARGET_MB else 'OVER'}); "
        f"RSS before crawling {before:.0f} MB, growth {peak - before:.0f} MB, at most "
        f"{(peak - before) * 2**20 / crawled:.0f} bytes per URL"
    )
    first, last = rates[0], rates[-1]
    drift = last / first - 1
    print(
        f"first slice {first:.0f} pages/s, last slice {last:.0f} pages/s: {drift:+.0%} "
        f"(target: within 20 %: {'ok' if abs(drift) <= 0.20 else 'MISSED'})"
    )
    print(
        f"first slice {cpus[0]:.2f} ms CPU per page, last slice {cpus[-1]:.2f} ms: {cpus[-1] / cpus[0] - 1:+.0%} "
        "(what a busy machine does not move)"
    )
    read = time.perf_counter()
    kept = dict(inner.frontier_counts(audit_id))
    read, scan = time.perf_counter() - read, time.perf_counter()
    counted = dict(inner.frontier_recount(audit_id))
    scan = time.perf_counter() - scan
    print(
        f"the counts at the end: {read * 1000:.2f} ms from the counters, {scan * 1000:.0f} ms counting the rows"
    )
    assert kept == counted, f"the frontier counters {kept} differ from a count of the rows {counted}"
    print(
        f"frontier counters equal a count of the rows: {', '.join(f'{s.name} {n:,}' for s, n in kept.items())}"
    )
    total = {name: seconds for name, seconds in store.seconds.items()}
    print(f"wall time in the crawl store: {shares(total, elapsed, top=5)}")
    top = sorted(total, key=lambda n: -total[n])[:5]
    for name in [*top, *(["frontier_counts"] if "frontier_counts" not in top else [])]:
        print(
            f"  {name:<16} {store.calls[name]:>7,} calls {total[name] * 1000 / store.calls[name]:8.2f} ms each"
        )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main() -> None:
    options = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options.add_argument("--urls", "--pages", dest="urls", type=int, default=100_000)
    options.add_argument(
        "--database",
        default="",
        help="a sqlite:/// URL, or 'postgres' (default: a SQLite file in a temporary directory)",
    )
    options.add_argument("--slice-pages", type=int, default=5000)
    options.add_argument("--profile", action="store_true", help="print a cProfile listing (slower)")
    args = options.parse_args()
    with database(args.database) as url:
        crawl(args, url)


if __name__ == "__main__":
    main()
