"""The demo console provider: deterministic data made from the site's own audited URLs, seeded by the
site id and each URL's path and query (not its host or port: a site served on another port shows the
same figures), so the embedded default shows every console feature without a Google account. Every client
says `demo` True and every answer built from it carries `demo: true`."""

import random
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Final
from urllib.parse import urlsplit

from siteaudit.domain.console import ConsoleProperty, Inspection, PageDay, Permission
from siteaudit.domain.ids import SiteId
from siteaudit.ports.searchconsole import QueryDay, SiteContext, Sitemap

# Coverage states as the console writes them, with how often the demo gives each to a URL that is not
# indexed.
_NOT_INDEXED: Final = (
    ("Crawled - currently not indexed", 5),
    ("Discovered - currently not indexed", 4),
    ("Duplicate without user-selected canonical", 2),
    ("Excluded by 'noindex' tag", 1),
    ("Alternate page with proper canonical tag", 1),
    ("Page with redirect", 1),
)


def _rng(kind: str, site_id: SiteId, url: str, *parts: object) -> random.Random:
    # random.Random seeds a str through SHA-512: the same numbers in every process and run.
    place = urlsplit(url)
    return random.Random("|".join(str(p) for p in (kind, int(site_id), place.path, place.query, *parts)))


class DemoSearchConsole:
    """`SearchConsole` for one site: one owned URL-prefix property, figures and states per URL."""

    demo: Final = True

    def __init__(self, context: SiteContext) -> None:
        self._context = context
        self._property = context.origin.rstrip("/") + "/"

    def _profile(self, url: str) -> tuple[bool, float, float]:
        """(indexed, daily impressions, base position) of a URL, fixed by site and URL."""
        rng = _rng("profile", self._context.site_id, url)
        has_query = bool(urlsplit(url).query)
        indexed = rng.random() < (0.35 if has_query else 0.75)
        impressions = rng.choice((0.0, 0.5, 2.0, 8.0, 30.0, 120.0)) if indexed else 0.0
        position = round(rng.uniform(1.0, 35.0), 1)
        return indexed, impressions, position

    def properties(self) -> Sequence[ConsoleProperty]:
        return [ConsoleProperty(self._property, Permission.OWNER)]

    def _urls(self, property_url: str) -> list[str]:
        prop = ConsoleProperty(property_url, Permission.OWNER)
        return [u for u in self._context.urls if prop.covers(u)]

    def page_days(self, property_url: str, *, start: date, end: date) -> Sequence[PageDay]:
        days = []
        for url in self._urls(property_url):
            indexed, impressions, position = self._profile(url)
            if not indexed or impressions == 0:
                continue
            day = start
            while day <= end:
                rng = _rng("day", self._context.site_id, url, day.isoformat())
                shown = int(rng.gauss(impressions, impressions / 3) + 0.5)
                if shown > 0:
                    where = max(1.0, round(position + rng.uniform(-1.5, 1.5), 1))
                    ctr = max(0.0, 0.3 / where - rng.uniform(0.0, 0.02))
                    clicks = sum(1 for _ in range(shown) if rng.random() < ctr)
                    days.append(PageDay(SiteId(0), day, url, clicks, shown, where))
                day += timedelta(days=1)
        return days

    def query_days(
        self, property_url: str, *, start: date, end: date, page: str | None = None
    ) -> Sequence[QueryDay]:
        out = []
        length = (end - start).days + 1
        for url in self._urls(property_url):
            if page is not None and url != page:
                continue
            indexed, impressions, position = self._profile(url)
            if not indexed or impressions == 0:
                continue
            words = [w for w in urlsplit(url).path.replace("-", "/").split("/") if w.isalpha()] or ["home"]
            rng = _rng("queries", self._context.site_id, url)
            for n in range(min(3, len(words))):
                query = " ".join([*words[n:], urlsplit(url).hostname or ""]).strip()
                shown = int(impressions * length / (n + 2))
                out.append(QueryDay(url, query, int(shown * rng.uniform(0, 0.05)), shown, position + n))
        return out

    def inspect(self, property_url: str, url: str) -> Inspection:
        indexed, _, _ = self._profile(url)
        rng = _rng("inspect", self._context.site_id, url)
        in_sitemap = url in self._context.in_sitemap
        sitemap = (f"{self._property}sitemap.xml",) if in_sitemap else ()
        crawled = datetime.combine(date(2026, 1, 1), time(), UTC) + timedelta(hours=rng.randrange(24 * 300))
        if indexed:
            state = "Submitted and indexed" if in_sitemap else "Indexed, not submitted in sitemap"
            return Inspection(
                url, "PASS", state, "INDEXING_ALLOWED", "ALLOWED", "SUCCESSFUL", crawled, url, url, sitemap
            )
        states, weights = zip(*_NOT_INDEXED, strict=True)
        state = rng.choices(states, weights)[0]
        canonical = url
        if "canonical" in state.lower() or "duplicate" in state.lower():
            canonical = url.split("?", 1)[0]
        return Inspection(
            url,
            "NEUTRAL",
            state,
            "BLOCKED_BY_META_TAG" if "noindex" in state else "INDEXING_ALLOWED",
            "ALLOWED",
            "REDIRECT_ERROR" if "redirect" in state.lower() else "SUCCESSFUL",
            crawled if "Discovered" not in state else None,
            canonical if "Discovered" not in state else None,
            url,
            sitemap,
        )

    def sitemaps(self, property_url: str) -> Sequence[Sitemap]:
        return [Sitemap(path=f"{self._property}sitemap.xml", submitted=len(self._context.in_sitemap))]
