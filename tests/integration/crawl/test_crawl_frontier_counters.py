"""The crawl decides by the frontier counters (issue 18): through whole crawls with workers killed
mid-batch and batches recorded twice, on memory, a SQLite file and PostgreSQL, the counters equal a real
COUNT of the frontier's rows after every move, and the audit's totals come out exact."""

from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from crawl_doubles import Answer, SiteServer, crawl_audit_inline, fetcher_factory, html
from sqlalchemy import Engine, func, select

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql import SqlCrawlStore, SqlUnitOfWork, migrate
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.tables import crawl_frontier
from siteaudit.adapters.system import FixedClock
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.ports.crawl import CrawlStore, FrontierState
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.crawl import CrawlDeps, run_crawl_slice

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
LEAVES = 30


class Killed(Exception):
    """The worker died here."""


class CheckedStore:
    """The crawl store, comparing its counters with a real COUNT after every frontier move, and doing
    chosen things after chosen calls: `die` raises after the n-th call of a method (its transaction
    committed), `twice` runs every call of a method a second time (a redelivered batch), which must move
    nothing."""

    def __init__(
        self,
        inner: CrawlStore,
        count: Callable[[AuditId], Mapping[FrontierState, int]],
        *,
        die: Mapping[str, int] | None = None,
        twice: tuple[str, ...] = (),
    ) -> None:
        self._inner = inner
        self._count = count
        self._die = dict(die or {})
        self._twice = twice
        self.calls: dict[str, int] = {}
        self.checks = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if name not in ("frontier_add", "frontier_mark") and name not in self._die:
            return method

        def checked(audit_id: AuditId, *args: Any, **kwargs: Any) -> Any:
            args = tuple(list(a) if not isinstance(a, str | int) else a for a in args)
            result = method(audit_id, *args, **kwargs)
            if name in self._twice:
                assert method(audit_id, *args, **kwargs) == 0  # already there: nothing moves
            if name.startswith("frontier_"):
                assert self._inner.frontier_counts(audit_id) == self._count(audit_id)
                self.checks += 1
            self.calls[name] = self.calls.get(name, 0) + 1
            if self._die.get(name) == self.calls[name]:
                raise Killed(f"worker killed after {name} #{self.calls[name]}")
            return result

        return checked


class World:
    def __init__(self, uow: Callable[[], UnitOfWork], crawl: CrawlStore, engine: Engine | None) -> None:
        self.uow, self.crawl, self.engine = uow, crawl, engine

    def count(self, audit_id: AuditId) -> Mapping[FrontierState, int]:
        if self.engine is None:
            return self.crawl.frontier_recount(audit_id)
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(crawl_frontier.c.state, func.count())
                .where(crawl_frontier.c.audit_id == audit_id)
                .group_by(crawl_frontier.c.state)
            )
            return {FrontierState(state): count for state, count in rows}

    def audit(self, url: str) -> AuditId:
        with self.uow() as uow:
            owner = uow.users.add(User(UserId(0), f"owner-{url}@retro-clock.example", "growth", T0))
            team = uow.teams.add(Team(TeamId(0), f"Retro Clock {owner.id}", owner.id, T0))
            origin = url.rsplit("/", 1)[0]
            audit = uow.audits.add(
                Audit(AuditId(0), team.id, owner.id, owner.id, url, origin, T0, max_pages=100, concurrency=1)
            )
            uow.commit()
        return audit.id

    def deps(self, crawl: CrawlStore) -> CrawlDeps:
        return CrawlDeps(
            uow=self.uow,
            crawl=crawl,
            fetcher_factory=fetcher_factory(),
            parser=LibraryPageParser(),
            clock=FixedClock(),
            queue=MemoryTaskQueue(),
            # Small slices (and batches of 8 at concurrency 1): many moves, several slices.
            limits=CrawlLimits(slice_pages=7, unlimited_rate=True),
        )

    def pages_crawled(self, audit_id: AuditId) -> int:
        with self.uow() as uow:
            return uow.audits.get_any(audit_id).pages_crawled


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    if request.param == "memory":
        store = MemoryStore()
        yield World(lambda: MemoryUnitOfWork(store), MemoryCrawlStore(), None)
        return
    url = (
        f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    engine = create_engine(url)
    migrate(engine)
    box = SecretBox(SecretBox.generate_key())
    yield World(lambda: SqlUnitOfWork(engine, box), SqlCrawlStore(engine), engine)
    engine.dispose()


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    server.routes["/robots.txt"] = Answer(
        200, "User-agent: *\nDisallow: /private\n", {"Content-Type": "text/plain"}
    )
    links = "".join(f'<a href="/clock-{n}">Clock {n}</a>' for n in range(LEAVES))
    server.routes["/"] = html(links + '<a href="/private/a">Private</a><a href="/old">Old</a>')
    for n in range(LEAVES):
        server.routes[f"/clock-{n}"] = html(f'<h1>Clock {n}</h1><a href="/">Home</a>')
    server.routes["/old"] = Answer(301, b"", {"Location": "/moved"})
    server.routes["/moved"] = html("<h1>Moved here</h1>")
    yield server
    server.close()


# Home, 30 clocks, /old (a redirect) and /moved (its destination, recorded by /old's batch): 33 crawled;
# /private/a is disallowed (skipped).
CRAWLED = LEAVES + 3
FINAL = {FrontierState.DONE: CRAWLED, FrontierState.SKIPPED: 1}


@pytest.mark.parametrize(
    "die",
    [
        {},
        {"frontier_mark": 5},  # after a batch's DONE mark, before its progress is recorded
        {"replace_links": 3},  # a batch's pages and issues written, its URLs still queued
        {"frontier_add": 4},  # a batch's new URLs queued, nothing marked yet
    ],
    ids=["healthy", "after-mark", "before-mark", "after-add"],
)
def test_the_counters_follow_every_move_through_kills_and_redeliveries(
    world: World, site: SiteServer, die: dict[str, int]
) -> None:
    audit_id = world.audit(site.url("/"))
    dying = CheckedStore(world.crawl, world.count, die=die, twice=("frontier_mark", "frontier_add"))
    if die:
        with pytest.raises(Killed):
            crawl_audit_inline(audit_id, world.deps(dying))  # type: ignore[arg-type]
        # The lease the dead worker held is released by its `finally`: the redelivered message runs at once.
    healthy = CheckedStore(world.crawl, world.count, twice=("frontier_mark",))
    outcomes = crawl_audit_inline(audit_id, world.deps(healthy))  # type: ignore[arg-type]
    assert outcomes[-1].next == "finalize"
    assert dying.checks + healthy.checks >= 10
    assert world.crawl.frontier_counts(audit_id) == world.count(audit_id) == FINAL
    assert world.pages_crawled(audit_id) == CRAWLED
    stored = [page.facts.url for page in world.crawl.stream_pages(audit_id)]
    assert len(stored) == len(set(stored)) == CRAWLED + 1  # and the disallowed page's row


def test_a_slice_reads_the_counts_once_a_batch_and_never_scans(world: World, site: SiteServer) -> None:
    """The engine's path never counts rows: `frontier_recount` is for checks only."""
    audit_id = world.audit(site.url("/"))

    class NoScan(CheckedStore):
        def frontier_recount(self, audit_id: AuditId) -> Mapping[FrontierState, int]:
            raise AssertionError("the crawl counted the frontier's rows")

    store = NoScan(world.crawl, world.count)
    outcome = run_crawl_slice(audit_id, world.deps(store))  # type: ignore[arg-type]
    assert outcome.next == "slice"
    assert world.crawl.frontier_counts(audit_id) == world.count(audit_id)
