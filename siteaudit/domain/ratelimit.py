"""GCRA (generic cell rate algorithm): one timestamp per bucket decides every request.

The bucket stores its theoretical arrival time (TAT). A request at `now` fits when
`max(tat, now) + interval - now <= period`; it then moves TAT to `max(tat, now) + interval`. This is the
same arithmetic the PostgreSQL adapter runs in one statement.
"""

from attrs import frozen


@frozen
class GcraResult:
    allowed: bool
    tat: float  # the bucket's TAT after the request (unchanged when refused)
    remaining: int
    reset_s: float
    retry_after_s: float


def gcra(tat: float | None, now: float, *, count: int, period_s: float) -> GcraResult:
    """Decide one request against a bucket whose TAT is `tat` (None for an unused bucket)."""
    interval = period_s / count
    base = max(tat if tat is not None else now, now)
    new_tat = base + interval
    if new_tat - now <= period_s + 1e-9:
        remaining = int((period_s - (new_tat - now)) / interval + 1e-9)
        return GcraResult(True, new_tat, remaining, new_tat - now, 0.0)
    retry = new_tat - now - period_s
    current = tat if tat is not None else now
    return GcraResult(False, current, 0, max(0.0, current - now), retry)
