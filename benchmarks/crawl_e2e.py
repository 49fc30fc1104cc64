"""Benchmark: the end-to-end crawl into PostgreSQL against a plain Scrapy spider, same corpus, same server.

    .venv/bin/python benchmarks/crawl_e2e.py [--corpus /usr/share/doc/python3.11/html] [--rounds 2]
        [--server nginx|stdlib]

Needs Scrapy in the virtualenv for the comparison (`.venv/bin/pip install scrapy`: a benchmark tool, not
a dependency of the project) and PostgreSQL on SITEAUDIT_BENCH_POSTGRES_URL (default: 127.0.0.1:5432,
user postgres, trust auth). The corpus is served on 127.0.0.1 by nginx (`apt-get install nginx-light`)
or, with `--server stdlib` or without nginx, by a threaded stdlib server in a process of its own; both
crawlers crawl that same server from `index.html`, at concurrency 20.

Ours: the project's crawl slices (`run_crawl_slice` until the crawl stops) with the production fetcher (SSRF guard, resolved
name, connect to the checked address), robots.txt and sitemaps read, pages parsed into facts, page
checks run, pages, links and issues written through the SQL crawl store into a fresh database (created
here, dropped at the end). Only the per-host rate limit is lifted (`CrawlLimits(unlimited_rate=True)`),
and image checks are off (`fetch_images=False`) so that both crawlers fetch the same documents.

Scrapy: a plain spider in a subprocess (its reactor stays out of this process), default settings but
concurrency 20 (global and per domain) and robots.txt obeyed, extracting only titles and links and
following the site's own links.

Reports our process CPU ms per page (target <= 4.5 ms; the PostgreSQL backends' and the server's CPU
are printed beside it), pages/s of each and their ratio (reported, no longer a target: on a machine of
two cores the ratio follows the load more than the code), and checks that both found every page
reachable from the start page (a reference walk of the corpus files) by comparing URL sets.
Each round runs both; the best round of each is reported.
"""

import argparse
import contextlib
import cProfile
import importlib.util
import json
import os
import pathlib
import pstats
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urldefrag, urljoin, urlsplit

import psycopg
from psycopg import sql
from selectolax.lexbor import LexborHTMLParser

CONCURRENCY = 20
HOST = "docs.retro-clock.example"  # our crawler resolves it (StaticResolver) to 127.0.0.1
ADMIN_URL = os.environ.get("SITEAUDIT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
SECRET_KEY = "bench-secret-key-not-for-production"
CPU_TARGET_MS = 4.5

NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    keepalive_timeout 60s;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ }}
    }}
}}
"""


# --- the server -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120  # a loaded machine starts a Python process slowly
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    raise RuntimeError("the server did not start listening")


# `python -m http.server`, but on a port of its choosing, printed: a port found free here and bound by
# the server later may be taken in between on a shared machine.
STDLIB_SERVER = """
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@contextlib.contextmanager
def serving(corpus: pathlib.Path, kind: str) -> Iterator[tuple[int, str, int]]:
    """(port, description, pid) of a server of `corpus` on 127.0.0.1, stopped on exit."""
    port = free_port()
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    stdlib = kind != "nginx" or nginx is None
    with tempfile.TemporaryDirectory(prefix="crawl_e2e_") as tmp:
        if nginx is not None and not stdlib:
            conf = pathlib.Path(tmp, "nginx.conf")
            conf.write_text(NGINX_CONF.format(tmp=tmp, port=port, root=corpus))
            command = [nginx, "-p", tmp, "-e", f"{tmp}/error.log", "-c", str(conf)]
            version = subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.strip()
            described = f"{version.removeprefix('nginx version: ')}, 1 worker"
        else:
            command = [sys.executable, "-c", STDLIB_SERVER, str(corpus)]
            described = "stdlib ThreadingHTTPServer (HTTP/1.0)"
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE if stdlib else subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            if stdlib:
                assert process.stdout is not None
                port = int(process.stdout.readline() or 0)  # 0: it exited (wait_for says so)
            wait_for(port, process)
            yield port, described, process.pid
        finally:
            process.terminate()
            process.wait(timeout=10)


def process_cpu_s(pid: int) -> float:
    """utime + stime of a process and its reaped children, from /proc (0.0 when gone)."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def children_cpu_s(pid: int) -> float:
    """CPU of `pid` and of its child processes (nginx's worker is the master's child). A server's threads
    come and go while /proc is read (the stdlib server runs a thread per connection): a thread or a
    process gone by the time it is read counts for nothing."""
    total = process_cpu_s(pid)
    with contextlib.suppress(OSError):
        for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                total += sum(process_cpu_s(int(child)) for child in (task / "children").read_text().split())
    return total


# --- the reference: what is reachable from the start page ---------------------------------------------


def reachable(corpus: pathlib.Path, start: str) -> tuple[set[str], set[str]]:
    """Paths reachable by <a href> from `start` within the corpus, and those of them that are missing."""
    base = "http://reference.invalid"
    seen, missing, todo = {start}, set(), [start]
    while todo:
        path = todo.pop()
        file = corpus / path.lstrip("/")
        if not file.is_file():
            missing.add(path)
            continue
        if not path.endswith((".html", ".htm")):
            continue
        for node in LexborHTMLParser(file.read_bytes()).css("a[href]"):
            href = node.attributes.get("href")
            if not href:
                continue
            target = urldefrag(urljoin(base + path, href.strip()))[0]
            if not target.startswith(base + "/"):
                continue
            target_path = urlsplit(target).path
            if target_path not in seen:
                seen.add(target_path)
                todo.append(target_path)
    return seen, missing


# --- ours ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def fresh_database() -> Iterator[tuple[str, str]]:
    """(SQLAlchemy URL, libpq DSN) of a new database, dropped on exit."""
    from siteaudit.adapters.sql import dispose_engines

    name = f"siteaudit_bench_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    password = f":{info['password']}" if info.get("password") else ""
    url = (
        f"postgresql+psycopg://{info.get('user', 'postgres')}{password}@{info.get('host', '127.0.0.1')}"
        f":{info.get('port', 5432)}/{name}"
    )
    try:
        yield url, psycopg.conninfo.make_conninfo(ADMIN_URL, dbname=name)
    finally:
        dispose_engines()
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def backend_cpu_s(dsn: str) -> float:
    """CPU of the PostgreSQL backends connected to the database of `dsn` (this query's own excluded)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return sum(process_cpu_s(int(pid)) for (pid,) in rows)


def ours(port: int, *, profile: bool = False) -> dict[str, Any]:
    from siteaudit.adapters.http.fetcher import FetchLimits, HttpxFetcher
    from siteaudit.adapters.http.resolver import StaticResolver
    from siteaudit.adapters.memory.queue import MemoryTaskQueue
    from siteaudit.adapters.parse import LibraryPageParser
    from siteaudit.adapters.sql import dispose_engines, migrate, sql_crawl_store, sql_unit_of_work_factory
    from siteaudit.adapters.system import SystemClock
    from siteaudit.domain.account import Team, User
    from siteaudit.domain.audit import Audit
    from siteaudit.domain.crawl import CrawlLimits
    from siteaudit.domain.identity import USER_AGENT
    from siteaudit.domain.ids import AuditId, TeamId, UserId
    from siteaudit.domain.network import AddressPolicy
    from siteaudit.ports.network import Fetcher
    from siteaudit.services.crawl import CrawlDeps, SliceOutcome, run_crawl_slice

    origin = f"http://{HOST}:{port}"
    with fresh_database() as (url, dsn):
        migrate(url)
        uow_factory = sql_unit_of_work_factory(url, secret_key=SECRET_KEY)
        crawl = sql_crawl_store(url)
        t0 = datetime.now(UTC)
        with uow_factory() as uow:
            owner = uow.users.add(User(UserId(0), "bench@retro-clock.example", "scale", t0))
            team = uow.teams.add(Team(TeamId(0), "Bench", owner.id, t0))
            audit = uow.audits.add(
                Audit(
                    AuditId(0),
                    team.id,
                    owner.id,
                    owner.id,
                    f"{origin}/index.html",
                    origin,
                    t0,
                    max_pages=10_000,
                    concurrency=CONCURRENCY,
                    max_rps=10.0,
                )
            )
            uow.commit()
        dispose_engines()  # the crawl's connections start fresh: their backends' CPU is the crawl's
        resolver = StaticResolver({HOST: ["127.0.0.1"]})
        policy = AddressPolicy.from_setting("127.0.0.0/8")

        def fetcher_factory(connections: int) -> Fetcher:
            # As bootstrap builds it: one small pool per slice.
            return HttpxFetcher(
                resolver, policy, limits=FetchLimits(max_connections=connections), user_agent=USER_AGENT
            )

        deps = CrawlDeps(
            uow=uow_factory,
            crawl=crawl,
            fetcher_factory=fetcher_factory,
            parser=LibraryPageParser(),
            clock=SystemClock(),
            queue=MemoryTaskQueue(),
            limits=CrawlLimits(unlimited_rate=True, fetch_images=False),
        )
        profiler = cProfile.Profile(time.process_time) if profile else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        outcomes: list[SliceOutcome] = []
        while not outcomes or outcomes[-1].next == "slice":  # slice after slice, as workers would
            outcomes.append(run_crawl_slice(audit.id, deps))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if profiler is not None:
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(35)
            profiler.dump_stats("/tmp/crawl_e2e.prof")
        database_cpu = backend_cpu_s(dsn)
        fetched = sum(outcome.fetched for outcome in outcomes)
        paths: set[str] = set()
        statuses: dict[int, int] = {}
        with psycopg.connect(dsn) as conn:
            # Read with a plain query: the figures should not depend on the store's reading API.
            pages = conn.execute(
                "SELECT u.url, p.status_code FROM crawl_pages p JOIN crawl_urls u"
                " ON u.audit_id = p.audit_id AND u.id = p.url_id WHERE p.audit_id = %s",
                (audit.id,),
            ).fetchall()
            for page_url, status in pages:
                if status is None or not page_url.startswith(origin):
                    continue
                paths.add(urlsplit(page_url).path)
                statuses[status] = statuses.get(status, 0) + 1
            counts = {
                table: int(
                    conn.execute(
                        sql.SQL("SELECT count(*) FROM {} WHERE audit_id = %s").format(sql.Identifier(table)),
                        (audit.id,),
                    ).fetchone()[0]  # type: ignore[index]
                )
                for table in ("crawl_pages", "crawl_links", "crawl_issues")
            }
    return {
        "wall": wall,
        "cpu": cpu,
        "database_cpu": database_cpu,
        "fetched": fetched,
        "slices": len(outcomes),
        "paths": paths,
        "statuses": statuses,
        "rows": counts,
    }


# --- Scrapy, in a child process -------------------------------------------------------------------------


def scrapy_child(start: str, out: str) -> None:
    """The plain spider: titles and links, same-site links followed; URLs and timings written to `out`."""
    import scrapy
    import twisted
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.http import HtmlResponse

    clock: dict[str, float] = {}
    fetched: list[tuple[str, int]] = []
    titles: list[int] = [0, 0]  # titles, links extracted

    class TitlesAndLinks(scrapy.Spider):
        name = "titles_and_links"
        allowed_domains: ClassVar[list[str]] = [urlsplit(start).hostname or ""]
        start_urls: ClassVar[list[str]] = [start]
        handle_httpstatus_list: ClassVar[list[int]] = [404]  # a broken link is found too, as ours records it

        def parse(self, response: Any, **kwargs: Any) -> Any:
            fetched.append((response.url, response.status))
            if not isinstance(response, HtmlResponse):
                return
            title = response.css("title::text").get()
            links = response.css("a::attr(href)").getall()
            titles[0] += title is not None
            titles[1] += len(links)
            yield {"url": response.url, "title": title, "links": len(links)}
            # Each link once per page, fragments dropped, http(s) only: what any spider needs to not
            # fail on mailto: links, and less work for the scheduler than one request per anchor.
            targets = {urldefrag(response.urljoin(href.strip()))[0] for href in links}
            for target in targets:
                if target.startswith(("http://", "https://")):
                    yield scrapy.Request(target, callback=self.parse)

    def opened(spider: Any) -> None:
        clock["wall"], clock["cpu"] = time.perf_counter(), time.process_time()

    def closed(spider: Any) -> None:
        clock["wall"] = time.perf_counter() - clock["wall"]
        clock["cpu"] = time.process_time() - clock["cpu"]

    process = CrawlerProcess(
        settings={
            "CONCURRENT_REQUESTS": CONCURRENCY,
            "CONCURRENT_REQUESTS_PER_DOMAIN": CONCURRENCY,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": True,
            "LOG_LEVEL": os.environ.get("SCRAPY_LOG_LEVEL", "WARNING"),
            "TELNETCONSOLE_ENABLED": False,
        }
    )
    crawler = process.create_crawler(TitlesAndLinks)
    crawler.signals.connect(opened, signal=signals.spider_opened)
    crawler.signals.connect(closed, signal=signals.spider_closed)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    pathlib.Path(out).write_text(
        json.dumps(
            {
                "wall": clock["wall"],
                "cpu": clock["cpu"],
                "fetched": fetched,
                "titles": titles[0],
                "links": titles[1],
                "requests": int(stats.get("downloader/request_count", 0)),
                "versions": f"Scrapy {scrapy.__version__}, Twisted {twisted.__version__}",
            }
        )
    )


def theirs(port: int) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [sys.executable, __file__, "--scrapy-child", f"http://127.0.0.1:{port}/index.html", out.name],
            check=True,
        )
        result: dict[str, Any] = json.loads(pathlib.Path(out.name).read_text())
    result["pages"] = len(result["fetched"])  # responses to the spider (robots.txt not counted)
    result["paths"] = {urlsplit(url).path for url, _status in result["fetched"]}
    statuses: dict[int, int] = {}
    for _url, status in result["fetched"]:
        statuses[status] = statuses.get(status, 0) + 1
    result["statuses"] = statuses
    return result


# --- the run ------------------------------------------------------------------------------------------------


def ours_alone(rounds: list[dict[str, Any]], expected: set[str]) -> None:
    """The figures of our rounds when Scrapy is not run: pages/s, CPU per page, every URL found."""
    mine = min(rounds, key=lambda r: r["wall"] / r["fetched"])
    cpu_ms = mine["cpu"] * 1000 / mine["fetched"]
    print(f"\nbest of {len(rounds)} rounds at concurrency {CONCURRENCY}:")
    print(
        f"ours (crawl slices into PostgreSQL) {mine['fetched'] / mine['wall']:7.1f} pages/s  "
        f"{mine['fetched']} fetches, {mine['rows']['crawl_pages']} pages, {mine['rows']['crawl_links']} links, "
        f"{mine['rows']['crawl_issues']} issues stored"
    )
    print(
        f"CPU per page, ours: {cpu_ms:.2f} ms process CPU (target <= {CPU_TARGET_MS:.1f} ms: "
        f"{'ok' if cpu_ms <= CPU_TARGET_MS else 'OVER'}); + {mine['database_cpu'] * 1000 / mine['fetched']:.2f} ms "
        f"in PostgreSQL backends; server {mine['server_cpu'] * 1000 / mine['fetched']:.2f} ms"
    )
    complete = [compare("ours", r["paths"], expected) for r in rounds]
    print(f"  {'all rounds complete' if all(complete) else 'INCOMPLETE'}")


def compare(name: str, found: set[str], expected: set[str]) -> bool:
    lacking, extra = expected - found, found - expected - {"/robots.txt"}
    verdict = "all found" if not lacking else f"MISSING {len(lacking)}: {sorted(lacking)[:5]}"
    more = f"; {len(extra)} more URLs fetched: {sorted(extra)[:5]}" if extra else ""
    print(f"  {name:<8} {len(found & expected):>4} of {len(expected)} reachable URLs: {verdict}{more}")
    return not lacking


def main() -> None:
    options = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options.add_argument("--corpus", default="/usr/share/doc/python3.11/html")
    options.add_argument("--rounds", type=int, default=2)
    options.add_argument("--server", choices=("nginx", "stdlib"), default="nginx")
    options.add_argument("--profile", action="store_true", help="cProfile our crawl (slower; figures skewed)")
    options.add_argument("--scrapy-child", nargs=2, metavar=("START", "OUT"), help=argparse.SUPPRESS)
    options.add_argument(
        "--no-scrapy", action="store_true", help="ours only (the default when Scrapy is not installed)"
    )
    args = options.parse_args()
    if args.scrapy_child:
        scrapy_child(*args.scrapy_child)
        return
    with_scrapy = not args.no_scrapy and importlib.util.find_spec("scrapy") is not None
    if not with_scrapy:
        print("Scrapy: not run (--no-scrapy, or not installed): our figures only")
    corpus = pathlib.Path(args.corpus).resolve()
    expected, missing = reachable(corpus, "/index.html")
    html = [p for p in expected - missing if p.endswith(".html")]
    size = sum((corpus / p.lstrip("/")).stat().st_size for p in html)
    with serving(corpus, args.server) as (port, server, server_pid):
        print(
            f"corpus {corpus}: {len(expected)} URLs reachable from /index.html ({len(html)} HTML pages, "
            f"{size / 1e6:.1f} MB; {len(missing)} broken), served by {server} on 127.0.0.1:{port}; "
            f"concurrency {CONCURRENCY}"
        )
        rounds: list[tuple[dict[str, Any], dict[str, Any]]] = []
        ours_only: list[dict[str, Any]] = []
        for number in range(1, args.rounds + 1):
            served = children_cpu_s(server_pid)
            mine = ours(port, profile=args.profile)
            mine["server_cpu"] = children_cpu_s(server_pid) - served
            if not with_scrapy:
                ours_only.append(mine)
                print(
                    f"round {number}: ours {mine['fetched'] / mine['wall']:6.1f} pages/s "
                    f"({mine['fetched']} in {mine['wall']:.2f} s, {mine['slices']} slices)",
                    flush=True,
                )
                continue
            served = children_cpu_s(server_pid)
            scrapy = theirs(port)
            scrapy["server_cpu"] = children_cpu_s(server_pid) - served
            rounds.append((mine, scrapy))
            print(
                f"round {number}: ours {mine['fetched'] / mine['wall']:6.1f} pages/s "
                f"({mine['fetched']} in {mine['wall']:.2f} s, {mine['slices']} slices) | Scrapy "
                f"{scrapy['pages'] / scrapy['wall']:6.1f} pages/s ({scrapy['pages']} in {scrapy['wall']:.2f} s)",
                flush=True,
            )
    if not with_scrapy:
        ours_alone(ours_only, expected)
        return
    mine = min((r[0] for r in rounds), key=lambda r: r["wall"] / r["fetched"])
    scrapy = min((r[1] for r in rounds), key=lambda r: r["wall"] / r["pages"])
    our_rate, their_rate = mine["fetched"] / mine["wall"], scrapy["pages"] / scrapy["wall"]
    ratio = our_rate / their_rate
    cpu_ms = mine["cpu"] * 1000 / mine["fetched"]
    print(f"\nbest of {len(rounds)} rounds, both crawling the same server at concurrency {CONCURRENCY}:")
    print(
        f"ours (crawl slices into PostgreSQL) {our_rate:7.1f} pages/s  {mine['fetched']} fetches, "
        f"{mine['rows']['crawl_pages']} pages, {mine['rows']['crawl_links']} links, "
        f"{mine['rows']['crawl_issues']} issues stored; statuses {dict(sorted(mine['statuses'].items()))}"
    )
    print(
        f"Scrapy (titles and links only)      {their_rate:7.1f} pages/s  {scrapy['pages']} pages "
        f"({scrapy['requests']} requests with robots.txt), {scrapy['titles']} titles, {scrapy['links']} links; "
        f"statuses {dict(sorted((int(k), v) for k, v in scrapy['statuses'].items()))}; {scrapy['versions']}"
    )
    print(f"ratio ours/Scrapy: {ratio:.2f}x (reported, not a target)")
    print(
        f"CPU per page, ours: {cpu_ms:.2f} ms process CPU (target <= {CPU_TARGET_MS:.1f} ms: "
        f"{'ok' if cpu_ms <= CPU_TARGET_MS else 'OVER'}); + {mine['database_cpu'] * 1000 / mine['fetched']:.2f} ms "
        f"in PostgreSQL backends; server {mine['server_cpu'] * 1000 / mine['fetched']:.2f} ms"
    )
    print(
        f"CPU per page, Scrapy: {scrapy['cpu'] * 1000 / scrapy['pages']:.2f} ms process CPU; "
        f"server {scrapy['server_cpu'] * 1000 / scrapy['pages']:.2f} ms"
    )
    our_cpu_rate, their_cpu_rate = mine["fetched"] / mine["cpu"], scrapy["pages"] / scrapy["cpu"]
    print(
        f"pages per CPU second (less sensitive to a busy machine): ours {our_cpu_rate:.0f}, Scrapy "
        f"{their_cpu_rate:.0f}, ratio {our_cpu_rate / their_cpu_rate:.2f}x"
    )
    print("every reachable URL found (reference walk of the corpus from /index.html, <a href> only):")
    complete = [
        compare(name, r["paths"], expected) for r in rounds for name, r in (("ours", r[0]), ("Scrapy", r[1]))
    ]
    print(f"  {'all rounds complete' if all(complete) else 'INCOMPLETE'}")


if __name__ == "__main__":
    main()
