"""Benchmark: the crawler's fetch path against a bare httpx loop, same client settings, concurrency 20.

    .venv/bin/python benchmarks/crawl_fetch.py [--corpus /usr/share/doc/python3.11/html] [--rounds 3]

A separate process serves the corpus from memory on 127.0.0.1 (asyncio, HTTP/1.1 keep-alive). The
crawler's path: robots.txt rules consulted per URL, the per-host pacer (its rate lifted by the
benchmark-only `unlimited_rate` switch, the bookkeeping still done), redirects followed hop by hop,
the SSRF guard (resolve once, judge, connect to the checked address), the body cap and the deadline.
The bare loop: one httpx AsyncClient with the same pool size, timeouts and headers, GET and read.
Figures: pages/s of each, their ratio, and client CPU ms per fetch.
"""

import argparse
import asyncio
import multiprocessing
import os
import pathlib
import time
from collections.abc import Mapping

import httpx2 as httpx

from siteaudit.adapters.http.fetcher import ACCEPT_ENCODING, FetchLimits, HttpxFetcher
from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.adapters.system import SystemClock
from siteaudit.domain.crawl import ROBOTS_AGENT, CrawlLimits, Scope
from siteaudit.domain.identity import USER_AGENT
from siteaudit.domain.network import AddressPolicy
from siteaudit.services.crawl.politeness import Pacer, Politely

HOST = "docs.retro-clock.example"
CONCURRENCY = 20
ROBOTS = b"User-agent: *\nDisallow: /private/\n"


def serve(files: Mapping[str, bytes], port_out: "multiprocessing.Queue[int]") -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode()
                body = ROBOTS if path == "/robots.txt" else files.get(path)
                if body is None:
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                else:
                    kind = b"text/plain" if path.endswith(".txt") else b"text/html; charset=utf-8"
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: "
                        + kind
                        + b"\r\nContent-Length: "
                        + str(len(body)).encode()
                        + b"\r\n\r\n"
                        + body
                    )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256)
        port_out.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


async def bare(urls: list[str]) -> tuple[float, float]:
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    timeout = httpx.Timeout(connect=10.0, read=15.0, write=10.0, pool=30.0)
    gate = asyncio.Semaphore(CONCURRENCY)
    async with httpx.AsyncClient(
        limits=limits,
        timeout=timeout,
        trust_env=False,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
    ) as client:

        async def one(url: str) -> int:
            async with gate:
                response = await client.get(url)
                return len(response.content)

        wall, cpu = time.perf_counter(), time.process_time()
        sizes = await asyncio.gather(*(one(u) for u in urls))
        assert all(sizes)
        return time.perf_counter() - wall, time.process_time() - cpu


async def crawler(urls: list[str]) -> tuple[float, float]:
    limits = CrawlLimits(max_pages=len(urls), concurrency=CONCURRENCY, max_rps=10.0, unlimited_rate=True)
    scope = Scope.of(urls[0])
    fetcher = HttpxFetcher(
        StaticResolver({HOST: ["127.0.0.1"]}),
        AddressPolicy.from_setting("127.0.0.0/8"),
        limits=FetchLimits(max_connections=CONCURRENCY),
    )
    parser = LibraryPageParser()
    async with fetcher:
        politely = Politely(fetcher, Pacer(limits, scope.host, None), limits, SystemClock(), scope, ())
        wall, cpu = time.perf_counter(), time.process_time()
        robots_url = scope.url("/robots.txt")
        answer = (await politely.follow(politely.request(robots_url, max_bytes=500 * 1024))).response
        rules = parser.robots(url=robots_url, status_code=answer.status, body=answer.body).rules

        async def one(url: str) -> int:
            if not rules.can_fetch(url, ROBOTS_AGENT):
                return 1
            followed = await politely.follow(politely.request(url, max_bytes=limits.page_bytes))
            assert followed.response.ok, followed.response.error_detail
            return len(followed.response.body)

        sizes = await asyncio.gather(*(one(u) for u in urls))
        assert all(sizes)
        return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--corpus", default="/usr/share/doc/python3.11/html")
    options.add_argument("--rounds", type=int, default=3)
    args = options.parse_args()
    corpus = pathlib.Path(args.corpus)
    files = {"/" + p.relative_to(corpus).as_posix(): p.read_bytes() for p in sorted(corpus.rglob("*.html"))}
    ports: multiprocessing.Queue[int] = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(files, ports), daemon=True)
    server.start()
    try:
        port = ports.get(timeout=120)  # generous: a loaded machine starts processes slowly
        if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 1:
            cores = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(server.pid, {cores[0]})  # server and client on their own cores
            os.sched_setaffinity(0, {cores[1]})
        plain = [f"http://127.0.0.1:{port}{path}" for path in files]
        ours = [f"http://{HOST}:{port}{path}" for path in files]
        print(
            f"corpus: {len(files)} pages, {sum(map(len, files.values())) / 1e6:.1f} MB, concurrency {CONCURRENCY}"
        )
        bare_runs, our_runs = [], []
        for _ in range(args.rounds):
            bare_runs.append(asyncio.run(bare(plain)))
            our_runs.append(asyncio.run(crawler(ours)))
        (bare_wall, bare_cpu), (our_wall, our_cpu) = min(bare_runs), min(our_runs)
        n = len(files)
        print(f"bare httpx loop:   {n / bare_wall:8.1f} pages/s  {bare_cpu * 1000 / n:.2f} ms CPU per fetch")
        print(f"crawler fetch path:{n / our_wall:8.1f} pages/s  {our_cpu * 1000 / n:.2f} ms CPU per fetch")
        print(
            f"ratio crawler/bare: {bare_wall / our_wall:.1%} (target >= 80%); CPU per fetch target <= 2.5 ms"
        )
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()
