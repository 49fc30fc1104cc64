"""What the service counts about itself: a driven port the use cases report to, and a `NoMetrics` that
counts nothing. The Prometheus adapter is `siteaudit.adapters.metrics`; the services never see it.

Every method is a counter increment: cheap, never raises, safe from any thread.
"""

from typing import Final, Protocol

from siteaudit.domain.facts import FetchError
from siteaudit.domain.tally import BLOCKED, BROKEN, FETCH_ERROR, OK, REDIRECT

# How a visited URL ended (`page_fetched`): the report's `totals` buckets, plus the two without a full
# fetch.
NOT_MODIFIED: Final = "not_modified"  # answered 304 to a conditional request
DISALLOWED: Final = "disallowed"  # robots.txt said no: not fetched at all
PAGE_OUTCOMES: Final = (OK, REDIRECT, BROKEN, FETCH_ERROR, BLOCKED, NOT_MODIFIED, DISALLOWED)

# What one webhook attempt did (`webhook_delivery`).
DELIVERED: Final = "delivered"  # a 2xx answer
REDIRECTED: Final = "redirected"  # a 3xx answer: not followed, delivery ends
FAILED_ATTEMPT: Final = "failed_attempt"  # failed, another attempt is scheduled
GIVEN_UP: Final = "given_up"  # the last attempt failed: the event is dropped
WEBHOOK_RESULTS: Final = (DELIVERED, REDIRECTED, FAILED_ATTEMPT, GIVEN_UP)


class Metrics(Protocol):
    def page_fetched(self, outcome: str) -> None:
        """A frontier URL's visit was recorded, ending as one of `PAGE_OUTCOMES`."""
        ...

    def fetch_failed(self, kind: FetchError) -> None:
        """A recorded visit produced no usable HTTP answer, for this reason."""
        ...

    def credits_charged(self, tenths: int) -> None:
        """An audit's credits were settled: `tenths` (tenths of a credit) charged, the rest refunded."""
        ...

    def webhook_delivery(self, result: str) -> None:
        """One webhook attempt was recorded, with one of `WEBHOOK_RESULTS`."""
        ...


class NoMetrics:
    """Counts nothing: the default of every use case, and the service's when metrics are off."""

    def page_fetched(self, outcome: str) -> None:
        pass

    def fetch_failed(self, kind: FetchError) -> None:
        pass

    def credits_charged(self, tenths: int) -> None:
        pass

    def webhook_delivery(self, result: str) -> None:
        pass


NO_METRICS: Final[Metrics] = NoMetrics()
