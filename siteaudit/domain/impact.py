"""Fix impact (docs/rest-api.md "Fix impact"): what happened to a fixed task's search traffic afterwards.

When a task becomes fixed (by a recheck or by a full audit), an event opens. Day 0 is the UTC day it was
fixed on (`verified_at`), which is left out of every window because it is half before and half after the
fix. The baseline is the clicks and impressions of the task's URLs over the 28 days before day 0; `d7`,
`d14` and `d28` are their clicks over the 7, 14 and 28 days after day 0, each recorded once the stored
console figures reach the window's last day; `d28_impressions` the impressions of the 28-day window, and
`delta_28d = d28 - baseline_clicks_28d`. Figures are estimates: sums of what the search console reports
for those URLs, not adjusted for season, trend, ranking changes or anything else that happened meanwhile.

Status: `measuring` until `d28` is recorded (`measured`); `no_data` while the site has no console data at
all. A `no_data` event becomes `measuring` if console data arrives before its 28-day window has passed
(the baseline days are then read from what the sync stored); after that it stays `no_data`. Pure: the
clock and the figures arrive as arguments.
"""

import enum
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from types import MappingProxyType
from typing import Final

from attrs import evolve, frozen

from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey
from siteaudit.domain.lifecycle import next_state

BASELINE_DAYS: Final = 28
HORIZONS: Final = (7, 14, 28)
# How long after its 28-day window an event without console data is still looked at.
NO_DATA_GRACE_DAYS: Final = 7

NOTE: Final = (
    "Figures are estimates: the search console's clicks and impressions summed over the fixed task's URLs. "
    "They are not adjusted for season, trend or other changes made meanwhile; a change is not proof that "
    "the fix caused it."
)
METHODOLOGY: Final = (
    "Day 0 is the UTC day the task was verified fixed (by a recheck whose task result was fixed, or by a "
    "complete audit that no longer found the issue); it is left out of every window. "
    "Baseline: clicks and impressions of the task's URLs (those the audit that found the issue listed) "
    "over the 28 days before day 0. "
    "d7, d14, d28: clicks over the 7, 14 and 28 days after day 0, each recorded once the stored console "
    "data reaches the window's last day (d7_at, d14_at, d28_at say when). "
    "d28_impressions: impressions over the same 28 days. delta_28d = d28 - baseline_clicks_28d (clicks). "
    "A URL without console figures counts 0. Status measuring until d28 is recorded (measured); no_data "
    "when the site has no search-console data. Consoles report with a delay of a few days, and recent "
    "days can still grow after they were recorded."
)


class ImpactStatus(enum.StrEnum):
    MEASURING = "measuring"
    MEASURED = "measured"
    NO_DATA = "no_data"


class ImpactMove(enum.StrEnum):
    DATA_SEEN = "data_seen"  # the site has console data
    DATA_MISSING = "data_missing"  # it has none
    D28_RECORDED = "d28_recorded"


_BEFORE_D28: Final = (ImpactStatus.MEASURING, ImpactStatus.NO_DATA)
IMPACT_MOVES: Final[Mapping[tuple[ImpactStatus, ImpactMove], ImpactStatus]] = MappingProxyType(
    {
        **{(s, ImpactMove.DATA_SEEN): ImpactStatus.MEASURING for s in _BEFORE_D28},
        **{(s, ImpactMove.DATA_MISSING): ImpactStatus.NO_DATA for s in _BEFORE_D28},
        (ImpactStatus.MEASURING, ImpactMove.D28_RECORDED): ImpactStatus.MEASURED,
    }
)


@frozen
class Window:
    start: date
    end: date  # inclusive


@frozen
class Figures:
    clicks: int
    impressions: int


@frozen
class FixImpact:
    """One fix-impact event. `urls` is None until the measuring pass read the task's URLs from the audit
    that found the issue (`source_audit_id`)."""

    id: int
    site_id: SiteId
    task_key: TaskKey
    code: str
    template: str
    source_audit_id: AuditId
    verified_at: datetime
    recheck_id: RecheckId | None = None
    sampled: bool = False
    urls: tuple[str, ...] | None = None
    baseline_clicks_28d: int | None = None
    baseline_impressions_28d: int | None = None
    d7: int | None = None
    d7_at: datetime | None = None
    d14: int | None = None
    d14_at: datetime | None = None
    d28: int | None = None
    d28_at: datetime | None = None
    d28_impressions: int | None = None
    measured_at: datetime | None = None
    checked_at: datetime | None = None  # the last measuring pass that looked at it
    status: ImpactStatus = ImpactStatus.MEASURING
    demo: bool = False  # the figures come from the demo console provider

    @property
    def urls_count(self) -> int | None:
        return None if self.urls is None else len(self.urls)

    @property
    def day0(self) -> date:
        return self.verified_at.date()

    @property
    def delta_28d(self) -> int | None:
        if self.d28 is None or self.baseline_clicks_28d is None:
            return None
        return self.d28 - self.baseline_clicks_28d

    def baseline_window(self) -> Window:
        return Window(self.day0 - timedelta(days=BASELINE_DAYS), self.day0 - timedelta(days=1))

    def horizon_window(self, days: int) -> Window:
        return Window(self.day0 + timedelta(days=1), self.day0 + timedelta(days=days))

    def abandoned(self, today: date) -> bool:
        """A no_data event past its 28-day window and the grace: no longer looked at."""
        last = self.horizon_window(HORIZONS[-1]).end + timedelta(days=NO_DATA_GRACE_DAYS)
        return self.status is ImpactStatus.NO_DATA and today > last

    def due_horizons(self, latest_day: date) -> tuple[int, ...]:
        """Horizons not recorded yet whose window the stored data reaches."""
        recorded = {7: self.d7, 14: self.d14, 28: self.d28}
        return tuple(h for h in HORIZONS if recorded[h] is None and self.horizon_window(h).end <= latest_day)

    def without_data(self, now: datetime) -> "FixImpact":
        status = next_state(IMPACT_MOVES, self.status, ImpactMove.DATA_MISSING, entity="fix impact")
        return evolve(self, status=status, checked_at=now)

    def measure(
        self,
        *,
        now: datetime,
        latest_day: date,
        demo: bool,
        baseline: Figures | None,
        horizons: Mapping[int, Figures],
    ) -> "FixImpact":
        """Record what the site's console data now shows: the baseline once (`baseline` when not recorded
        yet), and each horizon of `horizons` (those `due_horizons(latest_day)` named)."""
        status = next_state(IMPACT_MOVES, self.status, ImpactMove.DATA_SEEN, entity="fix impact")
        event = evolve(self, status=status, checked_at=now, demo=demo)
        if event.baseline_clicks_28d is None and baseline is not None:
            event = evolve(
                event, baseline_clicks_28d=baseline.clicks, baseline_impressions_28d=baseline.impressions
            )
        due = set(self.due_horizons(latest_day))
        for days, figures in sorted(horizons.items()):
            if days not in due:
                raise ValueError(f"horizon d{days} is not due on {latest_day} for fix impact {self.id}")
            if days == 7:
                event = evolve(event, d7=figures.clicks, d7_at=now)
            elif days == 14:
                event = evolve(event, d14=figures.clicks, d14_at=now)
            else:
                event = evolve(event, d28=figures.clicks, d28_at=now, d28_impressions=figures.impressions)
        if event.d28 is not None:
            done = next_state(IMPACT_MOVES, event.status, ImpactMove.D28_RECORDED, entity="fix impact")
            event = evolve(event, status=done, measured_at=now)
        return event


def total_delta(events: "list[FixImpact] | tuple[FixImpact, ...]") -> int:
    """The sum of `delta_28d` over the measured events."""
    return sum(e.delta_28d or 0 for e in events if e.status is ImpactStatus.MEASURED)
