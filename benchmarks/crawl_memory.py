"""Benchmark: peak RSS of the crawl engine over a large synthetic site, the crawl data in SQLite.

    .venv/bin/python benchmarks/crawl_memory.py [--pages 100000] [--database sqlite:////tmp/crawl_rss.sqlite3]

The site is generated in process by a Fetcher double (no sockets: the figure is the crawler's own
memory, not a server's): page /p/N links to /p/10N+1 .. /p/10N+10 and back home, robots.txt and the
sitemaps answer 404. Slices run one after another as a worker would run them; the frontier, seen set,
pages, links and issues go to the SQL crawl store. Prints peak RSS, the RSS before crawling, pages/s.
"""

import argparse
import os
import resource
import time
from datetime import UTC, datetime

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.adapters.sql import migrate, sql_crawl_store, sql_unit_of_work_factory
from siteaudit.adapters.system import SystemClock
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.network import FetchRequest, FetchResponse
from siteaudit.ports.network import Fetcher
from siteaudit.services.crawl import CrawlSettings, crawl_audit_inline

SITE = "https://retro-clock.example"
T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


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


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--pages", type=int, default=100_000)
    options.add_argument("--database", default="sqlite:////tmp/crawl_rss.sqlite3")
    args = options.parse_args()
    if args.database.startswith("sqlite:////"):
        path = args.database.removeprefix("sqlite:///")
        if os.path.exists(path):
            os.remove(path)
    migrate(args.database)
    uow_factory = sql_unit_of_work_factory(args.database)
    crawl = sql_crawl_store(args.database)
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
                max_pages=args.pages,
                concurrency=20,
                max_rps=10.0,
            )
        )
        uow.commit()
    site = SyntheticSite(args.pages)

    def factory(connections: int) -> Fetcher:
        return site

    settings = CrawlSettings(slice_pages=5000, slice_seconds=300, unlimited_rate=True, fetch_images=False)
    before = rss_mb()
    started = time.perf_counter()
    outcomes = crawl_audit_inline(
        audit.id,
        uow=uow_factory(),
        crawl=crawl,
        fetcher_factory=factory,
        parser=LibraryPageParser(),
        clock=SystemClock(),
        queue=MemoryTaskQueue(),
        settings=settings,
    )
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with uow_factory() as uow:
        crawled = uow.audits.get_any(audit.id).pages_crawled
    print(
        f"synthetic site: {args.pages} URLs; crawled {crawled} pages in {len(outcomes)} slices, {elapsed:.0f} s "
        f"({crawled / elapsed:.0f} pages/s), {crawl.page_count(audit.id)} pages stored"
    )
    print(f"RSS before crawling: {before:.0f} MB; peak RSS: {peak:.0f} MB (target <= 256 MB)")


if __name__ == "__main__":
    main()
