"""Fix-impact events (issue 15, SPEC 2.9): the same contract on memory, SQLite and PostgreSQL: added with
fresh ids and read back whole, the latest first per site set, totals over measured events only, due
events oldest check first, removed with their site; and the console's latest stored day."""

from datetime import date, timedelta
from typing import Any

from attrs import evolve
from sql_backend import T0, Backend

from siteaudit.domain.console import PageDay
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey
from siteaudit.domain.impact import FixImpact, ImpactStatus

SITE, OTHER = SiteId(7), SiteId(8)


def _event(site: SiteId, n: int, **changes: Any) -> FixImpact:
    event = FixImpact(
        id=0,
        site_id=site,
        task_key=TaskKey(f"{n:016x}"),
        code="title_missing",
        template="/clocks/*",
        source_audit_id=AuditId(3),
        verified_at=T0 + timedelta(hours=n),
    )
    return evolve(event, **changes)


def test_events_are_stored_whole_and_listed_latest_first(backend: Backend) -> None:
    measured = _event(
        SITE,
        2,
        recheck_id=RecheckId(9),
        sampled=True,
        urls=("https://retro-clock.example/clocks/1", "https://retro-clock.example/clocks/2"),
        baseline_clicks_28d=40,
        baseline_impressions_28d=900,
        d7=12,
        d7_at=T0 + timedelta(days=8),
        d14=25,
        d14_at=T0 + timedelta(days=15),
        d28=55,
        d28_at=T0 + timedelta(days=29),
        d28_impressions=1_300,
        measured_at=T0 + timedelta(days=29),
        checked_at=T0 + timedelta(days=29),
        status=ImpactStatus.MEASURED,
        demo=True,
    )
    with backend.uow() as uow:
        first = uow.fix_impacts.add(_event(SITE, 1))
        second = uow.fix_impacts.add(measured)
        third = uow.fix_impacts.add(_event(OTHER, 3, status=ImpactStatus.NO_DATA))
        uow.commit()
    assert len({first.id, second.id, third.id}) == 3 and 0 not in {first.id, second.id, third.id}
    with backend.uow() as uow:
        assert uow.fix_impacts.latest([SITE], limit=10) == [second, first]
        assert uow.fix_impacts.latest([SITE, OTHER], limit=2) == [third, second]
        assert uow.fix_impacts.latest([], limit=10) == []
        assert uow.fix_impacts.summary([SITE]) == (15, 1)  # 55 - 40, measured events only
        assert uow.fix_impacts.summary([OTHER]) == (0, 0)
        assert uow.fix_impacts.summary([]) == (0, 0)


def test_due_events_are_open_ones_not_checked_since_oldest_first_and_go_with_their_site(
    backend: Backend,
) -> None:
    with backend.uow() as uow:
        never = uow.fix_impacts.add(_event(SITE, 1))
        old = uow.fix_impacts.add(_event(SITE, 2, checked_at=T0, status=ImpactStatus.NO_DATA))
        recent = uow.fix_impacts.add(_event(SITE, 3, checked_at=T0 + timedelta(days=2)))
        uow.fix_impacts.add(_event(OTHER, 4, checked_at=T0, status=ImpactStatus.MEASURED))
        uow.commit()
    with backend.uow() as uow:
        assert uow.fix_impacts.due(T0 + timedelta(days=1), limit=10) == [never, old]
        assert uow.fix_impacts.due(T0 + timedelta(days=1), limit=1) == [never]
        assert uow.fix_impacts.due(T0 + timedelta(days=3), limit=10) == [never, old, recent]
    with backend.uow() as uow:
        uow.fix_impacts.save(evolve(never, checked_at=T0 + timedelta(days=3), d7=4))
        uow.commit()
    with backend.uow() as uow:
        assert uow.fix_impacts.due(T0 + timedelta(days=1), limit=10) == [old]
        assert uow.fix_impacts.latest([SITE], limit=10)[-1].d7 == 4
        uow.fix_impacts.delete_site(SITE)
        uow.commit()
    with backend.uow() as uow:
        assert uow.fix_impacts.latest([SITE], limit=10) == []
        assert len(uow.fix_impacts.latest([OTHER], limit=10)) == 1


def test_the_latest_stored_console_day_of_a_site(backend: Backend) -> None:
    day = date(2026, 11, 1)
    with backend.uow() as uow:
        assert uow.console.latest_day(SITE) is None
        uow.console.replace_days(
            SITE,
            [
                PageDay(SITE, day, "https://a.example/", 1, 2, None),
                PageDay(SITE, day + timedelta(days=5), "https://a.example/", 0, 1, None),
            ],
            start=day,
            end=day + timedelta(days=5),
        )
        uow.console.replace_days(
            OTHER,
            [PageDay(OTHER, day + timedelta(days=9), "https://b.example/", 1, 1, None)],
            start=day,
            end=day + timedelta(days=9),
        )
        uow.commit()
    with backend.uow() as uow:
        assert uow.console.latest_day(SITE) == day + timedelta(days=5)
        assert uow.console.latest_day(OTHER) == day + timedelta(days=9)
