"""An audit's bulk crawl data: interned URLs, page facts, links, issues, the report and the frontier.

`CrawlStore` is deliberately not part of the unit of work. A crawl slice writes thousands of rows; holding
them in the aggregate transaction would lock the audit (and, on SQLite, the whole database) for the
slice's duration. So the store is a separate object, built from the same database as the unit of work
(`siteaudit.adapters.sql.sql_crawl_store(database_url)`, `siteaudit.adapters.memory.MemoryCrawlStore()`),
and every method is its own transaction: a batch is written whole or not at all.

Callers keep the order that makes this safe: rows are written before the audit's state moves on (a slice
writes its pages and issues, then records progress; finalisation stores the report, then publishes it), and
a redelivered slice may write a batch again. Page and issue writes are therefore idempotent per URL: writing
a URL's page again replaces it, and `replace_issues` replaces a URL's issues.

URLs are stored once per audit and referenced by a small integer id (`intern`), so links, pages, issues and
the frontier cost a few bytes per reference. Ids are positive, dense and in first-seen order.

Every method takes the audit id; the audit's team is checked by the caller through
`AuditRepository.get(audit_id, team=...)` before any list or read here (an audit id is never guessed from a
crawl store row).
"""

import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, NamedTuple, Protocol

from attrs import frozen

from siteaudit.domain.checks.site import LinkBatch
from siteaudit.domain.diff import ArchivedIdentities
from siteaudit.domain.extraction import Extracted, ExtractMatch
from siteaudit.domain.facts import FetchError, Link, LinkKind, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue, Severity
from siteaudit.domain.report import Report


class FrontierState(enum.IntEnum):
    """Where a URL stands in the crawl. Stored as a small integer; the order is the crawl's."""

    QUEUED = 0  # discovered, waiting to be fetched
    DONE = 1  # fetched (or failed for good), its page written
    SKIPPED = 2  # seen but never to be fetched: disallowed, out of scope, over the page cap
    NOT_MODIFIED = 3  # answered 304 to a conditional request: the previous audit's page was reused
    RESOURCE = 4  # fetched as a resource, not a page (`domain.crawl.is_resource`, `docs/scoring.md`)


# The states whose URLs count as crawled pages (`Audit.pages_crawled`); never `RESOURCE`.
CRAWLED_STATES = (FrontierState.DONE, FrontierState.NOT_MODIFIED)


@frozen
class FrontierEntry:
    url_id: int
    url: str
    depth: int
    state: FrontierState = FrontierState.QUEUED


# `PageRow.excluded_by` of a URL robots.txt disallows (`PageFacts.disallowed`): never requested, so in no
# `totals` bucket of the report but counted in `stats.excluded_by_robots`.
EXCLUDED_BY_ROBOTS_TXT: Final = "robots.txt"


def excluded_by(page: PageFacts) -> str | None:
    """What kept the crawler from requesting the page (`PageRow.excluded_by`), None when nothing did."""
    return EXCLUDED_BY_ROBOTS_TXT if page.disallowed else None


@frozen
class PageRow:
    """A page row as the lists show it, without decoding the page's full facts."""

    url_id: int
    url: str
    status_code: int | None
    depth: int
    title: str | None = None
    meta_description: str | None = None
    word_count: int = 0
    blocked_by: str | None = None
    fetch_error: FetchError | None = None
    content_type: str | None = None
    template: str = ""
    in_sitemap: bool = False
    excluded_by: str | None = None  # `EXCLUDED_BY_ROBOTS_TXT` when robots.txt disallows it: never requested
    # What the audit's extraction rules read (docs/extraction.md), each rule in its order; () without rules.
    extracted: tuple[Extracted, ...] = ()


@frozen
class PageQuery:
    """Which page rows `CrawlStore.list_pages` gives: the filters (combined), then one page of them."""

    status_code: int | None = None
    extract: ExtractMatch | None = None
    offset: int = 0
    limit: int = 50


@frozen
class IssueQuery:
    """Which issues `CrawlStore.list_issues` gives: the filters (combined), then one page of them."""

    check_code: str | None = None
    severity: Severity | None = None
    template: str | None = None
    offset: int = 0
    limit: int = 50


@frozen
class StoredPage:
    """A page as finalisation streams it: its id, its template and its facts (links are streamed apart)."""

    url_id: int
    template: str
    facts: PageFacts


@frozen
class LinkRow:
    """One stored link between two interned URLs."""

    source: int
    target: int
    kind: LinkKind = LinkKind.A
    nofollow: bool = False
    internal: bool = True


class LinkLine(NamedTuple):
    """A link as an export writes it: both ends as their URLs (`CrawlStore.stream_link_lines`)."""

    source: str
    target: str
    kind: LinkKind
    nofollow: bool
    internal: bool


class IssueLine(NamedTuple):
    """An issue as a report reads it: no details but one quoted value (`CrawlStore.stream_issue_lines`)."""

    url_id: int
    url: str
    check_code: str
    severity: Severity
    template: str
    quote: str | None

    @classmethod
    def of(cls, url_id: int, issue: Issue, quote: Sequence[str] = ()) -> "IssueLine":
        """The line of a whole issue: `quote` names the detail keys to quote (see `first_quote`)."""
        return cls(
            url_id,
            issue.url,
            issue.check_code,
            issue.severity,
            issue.template,
            first_quote(issue.details, quote),
        )


def first_quote(details: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    """The value of the first of `keys` that holds a non-empty string, or a list whose first item is one,
    in `details` (`IssueLine.quote`): that string."""
    for key in keys:
        value = details.get(key)
        if isinstance(value, list | tuple) and value:
            value = value[0]
        if isinstance(value, str) and value:
            return value
    return None


class CrawlStore(Protocol):
    def intern(self, audit_id: AuditId, urls: Iterable[str]) -> Mapping[str, int]:
        """The ids of `urls` in this audit, giving new URLs fresh ids (in the order first given)."""
        ...

    def urls(self, audit_id: AuditId, url_ids: Iterable[int]) -> Mapping[int, str]:
        """The URLs of the given ids; unknown ids are left out."""
        ...

    def stream_urls(self, audit_id: AuditId) -> Iterator[tuple[int, str]]:
        """Every interned URL as (id, url), by id."""
        ...

    def write_pages(
        self, audit_id: AuditId, pages: Iterable[PageFacts], *, templates: Mapping[str, str] | None = None
    ) -> int:
        """Store one batch of pages, interning their URLs; a URL written before is replaced.

        `templates` gives a page's template by URL (default ""). The pages' `html.links` are NOT kept
        with the page: store them with `write_links`; a page read back has no links. Returns the count.
        """
        ...

    def write_links(self, audit_id: AuditId, links: Iterable[tuple[str, Link]]) -> int:
        """Store one batch of (source URL, link) pairs, interning both ends. Returns the count."""
        ...

    def replace_links(
        self, audit_id: AuditId, source_ids: Iterable[int], links: Iterable[tuple[str, Link]]
    ) -> int:
        """Drop the links from `source_ids`, then store `links`, in one transaction: what a crawl batch
        writes, so that a redelivered batch replaces its pages' links instead of adding them twice."""
        ...

    def pages_by_url(
        self, audit_id: AuditId, urls: Iterable[str], *, links: bool = False
    ) -> Mapping[str, PageFacts]:
        """The stored pages of those `urls` that have one, by URL (conditional requests read a previous
        audit's pages this way). Without `links` a page's `html.links` is empty, as `stream_pages` gives
        it; with `links` they are read back from the link rows (in no promised order)."""
        ...

    def write_issues(self, audit_id: AuditId, issues: Iterable[Issue]) -> int:
        """Append one batch of issues, interning their URLs. Returns the count."""
        ...

    def replace_issues(self, audit_id: AuditId, url_ids: Iterable[int], issues: Iterable[Issue]) -> int:
        """Drop the issues of `url_ids`, then append `issues`, in one transaction (a redelivered slice)."""
        ...

    def assign_templates(self, audit_id: AuditId, templates: Iterable[tuple[int, str]]) -> None:
        """Set the template of pages, and of the issues on them, by URL id (finalisation)."""
        ...

    def seal_counts(
        self, audit_id: AuditId, *, issues: Sequence[Issue] = (), templates: Iterable[tuple[int, str]] = ()
    ) -> None:
        """The audit's pages and issues are final (finalisation stores the last of them, `issues` and
        `templates` as `write_issues` and `assign_templates` would, in the same transaction): count them
        once, issues by check, severity and template and pages by status, so that `list_issues` and
        `list_pages` answer their totals without counting rows. Idempotent. Rows written afterwards would
        not be counted: nothing writes an audit's rows once it is finalised."""
        ...

    def refresh_statistics(self, audit_id: AuditId) -> None:
        """The audit's rows are final (after `seal_counts`): let the database refresh what it knows of the
        crawl tables, so that the lists are planned on their real sizes. May do nothing."""
        ...

    def page_count(self, audit_id: AuditId) -> int: ...

    def list_pages(self, audit_id: AuditId, query: PageQuery) -> tuple[Sequence[PageRow], int]:
        """One page of page rows in URL-id order, and the total matching the filters (combined)."""
        ...

    def list_issues(self, audit_id: AuditId, query: IssueQuery) -> tuple[Sequence[Issue], int]:
        """One page of issues, most severe first, then by check code, URL id and writing order; and the total."""
        ...

    def stream_pages(self, audit_id: AuditId) -> Iterator[StoredPage]:
        """Every page by URL id, fetched in chunks (server-side cursor): memory stays bounded.

        Exhaust or close the iterator: it holds a database connection until then.
        """
        ...

    def stream_links(self, audit_id: AuditId) -> Iterator[LinkRow]:
        """Every link, by source id. Same rules as `stream_pages`."""
        ...

    def stream_issues(self, audit_id: AuditId) -> Iterator[tuple[int, Issue]]:
        """Every issue with its URL id, in writing order. Same rules as `stream_pages`."""
        ...

    def stream_page_rows(self, audit_id: AuditId) -> Iterator[PageRow]:
        """Every page as `list_pages` shows it, by URL id, without decoding the pages' facts (an export).
        Same rules as `stream_pages`."""
        ...

    def stream_link_lines(self, audit_id: AuditId) -> Iterator[LinkLine]:
        """Every link as `stream_links` gives them (by source id), with both ends' URLs (an export).
        Same rules as `stream_pages`."""
        ...

    def stream_site_pages(self, audit_id: AuditId) -> Iterator[StoredPage]:
        """`stream_pages` for the site checks: the facts may hold only the fields they read
        (`siteaudit.domain.checks.site.SITE_PAGE_FIELDS` and `SITE_HTML_FIELDS`), the rest left at their
        defaults, so a store can read a narrow projection of its rows. Same rules as `stream_pages`."""
        ...

    def stream_link_batches(self, audit_id: AuditId) -> Iterator[LinkBatch]:
        """Every link as `stream_links` gives them, column by column in runs of many thousand.
        Same rules as `stream_pages`."""
        ...

    def stream_issue_lines(self, audit_id: AuditId, *, quote: Sequence[str] = ()) -> Iterator[IssueLine]:
        """Every issue as `stream_issues` gives them, without details: `quote` is the value of the first
        of the `quote` detail keys that holds a non-empty string, else None. Same rules as `stream_pages`."""
        ...

    def save_report(self, audit_id: AuditId, report: Report) -> None:
        """Store (or replace) the audit's report; identities kept beside it stay."""
        ...

    def report(self, audit_id: AuditId) -> Report | None: ...

    def save_archived_identities(self, audit_id: AuditId, identities: ArchivedIdentities) -> None:
        """Keep the audit's issue identities beside its report (which must exist), for diffs once its
        rows are archived. Never part of the report itself."""
        ...

    def archived_identities(self, audit_id: AuditId) -> ArchivedIdentities | None:
        """The identities kept for the audit, if any (and if stored in a format this code reads)."""
        ...

    def save_checkpoint(self, audit_id: AuditId, state: Mapping[str, Any]) -> None:
        """Store (or replace) the crawler's opaque, JSON-compatible state for the next slice."""
        ...

    def checkpoint(self, audit_id: AuditId) -> Mapping[str, Any] | None: ...

    def frontier_add(self, audit_id: AuditId, entries: Iterable[tuple[str, int]]) -> int:
        """Queue (url, depth) pairs never seen before in this audit; seen URLs are left as they are.

        Returns how many were new.
        """
        ...

    def frontier_next(self, audit_id: AuditId, limit: int) -> Sequence[FrontierEntry]:
        """Up to `limit` queued entries, shallowest first then by id; they stay queued until marked."""
        ...

    def frontier_mark(self, audit_id: AuditId, url_ids: Iterable[int], state: FrontierState) -> int:
        """Move the entries of `url_ids` to `state` and the counters with them, in one transaction.

        Entries already in `state` and unknown ids are left alone (a redelivered batch marks again).
        Returns how many entries moved."""
        ...

    def frontier_counts(self, audit_id: AuditId) -> Mapping[FrontierState, int]:
        """How many entries are in each state (states without entries are left out).

        Read from counters that `frontier_add` and `frontier_mark` move in the transaction that moves the
        entries: it costs the same at 10 entries as at 1,000,000 (the crawl asks after every batch)."""
        ...

    def frontier_recount(self, audit_id: AuditId) -> Mapping[FrontierState, int]:
        """`frontier_counts` counted from the entries themselves: a scan of the audit's whole frontier,
        for checking the counters (tests, a repair), never on the crawl's path."""
        ...

    def archive(self, audit_id: AuditId) -> None:
        """Delete the audit's pages, links, issues, frontier, checkpoint and URLs; keep the report.

        Setting the audit's `archived_at` is the audit repository's business, in the caller's unit of work.
        """
        ...
