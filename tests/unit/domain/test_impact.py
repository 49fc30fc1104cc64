"""Fix-impact events (SPEC 2.9): the status table, the windows around day 0 and what a measurement records."""

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from attrs import evolve

from siteaudit.domain.error import InvalidTransition
from siteaudit.domain.ids import AuditId, SiteId, TaskKey
from siteaudit.domain.impact import (
    IMPACT_MOVES,
    Figures,
    FixImpact,
    ImpactStatus,
    Window,
    total_delta,
)
from siteaudit.domain.lifecycle import ended_states, reachable

FIXED_AT = datetime(2026, 11, 22, 15, 30, tzinfo=UTC)
DAY0 = date(2026, 11, 22)


def event(**changes: Any) -> FixImpact:
    base = FixImpact(
        id=1,
        site_id=SiteId(1),
        task_key=TaskKey("0123456789abcdef"),
        code="meta_description_missing",
        template="/products/[slug]",
        source_audit_id=AuditId(4),
        verified_at=FIXED_AT,
        urls=("https://shop.example/products/a",),
    )
    return evolve(base, **changes)


def test_the_status_graph_ends_only_in_measured_and_reaches_every_status() -> None:
    assert ended_states(IMPACT_MOVES, ImpactStatus) == {ImpactStatus.MEASURED}
    assert reachable(IMPACT_MOVES, ImpactStatus.MEASURING) == set(ImpactStatus)
    with pytest.raises(InvalidTransition):
        evolve(event(), status=ImpactStatus.MEASURED).without_data(FIXED_AT)


def test_day_0_is_left_out_the_baseline_is_the_28_days_before_and_horizons_the_days_after() -> None:
    found = event()
    assert found.baseline_window() == Window(DAY0 - timedelta(days=28), DAY0 - timedelta(days=1))
    assert found.horizon_window(7) == Window(DAY0 + timedelta(days=1), DAY0 + timedelta(days=7))
    assert found.horizon_window(28).end == DAY0 + timedelta(days=28)
    assert found.due_horizons(DAY0 + timedelta(days=6)) == ()
    assert found.due_horizons(DAY0 + timedelta(days=7)) == (7,)
    assert found.due_horizons(DAY0 + timedelta(days=28)) == (7, 14, 28)
    assert evolve(found, d7=3).due_horizons(DAY0 + timedelta(days=14)) == (14,)


def test_a_measurement_records_the_baseline_once_each_horizon_once_and_d28_ends_it() -> None:
    at = FIXED_AT + timedelta(days=8)
    first = event().measure(
        now=at,
        latest_day=DAY0 + timedelta(days=7),
        demo=True,
        baseline=Figures(40, 1_000),
        horizons={7: Figures(12, 300)},
    )
    assert (first.baseline_clicks_28d, first.baseline_impressions_28d, first.d7, first.d7_at) == (
        40,
        1_000,
        12,
        at,
    )
    assert first.status is ImpactStatus.MEASURING and first.delta_28d is None and first.demo
    with pytest.raises(ValueError, match="not due"):
        first.measure(
            now=at, latest_day=DAY0 + timedelta(days=7), demo=True, baseline=None, horizons={7: Figures(1, 1)}
        )
    end = FIXED_AT + timedelta(days=29)
    done = first.measure(
        now=end,
        latest_day=DAY0 + timedelta(days=28),
        demo=True,
        baseline=Figures(999, 999),  # the baseline is kept as first recorded
        horizons={14: Figures(26, 700), 28: Figures(55, 1_400)},
    )
    assert (done.baseline_clicks_28d, done.d14, done.d28, done.d28_impressions) == (40, 26, 55, 1_400)
    assert (done.delta_28d, done.status, done.measured_at) == (15, ImpactStatus.MEASURED, end)
    assert total_delta([done, first, evolve(done, d28=30)]) == 15 - 10


def test_without_data_an_event_waits_until_its_window_and_a_week_have_passed() -> None:
    missing = event().without_data(FIXED_AT)
    assert missing.status is ImpactStatus.NO_DATA
    assert not missing.abandoned(DAY0 + timedelta(days=35))
    assert missing.abandoned(DAY0 + timedelta(days=36))
    again = missing.measure(
        now=FIXED_AT, latest_day=DAY0 - timedelta(days=1), demo=False, baseline=Figures(1, 2), horizons={}
    )
    assert again.status is ImpactStatus.MEASURING and again.baseline_clicks_28d == 1
