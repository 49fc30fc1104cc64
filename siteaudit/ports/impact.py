"""Fix-impact events (docs/rest-api.md "Fix impact"): one repository on the unit of work,
`uow.fix_impacts`."""

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol

from siteaudit.domain.ids import SiteId
from siteaudit.domain.impact import FixImpact


class FixImpactRepository(Protocol):
    def add(self, event: FixImpact) -> FixImpact:
        """Stage a new event; an id of 0 gets a fresh one."""
        ...

    def save(self, event: FixImpact) -> None:
        """Stage a changed event (the measuring pass is its only writer)."""
        ...

    def latest(self, site_ids: Collection[SiteId], *, limit: int) -> Sequence[FixImpact]:
        """The newest events of those sites: latest `verified_at` first, then highest id."""
        ...

    def summary(self, site_ids: Collection[SiteId]) -> tuple[int, int]:
        """(sum of `delta_28d` over measured events, number of measured events) of those sites."""
        ...

    def due(self, checked_before: datetime, *, limit: int) -> Sequence[FixImpact]:
        """Events still measuring or without data, never checked or checked at or before `checked_before`,
        oldest check first (never-checked first)."""
        ...

    def delete_site(self, site_id: SiteId) -> None: ...
