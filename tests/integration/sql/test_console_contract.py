"""Console storage (issue 14): the same contract on memory, SQLite and PostgreSQL: daily figures
replaced per period, totals per URL, inspections kept latest, the inspection budget spent all or
nothing, connections sealed and replaced, sites due a sync."""

from datetime import date, timedelta

from attrs import evolve
from sql_backend import T0, Backend, people

from siteaudit.domain.console import (
    ConsoleConnection,
    ConsoleSync,
    PageDay,
    PageTotals,
    StoredInspection,
    SyncStatus,
)
from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.site import Site, VerifyMethod

D0 = date(2026, 11, 1)
HOME = "https://retro-clock.example/"
CLOCK = "https://retro-clock.example/clocks/1"


def _day(
    site: SiteId, n: int, url: str, clicks: int, impressions: int, position: float | None = 5.0
) -> PageDay:
    return PageDay(site, D0 + timedelta(days=n), url, clicks, impressions, position)


def _site(team: TeamId, url: str, *, verified: bool) -> Site:
    site = Site.register(
        site_id=SiteId(0),
        team_id=team,
        url=url,
        verify_token="tok_retro_clock_0123456789",
        crawler_secret_ref="crawler-ref-1",
        plan_page_limit=10_000,
        now=T0,
    )
    return site.verify(VerifyMethod.FILE, now=T0)[0] if verified else site


def test_daily_figures_are_replaced_per_period_and_summed_per_url(backend: Backend) -> None:
    site, other = SiteId(7), SiteId(8)
    with backend.uow() as uow:
        written = uow.console.replace_days(
            site,
            [_day(site, 0, HOME, 3, 100, 4.0), _day(site, 1, HOME, 1, 50, 10.0), _day(site, 1, CLOCK, 0, 20)],
            start=D0,
            end=D0 + timedelta(days=1),
        )
        uow.console.replace_days(other, [_day(other, 0, HOME, 99, 999)], start=D0, end=D0)
        uow.commit()
    assert written == 3
    with backend.uow() as uow:
        totals = uow.console.page_totals(site, None, D0, D0 + timedelta(days=27))
        assert totals == {
            HOME: PageTotals(HOME, 4, 150, 6.0),  # position weighted by impressions: (4*100 + 10*50) / 150
            CLOCK: PageTotals(CLOCK, 0, 20, 5.0),
        }
        assert uow.console.page_totals(site, [CLOCK, "https://retro-clock.example/none"], D0, D0) == {}
        assert uow.console.page_totals(site, [HOME], D0, D0) == {HOME: PageTotals(HOME, 3, 100, 4.0)}
        assert [d.url for d in uow.console.days(site, start=D0, end=D0 + timedelta(days=1))] == [
            HOME,
            HOME,
            CLOCK,
        ]
    # A later sync of the second day replaces that day only.
    with backend.uow() as uow:
        uow.console.replace_days(
            site, [_day(site, 1, CLOCK, 2, 30)], start=D0 + timedelta(days=1), end=D0 + timedelta(days=1)
        )
        uow.commit()
    with backend.uow() as uow:
        days = uow.console.days(site, start=D0, end=D0 + timedelta(days=1))
        assert [(d.day, d.url, d.clicks) for d in days] == [
            (D0, HOME, 3),
            (D0 + timedelta(days=1), CLOCK, 2),
        ]
        assert all(d.site_id == site for d in days)
        assert uow.console.page_totals(other, None, D0, D0)[HOME].clicks == 99
        uow.console.delete_site(site)
        uow.commit()
    with backend.uow() as uow:
        assert uow.console.days(site, start=D0, end=D0 + timedelta(days=1)) == []
        assert uow.console.page_totals(other, None, D0, D0) != {}


def test_an_uncommitted_replacement_leaves_nothing(backend: Backend) -> None:
    with backend.uow() as uow:
        uow.console.replace_days(SiteId(1), [_day(SiteId(1), 0, HOME, 1, 1)], start=D0, end=D0)
    with backend.uow() as uow:
        assert uow.console.days(SiteId(1), start=D0, end=D0) == []


def test_the_latest_inspection_of_a_url_is_kept(backend: Backend) -> None:
    first = StoredInspection(
        CLOCK,
        "NEUTRAL",
        "Crawled - currently not indexed",
        sitemaps=("s",),
        site_id=SiteId(3),
        inspected_at=T0,
    )
    later = evolve(
        first,
        inspected_at=T0 + timedelta(days=1),
        verdict="PASS",
        coverage_state="Submitted and indexed",
        google_canonical=CLOCK,
        user_canonical=CLOCK + "?a",
        last_crawled=T0,
        demo=True,
    )
    with backend.uow() as uow:
        uow.console.save_inspection(first)
        uow.console.save_inspection(
            StoredInspection(HOME, "PASS", "Submitted and indexed", site_id=SiteId(3), inspected_at=T0)
        )
        uow.commit()
    with backend.uow() as uow:
        uow.console.save_inspection(later)
        uow.commit()
    with backend.uow() as uow:
        stored = uow.console.inspections(SiteId(3))
    assert [i.url for i in stored] == [HOME, CLOCK]
    assert stored[1] == later
    assert stored[1].indexed and stored[1].canonical_mismatch
    assert not first.indexed


def test_the_budget_is_spent_in_every_window_or_in_none(backend: Backend) -> None:
    windows = (("day:2026-11-25", 10), ("minute:2026-11-25T10:00", 6))
    with backend.uow() as uow:
        assert uow.console.spend_budget(HOME, windows, 4)
        assert not uow.console.spend_budget(HOME, windows, 3)  # the minute would go over: nothing spent
        assert uow.console.budget_used(HOME, "day:2026-11-25") == 4
        assert uow.console.spend_budget(HOME, windows, 2)
        uow.commit()
    next_minute = (("day:2026-11-25", 10), ("minute:2026-11-25T10:01", 6))
    with backend.uow() as uow:
        assert not uow.console.spend_budget(HOME, next_minute, 5)  # the day would go over
        assert uow.console.spend_budget(HOME, next_minute, 4)
        assert uow.console.spend_budget("sc-domain:retro-clock.example", next_minute, 6)  # its own budget
        uow.commit()
    with backend.uow() as uow:
        assert uow.console.budget_used(HOME, "day:2026-11-25") == 10
        assert uow.console.budget_used(HOME, "minute:2026-11-25T10:00") == 6
        assert uow.console.budget_used(HOME, "day:2026-11-26") == 0


def test_a_connection_is_replaced_and_removed(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        uow.console.save_connection(ConsoleConnection(team.id, "sealed-1", "owner@example.com", T0))
        uow.commit()
    with backend.uow() as uow:
        uow.console.save_connection(ConsoleConnection(team.id, "sealed-2", "other@example.com", T0))
        uow.commit()
    with backend.uow() as uow:
        assert uow.console.connection(team.id) == ConsoleConnection(
            team.id, "sealed-2", "other@example.com", T0
        )
        assert uow.console.connection(TeamId(team.id + 1)) is None
        uow.console.delete_connection(team.id)
        uow.commit()
    with backend.uow() as uow:
        assert uow.console.connection(team.id) is None


def test_verified_sites_come_due_for_a_sync_never_synced_first(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        old = uow.sites.add(_site(team.id, "https://old.example/", verified=True))
        fresh = uow.sites.add(_site(team.id, "https://fresh.example/", verified=True))
        never = uow.sites.add(_site(team.id, "https://never.example/", verified=True))
        uow.sites.add(_site(team.id, "https://unverified.example/", verified=False))
        uow.console.save_sync(ConsoleSync(old.id, T0 - timedelta(days=2), SyncStatus.OK, HOME, True, 5, 2))
        uow.console.save_sync(ConsoleSync(fresh.id, T0, SyncStatus.FAILED, error="quota"))
        uow.commit()
    with backend.uow() as uow:
        assert list(uow.console.due_syncs(T0 - timedelta(days=1), limit=10)) == [never.id, old.id]
        assert list(uow.console.due_syncs(T0 - timedelta(days=1), limit=1)) == [never.id]
        assert uow.console.sync(old.id) == ConsoleSync(
            old.id, T0 - timedelta(days=2), SyncStatus.OK, HOME, True, 5, 2
        )
        assert uow.console.sync(fresh.id) == ConsoleSync(fresh.id, T0, SyncStatus.FAILED, error="quota")


def test_concurrent_spenders_never_go_over_the_budget(backend: Backend) -> None:
    import threading

    windows = (("day:2026-11-25", 25), ("minute:2026-11-25T10:00", 600))
    granted: list[bool] = []
    lock = threading.Lock()

    def spender() -> None:
        for _ in range(10):
            with backend.uow() as uow:
                ok = uow.console.spend_budget(HOME, windows, 1)
                uow.commit()
            with lock:
                granted.append(ok)

    threads = [threading.Thread(target=spender) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert granted.count(True) == 25 and len(granted) == 40
    with backend.uow() as uow:
        assert uow.console.budget_used(HOME, "day:2026-11-25") == 25
        assert uow.console.budget_used(HOME, "minute:2026-11-25T10:00") == 25
