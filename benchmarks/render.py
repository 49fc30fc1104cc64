"""Benchmark: our rendered crawl against a bare Playwright loop over the same pages with the same browser.

    .venv/bin/python benchmarks/render.py [--pages 200] [--tabs 4] [--rounds 1] [--settle 0.25]
        [--chromium /usr/bin/chromium]

A local site on 127.0.0.1 (a threaded stdlib server): every page is a shell whose script (/app.js) writes
its heading, its text and links to the next pages, like a small single-page app. Two runs over it:

- ours: an audit with `render` crawled through the engine (memory stores, unpaced), each page fetched raw,
  then rendered by `PlaywrightRenderer` with every browser request answered by the crawler's guard, the
  page checks run on the rendered DOM;
- bare: the same chromium launched by Playwright with its defaults, `tabs` pages at a time, each URL of
  the site loaded (`goto`, load event, then the DOM read), nothing intercepted, nothing parsed.

Printed side by side: pages/s, CPU per page (this process and every process under it: the Playwright
driver and the browser), the browser's peak memory (the PSS of its processes summed: their RSS with shared
pages counted once); then ours/bare pages/s (goal >= 0.8). Ours settles each page (the network quiet for
`RenderBudget.settle_s` after the load event) where the bare loop reads the DOM at the load event.
"""

import argparse
import asyncio
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.async_api import async_playwright

from siteaudit.adapters.http.fetcher import FetchLimits, HttpxFetcher
from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.adapters.render.playwright import CHROMIUM, PlaywrightRenderer
from siteaudit.adapters.system import SystemClock
from siteaudit.domain.audit import Audit
from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.render import RenderBudget
from siteaudit.ports.network import Fetcher
from siteaudit.services.crawl import CrawlDeps, run_crawl_slice

GOAL = 0.8
TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
APP_JS = b"""
const n = Number(location.pathname.replace(/\\D/g, "") || 0);
const total = Number(document.body.dataset.total);
document.title = `Clock ${n} | Render bench`;
const links = [1, 2, 3].map(k => (n * 3 + k) % total).map(m => `<a href="/p/${m}">Clock ${m}</a>`);
document.getElementById("app").innerHTML = `<h1>Clock ${n}</h1><p>${"tick tock ".repeat(80)}</p>` +
  `<nav>${links.join(" ")}</nav>`;
"""


def serve(total: int) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/app.js":
                body, kind, status = APP_JS, "text/javascript", 200
            elif path == "/" or (path.startswith("/p/") and path[3:].isdigit() and int(path[3:]) < total):
                body = (
                    "<!doctype html><html lang=en><head><meta charset=utf-8><title>Loading</title>"
                    f'<script src="/app.js" defer></script></head><body data-total="{total}">'
                    '<div id="app">Loading</div></body></html>'
                ).encode()
                kind, status = "text/html; charset=utf-8", 200
            else:
                body, kind, status = b"not found", "text/plain", 404
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


# --- the process tree: CPU and the browser's RSS -----------------------------------------------------


def _tree() -> dict[int, tuple[int, str, int, int]]:
    """pid -> (parent, command, cpu ticks, rss bytes) of every process."""
    found: dict[int, tuple[int, str, int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                name_end = (text := stat.read()).rindex(")")
            fields = text[name_end + 2 :].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read().split(b"\0", 1)[0].decode(errors="replace")
        except (OSError, ValueError):
            continue
        found[int(entry)] = (
            int(fields[1]),
            command,
            int(fields[11]) + int(fields[12]),
            int(fields[21]) * PAGE_SIZE,
        )
    return found


def _descendants(tree: dict[int, tuple[int, str, int, int]]) -> list[int]:
    me = os.getpid()
    mine = []
    for pid in tree:
        at = pid
        while at > 1 and at in tree:
            at = tree[at][0]
            if at == me:
                mine.append(pid)
                break
    return mine


def tree_cpu_s() -> float:
    """CPU seconds of this process and of its living descendants."""
    tree = _tree()
    ticks = sum(tree[pid][2] for pid in [os.getpid(), *_descendants(tree)] if pid in tree)
    return ticks / TICKS


def _pss(pid: int) -> int:
    """Proportional set size: resident memory with the pages shared between processes divided among them
    (summing plain RSS over chromium's processes counts its shared libraries once per process)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def browser_rss() -> int:
    """The browser's memory: the PSS of every chromium process under this one."""
    tree = _tree()
    return sum(_pss(pid) for pid in _descendants(tree) if "chrom" in tree[pid][1])


@contextmanager
def peak_browser_rss() -> Iterator[list[int]]:
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], browser_rss())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


# --- ours --------------------------------------------------------------------------------------------


def ours(origin: str, pages: int, tabs: int, chromium: str, settle_s: float) -> tuple[int, float, float, int]:
    """(pages rendered, seconds, CPU seconds, peak browser RSS) of an audit with `render`."""
    store, crawl = MemoryStore(), MemoryCrawlStore()
    with MemoryUnitOfWork(store) as uow:
        audit = uow.audits.add(
            Audit(
                id=AuditId(0),
                team_id=TeamId(1),
                user_id=UserId(1),
                payer_id=UserId(1),
                url=f"{origin}/",
                origin=origin,
                created_at=datetime.now(UTC),
                max_pages=pages,
                concurrency=tabs,
                max_rps=10.0,
                render=True,
            )
        )
        uow.commit()

    def fetcher(connections: int) -> Fetcher:
        limits = FetchLimits(connect_s=2.0, read_s=10.0, deadline_s=10.0, max_connections=connections * 2)
        return HttpxFetcher(StaticResolver({}), AddressPolicy.from_setting("127.0.0.0/8"), limits=limits)

    renderer = PlaywrightRenderer(executable=chromium, max_tabs=tabs, pages_per_browser=10_000)
    deps = CrawlDeps(
        uow=lambda: MemoryUnitOfWork(store),
        crawl=crawl,
        fetcher_factory=fetcher,
        parser=LibraryPageParser(),
        clock=SystemClock(),
        queue=MemoryTaskQueue(),
        limits=CrawlLimits(unlimited_rate=True, slice_pages=100_000, slice_seconds=3600, fetch_images=False),
        renderer=renderer,
        render_budget=RenderBudget(time_s=15.0, settle_s=settle_s),
    )
    # The browser starts before the clock does: the bare loop's launch is not timed either.
    asyncio.run(_warm(renderer, origin))
    with peak_browser_rss() as peak:
        cpu, started = tree_cpu_s(), time.perf_counter()
        while run_crawl_slice(audit.id, deps).next == "slice":
            pass
        elapsed, cpu = time.perf_counter() - started, tree_cpu_s() - cpu
    renderings = [p.facts.rendering for p in crawl.stream_pages(audit.id) if p.facts.rendering is not None]
    rendered = len(renderings)
    if os.environ.get("RENDER_BENCH_DEBUG"):
        print("render ms", sorted(r.elapsed_ms for r in renderings))
    asyncio.run(renderer.aclose())
    return rendered, elapsed, cpu, peak[0]


async def _warm(renderer: PlaywrightRenderer, origin: str) -> None:
    from siteaudit.domain.network import FetchResponse
    from siteaudit.domain.render import Refusal
    from siteaudit.ports.render import BrowserRequest, Refused

    async def refuse(request: BrowserRequest) -> Refused:
        return Refused(Refusal.THIRD_PARTY)

    async with renderer.session(refuse) as session:
        await session.render(
            FetchResponse(f"{origin}/warm", 200, (("content-type", "text/html"),), b"<p>warm</p>"),
            budget=RenderBudget(time_s=10.0, settle_s=0.0),
        )


# --- bare --------------------------------------------------------------------------------------------


async def bare(origin: str, pages: int, tabs: int, chromium: str) -> tuple[int, float, float, int]:
    urls = [f"{origin}/", *(f"{origin}/p/{n}" for n in range(1, pages))]
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium)
        context = await browser.new_context()
        queue: asyncio.Queue[str] = asyncio.Queue()
        for url in urls:
            queue.put_nowait(url)
        done = 0

        async def tab() -> None:
            nonlocal done
            page = await context.new_page()
            while not queue.empty():
                url = queue.get_nowait()
                await page.goto(url, wait_until="load")
                await page.content()
                done += 1
            await page.close()

        with peak_browser_rss() as peak:
            cpu, started = tree_cpu_s(), time.perf_counter()
            await asyncio.gather(*(tab() for _ in range(tabs)))
            elapsed, cpu = time.perf_counter() - started, tree_cpu_s() - cpu
        await browser.close()
    return done, elapsed, cpu, peak[0]


def main() -> int:
    options = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options.add_argument("--pages", type=int, default=200)
    options.add_argument("--tabs", type=int, default=4)
    options.add_argument("--rounds", type=int, default=1)
    options.add_argument("--chromium", default=CHROMIUM)
    options.add_argument(
        "--settle", type=float, default=RenderBudget().settle_s, help="ours: quiet seconds after load"
    )
    args = options.parse_args()
    if not os.path.exists(args.chromium):
        print(f"{args.chromium} is missing: apt-get install chromium (docs/rendering.md)")
        return 1
    server, origin = serve(args.pages)
    print(f"{args.pages} pages, {args.tabs} tabs, settle {args.settle:g} s, chromium {args.chromium}")
    ratios = []
    try:
        for round_ in range(1, args.rounds + 1):
            b_pages, b_s, b_cpu, b_rss = asyncio.run(bare(origin, args.pages, args.tabs, args.chromium))
            o_pages, o_s, o_cpu, o_rss = ours(origin, args.pages, args.tabs, args.chromium, args.settle)
            ours_rate, bare_rate = o_pages / o_s, b_pages / b_s
            ratios.append(ours_rate / bare_rate)
            print(f"round {round_}")
            print(f"  bare Playwright loop   {bare_rate:7.1f} pages/s  ({b_pages} pages in {b_s:.1f} s)")
            print(f"  ours (rendered crawl)  {ours_rate:7.1f} pages/s  ({o_pages} pages in {o_s:.1f} s)")
            print(
                f"  CPU per page, ours {1000 * o_cpu / o_pages:.0f} ms, bare {1000 * b_cpu / b_pages:.0f} ms"
            )
            print(f"  peak browser RSS (PSS summed), ours {o_rss >> 20} MB, bare {b_rss >> 20} MB")
    finally:
        server.shutdown()
        server.server_close()
    best = max(ratios)
    print(f"ratio ours/bare pages/s {best:.2f} (goal >= {GOAL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
