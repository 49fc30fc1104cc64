"""What the console endpoints answer (docs/rest-api.md "Search console"), as values: the REST views render
them as they are (plus the vendor-name aliases), and the OpenAPI components are generated from them. Days are
ISO dates (`2026-11-25`), times aware datetimes."""

from collections.abc import Mapping
from datetime import datetime

from attrs import frozen

from siteaudit.domain.console import NotIndexedGroup, SyncStatus


@frozen
class Headline:
    """The last 28 days of search figures of the site."""

    clicks_28d: int
    impressions_28d: int
    ctr: float
    position: float | None
    pages_with_clicks: int
    indexed: int  # inspected URLs the engine indexes
    not_indexed: int  # inspected URLs it does not


@frozen
class Funnel:
    """From crawled to clicked: `found` pages of the latest audit answering 200, of which `in_sitemap`;
    `indexed` as inspected (`inspected` URLs so far); pages with impressions and clicks in 28 days;
    `indexed_outside_sitemap` indexed pages the sitemaps do not list."""

    found: int
    in_sitemap: int
    inspected: int
    indexed: int
    with_impressions: int
    with_clicks: int
    indexed_outside_sitemap: int


@frozen
class TrendDay:
    day: str
    clicks: int
    impressions: int


@frozen
class TemplateFigures:
    """One URL template of the latest audit with its console figures."""

    template: str
    pages: int
    inspected: int
    indexed: int
    not_indexed: int
    clicks_28d: int
    impressions_28d: int


@frozen
class SyncView:
    """The daily sync: `status` ok, failed, not_connected or pending (connected, not synced yet)."""

    status: SyncStatus
    synced_at: datetime | None
    next_sync_at: datetime | None
    property: str | None
    days: int
    inspected: int
    error: str | None


@frozen
class ConsoleSummary:
    site_id: int
    demo: bool
    connected: bool
    property: str | None
    headline: Headline
    funnel: Funnel
    trend: tuple[TrendDay, ...]
    templates: tuple[TemplateFigures, ...]
    sync: SyncView


@frozen
class NotIndexedUrl:
    url: str
    reason: str
    template: str
    verdict: str
    last_crawled: datetime | None
    google_canonical: str | None
    user_canonical: str | None
    inspected_at: datetime


@frozen
class NotIndexedAnswer:
    """Without both filters: `groups` (a `reason` or `template` alone narrows them) and `urls` null;
    with both: that group's `urls`, 100 a page, and `groups` empty."""

    site_id: int
    demo: bool
    groups: tuple[NotIndexedGroup, ...]
    urls: tuple[NotIndexedUrl, ...] | None
    total: int
    page: int
    per_page: int


@frozen
class UrlCrawl:
    """The URL in the site's latest finished audit."""

    crawl_id: int
    status_code: int | None
    title: str | None
    template: str
    in_sitemap: bool
    word_count: int
    depth: int


@frozen
class UrlConsole:
    """The URL's latest inspection."""

    verdict: str
    indexed: bool
    coverage_state: str
    indexing_state: str | None
    robots_txt_state: str | None
    page_fetch_state: str | None
    last_crawled: datetime | None
    google_canonical: str | None
    user_canonical: str | None
    sitemaps: tuple[str, ...]
    inspected_at: datetime


@frozen
class QueryFigures:
    query: str
    clicks: int
    impressions: int
    position: float | None


@frozen
class UrlSearch:
    """The URL's search figures over the last 28 days (stored), and its top queries (asked live)."""

    clicks_28d: int
    impressions_28d: int
    ctr: float
    position: float | None
    queries: tuple[QueryFigures, ...]


@frozen
class OpportunityRow:
    url: str
    template: str
    clicks_28d: int
    impressions_28d: int
    ctr: float
    position: float | None


@frozen
class CanonicalMismatchRow:
    url: str
    template: str
    user_canonical: str
    google_canonical: str


@frozen
class Opportunities:
    """`rules` says, per list, what puts a page on it."""

    site_id: int
    demo: bool
    low_ctr: tuple[OpportunityRow, ...]
    striking_distance: tuple[OpportunityRow, ...]
    canonical_mismatch: tuple[CanonicalMismatchRow, ...]
    counts: Mapping[str, int]
    rules: Mapping[str, str]


@frozen
class InspectionResult:
    """One URL of `POST .../inspect`: the inspection, or `error` when the console could not answer."""

    url: str
    verdict: str | None
    indexed: bool | None
    coverage_state: str | None
    last_crawled: datetime | None
    google_canonical: str | None
    user_canonical: str | None
    error: str | None


@frozen
class BudgetView:
    used: int
    limit: int
    resets_at: datetime


@frozen
class InspectAnswer:
    site_id: int
    demo: bool
    results: tuple[InspectionResult, ...]
    budget: BudgetView
    note: str
