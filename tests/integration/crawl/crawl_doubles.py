"""Doubles for the crawl tests: a scripted web site on 127.0.0.1 and an audit crawled through the guard."""

import gzip
import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from attrs import define, evolve, field

from siteaudit.adapters.http.fetcher import FetchLimits, HttpxFetcher
from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.adapters.system import FixedClock
from siteaudit.domain.audit import Audit
from siteaudit.domain.crawl import CrawlLimits, CrawlState, IdSet
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.network import AddressPolicy
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.network import Fetcher
from siteaudit.services.crawl import CrawlDeps, SliceOutcome, run_crawl_slice
from tests.local_sites import SERVER_POLL_S

HOST = "retro-clock.example"
LOOPBACK = AddressPolicy.from_setting("127.0.0.0/8")
RESOLVER = StaticResolver({HOST: ["127.0.0.1"], f"www.{HOST}": ["127.0.0.1"]})


@define
class Answer:
    status: int = 200
    body: bytes | str = b""
    headers: Mapping[str, str] = field(factory=dict)
    delay_s: float = 0.0
    drop: bool = False  # close the connection without answering (a network error for the client)

    @property
    def raw(self) -> bytes:
        return self.body.encode() if isinstance(self.body, str) else self.body


def html(body: str, *, head: str = "", status: int = 200, headers: Mapping[str, str] | None = None) -> Answer:
    page = f"<!doctype html><html lang=en><head><meta charset=utf-8>{head}</head><body>{body}</body></html>"
    return Answer(status, page, {"Content-Type": "text/html; charset=utf-8", **(headers or {})})


def redirect(location: str, status: int = 301) -> Answer:
    return Answer(status, b"", {"Location": location})


def gzipped(text: str) -> bytes:
    return gzip.compress(text.encode())


Route = Answer | Callable[[str, Mapping[str, str]], Answer]


@define
class Hit:
    at: float
    path: str
    headers: Mapping[str, str]


def conditional(answer: Answer, headers: Mapping[str, str]) -> Answer:
    """What a 304-capable server answers: a 200 carries an ETag (a digest of its body) unless it has its
    own `Last-Modified`; a request whose `If-None-Match` or `If-Modified-Since` matches gets a 304."""
    if answer.status != 200:
        return answer
    last_modified = answer.headers.get("Last-Modified")
    if last_modified is not None:
        if headers.get("if-modified-since") == last_modified:
            return Answer(304, b"", {"Last-Modified": last_modified}, answer.delay_s)
        return answer
    etag = f'"{hashlib.blake2b(answer.raw, digest_size=8).hexdigest()}"'
    if headers.get("if-none-match") == etag:
        return Answer(304, b"", {"ETag": etag}, answer.delay_s)
    return Answer(200, answer.body, {**answer.headers, "ETag": etag}, answer.delay_s)


class SiteServer:
    """A threaded HTTP/1.1 server answering from a table of routes (path with query -> Answer).

    `validators`: answers are made 304-capable by `conditional`.
    """

    def __init__(self, routes: Mapping[str, Route] | None = None, *, validators: bool = False) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.validators = validators
        self.statuses: list[tuple[str, int]] = []  # (path, status answered), in order
        self.hits: list[Hit] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # TCP_NODELAY: the headers and the body go out as two writes; with Nagle on, the body of every
            # answer on a kept-alive connection waited for the client's delayed ACK of the headers (40 ms).
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self.do_GET()

            def do_GET(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.hits.append(Hit(time.monotonic(), self.path, headers))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    route = server.routes.get(self.path)
                    if route is None:
                        answer = html("<h1>Not found</h1><p>This page does not exist.</p>", status=404)
                    elif isinstance(route, Answer):
                        answer = route
                    else:
                        answer = route(self.path, headers)
                    if answer.drop:
                        self.close_connection = True
                        return
                    if server.validators:
                        answer = conditional(answer, headers)
                    with server._lock:
                        server.statuses.append((self.path, answer.status))
                    if answer.delay_s:
                        time.sleep(answer.delay_s)
                    raw = answer.raw
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with server._lock:
                        server.in_flight -= 1

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": SERVER_POLL_S}, daemon=True
        )
        self._thread.start()

    def url(self, path: str = "/", host: str = HOST) -> str:
        return f"http://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        with self._lock:
            return [hit.path for hit in self.hits]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def fetcher_factory(deadline_s: float = 5.0) -> Callable[[int], Fetcher]:
    def build(connections: int) -> Fetcher:
        limits = FetchLimits(
            connect_s=2.0, read_s=deadline_s, deadline_s=deadline_s, max_connections=connections
        )
        return HttpxFetcher(RESOLVER, LOOPBACK, limits=limits)

    return build


@define
class Crawl:
    """One audit in memory stores, crawled against a SiteServer."""

    start_url: str
    max_pages: int = 100
    concurrency: int = 4
    max_rps: float = 10.0
    render: bool = False  # the audit renders its pages in a browser (give `deps` a renderer)
    limits: CrawlLimits = field(factory=CrawlLimits)  # the service's terms; the audit brings its own
    # The audit waits for its max_rps (or Crawl-delay) turns only when `paced`: a test of what a crawl finds
    # does not wait 0.1 s a request (tests/local_sites.py); a test of the pace says paced=True.
    paced: bool = False
    store: MemoryStore = field(factory=MemoryStore)
    crawl: CrawlStore = field(factory=MemoryCrawlStore)
    queue: MemoryTaskQueue = field(factory=MemoryTaskQueue)
    clock: FixedClock = field(factory=FixedClock)
    parser: LibraryPageParser = field(factory=LibraryPageParser)
    audit_id: AuditId = field(default=AuditId(0), init=False)

    def __attrs_post_init__(self) -> None:
        with self.uow() as uow:
            audit = uow.audits.add(
                Audit(
                    id=AuditId(0),
                    team_id=TeamId(1),
                    user_id=UserId(1),
                    payer_id=UserId(1),
                    url=self.start_url,
                    origin=self.start_url.split("/", 3)[0] + "//" + self.start_url.split("/", 3)[2],
                    created_at=datetime(2026, 11, 22, 9, 0, tzinfo=UTC),
                    max_pages=self.max_pages,
                    concurrency=self.concurrency,
                    max_rps=self.max_rps,
                    render=self.render,
                )
            )
            uow.commit()
        self.audit_id = audit.id

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def audit(self) -> Audit:
        with self.uow() as uow:
            return uow.audits.get_any(self.audit_id)

    def deps(self) -> CrawlDeps:
        return CrawlDeps(
            uow=self.uow,
            crawl=self.crawl,
            fetcher_factory=fetcher_factory(self.limits.request_deadline_s),
            parser=self.parser,
            clock=self.clock,
            queue=self.queue,
            limits=self.limits if self.paced else evolve(self.limits, paced=False),
        )

    def run(
        self, *, verify_token: str | None = None, crawler_secret: str | None = None
    ) -> list[SliceOutcome]:
        """Slices one after another until the crawl stops. They still publish to the queue as they would in
        a worker (`crawl_slice` after each unfinished slice, `finalize_audit` at the end)."""
        return crawl_audit_inline(
            self.audit_id, self.deps(), verify_token=verify_token, crawler_secret=crawler_secret
        )

    def one_slice(self) -> SliceOutcome:
        return run_crawl_slice(self.audit_id, self.deps())

    def pages(self) -> dict[str, object]:
        return {p.facts.url: p.facts for p in self.crawl.stream_pages(self.audit_id)}


def crawl_audit_inline(
    audit_id: AuditId,
    deps: CrawlDeps,
    *,
    verify_token: str | None = None,
    crawler_secret: str | None = None,
    max_slices: int = 100_000,
) -> list[SliceOutcome]:
    """Run slices one after another until the crawl stops (the slices' queue messages are left alone)."""
    outcomes: list[SliceOutcome] = []
    while len(outcomes) < max_slices:
        outcome = run_crawl_slice(audit_id, deps, verify_token=verify_token, crawler_secret=crawler_secret)
        outcomes.append(outcome)
        if outcome.next != "slice":
            break
    return outcomes


def sitemap_urls(crawl: CrawlStore, audit_id: AuditId) -> Iterable[str]:
    """The in-scope URLs the audit's sitemaps listed (bounded), as the checkpoint keeps them."""
    saved = crawl.checkpoint(audit_id)
    if not saved:
        return ()
    ids = list(IdSet(CrawlState.from_json(saved).sitemap_ids))
    found: list[str] = []
    for start in range(0, len(ids), 1000):
        found.extend(crawl.urls(audit_id, ids[start : start + 1000]).values())
    return found
