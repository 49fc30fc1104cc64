"""Fix impact (docs/rest-api.md "Fix impact"): measuring fix-impact events against the stored console figures, and
reading them (the events are opened by `services/traffic.py` when tasks become fixed; the handlers of
`usecases.GetSiteFixImpact` and `GetTeamFixImpact`).

`measure_fix_impacts` is the scheduler's daily pass: it reads each event's URLs once (the issue rows of
the audit that found the task), records the baseline and each horizon whose days the stored figures
reach (`siteaudit.domain.impact` says how), or marks the event `no_data` while the site has none.
"""

import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Final

from attrs import evolve

from siteaudit.domain.account import Caller
from siteaudit.domain.console import SYNC_DAYS
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.domain.ids import SiteId
from siteaudit.domain.impact import Figures, FixImpact, Window
from siteaudit.domain.task import TaskStatus
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.impact import answers
from siteaudit.services.impact.answers import SiteFixImpact, TeamFixImpactList
from siteaudit.services.impact.usecases import GetSiteFixImpact, GetTeamFixImpact
from siteaudit.services.tasks.task import affected_urls

log = logging.getLogger("siteaudit.impact")

MEASURE_EVERY: Final = timedelta(days=1)  # "the scheduler measures due events daily"
MEASURE_BATCH: Final = 200


# --- measuring ---------------------------------------------------------------------------------------


def _sum(uow: UnitOfWork, event: FixImpact, urls: Sequence[str], window: Window) -> Figures:
    found = uow.console.page_totals(event.site_id, urls, window.start, window.end)
    return Figures(sum(t.clicks for t in found.values()), sum(t.impressions for t in found.values()))


def _event_urls(event: FixImpact, uow: Callable[[], UnitOfWork], crawl: CrawlStore) -> tuple[str, ...]:
    """The task's URLs in the audit that found it; its sample URLs when that audit's rows are gone."""
    with uow() as work:
        task = work.tasks.get(event.site_id, event.task_key)
    source = evolve(task, audit_id=event.source_audit_id)
    try:
        return tuple(sorted(affected_urls(source, uow=uow(), crawl=crawl)))
    except NotFound:
        return tuple(sorted(task.sample_urls))


def measure_event(
    event: FixImpact, *, now: datetime, uow: Callable[[], UnitOfWork], crawl: CrawlStore
) -> FixImpact:
    """One event brought up to date with the stored console figures (saved). A `no_data` event past its
    window and grace stays as it is (only its check time moves, so it waits behind the others)."""
    if event.abandoned(now.date()):
        with uow() as work:
            work.fix_impacts.save(evolve(event, checked_at=now))
            work.commit()
        return event
    if event.urls is None:
        try:
            urls = _event_urls(event, uow, crawl)
        except NotFound:
            urls = ()  # the task went with its site
        event = evolve(event, urls=urls)
    assert event.urls is not None
    with uow() as work:
        latest = work.console.latest_day(event.site_id)
        sync = work.console.sync(event.site_id)
        if latest is None:
            measured = event.without_data(now)
        else:
            baseline = (
                _sum(work, event, event.urls, event.baseline_window())
                if event.baseline_clicks_28d is None
                else None
            )
            horizons = {
                days: _sum(work, event, event.urls, event.horizon_window(days))
                for days in event.due_horizons(latest)
            }
            measured = event.measure(
                now=now,
                latest_day=latest,
                demo=bool(sync is not None and sync.demo),
                baseline=baseline,
                horizons=horizons,
            )
        work.fix_impacts.save(measured)
        work.commit()
    return measured


def measure_fix_impacts(
    now: datetime, *, uow: Callable[[], UnitOfWork], crawl: CrawlStore, batch: int = MEASURE_BATCH
) -> int:
    """The scheduler's daily pass: events not looked at for a day (or never). How many were measured."""
    with uow() as work:
        due = list(work.fix_impacts.due(now - MEASURE_EVERY, limit=batch))
    done = 0
    for event in due:
        try:
            measure_event(event, now=now, uow=uow, crawl=crawl)
        except Exception:  # one event's failure must not hold up the others
            log.exception("fix impact %s could not be measured", event.id)
            continue
        done += 0 if event.abandoned(now.date()) else 1
    return done


# --- task traffic after a console sync ----------------------------------------------------------------


def refresh_task_traffic(site_id: SiteId, *, uow: Callable[[], UnitOfWork], crawl: CrawlStore) -> int:
    """After a console sync stored new figures: every unfixed task of the site gets the clicks and
    impressions of its URLs over the 28 days ending at the latest stored day, so tasks rank by traffic
    without waiting for the next audit. How many tasks changed. A task that moved meanwhile is left for
    the next sync."""
    with uow() as work:
        tasks = [t for t in work.tasks.of_site(site_id) if t.status is not TaskStatus.FIXED]
        latest = work.console.latest_day(site_id)
    if latest is None:
        return 0
    start = latest - timedelta(days=SYNC_DAYS - 1)
    changed = 0
    for task in tasks:
        urls = affected_urls(task, uow=uow(), crawl=crawl)
        with uow() as work:
            found = work.console.page_totals(site_id, urls, start, latest)
            clicks = sum(t.clicks for t in found.values())
            impressions = sum(t.impressions for t in found.values())
            try:
                current = work.tasks.get(site_id, task.key)
                if (current.clicks_28d, current.impressions_28d) == (clicks, impressions):
                    continue
                work.tasks.save(
                    evolve(
                        current, clicks_28d=clicks, impressions_28d=impressions, version=current.version + 1
                    )
                )
                work.commit()
            except (ConcurrentUpdate, NotFound):
                continue
        changed += 1
    return changed


# --- reading -----------------------------------------------------------------------------------------


def get_site_fix_impact(asked: GetSiteFixImpact, caller: Caller, *, uow: UnitOfWork) -> SiteFixImpact:
    with uow:
        site = uow.sites.get(asked.site_id, team=caller.team_id)
        events = tuple(uow.fix_impacts.latest([site.id], limit=asked.limit))
        delta, measured = uow.fix_impacts.summary([site.id])
        sync = uow.console.sync(site.id)
    demo = sync.demo if sync is not None else any(e.demo for e in events)
    return answers.site_fix_impact(site.id, events, delta, measured, demo)


def get_team_fix_impact(asked: GetTeamFixImpact, caller: Caller, *, uow: UnitOfWork) -> TeamFixImpactList:
    with uow:
        sites = {s.id: s.host for s in uow.sites.list(team=caller.team_id)}
        events = tuple(uow.fix_impacts.latest(list(sites), limit=asked.limit))
        delta, measured = uow.fix_impacts.summary(list(sites))
    return answers.team_fix_impact(events, sites, delta, measured, any(e.demo for e in events))
