# Over 500 lines: every console answer (summary, not-indexed, url, opportunities, inspect, triage) reads the same prepared site; split by answer when one grows.
"""Search-console answers (docs/rest-api.md "Search console"): summary, not-indexed groups, one URL,
opportunities, fresh inspections within the property's budget, index triage, and stored figures per URL."""

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta

from attrs import frozen

from siteaudit.domain.account import Caller
from siteaudit.domain.console import (
    CANONICAL_RULE,
    INSPECT_MAX_URLS,
    LOW_CTR_RULE,
    STRIKING_RULE,
    Budget,
    BudgetExhausted,
    ConsoleSync,
    PageDay,
    PageTotals,
    ScNotConnected,
    StoredInspection,
    SyncStatus,
    UrlNotInSite,
    budget_resets_at,
    day_window,
    is_low_ctr,
    is_striking_distance,
    not_indexed_groups,
    on_host,
    rounded_ctr,
    totals,
)
from siteaudit.domain.console_answers import (
    BudgetView,
    CanonicalMismatchRow,
    ConsoleSummary,
    Funnel,
    Headline,
    InspectAnswer,
    InspectionResult,
    NotIndexedAnswer,
    NotIndexedUrl,
    Opportunities,
    OpportunityRow,
    QueryFigures,
    SyncView,
    TemplateFigures,
    TrendDay,
    UrlConsole,
    UrlCrawl,
    UrlSearch,
)
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.site import Site, VerifiedOnly
from siteaudit.domain.task import TaskStatus
from siteaudit.domain.triage import (
    IndexTriage,
    OpenTask,
    TriagePage,
    TriageSummary,
    ValueClass,
    link_tasks,
    triage,
)
from siteaudit.ports.crawl import PageRow
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.searchconsole import (
    ConsoleError,
    ConsolePermissionDenied,
    ConsoleQuotaExceeded,
    ConsoleTokenInvalid,
    SearchConsole,
)
from siteaudit.ports.usecases import copy_named
from siteaudit.services.console.answers import ConsoleUrlAnswer
from siteaudit.services.console.source import (
    ConsoleDeps,
    audit_pages,
    console_source,
    covering_property,
    indexable_pages,
    latest_done_audit,
    spend_inspections,
    stored_inspection,
    sync_site,
)
from siteaudit.services.console.usecases import (
    GetConsoleOpportunities,
    GetConsoleSummary,
    GetConsoleUrl,
    GetIndexTriage,
    InspectUrls,
    ListNotIndexed,
)

log = logging.getLogger(__name__)

INSPECT_NOTE = (
    "Inspections show the engine's indexed version, not a live test. Each URL spends one of the "
    "property's daily inspections (shared with the daily sync); the budget resets at midnight UTC."
)
OPPORTUNITY_LIMIT = 100
NOT_INDEXED_PAGE_SIZE = 100
# --- reading ---------------------------------------------------------------------------------------------


@frozen
class _Ready:
    site: Site
    pages: list[PageRow]
    client: SearchConsole | None
    sync: ConsoleSync | None

    @property
    def demo(self) -> bool:
        return self.client is not None and self.client.demo

    @property
    def template_of(self) -> dict[str, str]:
        return {r.url: r.template for r in self.pages}

    @property
    def readable(self) -> bool:
        """Whether the stored figures came from the console the site reads now: not without one, and
        not demo figures once a real console is connected (or the reverse) until it has synced."""
        return self.client is not None and (self.sync is None or self.sync.demo == self.client.demo)

    def days(self, uow: UnitOfWork, start: date, end: date) -> Sequence[PageDay]:
        return uow.console.days(self.site.id, start=start, end=end) if self.readable else []

    def inspections(self, uow: UnitOfWork) -> Sequence[StoredInspection]:
        return uow.console.inspections(self.site.id) if self.readable else []

    def totals(
        self, uow: UnitOfWork, urls: Sequence[str] | None, start: date, end: date
    ) -> Mapping[str, PageTotals]:
        return uow.console.page_totals(self.site.id, urls, start, end) if self.readable else {}


def _ready(site_id: SiteId, caller: Caller, deps: ConsoleDeps) -> _Ready:
    """The caller's verified site (404, 409 site_not_verified), its latest audit's pages and its console.
    A demo site is synced here when it never was or its latest audit is newer than its sync."""
    with deps.uow() as uow:
        site = uow.sites.get(site_id, team=caller.team_id)
    site.require_verified(VerifiedOnly.CONSOLE)
    audit = latest_done_audit(site, deps.uow())
    pages = audit_pages(deps.crawl, audit)
    client = console_source(site, deps, pages=pages).client
    with deps.uow() as uow:
        sync = uow.console.sync(site.id)
    if client is not None and client.demo:
        finished = audit.finished_at if audit is not None else None
        stale = sync is None or not sync.demo or (finished is not None and sync.synced_at < finished)
        if stale:
            sync = sync_site(site, deps, pages=pages)
    return _Ready(site, pages, client, sync)


def _window(deps: ConsoleDeps) -> tuple[date, date]:
    end = deps.clock.now().astimezone(UTC).date() - timedelta(days=1)
    return end - timedelta(days=deps.terms.sync_days - 1), end


def _sync_view(ready: _Ready, deps: ConsoleDeps) -> SyncView:
    sync = ready.sync
    if ready.client is None:
        return SyncView(SyncStatus.NOT_CONNECTED, None, None, None, 0, 0, "no search console connection")
    if sync is None:
        return SyncView(SyncStatus.PENDING, None, None, None, 0, 0, None)
    return SyncView(
        sync.status,
        sync.synced_at,
        sync.synced_at + deps.terms.sync_every,
        sync.property_url,
        sync.days,
        sync.inspected,
        sync.error,
    )


def console_summary(asked: GetConsoleSummary, caller: Caller, *, console: ConsoleDeps) -> ConsoleSummary:
    deps = console
    ready = _ready(asked.site_id, caller, deps)
    start, end = _window(deps)
    with deps.uow() as uow:
        days = ready.days(uow, start, end)
        inspections = ready.inspections(uow)
    figures = totals(days)
    found = indexable_pages(ready.pages)
    found_urls = {r.url for r in found}
    in_sitemap = {r.url for r in found if r.in_sitemap}
    indexed = {i.url for i in inspections if i.indexed}
    clicks = sum(f.clicks for f in figures.values())
    impressions = sum(f.impressions for f in figures.values())
    weight = sum(f.impressions for f in figures.values() if f.position is not None)
    position = (
        round(sum(f.position * f.impressions for f in figures.values() if f.position is not None) / weight, 1)
        if weight
        else None
    )
    by_day: dict[date, list[int]] = {}
    for d in days:
        sums = by_day.setdefault(d.day, [0, 0])
        sums[0] += d.clicks
        sums[1] += d.impressions
    trend = (
        tuple(
            TrendDay((start + timedelta(days=n)).isoformat(), *by_day.get(start + timedelta(days=n), [0, 0]))
            for n in range((end - start).days + 1)
        )
        if days
        else ()
    )
    inspected_by_url = {i.url: i for i in inspections}
    templates: dict[str, list[int]] = {}
    for row in found:
        t = templates.setdefault(row.template, [0, 0, 0, 0, 0, 0])
        t[0] += 1
        inspection = inspected_by_url.get(row.url)
        if inspection is not None:
            t[1] += 1
            t[2 if inspection.indexed else 3] += 1
        page = figures.get(row.url)
        if page is not None:
            t[4] += page.clicks
            t[5] += page.impressions
    return ConsoleSummary(
        site_id=int(ready.site.id),
        demo=ready.demo,
        connected=ready.client is not None,
        property=ready.sync.property_url if ready.sync is not None else None,
        headline=Headline(
            clicks_28d=clicks,
            impressions_28d=impressions,
            ctr=rounded_ctr(clicks, impressions),
            position=position,
            pages_with_clicks=sum(1 for f in figures.values() if f.clicks),
            indexed=len(indexed),
            not_indexed=sum(1 for i in inspections if not i.indexed),
        ),
        funnel=Funnel(
            found=len(found_urls),
            in_sitemap=len(in_sitemap),
            inspected=len(inspections),
            indexed=len(indexed),
            with_impressions=sum(1 for f in figures.values() if f.impressions),
            with_clicks=sum(1 for f in figures.values() if f.clicks),
            indexed_outside_sitemap=len(indexed - in_sitemap),
        ),
        trend=trend,
        templates=tuple(
            TemplateFigures(name, *values)
            for name, values in sorted(templates.items(), key=lambda kv: (-kv[1][0], kv[0]))
        ),
        sync=_sync_view(ready, deps),
    )


def list_not_indexed(asked: ListNotIndexed, caller: Caller, *, console: ConsoleDeps) -> NotIndexedAnswer:
    deps, reason, template, page = console, asked.reason, asked.template, asked.page
    ready = _ready(asked.site_id, caller, deps)
    with deps.uow() as uow:
        inspections = ready.inspections(uow)
    template_of = ready.template_of
    size = NOT_INDEXED_PAGE_SIZE
    if reason is not None and template is not None:
        chosen = [
            i
            for i in inspections
            if not i.indexed and i.coverage_state == reason and template_of.get(i.url, "") == template
        ]
        rows = tuple(
            NotIndexedUrl(
                i.url,
                i.coverage_state,
                template,
                i.verdict,
                i.last_crawled,
                i.google_canonical,
                i.user_canonical,
                i.inspected_at,
            )
            for i in chosen[(page - 1) * size : page * size]
        )
        return NotIndexedAnswer(int(ready.site.id), ready.demo, (), rows, len(chosen), page, size)
    groups = [
        g
        for g in not_indexed_groups(inspections, template_of)
        if (reason is None or g.reason == reason) and (template is None or g.template == template)
    ]
    return NotIndexedAnswer(
        int(ready.site.id),
        ready.demo,
        tuple(groups[(page - 1) * size : page * size]),
        None,
        len(groups),
        page,
        size,
    )


def _require_on_site(site: Site, urls: Sequence[str]) -> None:
    foreign = [
        u for u in urls if not (u.lower().startswith(("http://", "https://")) and on_host(u, site.host))
    ]
    if foreign:
        raise UrlNotInSite(foreign, site.host)


def console_url(asked: GetConsoleUrl, caller: Caller, *, console: ConsoleDeps) -> ConsoleUrlAnswer:
    deps, url = console, asked.url
    ready = _ready(asked.site_id, caller, deps)
    _require_on_site(ready.site, [url])
    start, end = _window(deps)
    with deps.uow() as uow:
        page_figures = ready.totals(uow, [url], start, end).get(url)
        inspection = next((i for i in ready.inspections(uow) if i.url == url), None)
    row = next((r for r in ready.pages if r.url == url), None)
    audit_id = None
    if row is not None:
        audit = latest_done_audit(ready.site, deps.uow())
        audit_id = None if audit is None else int(audit.id)
    crawl = (
        None
        if row is None or audit_id is None
        else UrlCrawl(
            audit_id, row.status_code, row.title, row.template, row.in_sitemap, row.word_count, row.depth
        )
    )
    inspected = (
        None
        if inspection is None
        else UrlConsole(
            inspection.verdict,
            inspection.indexed,
            inspection.coverage_state,
            inspection.indexing_state,
            inspection.robots_txt_state,
            inspection.page_fetch_state,
            inspection.last_crawled,
            inspection.google_canonical,
            inspection.user_canonical,
            inspection.sitemaps,
            inspection.inspected_at,
        )
    )
    search = None
    if ready.client is not None:
        queries: list[QueryFigures] = []
        prop = ready.sync.property_url if ready.sync is not None else None
        if prop is not None:
            try:
                top = ready.client.query_days(prop, start=start, end=end, page=url)
                queries = [
                    QueryFigures(q.query, q.clicks, q.impressions, q.position)
                    for q in sorted(top, key=lambda q: (-q.clicks, -q.impressions, q.query))[:20]
                ]
            except ConsoleError as exc:
                log.info("top queries of %s not read: %s", url, exc)
        figures = page_figures or PageTotals(url, 0, 0)
        search = UrlSearch(
            figures.clicks,
            figures.impressions,
            rounded_ctr(figures.clicks, figures.impressions),
            figures.position,
            tuple(queries),
        )
    return ConsoleUrlAnswer(int(ready.site.id), ready.demo, url, crawl, inspected, inspected, search)


def console_opportunities(
    asked: GetConsoleOpportunities, caller: Caller, *, console: ConsoleDeps
) -> Opportunities:
    deps = console
    ready = _ready(asked.site_id, caller, deps)
    start, end = _window(deps)
    with deps.uow() as uow:
        figures = ready.totals(uow, None, start, end)
        inspections = ready.inspections(uow)
    template_of = ready.template_of

    def row(p: PageTotals) -> OpportunityRow:
        return OpportunityRow(
            p.url,
            template_of.get(p.url, ""),
            p.clicks,
            p.impressions,
            rounded_ctr(p.clicks, p.impressions),
            p.position,
        )

    ranked = sorted(figures.values(), key=lambda p: (-p.impressions, p.url))
    low = [row(p) for p in ranked if is_low_ctr(p)]
    striking = [row(p) for p in ranked if is_striking_distance(p)]
    mismatch = [
        CanonicalMismatchRow(
            i.url, template_of.get(i.url, ""), i.user_canonical or "", i.google_canonical or ""
        )
        for i in inspections
        if i.canonical_mismatch
    ]
    return Opportunities(
        site_id=int(ready.site.id),
        demo=ready.demo,
        low_ctr=tuple(low[:OPPORTUNITY_LIMIT]),
        striking_distance=tuple(striking[:OPPORTUNITY_LIMIT]),
        canonical_mismatch=tuple(mismatch[:OPPORTUNITY_LIMIT]),
        counts={"low_ctr": len(low), "striking_distance": len(striking), "canonical_mismatch": len(mismatch)},
        rules={
            "low_ctr": LOW_CTR_RULE,
            "striking_distance": STRIKING_RULE,
            "canonical_mismatch": CANONICAL_RULE,
        },
    )


def _budget(property_url: str, deps: ConsoleDeps, now: datetime) -> Budget:
    with deps.uow() as uow:
        used = uow.console.budget_used(property_url, day_window(now))
    return Budget(used, deps.terms.daily_budget, budget_resets_at(now))


def inspect_urls(asked: InspectUrls, caller: Caller, *, console: ConsoleDeps) -> InspectAnswer:
    """Fresh inspections of 1-20 URLs of the site (the door checks the count). Raises NotFound,
    SiteNotVerified, UrlNotInSite (422), ScNotConnected (409) or BudgetExhausted (429)."""
    deps, site_id, urls = console, asked.site_id, asked.urls
    if not 1 <= len(urls) <= INSPECT_MAX_URLS:
        raise ValidationFailed({"urls": f"must hold 1 to {INSPECT_MAX_URLS} URLs"})
    with deps.uow() as uow:
        site = uow.sites.get(site_id, team=caller.team_id)
    site.require_verified(VerifiedOnly.CONSOLE)
    _require_on_site(site, urls)
    ready = _ready(site_id, caller, deps)
    if ready.client is None:
        raise ScNotConnected("connect a search console to inspect URLs")
    client = ready.client
    try:
        prop = covering_property(client, site)
    except (ConsoleTokenInvalid, ConsolePermissionDenied) as exc:
        raise ScNotConnected(f"the console connection cannot be used ({exc})") from None
    except ConsoleError as exc:
        raise ScNotConnected(f"the console did not answer ({exc})") from None
    if prop is None:
        raise ScNotConnected(f"no property of the connection covers {site.url}")
    now = deps.clock.now()
    unique = list(dict.fromkeys(urls))
    if spend_inspections(prop.url, len(unique), deps, now) < len(unique):
        budget = _budget(prop.url, deps, now)
        raise BudgetExhausted(prop.url, budget.resets_at, used=budget.used, limit=budget.limit)
    results: list[InspectionResult] = []
    stop: str | None = None
    for url in unique:
        if stop is not None:
            results.append(InspectionResult(url, None, None, None, None, None, None, stop))
            continue
        try:
            found = client.inspect(prop.url, url)
        except (ConsoleQuotaExceeded, ConsoleTokenInvalid, ConsolePermissionDenied) as exc:
            stop = f"{type(exc).__name__}: {exc}"[:300]
            results.append(InspectionResult(url, None, None, None, None, None, None, stop))
            continue
        except ConsoleError as exc:
            results.append(InspectionResult(url, None, None, None, None, None, None, str(exc)[:300]))
            continue
        stored = stored_inspection(site.id, found, now, client.demo)
        with deps.uow() as uow:
            uow.console.save_inspection(stored)
            uow.commit()
        results.append(
            InspectionResult(
                url,
                found.verdict,
                stored.indexed,
                found.coverage_state,
                found.last_crawled,
                found.google_canonical,
                found.user_canonical,
                None,
            )
        )
    budget = _budget(prop.url, deps, now)
    return InspectAnswer(
        int(site.id),
        client.demo,
        tuple(results),
        BudgetView(budget.used, budget.limit, budget.resets_at),
        INSPECT_NOTE,
    )


def page_totals(
    site_id: SiteId, team_id: TeamId, urls: Sequence[str] | None, start: date, end: date, deps: ConsoleDeps
) -> dict[str, PageTotals]:
    """Clicks and impressions per URL of the team's site over `start`-`end` (inclusive) from the
    stored daily figures; URLs without figures are left out. Raises NotFound for another team's site."""
    with deps.uow() as uow:
        uow.sites.get(site_id, team=team_id)
        return dict(uow.console.page_totals(site_id, urls, start, end))


# --- index triage ----------------------------------------------------------------------------------------


def index_triage(asked: GetIndexTriage, caller: Caller, *, console: ConsoleDeps) -> IndexTriage:
    """Crawled pages the console reports as not indexed, by template and value class (domain/triage)."""
    deps = console
    ready = _ready(asked.site_id, caller, deps)
    start, end = _window(deps)
    with deps.uow() as uow:
        inspections = {i.url: i for i in ready.inspections(uow)}
        figures = ready.totals(uow, None, start, end)
    found = indexable_pages(ready.pages)
    pattern_pages: dict[str, int] = {}
    for row in found:
        pattern_pages[row.template] = pattern_pages.get(row.template, 0) + 1
    pages = []
    for row in found:
        inspection = inspections.get(row.url)
        if inspection is None or inspection.indexed:
            continue
        totals_of = figures.get(row.url)
        # The inspection's states and canonicals (its url is the row's), the row's template and words.
        pages.append(
            copy_named(
                TriagePage,
                inspection,
                template=row.template,
                word_count=row.word_count,
                impressions_28d=0 if totals_of is None else totals_of.impressions,
            )
        )
    with deps.uow() as uow:
        open_tasks = [
            OpenTask(task.code, task.template, str(task.key))
            for task in uow.tasks.of_site(ready.site.id)
            if task.status is not TaskStatus.FIXED
        ]
    groups = link_tasks(triage(pages, pattern_pages), open_tasks)
    by_class = {c.value: 0 for c in ValueClass}
    for group in groups:
        by_class[group.value_class.value] += group.count
    summary_ = TriageSummary(
        crawled=len(found),
        inspected=sum(1 for r in found if r.url in inspections),
        not_indexed=len(pages),
        impressions_28d=sum(p.impressions_28d for p in pages),
        by_class=by_class,
    )
    return IndexTriage(int(ready.site.id), ready.demo, summary_, tuple(groups), len(groups))
