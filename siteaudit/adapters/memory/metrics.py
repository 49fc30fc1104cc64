"""Metrics counted in memory: what a test asserts the use cases reported."""

import collections
import threading

from siteaudit.domain.facts import FetchError


class MemoryMetrics:
    """`siteaudit.ports.metrics.Metrics` as plain counters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.pages: collections.Counter[str] = collections.Counter()
        self.fetch_errors: collections.Counter[str] = collections.Counter()
        self.webhooks: collections.Counter[str] = collections.Counter()
        self.credits_tenths = 0

    def page_fetched(self, outcome: str) -> None:
        with self._lock:
            self.pages[outcome] += 1

    def fetch_failed(self, kind: FetchError) -> None:
        with self._lock:
            self.fetch_errors[str(kind)] += 1

    def credits_charged(self, tenths: int) -> None:
        with self._lock:
            self.credits_tenths += tenths

    def webhook_delivery(self, result: str) -> None:
        with self._lock:
            self.webhooks[result] += 1
