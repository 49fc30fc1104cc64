"""The host gate: every request of every audit takes a turn from its target host's shared bucket first
(`siteaudit.domain.hostlimit`), through the rate limiter the REST door uses (`RateLimiter`: one GCRA
statement on PostgreSQL, so every worker process shares the buckets; in process for the embedded
default). A request refused a turn waits until the bucket says it would pass, then asks again: audits
of one host share its rate first come, first served.

The bucket's clock is the wall clock (`time.time`), not the crawl's `Clock`: the buckets are shared by
processes, and the tests' fixed clocks would never let a refused request through.
"""

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from siteaudit.domain.hostlimit import HostLimits, bucket_key
from siteaudit.ports.ratelimit import Limit, RateLimiter

MIN_WAIT_S: Final = 0.005  # a refused request asks again no sooner than this


class HostGate:
    """`turn(host)` returns once a request to `host` fits its shared rate; `waited_s` adds up the waits."""

    def __init__(
        self,
        limiter: RateLimiter | None,
        limits: HostLimits,
        *,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.limiter = limiter
        self.limits = limits
        self.now = now
        self.waited_s = 0.0

    async def turn(self, host: str) -> None:
        if self.limiter is None or not host:
            return
        rate = self.limits.bucket_of(host)
        limit, key = Limit(rate.count, rate.period_s), bucket_key(host)
        while True:
            decision = self.limiter.hit(key, limit, now=datetime.fromtimestamp(self.now(), UTC))
            if decision.allowed:
                return
            wait = max(decision.retry_after_s, MIN_WAIT_S)
            self.waited_s += wait
            await asyncio.sleep(wait)


NO_GATE: Final = HostGate(None, HostLimits())
