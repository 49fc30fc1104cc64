"""GCRA: exactly `count` requests pass in a burst, then one more every interval."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter
from siteaudit.domain.ratelimit import gcra
from siteaudit.ports.ratelimit import Limit

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def test_sixty_requests_a_minute_pass_in_a_burst_and_the_sixty_first_waits_a_second() -> None:
    limiter = MemoryRateLimiter()
    decisions = [limiter.hit("key:a", Limit(60, 60), now=NOW) for _ in range(61)]
    assert [d.allowed for d in decisions].count(True) == 60
    refused = decisions[-1]
    assert not refused.allowed and 0.99 <= refused.retry_after_s <= 1.01
    assert decisions[0].remaining == 59 and decisions[59].remaining == 0
    assert limiter.hit("key:a", Limit(60, 60), now=NOW + timedelta(seconds=1)).allowed


def test_exhausting_one_bucket_leaves_another_untouched() -> None:
    limiter = MemoryRateLimiter()
    for _ in range(61):
        limiter.hit("key:a", Limit(60, 60), now=NOW)
    assert limiter.hit("key:b", Limit(60, 60), now=NOW).remaining == 59


def test_peek_counts_nothing() -> None:
    limiter = MemoryRateLimiter()
    for _ in range(10):
        assert limiter.peek("key:a", Limit(1, 60), now=NOW).allowed
    assert limiter.hit("key:a", Limit(1, 60), now=NOW).allowed


@given(st.integers(1, 100), st.floats(1, 3600), st.lists(st.floats(0, 7200), max_size=300))
def test_no_window_admits_more_than_the_burst_plus_what_the_rate_refills(
    count: int, period: float, times: list[float]
) -> None:
    """GCRA's bound: `count` at once, then one per `period / count`. Over [start, end] at most
    count + (end - start) / interval pass (a full period after a burst may thus see up to 2 * count)."""
    tat = None
    admitted = []
    for t in sorted(times):
        result = gcra(tat, t, count=count, period_s=period)
        if result.allowed:
            tat = result.tat
            admitted.append(t)
    interval = period / count
    for i, start in enumerate(admitted):
        inside = [t for t in admitted[i:] if t < start + period]
        assert len(inside) <= count + (inside[-1] - start) / interval + 1e-6
        assert sum(1 for t in inside if t == start) <= count  # never more than the burst at once
