"""Rate limits: named buckets shared by every process that serves the interface."""

from datetime import datetime
from typing import Protocol

from attrs import frozen


@frozen
class Limit:
    """`count` requests per `period_s` seconds, as a GCRA (a smooth token bucket of depth `count`)."""

    count: int
    period_s: float

    @property
    def interval_s(self) -> float:
        return self.period_s / self.count


@frozen
class RateDecision:
    allowed: bool
    limit: int
    remaining: int  # requests still allowed right now
    reset_s: float  # seconds until the bucket is full again
    retry_after_s: float  # seconds until the next request would pass (0 when allowed)


class RateLimiter(Protocol):
    def hit(self, bucket: str, limit: Limit, *, now: datetime) -> RateDecision:
        """Count one request against `bucket` if it fits, atomically across processes.

        A refused request is not counted. Buckets are independent: exhausting one never touches another.
        """
        ...

    def peek(self, bucket: str, limit: Limit, *, now: datetime) -> RateDecision:
        """Whether one request would fit now, counting nothing."""
        ...
