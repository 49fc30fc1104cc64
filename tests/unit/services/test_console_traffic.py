"""Task traffic from the stored console figures (issue 15): `ConsoleTraffic` sums the 28 days ending at the
latest stored day, leaves out URLs without figures, answers None for a site without any; `read_ahead`
keeps what was read for use inside a later transaction."""

from datetime import date, timedelta

from siteaudit.adapters.memory.store import MemoryStore, MemoryUnitOfWork
from siteaudit.domain.console import PageDay
from siteaudit.domain.ids import SiteId
from siteaudit.domain.task import Traffic
from siteaudit.services.traffic import ConsoleTraffic, read_ahead

SITE, QUIET = SiteId(1), SiteId(2)
LAST = date(2026, 11, 21)
A, B, C = "https://shop.example/a", "https://shop.example/b", "https://shop.example/c"


def store_with_days() -> MemoryStore:
    store = MemoryStore()
    days = [
        PageDay(SITE, LAST, A, 2, 10, 3.0),
        PageDay(SITE, LAST - timedelta(days=27), A, 5, 50, 3.0),  # the first of the 28 days
        PageDay(SITE, LAST - timedelta(days=28), A, 100, 1_000, 3.0),  # one day too old
        PageDay(SITE, LAST - timedelta(days=3), B, 0, 7, 9.0),
    ]
    with MemoryUnitOfWork(store) as uow:
        uow.console.replace_days(SITE, days, start=LAST - timedelta(days=40), end=LAST)
        uow.commit()
    return store


def test_the_28_days_ending_at_the_latest_stored_day_per_url() -> None:
    store = store_with_days()
    traffic = ConsoleTraffic(lambda: MemoryUnitOfWork(store))
    assert traffic.traffic(SITE, [A, B, C]) == {A: Traffic(7, 60), B: Traffic(0, 7)}  # C: no data
    assert traffic.traffic(SITE, []) == {}
    assert traffic.traffic(QUIET, [A]) is None  # no console data at all


def test_figures_read_ahead_answer_for_their_site_only() -> None:
    store = store_with_days()
    ahead = read_ahead(SITE, [A, C], ConsoleTraffic(lambda: MemoryUnitOfWork(store)))
    assert ahead.traffic(SITE, [A, B, C]) == {A: Traffic(7, 60)}
    assert ahead.traffic(QUIET, [A]) is None
    assert read_ahead(None, [A], ConsoleTraffic(lambda: MemoryUnitOfWork(store))).traffic(SITE, [A]) is None
