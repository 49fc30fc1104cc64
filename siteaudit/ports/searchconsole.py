"""The search-engine console integration (docs/rest-api.md "Search console"): what the features need from a
console provider.

A `SearchConsole` is one connection's view of the console (a team's OAuth grant, the deployment's service
account, or the demo provider): the properties it may read with their permission levels, search figures
by page (and by page and query) per day, URL inspections and sitemaps. Providers raise the typed
`ConsoleError`s below, never their transport's errors. `ConsoleProviders` builds a connection's client;
`ConsoleStore` keeps what the service stores about console data (connections, daily figures,
inspections, the inspection budget, sync status), scoped by site or team like every repository.
"""

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Protocol

from attrs import frozen

from siteaudit.domain.console import (
    ConsoleConnection,
    ConsoleProperty,
    ConsoleSync,
    Inspection,
    PageDay,
    PageTotals,
    StoredInspection,
)
from siteaudit.domain.ids import SiteId, TeamId

# --- errors every provider raises ----------------------------------------------------------------------


class ConsoleError(Exception):
    """The console could not answer. Subclasses say why; the message never holds a token."""


class ConsoleQuotaExceeded(ConsoleError):
    """The provider's quota is spent (HTTP 429 RESOURCE_EXHAUSTED); try again later."""


class ConsolePermissionDenied(ConsoleError):
    """The connection may not read this property (HTTP 403 PERMISSION_DENIED)."""


class ConsoleTokenInvalid(ConsoleError):
    """The credentials were refused even after a refresh: expired, revoked or invalid (HTTP 401, or
    `invalid_grant` from the token endpoint). The connection must be made again."""


class ConsoleNotConnected(ConsoleError):
    """No connection to ask (no OAuth grant, no service account, demo off)."""


# --- answers -------------------------------------------------------------------------------------------


@frozen
class QueryDay:
    """Search figures of one page for one query over the period asked (dimensions page and query)."""

    url: str
    query: str
    clicks: int
    impressions: int
    position: float | None = None


@frozen
class Sitemap:
    path: str
    last_submitted: datetime | None = None
    last_downloaded: datetime | None = None
    pending: bool = False
    warnings: int = 0
    errors: int = 0
    submitted: int = 0  # URLs listed (web contents)


class SearchConsole(Protocol):
    """One connection to a console. Every method raises ConsoleQuotaExceeded, ConsolePermissionDenied,
    ConsoleTokenInvalid, or ConsoleError for anything else the provider answers."""

    @property
    def demo(self) -> bool:
        """True for locally generated demo data (answers then carry `demo: true`)."""
        ...

    def properties(self) -> Sequence[ConsoleProperty]:
        """Every property the connection can see, with its permission level (`sites` list)."""
        ...

    def page_days(self, property_url: str, *, start: date, end: date) -> Sequence[PageDay]:
        """Clicks, impressions and average position per page per day, `start` to `end` inclusive
        (search analytics, dimensions page and date, every page of rows fetched). `site_id` of the
        rows is 0: the caller files them under its site."""
        ...

    def query_days(
        self, property_url: str, *, start: date, end: date, page: str | None = None
    ) -> Sequence[QueryDay]:
        """Figures by page and query over the period (one row per pair, not per day); `page` narrows
        to one URL."""
        ...

    def inspect(self, property_url: str, url: str) -> Inspection:
        """A fresh inspection of `url` under the property. The caller spends the inspection budget."""
        ...

    def sitemaps(self, property_url: str) -> Sequence[Sitemap]:
        """The sitemaps submitted for the property."""
        ...


@frozen
class SiteContext:
    """What the demo provider generates its data from: the site and the URLs of its latest audit."""

    site_id: SiteId
    origin: str
    urls: tuple[str, ...]
    in_sitemap: frozenset[str] = frozenset()


class ConsoleProviders(Protocol):
    """Builds console clients; bootstrap chooses which exist from settings."""

    def oauth(self, refresh_token: str) -> SearchConsole:
        """A client over a team's OAuth grant (access tokens refreshed as needed)."""
        ...

    def service_account(self) -> SearchConsole | None:
        """The deployment's service-account client, or None without a key file."""
        ...

    def demo(self, context: SiteContext) -> SearchConsole:
        """The demo provider for one site: deterministic, `demo` True."""
        ...

    def revoke(self, refresh_token: str) -> None:
        """Revoke an OAuth grant at the provider (best effort: raises ConsoleError when refused)."""
        ...


# --- storage -------------------------------------------------------------------------------------------


class ConsoleStore(Protocol):
    """Console data kept by the service (one repository on the unit of work: `uow.console`)."""

    def connection(self, team_id: TeamId) -> ConsoleConnection | None:
        """The team's OAuth connection (refresh token sealed), if any."""
        ...

    def save_connection(self, connection: ConsoleConnection) -> None:
        """Stage the team's connection, replacing an earlier one."""
        ...

    def delete_connection(self, team_id: TeamId) -> None: ...

    def replace_days(self, site_id: SiteId, days: Iterable[PageDay], *, start: date, end: date) -> int:
        """Stage the site's page figures from `start` to `end` inclusive as exactly `days` (earlier rows
        of those dates go); other dates stay. Returns how many rows were written."""
        ...

    def days(self, site_id: SiteId, *, start: date, end: date) -> Sequence[PageDay]:
        """The site's stored page figures in the period, by day then URL."""
        ...

    def page_totals(
        self, site_id: SiteId, urls: Iterable[str] | None, start: date, end: date
    ) -> Mapping[str, PageTotals]:
        """Clicks and impressions per URL of the site summed over `start` to `end` inclusive, from the
        stored daily figures (the daily sync keeps 28 days; older figures stay until the site goes).
        `urls` None: every URL with figures; otherwise only those URLs, a URL without figures left out
        (read it as no data, not as zero). Used by fix impact and task traffic."""
        ...

    def latest_day(self, site_id: SiteId) -> date | None:
        """The last day any page figures of the site are stored for; None without any (fix impact)."""
        ...

    def save_inspection(self, inspection: StoredInspection) -> None:
        """Stage the latest inspection of one URL of a site (replacing the earlier one)."""
        ...

    def inspections(self, site_id: SiteId) -> Sequence[StoredInspection]:
        """The latest inspection of every inspected URL of the site, by URL."""
        ...

    def spend_budget(self, property_url: str, windows: Sequence[tuple[str, int]], count: int) -> bool:
        """Stage spending `count` inspections of the property in every window (`(key, limit)`, e.g. the
        UTC day and the minute), all or nothing: False, spending nothing, when any window would go over
        its limit. Atomic against concurrent spenders."""
        ...

    def budget_used(self, property_url: str, window: str) -> int: ...

    def sync(self, site_id: SiteId) -> ConsoleSync | None: ...

    def save_sync(self, sync: ConsoleSync) -> None: ...

    def due_syncs(self, synced_before: datetime, *, limit: int) -> Sequence[SiteId]:
        """Verified sites of any team never synced, or last synced at or before `synced_before`: the
        never-synced first, then the oldest sync first."""
        ...

    def delete_site(self, site_id: SiteId) -> None:
        """Stage the removal of everything stored for the site."""
        ...


class NoConsoleProviders:
    """`ConsoleProviders` when none are wired (an application built without them): nothing connects."""

    def oauth(self, refresh_token: str) -> SearchConsole:
        raise ConsoleNotConnected("no console provider is configured")

    def service_account(self) -> SearchConsole | None:
        return None

    def demo(self, context: SiteContext) -> SearchConsole:
        raise ConsoleNotConnected("no demo provider is configured")

    def revoke(self, refresh_token: str) -> None:
        return None
