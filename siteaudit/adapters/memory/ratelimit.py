"""In-process rate limits for the embedded default (one process serves every request)."""

import threading
from datetime import datetime

from siteaudit.domain.ratelimit import gcra
from siteaudit.ports.ratelimit import Limit, RateDecision


class MemoryRateLimiter:
    def __init__(self) -> None:
        self._tats: dict[str, float] = {}
        self._lock = threading.Lock()

    def _decide(self, bucket: str, limit: Limit, now: datetime, *, commit: bool) -> RateDecision:
        moment = now.timestamp()
        with self._lock:
            result = gcra(self._tats.get(bucket), moment, count=limit.count, period_s=limit.period_s)
            if commit and result.allowed:
                self._tats[bucket] = result.tat
        return RateDecision(
            result.allowed, limit.count, result.remaining, result.reset_s, result.retry_after_s
        )

    def hit(self, bucket: str, limit: Limit, *, now: datetime) -> RateDecision:
        return self._decide(bucket, limit, now, commit=True)

    def peek(self, bucket: str, limit: Limit, *, now: datetime) -> RateDecision:
        return self._decide(bucket, limit, now, commit=False)
