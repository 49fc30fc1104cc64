"""IndexNow (docs/rest-api.md "IndexNow"): the client that notifies the engines that support it (not the
largest one), and where each site's IndexNow state, today's submitted URLs and recent submissions are kept."""

from collections.abc import Collection, Mapping, Sequence
from datetime import date
from typing import Protocol

from siteaudit.domain.ids import SiteId
from siteaudit.domain.indexnow import BatchResult, IndexNowSite, Submission


class IndexNowClient(Protocol):
    def submit(self, *, host: str, key: str, key_location: str, urls: Sequence[str]) -> BatchResult:
        """POST one batch (at most 10,000 URLs of `host`) to the IndexNow endpoint as the protocol's JSON
        (`host`, `key`, `keyLocation`, `urlList`). Never raises for what the endpoint or the network
        does: the answer's status (None without one) comes back with its error code."""
        ...


class IndexNowRepository(Protocol):
    """A site's IndexNow state and its URL ledger; callers check team scope on the site first."""

    def get(self, site_id: SiteId, *, lock: bool = False) -> IndexNowSite | None:
        """The site's state, None before its first use. With `lock`, its row is held until the unit of
        work ends (PostgreSQL `FOR UPDATE`), so reservations of the daily allowance queue up rather
        than fail as concurrent updates."""
        ...

    def add(self, state: IndexNowSite) -> None:
        """Stage the site's first state. Raises ConcurrentUpdate when another unit of work made it."""
        ...

    def save(self, state: IndexNowSite) -> None:
        """Stage an update. Raises ConcurrentUpdate if the stored version moved since it was loaded."""
        ...

    def ledger(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> Mapping[str, bool]:
        """Which of these URL hashes were already counted on `day` for the site, each with whether the
        endpoint accepted it since."""
        ...

    def count_urls(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> None:
        """Stage these URL hashes as counted on `day` (not yet accepted); earlier days are forgotten."""
        ...

    def mark_accepted(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> None:
        """Stage that the endpoint accepted these counted URLs."""
        ...

    def add_submission(self, submission: Submission) -> bool:
        """Stage a submission; False, changing nothing, when one for the same audit exists already."""
        ...

    def has_audit_submission(self, site_id: SiteId, audit_id: int) -> bool:
        """Whether the automatic submission after this audit was recorded."""
        ...

    def recent(self, site_id: SiteId, *, limit: int) -> Sequence[Submission]:
        """The site's latest submissions, newest first."""
        ...
