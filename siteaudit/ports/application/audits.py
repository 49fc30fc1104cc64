"""What the audits' use cases take and give beyond the declared answers: the app's list of audits and
an audit's live progress (`WebSession`), and the values the audits' handlers build."""

from collections.abc import Sequence
from typing import Generic, TypeVar

from attrs import frozen

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.ids import SiteId
from siteaudit.domain.site import Notice

T = TypeVar("T")


@frozen
class AuditQuery:
    """Which of the team's audits to list (newest first); `site_id` narrows to one registered site,
    `statuses` (when not empty) to audits in one of them."""

    site_id: SiteId | None = None
    offset: int = 0
    limit: int = 20
    statuses: tuple[AuditStatus, ...] = ()


@frozen
class Listing(Generic[T]):
    """One page of a longer list: `items` from the query's offset, `total` of the whole list."""

    items: Sequence[T]
    total: int


@frozen
class AuditStarted:
    audit: Audit
    notices: tuple[Notice, ...] = ()  # why it runs slower than asked (`warnings` of the answer)

    @property
    def estimated_credits(self) -> int:
        """Credits reserved for the audit, in tenths."""
        return self.audit.credits_reserved


@frozen
class AuditDetail:
    """An audit as its detail shows it (`GET /crawls/{id}`): the audit, and whether its work stalled, its
    lease's deadline passed with no worker taking it over (`siteaudit.domain.lease.is_stalled`)."""

    audit: Audit
    stalled: bool


@frozen
class AuditProgress:
    """A running audit as the app's live view shows it: the detail, and the URLs found and waiting to be
    fetched (`queued`, from the frontier's counters; 0 once the audit ended)."""

    detail: AuditDetail
    queued: int
