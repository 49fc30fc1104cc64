"""Search-console figures for fix tasks, and the fix-impact events opened when tasks become fixed.

`ConsoleTraffic` is the `TrafficSource` over the console store: clicks and impressions per URL over the
28 days ending at the latest day the site's figures are stored for (the daily sync stores 28 days ending
yesterday); a site without stored figures has no traffic data (None). `open_fix_impacts` runs inside the
transaction that marks tasks fixed; `services/impact/impact.py` measures and reads the events.
"""

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import timedelta

from siteaudit.domain.console import SYNC_DAYS
from siteaudit.domain.ids import RecheckId, SiteId, TaskKey
from siteaudit.domain.impact import FixImpact
from siteaudit.domain.recheck import Recheck
from siteaudit.domain.task import FixTask, TaskStatus, TaskStatusChanged, Traffic
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.traffic import TrafficSource

# --- task traffic ------------------------------------------------------------------------------------


class ConsoleTraffic:
    """`TrafficSource` over the stored console figures (one read transaction per call: never call it
    inside another transaction)."""

    def __init__(self, uow: Callable[[], UnitOfWork]) -> None:
        self._uow = uow

    def traffic(self, site_id: SiteId, urls: Collection[str]) -> Mapping[str, Traffic] | None:
        with self._uow() as uow:
            latest = uow.console.latest_day(site_id)
            if latest is None:
                return None
            start = latest - timedelta(days=SYNC_DAYS - 1)
            found = uow.console.page_totals(site_id, urls, start, latest)
        return {url: Traffic(t.clicks, t.impressions) for url, t in found.items()}


class FixedTraffic:
    """Figures read before a transaction, answered inside it (a `TrafficSource` that does no I/O)."""

    def __init__(self, site_id: SiteId | None, figures: Mapping[str, Traffic] | None) -> None:
        self._site_id = site_id
        self._figures = figures

    def traffic(self, site_id: SiteId, urls: Collection[str]) -> Mapping[str, Traffic] | None:
        if site_id != self._site_id or self._figures is None:
            return None
        return {u: self._figures[u] for u in urls if u in self._figures}


def read_ahead(site_id: SiteId | None, urls: Iterable[str], traffic: TrafficSource) -> TrafficSource:
    """The traffic of `urls` read now, to be used inside a transaction that follows."""
    if site_id is None:
        return FixedTraffic(None, None)
    return FixedTraffic(site_id, traffic.traffic(site_id, set(urls)))


# --- opening fix-impact events ----------------------------------------------------------------------------------


def open_fix_impacts(
    moved: Iterable[TaskStatusChanged],
    before: Mapping[TaskKey, FixTask],
    *,
    uow: UnitOfWork,
    recheck: Recheck | None = None,
) -> list[FixImpact]:
    """Inside the transaction that moved tasks: one `measuring` event per move into `fixed`. `before`
    maps task keys to the tasks as they were before the move (their `crawl_id` is the audit whose issue
    rows list the task's URLs)."""
    sampled = {t.task_key: t.sampled for t in recheck.targets} if recheck is not None else {}
    opened = []
    for change in moved:
        if change.after is not TaskStatus.FIXED or change.before is TaskStatus.FIXED:
            continue
        task = before[change.task_key]
        event = FixImpact(
            id=0,
            site_id=task.site_id,
            task_key=task.key,
            code=task.code,
            template=task.template,
            source_audit_id=task.audit_id,
            verified_at=change.at,
            recheck_id=None if recheck is None else RecheckId(recheck.id),
            sampled=sampled.get(task.key, False),
        )
        opened.append(uow.fix_impacts.add(event))
    return opened
