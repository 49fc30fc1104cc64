"""Archiving old audits on memory adapters: which audits, what stays, crash order, and the later diff."""

from collections.abc import Callable, Sequence
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.report_json import report_json
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditRequest, AuditStatus
from siteaudit.domain.checks import PageContext, check_page
from siteaudit.domain.credit import credits
from siteaudit.domain.diff import ArchivedIdentities
from siteaudit.domain.error import Conflict
from siteaudit.domain.facts import HtmlFacts, Link, PageFacts
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.issue import Severity
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.crawl import CrawlStore, IssueQuery, PageQuery
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services import account as accounts
from siteaudit.services import archive, finalize
from siteaudit.services import audit as audits

SITE = "https://retro-clock.example"
OTHER = "https://barometer-shop.example"


def a_page(site: str, path: str, *, title: str, links: tuple[str, ...] = (), status: int = 200) -> PageFacts:
    html = HtmlFacts(
        titles=(title,),
        meta_descriptions=("Restored mechanical clocks, barometers and spare parts, shipped since 1979.",),
        h1s=(title,),
        heading_levels=(1,),
        lang="en",
        viewport="width=device-width, initial-scale=1",
        meta_charset="utf-8",
        canonicals=(site + path,),
        links=tuple(Link(target=site + target) for target in links),
        word_count=200,
        text_chars=1_200,
        fingerprint=path,
        open_graph=frozenset({"og:title", "og:description", "og:image"}),
    )
    return PageFacts(
        url=site + path,
        depth=0 if path == "/" else 1,
        status_code=status,
        final_url=site + path,
        content_type="text/html",
        headers=(("strict-transport-security", "max-age=63072000"),),
        html=html if status == 200 else None,
    )


def a_site(site: str = SITE, *, broken: Sequence[str] = ("/gone",), title: str = "Home") -> list[PageFacts]:
    """A home page linking to three products (sharing one title) and to each `broken` path (a 404)."""
    products = ("/products/1", "/products/2", "/products/3")
    return [
        a_page(site, "/", title=title, links=(*products, *broken)),
        *(a_page(site, p, title="Clock", links=("/",)) for p in products),
        *(a_page(site, p, title="", status=404) for p in broken),
    ]


def an_account(
    uow: Callable[[], UnitOfWork], clock: FixedClock, email: str = "owner@retro-clock.example"
) -> Caller:
    user = accounts.create_user(email, plan="growth", uow=uow(), clock=clock, secrets=SystemSecrets())
    team = accounts.create_team(f"Team of {email}", owner_email=email, uow=uow(), clock=clock)
    accounts.grant_credits(email, credits(10_000), key=f"grant:{email}", uow=uow(), clock=clock)
    return Caller(UserId(user.id), TeamId(team.id))


def run_audit(
    uow: Callable[[], UnitOfWork],
    crawl: CrawlStore,
    clock: FixedClock,
    caller: Caller,
    pages: list[PageFacts],
    *,
    site: str = SITE,
) -> AuditId:
    """One audit of `pages` driven through the services to `done`; the clock moves an hour."""
    started = audits.start_audit(
        AuditRequest(url=site + "/", max_pages=100), caller, uow=uow(), clock=clock, queue=MemoryTaskQueue()
    )
    audit_id = started.audit.id
    audits.begin_audit(audit_id, uow=uow(), clock=clock)
    crawl.write_pages(audit_id, pages)
    crawl.write_links(audit_id, [(p.url, link) for p in pages if p.html for link in p.html.links])
    context = PageContext(start_url=site + "/")
    crawl.write_issues(
        audit_id, [i for p in pages for i in check_page(p, thresholds=Thresholds(), context=context)]
    )
    audits.record_progress(audit_id, pages_crawled=len(pages), pages_not_modified=0, uow=uow(), clock=clock)
    audits.stop_crawling(audit_id, partial=False, uow=uow(), clock=clock)
    clock.advance(60)
    audit = finalize.finalize_audit(audit_id, uow=uow(), crawl=crawl, clock=clock)
    assert audit.status is AuditStatus.DONE
    clock.advance(3_600)
    return audit_id


class World:
    def __init__(self) -> None:
        self.store = MemoryStore()
        self.crawl = MemoryCrawlStore()
        self.clock = FixedClock()
        self.owner = an_account(self.uow, self.clock)

    def uow(self) -> UnitOfWork:
        return MemoryUnitOfWork(self.store)

    def audit(self, audit_id: AuditId) -> Audit:
        with self.uow() as uow:
            return uow.audits.get_any(audit_id)

    def run(
        self, pages: list[PageFacts] | None = None, *, site: str = SITE, caller: Caller | None = None
    ) -> AuditId:
        return run_audit(
            self.uow, self.crawl, self.clock, caller or self.owner, pages or a_site(site), site=site
        )

    def archive(self, *, older_than_days: int | None = None, keep_last: int | None = None) -> list[AuditId]:
        return archive.archive_audits(
            uow=self.uow(),
            crawl=self.crawl,
            clock=self.clock,
            older_than_days=older_than_days,
            keep_last=keep_last,
        )


@pytest.fixture
def world() -> World:
    return World()


def test_audits_that_finished_that_many_days_ago_are_archived_and_younger_ones_kept(world: World) -> None:
    old = world.run()
    world.clock.advance(timedelta(days=29).total_seconds())
    recent = world.run()
    world.clock.advance(timedelta(days=1).total_seconds())
    assert world.archive(older_than_days=30) == [old]
    assert world.audit(old).archived_at == world.clock.now()
    assert world.audit(recent).archived_at is None
    assert world.crawl.list_issues(recent, IssueQuery())[1] > 0


def test_keep_last_keeps_the_newest_audits_of_each_origin_in_each_team(world: World) -> None:
    rival = an_account(world.uow, world.clock, "rival@barometer-shop.example")
    first, second, third = world.run(), world.run(), world.run()
    elsewhere = world.run(site=OTHER)
    rivals = [world.run(caller=rival), world.run(caller=rival)]
    assert world.archive(keep_last=2) == [first]
    assert [world.audit(a).archived_at is None for a in (second, third, elsewhere, *rivals)] == [True] * 5
    assert world.archive(keep_last=0) == sorted([second, third, elsewhere, *rivals])


def test_with_both_settings_an_audit_is_archived_only_when_both_select_it(world: World) -> None:
    first, second = world.run(), world.run()
    world.clock.advance(timedelta(days=40).total_seconds())
    third = world.run()
    assert world.archive(older_than_days=30, keep_last=2) == [first]
    assert world.archive(older_than_days=30, keep_last=1) == [second]
    assert world.audit(third).archived_at is None


def test_without_a_setting_nothing_is_archived_and_negative_settings_are_refused(world: World) -> None:
    audit_id = world.run()
    world.clock.advance(timedelta(days=400).total_seconds())
    assert world.archive() == []
    assert world.audit(audit_id).archived_at is None
    with pytest.raises(ValueError, match="keep_last"):
        world.archive(keep_last=-1)
    with pytest.raises(ValueError, match="older_than_days"):
        world.archive(older_than_days=-1)


def test_an_archived_audit_keeps_its_report_and_loses_its_rows(world: World) -> None:
    audit_id = world.run()
    before = world.crawl.report(audit_id)
    assert before is not None and world.crawl.archived_identities(audit_id) is None
    world.archive(keep_last=0)
    assert world.crawl.report(audit_id) == before  # the identities are kept beside it, not in it
    assert world.crawl.archived_identities(audit_id) is not None
    assert "archived_identities" not in report_json(before)["stats"]
    assert world.crawl.list_issues(audit_id, IssueQuery()) == ([], 0)
    assert world.crawl.list_pages(audit_id, PageQuery()) == ([], 0)
    assert list(world.crawl.stream_links(audit_id)) == []


def test_audits_that_have_not_ended_are_never_archived(world: World) -> None:
    done = world.run()
    running = audits.start_audit(
        AuditRequest(url=SITE + "/", max_pages=100),
        world.owner,
        uow=world.uow(),
        clock=world.clock,
        queue=MemoryTaskQueue(),
    ).audit.id
    audits.begin_audit(running, uow=world.uow(), clock=world.clock)
    world.crawl.write_pages(running, a_site())
    world.clock.advance(timedelta(days=400).total_seconds())
    assert world.archive(older_than_days=1, keep_last=0) == [done]
    assert world.crawl.page_count(running) == len(a_site())
    with pytest.raises(Conflict):
        archive.archive_audit(running, uow=world.uow(), crawl=world.crawl, clock=world.clock)


def test_cancelled_audits_without_a_report_are_archived_too(world: World) -> None:
    cancelled = audits.start_audit(
        AuditRequest(url=SITE + "/", max_pages=100),
        world.owner,
        uow=world.uow(),
        clock=world.clock,
        queue=MemoryTaskQueue(),
    ).audit.id
    world.crawl.frontier_add(cancelled, [(SITE + "/", 0)])
    audits.cancel_audit(cancelled, world.owner, uow=world.uow(), clock=world.clock)
    assert world.archive(keep_last=0) == [cancelled]
    assert world.crawl.report(cancelled) is None
    assert world.crawl.frontier_counts(cancelled) == {}


class CrashingCrawlStore(MemoryCrawlStore):
    """Dies in the middle of the first archive: after `archived_at` was committed, before rows went."""

    def __init__(self) -> None:
        super().__init__()
        self.crashes = 1

    def archive(self, audit_id: AuditId) -> None:
        if self.crashes:
            self.crashes -= 1
            raise ConnectionError("the database went away")
        super().archive(audit_id)


def test_an_archive_interrupted_after_archived_at_was_set_is_finished_by_the_next_run() -> None:
    world = World()
    world.crawl = CrashingCrawlStore()
    audit_id = world.run()
    with pytest.raises(ConnectionError):
        world.archive(keep_last=0)
    archived_at = world.audit(audit_id).archived_at
    assert archived_at is not None  # the lists already answer 410; the rows wait for the next run
    assert world.crawl.page_count(audit_id) > 0
    world.clock.advance(60)
    assert world.archive(keep_last=0) == [audit_id]
    assert world.crawl.page_count(audit_id) == 0
    assert world.audit(audit_id).archived_at == archived_at
    assert world.archive(keep_last=0) == []


def test_the_diff_against_an_archived_audit_is_the_diff_against_its_rows() -> None:
    diffs = []
    for archive_first in (False, True):
        world = World()
        world.run(a_site(broken=("/gone", "/lost"), title="Home"))
        if archive_first:
            assert len(world.archive(keep_last=0)) == 1
        later = world.run(a_site(broken=("/lost", "/missing"), title="Retro Clock - restored clocks"))
        stored = world.crawl.report(later)
        assert stored is not None
        report = report_json(stored)
        diffs.append((report["diff"], report["stats"]["diff_basis"]))
    (rows_diff, rows_basis), (archived_diff, archived_basis) = diffs
    assert (rows_basis, archived_basis) == ("issue_rows", "archived_identities")
    assert archived_diff == rows_diff
    assert rows_diff["new"] > 0 and rows_diff["fixed"] > 0 and rows_diff["new_errors"] > 0
    assert {s["url"] for s in rows_diff["new_samples"]} >= {SITE + "/missing"}


def test_an_archive_without_identities_is_diffed_by_per_check_page_counts(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = world.run(a_site(broken=("/gone", "/lost")))
    with monkeypatch.context() as patch:  # archived as before identities were kept
        patch.setattr(archive, "_keep_identities", lambda crawl, audit_id: None)
        world.archive(keep_last=0)
    assert world.crawl.archived_identities(first) is None
    later = world.run(a_site(broken=("/missing",)))
    stored = world.crawl.report(later)
    assert stored is not None
    report = report_json(stored)
    diff = report["diff"]
    assert report["stats"]["diff_basis"] == "check_counts"
    assert diff["previous_crawl_id"] == first
    assert diff["new_samples"] == []
    assert diff["fixed_errors"] >= 1  # one broken page fewer: http_4xx and broken_internal_link dropped
    assert diff["new"] == 0


identity_rows = st.lists(
    st.tuples(
        st.sampled_from(["title_duplicate", "http_4xx", "img_broken"]),
        st.sampled_from(list(Severity)),
        st.text(min_size=1, max_size=30).map(lambda path: f"{SITE}/{path}"),
    ),
    max_size=200,
)


@given(identity_rows)
def test_stored_identities_read_back_as_they_were_written(rows: list[tuple[str, Severity, str]]) -> None:
    identities = ArchivedIdentities.from_issues(rows)
    again = ArchivedIdentities.from_json(identities.as_json())
    assert again == identities
    assert {identities.key(code, url) for code, _, url in rows} == identities.keys
    errors = {identities.key(code, url) for code, severity, url in rows if severity is Severity.ERROR}
    assert identities.error_keys == errors
    assert identities.bits >= 20


def test_identities_in_an_unknown_format_are_ignored() -> None:
    assert ArchivedIdentities.from_json({"format": "v0", "keys": ""}) is None
    assert ArchivedIdentities.from_json({}) is None
    assert ArchivedIdentities.from_json(None) is None
