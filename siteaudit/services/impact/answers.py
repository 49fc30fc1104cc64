"""The results of the fix-impact use cases (docs/rest-api.md "Fix impact"): what every door shows, one attrs class per
answer, built here from the domain's events. REST answers `converter.unstructure(result)`, the HTTP client
reads it back with `converter.structure`, and the OpenAPI components are generated from these classes."""

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from attrs import frozen

from siteaudit.domain.ids import SiteId
from siteaudit.domain.impact import METHODOLOGY, NOTE, FixImpact, ImpactStatus
from siteaudit.ports.usecases import copy_named


@frozen
class FixImpactEvent:
    """A fix-impact event. Day 0 is the UTC day of `verified_at`, left out of every window;
    `baseline_*_28d` cover the 28 days before it, `d7`/`d14`/`d28` the clicks of the 7/14/28 days after
    it (null until the stored console data reaches the window's last day; `*_at` say when each was
    recorded), `delta_28d = d28 - baseline_clicks_28d`. `urls_count` is null until the first measuring
    pass read the task's URLs. `sampled`: the recheck that fixed it saw a sample of the task's URLs.
    Figures are estimates, not adjusted for season."""

    id: int
    site_id: int
    task_key: str
    code: str
    template: str
    recheck_id: int | None
    urls_count: int | None
    sampled: bool
    verified_at: datetime
    baseline_clicks_28d: int | None
    baseline_impressions_28d: int | None
    d7: int | None
    d7_at: datetime | None
    d14: int | None
    d14_at: datetime | None
    d28: int | None
    d28_at: datetime | None
    d28_impressions: int | None
    delta_28d: int | None
    measured_at: datetime | None
    status: ImpactStatus
    demo: bool


@frozen
class TeamFixImpactEvent(FixImpactEvent):
    """A team-level event, with its site's host."""

    site_host: str


@frozen
class SiteFixImpact:
    """`GET /sites/{id}/fix-impact`: the site's latest events, newest first, and the sum of `delta_28d`
    over its measured events. `demo`: the site's console figures come from the demo provider."""

    site_id: int
    total_delta_28d: int
    measured_events: int
    events: tuple[FixImpactEvent, ...]
    note: str
    methodology: str
    demo: bool


@frozen
class TeamFixImpactList:
    """`GET /fix-impact`: the team's total over measured events and its latest events across its sites.
    `demo`: some of the events' figures come from the demo provider."""

    total_delta_28d: int
    measured_events: int
    events: tuple[TeamFixImpactEvent, ...]
    note: str
    methodology: str
    demo: bool


Shown = TypeVar("Shown", bound=FixImpactEvent)


def _event(shown: type[Shown], event: FixImpact, **more: Any) -> Shown:
    """An event as shown: its record's fields by their names, what it counts, and `more`."""
    return copy_named(shown, event, urls_count=event.urls_count, delta_28d=event.delta_28d, **more)


def site_fix_impact(
    site_id: int, events: Iterable[FixImpact], delta: int, measured: int, demo: bool
) -> SiteFixImpact:
    return SiteFixImpact(
        site_id=int(site_id),
        total_delta_28d=delta,
        measured_events=measured,
        events=tuple(_event(FixImpactEvent, e) for e in events),
        note=NOTE,
        methodology=METHODOLOGY,
        demo=demo,
    )


def team_fix_impact(
    events: Iterable[FixImpact], hosts: Mapping[SiteId, str], delta: int, measured: int, demo: bool
) -> TeamFixImpactList:
    return TeamFixImpactList(
        total_delta_28d=delta,
        measured_events=measured,
        events=tuple(_event(TeamFixImpactEvent, e, site_host=hosts.get(e.site_id, "")) for e in events),
        note=NOTE,
        methodology=METHODOLOGY,
        demo=demo,
    )
