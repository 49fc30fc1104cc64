# Over 400 lines: the console's values and the rules its answers are built by belong together; split by answer when one grows.
"""The search-engine console integration (docs/rest-api.md "Search console"): properties and permissions,
stored figures and inspections, the inspection budget, and the rules the console answers are built by (funnel,
not-indexed groups, opportunities). Pure: the clock and the data arrive as arguments."""

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from types import MappingProxyType
from typing import Final
from urllib.parse import urlsplit

from attrs import field, frozen

from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import SiteId, TeamId

# Google allows 2,000 URL inspections a day and 600 a minute per property (Search Console API usage
# limits, https://developers.google.com/webmaster-tools/limits).
DAILY_INSPECTIONS: Final = 2_000
MINUTE_INSPECTIONS: Final = 600
INSPECT_MAX_URLS: Final = 20  # per POST .../inspect
SYNC_DAYS: Final = 28
FILTER_MAX: Final = 500  # `reason`, `template`


# --- errors --------------------------------------------------------------------------------------------


class ScNotConnected(DomainError):
    code = ErrorCode.SC_NOT_CONNECTED

    def __init__(self, why: str) -> None:
        super().__init__(f"no search-console connection for this site: {why}")


class BudgetExhausted(DomainError):
    """429 budget_exhausted; `resets_at` goes in the error body."""

    code = ErrorCode.BUDGET_EXHAUSTED

    def __init__(self, property_url: str, resets_at: datetime, *, used: int, limit: int) -> None:
        super().__init__(
            f"the inspection budget of {property_url} is spent ({used:,} of {limit:,} today); "
            f"it resets at {iso(resets_at)}"
        )
        self.resets_at = resets_at
        self.extra = {"resets_at": iso(resets_at)}


class UrlNotInSite(DomainError):
    code = ErrorCode.URL_NOT_IN_SITE

    def __init__(self, urls: Sequence[str], host: str) -> None:
        shown = ", ".join(u[:200] for u in urls[:3])
        super().__init__(f"not on the site's host {host}: {shown}{' ...' if len(urls) > 3 else ''}")
        self.urls = tuple(urls)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


# --- properties ----------------------------------------------------------------------------------------


class Permission(enum.StrEnum):
    """A console user's permission level on a property (`sites` list `permissionLevel`)."""

    OWNER = "siteOwner"
    FULL = "siteFullUser"
    RESTRICTED = "siteRestrictedUser"
    UNVERIFIED = "siteUnverifiedUser"

    @property
    def proves_ownership(self) -> bool:
        """Owner or full rights prove ownership for the `gsc` verification method."""
        return self in (Permission.OWNER, Permission.FULL)

    @property
    def can_read(self) -> bool:
        return self is not Permission.UNVERIFIED


def permission_of(raw: str) -> Permission:
    try:
        return Permission(raw)
    except ValueError:
        return Permission.UNVERIFIED


@frozen
class ConsoleProperty:
    """A console property: a URL prefix (`https://example.com/`) or a domain (`sc-domain:example.com`)."""

    url: str
    permission: Permission

    def covers(self, url: str) -> bool:
        """Whether `url` belongs to this property."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if self.url.startswith("sc-domain:"):
            domain = self.url.removeprefix("sc-domain:").lower().rstrip(".")
            return host == domain or host.endswith("." + domain)
        prefix = urlsplit(self.url)
        if prefix.scheme.lower() != parts.scheme.lower() or (prefix.hostname or "").lower() != host:
            return False
        if prefix.port != parts.port:
            return False
        return (parts.path or "/").startswith(prefix.path or "/")


def property_for(properties: Iterable[ConsoleProperty], site_url: str) -> ConsoleProperty | None:
    """The property covering the site's URL: readable ones only, owner rights first, then the most
    specific (a URL prefix before a domain property, a longer prefix before a shorter)."""
    usable = [p for p in properties if p.permission.can_read and p.covers(site_url)]
    if not usable:
        return None
    return max(
        usable, key=lambda p: (p.permission.proves_ownership, not p.url.startswith("sc-domain:"), len(p.url))
    )


def on_host(url: str, host: str) -> bool:
    return (urlsplit(url).hostname or "").lower().rstrip(".") == host


# --- stored values -------------------------------------------------------------------------------------


@frozen
class PageDay:
    """Search figures of one page on one day."""

    site_id: SiteId
    day: date
    url: str
    clicks: int
    impressions: int
    position: float | None = None


@frozen
class PageTotals:
    """Clicks and impressions of one URL summed over a period; `position` weighted by impressions."""

    url: str
    clicks: int
    impressions: int
    position: float | None = None

    @property
    def ctr(self) -> float:
        return self.clicks / self.impressions if self.impressions else 0.0


def totals(days: Iterable[PageDay]) -> dict[str, PageTotals]:
    """Sum daily figures per URL (position averaged, weighted by impressions)."""
    sums: dict[str, list[float]] = {}
    for d in days:
        s = sums.setdefault(d.url, [0, 0, 0.0, 0])
        s[0] += d.clicks
        s[1] += d.impressions
        if d.position is not None and d.impressions:
            s[2] += d.position * d.impressions
            s[3] += d.impressions
    return {
        url: PageTotals(url, int(c), int(i), round(p / w, 1) if w else None)
        for url, (c, i, p, w) in sums.items()
    }


class Verdict(enum.StrEnum):
    PASS = "PASS"
    PARTIAL = "PARTIAL"
    FAIL = "FAIL"
    NEUTRAL = "NEUTRAL"
    UNSPECIFIED = "VERDICT_UNSPECIFIED"


@frozen
class Inspection:
    """A fresh URL inspection (`urlInspection/index:inspect`, `indexStatusResult`)."""

    url: str
    verdict: str  # PASS, NEUTRAL, FAIL, VERDICT_UNSPECIFIED
    coverage_state: str  # the engine's words, verbatim ("Crawled - currently not indexed")
    indexing_state: str | None = None
    robots_txt_state: str | None = None
    page_fetch_state: str | None = None
    last_crawled: datetime | None = None
    google_canonical: str | None = None
    user_canonical: str | None = None
    sitemaps: tuple[str, ...] = ()


@frozen
class StoredInspection(Inspection):
    """The latest inspection of one URL of a site: whose, when, and whether the demo provider made it."""

    site_id: SiteId = field(kw_only=True)
    inspected_at: datetime = field(kw_only=True)
    demo: bool = False

    @property
    def indexed(self) -> bool:
        """Indexed as the engine says it (verdict PASS, or a coverage state saying "indexed" without "not")."""
        state = self.coverage_state.lower()
        return self.verdict == Verdict.PASS or ("indexed" in state and "not indexed" not in state)

    @property
    def canonical_mismatch(self) -> bool:
        return bool(
            self.google_canonical and self.user_canonical and self.google_canonical != self.user_canonical
        )


@frozen
class ConsoleConnection:
    """A team's OAuth connection: the refresh token sealed by the deployment's key, never shown."""

    team_id: TeamId
    sealed_refresh_token: str = field(repr=False)
    account: str  # who granted it (an email or a label), shown in the verification answer
    connected_at: datetime


class SyncStatus(enum.StrEnum):
    OK = "ok"
    FAILED = "failed"
    NOT_CONNECTED = "not_connected"
    PENDING = "pending"  # connected, never synced yet


@frozen
class ConsoleSync:
    """The last daily sync of a site."""

    site_id: SiteId
    synced_at: datetime
    status: SyncStatus
    property_url: str | None = None
    demo: bool = False
    days: int = 0  # page-day rows stored
    inspected: int = 0  # URLs inspected by this sync
    error: str | None = None


# --- the inspection budget -----------------------------------------------------------------------------


@frozen
class Budget:
    """The property's daily inspection budget, shared by the daily sync and `POST .../inspect`."""

    used: int
    limit: int
    resets_at: datetime


def day_window(now: datetime) -> str:
    return f"day:{now.astimezone(UTC).date().isoformat()}"


def budget_windows(now: datetime, *, daily: int, per_minute: int) -> tuple[tuple[str, int], ...]:
    """The windows one inspection spends from: the UTC day and the minute (Google's two limits)."""
    minute = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")
    return ((day_window(now), daily), (f"minute:{minute}", per_minute))


def budget_resets_at(now: datetime) -> datetime:
    """The next UTC midnight."""
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today + timedelta(days=1)


# --- the terms settings decide -------------------------------------------------------------------------


@frozen
class ConsoleTerms:
    """How the console integration runs (SITEAUDIT_CONSOLE_* and SITEAUDIT_GSC_* settings)."""

    demo: bool = False  # a verified site of a team without a connection uses the demo provider
    service_account_teams: tuple[str, ...] = ()  # teams the service account serves; "*": every team
    daily_budget: int = DAILY_INSPECTIONS
    minute_budget: int = MINUTE_INSPECTIONS
    sync_days: int = SYNC_DAYS
    sync_inspections: int = 50  # URLs the daily sync inspects per site (within the budget)
    sync_every: timedelta = timedelta(days=1)
    batch: int = 50  # sites per scheduler pass

    def service_account_serves(self, team_name: str) -> bool:
        return "*" in self.service_account_teams or team_name in self.service_account_teams


# --- answers' rules ------------------------------------------------------------------------------------

# Typical click-through rate at positions 1-10 of a results page (a published industry curve, rounded);
# a page far below it at its position has a title or snippet problem.
EXPECTED_CTR: Final[Mapping[int, float]] = MappingProxyType(
    {1: 0.28, 2: 0.15, 3: 0.10, 4: 0.07, 5: 0.05, 6: 0.04, 7: 0.03, 8: 0.025, 9: 0.02, 10: 0.02}
)
LOW_CTR_MIN_IMPRESSIONS: Final = 100
STRIKING_MIN_IMPRESSIONS: Final = 50
STRIKING_POSITIONS: Final = (8.0, 20.0)

LOW_CTR_RULE: Final = (
    f"at least {LOW_CTR_MIN_IMPRESSIONS} impressions in 28 days, average position 10 or better, and a "
    "click-through rate below half the typical rate at that position"
)
STRIKING_RULE: Final = (
    f"average position from {STRIKING_POSITIONS[0]:g} to {STRIKING_POSITIONS[1]:g} with at least "
    f"{STRIKING_MIN_IMPRESSIONS} impressions in 28 days: a small gain reaches the first page's top"
)
CANONICAL_RULE: Final = "the engine chose another canonical URL than the one the page declares"


def expected_ctr(position: float) -> float:
    return EXPECTED_CTR.get(max(1, min(10, round(position))), 0.02)


def is_low_ctr(page: PageTotals) -> bool:
    if page.impressions < LOW_CTR_MIN_IMPRESSIONS or page.position is None or page.position > 10:
        return False
    return page.ctr < expected_ctr(page.position) / 2


def is_striking_distance(page: PageTotals) -> bool:
    low, high = STRIKING_POSITIONS
    return (
        page.position is not None
        and low <= page.position <= high
        and page.impressions >= STRIKING_MIN_IMPRESSIONS
    )


@frozen
class CoverageAdvice:
    diagnosis: str
    fix: str


_ADVICE: Final[Sequence[tuple[str, CoverageAdvice]]] = (
    (
        "crawled - currently not indexed",
        CoverageAdvice(
            "fetched but not judged worth indexing: thin, near-duplicate or weakly linked content",
            "make each page substantial and distinct, link to it from indexed pages, or noindex it",
        ),
    ),
    (
        "discovered - currently not indexed",
        CoverageAdvice(
            "known but not fetched yet: the engine postponed it (crawl budget, weak internal links)",
            "link to these pages from strong pages, list them in the sitemap, trim low-value URLs",
        ),
    ),
    (
        "noindex",
        CoverageAdvice(
            "the page asks not to be indexed (meta robots or X-Robots-Tag)",
            "remove noindex if it should rank",
        ),
    ),
    (
        "robots.txt",
        CoverageAdvice("robots.txt disallows fetching it", "allow it in robots.txt if it should be indexed"),
    ),
    (
        "duplicate",
        CoverageAdvice(
            "seen as a duplicate of another URL", "declare one canonical URL and link to it consistently"
        ),
    ),
    (
        "alternate page with proper canonical",
        CoverageAdvice("an alternate of its canonical page, as declared", "nothing: this is intended"),
    ),
    ("redirect", CoverageAdvice("the URL redirects", "link to the target URL directly")),
    ("soft 404", CoverageAdvice("answers 200 but looks like an error page", "answer 404/410 or add content")),
    ("404", CoverageAdvice("answers 404", "restore the page or redirect it, and remove links to it")),
    (
        "unknown to google",
        CoverageAdvice("the engine has not found this URL", "list it in the sitemap and link to it"),
    ),
)
_DEFAULT_ADVICE: Final = CoverageAdvice(
    "the engine does not index it", "inspect one URL of the group and fix what the inspection reports"
)


def advice_for(coverage_state: str) -> CoverageAdvice:
    state = coverage_state.lower().replace("–", "-")
    for needle, advice in _ADVICE:
        if needle in state:
            return advice
    return _DEFAULT_ADVICE


@frozen
class NotIndexedGroup:
    reason: str
    template: str
    pages: int
    diagnosis: str
    fix: str
    sample_urls: tuple[str, ...]


def not_indexed_groups(
    inspections: Iterable[StoredInspection], template_of: Mapping[str, str], *, samples: int = 5
) -> list[NotIndexedGroup]:
    """Inspected URLs the engine does not index, grouped by coverage state and URL template, largest first."""
    groups: dict[tuple[str, str], list[str]] = {}
    for inspection in inspections:
        if inspection.indexed:
            continue
        key = (inspection.coverage_state, template_of.get(inspection.url, ""))
        groups.setdefault(key, []).append(inspection.url)
    out = []
    for (reason, template), urls in groups.items():
        advice = advice_for(reason)
        out.append(
            NotIndexedGroup(
                reason, template, len(urls), advice.diagnosis, advice.fix, tuple(sorted(urls)[:samples])
            )
        )
    return sorted(out, key=lambda g: (-g.pages, g.reason, g.template))


def rounded_ctr(clicks: int, impressions: int) -> float:
    return round(clicks / impressions, 4) if impressions else 0.0


def finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
