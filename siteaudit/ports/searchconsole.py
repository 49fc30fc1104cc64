"""The search-engine console integration (SPEC 4.8): indexing data of a verified property."""

from collections.abc import Sequence
from datetime import date, datetime
from typing import Protocol

from attrs import frozen


@frozen
class UrlInspection:
    url: str
    coverage_state: str  # the engine's words, verbatim
    indexed: bool
    last_crawled: datetime | None = None
    google_canonical: str | None = None
    user_canonical: str | None = None


@frozen
class PageTraffic:
    url: str
    clicks_28d: int
    impressions_28d: int
    position: float | None = None


class SearchConsole(Protocol):
    def connected_property(self, site_url: str) -> str | None:
        """The console property that covers `site_url`, or None without a connection."""
        ...

    def traffic(self, property_id: str, *, start: date, end: date) -> Sequence[PageTraffic]:
        """Clicks and impressions per page over the period. Raises SearchConsoleUnavailable."""
        ...

    def inspect(self, property_id: str, urls: Sequence[str]) -> Sequence[UrlInspection]:
        """A fresh inspection of each URL, spending the property's daily budget.

        Raises BudgetExhausted (429 budget_exhausted, with when it resets) when the budget is spent.
        """
        ...
