"""Search-console use cases (docs/rest-api.md "Search console"): the console a site reads, team connections,
the `gsc` ownership proof and the daily sync (the answers are in `console_read.py`).

Which console a site reads: the team's OAuth connection; else the deployment's service account when it
serves the team; else, for a verified site, the demo provider when the demo setting is on (it then
counts as the connection). The demo provider never proves ownership.
"""

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from attrs import frozen

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.console import (
    ConsoleConnection,
    ConsoleProperty,
    ConsoleSync,
    ConsoleTerms,
    Inspection,
    StoredInspection,
    SyncStatus,
    budget_windows,
    property_for,
)
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import SiteId
from siteaudit.domain.site import ProofCheck, ProofOutcome, Site, VerifyMethod
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore, PageQuery, PageRow
from siteaudit.ports.repository import TeamAuditQuery, UnitOfWork
from siteaudit.ports.sealing import Sealing
from siteaudit.ports.searchconsole import (
    ConsoleError,
    ConsoleProviders,
    ConsoleTokenInvalid,
    SearchConsole,
    SiteContext,
)
from siteaudit.ports.usecases import copy_named
from siteaudit.services.impact.impact import refresh_task_traffic

log = logging.getLogger(__name__)


@frozen(kw_only=True)  # its ports come by name (services/inject.py)
class ConsoleDeps:
    """What the console use cases need, bound once in the application."""

    uow: Callable[[], UnitOfWork]
    crawl: CrawlStore
    clock: Clock
    sealing: Sealing
    providers: ConsoleProviders
    terms: ConsoleTerms


# --- the site's audit and its console ------------------------------------------------------------------


def latest_done_audit(site: Site, uow: UnitOfWork) -> Audit | None:
    with uow:
        audits, _ = uow.audits.list(TeamAuditQuery(team=site.team_id, site=site.id, offset=0, limit=50))
    return next((a for a in audits if a.status is AuditStatus.DONE), None)


def audit_pages(crawl: CrawlStore, audit: Audit | None) -> list[PageRow]:
    if audit is None:
        return []
    rows: list[PageRow] = []
    while True:
        page, total = crawl.list_pages(audit.id, PageQuery(offset=len(rows), limit=5_000))
        rows.extend(page)
        if not page or len(rows) >= total:
            return rows


def indexable_pages(rows: Sequence[PageRow]) -> list[PageRow]:
    """Pages the console can index: answered 200 (not blocked, not excluded by robots.txt)."""
    return [r for r in rows if r.status_code == 200 and r.excluded_by is None]


@frozen
class _Source:
    client: SearchConsole | None
    why: str  # why there is no client


def console_source(
    site: Site, deps: ConsoleDeps, *, pages: Sequence[PageRow], allow_demo: bool = True
) -> _Source:
    with deps.uow() as uow:
        connection = uow.console.connection(site.team_id)
        team_name = uow.teams.get(site.team_id).name
    if connection is not None:
        try:
            token = deps.sealing.unseal(connection.sealed_refresh_token)
        except Exception:  # the adapter's own error: the deployment's key changed since it was sealed
            log.warning("the console connection of team %s cannot be unsealed", site.team_id)
            return _Source(None, "the stored console connection cannot be opened any more; connect again")
        return _Source(deps.providers.oauth(token), "")
    if deps.terms.service_account_serves(team_name):
        try:
            account = deps.providers.service_account()
        except ConsoleError as exc:
            return _Source(None, str(exc))
        if account is not None:
            return _Source(account, "")
    if allow_demo and deps.terms.demo and site.verified:
        found = indexable_pages(pages)
        context = SiteContext(
            site_id=site.id,
            origin=site.origin,
            urls=tuple(r.url for r in found),
            in_sitemap=frozenset(r.url for r in found if r.in_sitemap),
        )
        return _Source(deps.providers.demo(context), "")
    return _Source(None, "the team has not connected a search console (and the demo provider is off)")


def covering_property(client: SearchConsole, site: Site) -> ConsoleProperty | None:
    return property_for(client.properties(), site.url)


# --- the gsc ownership proof ----------------------------------------------------------------------------


def console_proof(site: Site, deps: ConsoleDeps) -> ProofCheck:
    """The `gsc` method: matched when the team's console connection (OAuth, or the service account
    serving the team; never the demo provider) lists a property covering the site with owner or full
    rights. Never raises for what the console answers."""
    method = VerifyMethod.SC
    source = console_source(site, deps, pages=(), allow_demo=False)
    if source.client is None:
        return ProofCheck(method, ProofOutcome.NOT_CONNECTED, "the team has no search console connection")
    try:
        properties = source.client.properties()
    except ConsoleTokenInvalid:
        return ProofCheck(method, ProofOutcome.NOT_CONNECTED, "the console connection was revoked or expired")
    except ConsoleError as exc:
        return ProofCheck(method, ProofOutcome.FETCH_ERROR, f"the console did not answer: {exc}"[:300])
    covering = [p for p in properties if p.covers(site.url)]
    if any(p.permission.proves_ownership for p in covering):
        return ProofCheck(method, ProofOutcome.MATCHED)
    if covering:
        levels = ", ".join(sorted({p.permission.value for p in covering}))
        return ProofCheck(method, ProofOutcome.WRONG_VALUE, f"the property is listed with {levels} only")
    return ProofCheck(method, ProofOutcome.NOT_FOUND, f"no property of the connection covers {site.url}")


def console_connection_view(site: Site, deps: ConsoleDeps) -> tuple[bool, str | None]:
    """What `GET /sites/{id}/verification` shows for the `gsc` method: connected, and the property
    covering the site when the connection could be asked (None when it could not)."""
    source = console_source(site, deps, pages=(), allow_demo=False)
    if source.client is None:
        return False, None
    try:
        found = covering_property(source.client, site)
    except ConsoleError:
        return True, None
    return True, None if found is None else found.url


# --- connections ----------------------------------------------------------------------------------------


def connect(team_name: str, refresh_token: str, account: str, deps: ConsoleDeps) -> ConsoleConnection:
    """Store the team's OAuth grant, its refresh token sealed; a grant made before is replaced (and
    revoked at the provider, best effort). Raises NotFound for an unknown team."""
    with deps.uow() as uow:
        team_id = uow.teams.by_name(team_name).id
    connection = ConsoleConnection(
        team_id=team_id,
        sealed_refresh_token=deps.sealing.seal(refresh_token),
        account=account[:320],
        connected_at=deps.clock.now(),
    )
    with deps.uow() as uow:
        earlier = uow.console.connection(team_id)
        uow.console.save_connection(connection)
        uow.commit()
    if earlier is not None:
        _revoke(earlier, deps)
    return connection


def disconnect(team_name: str, deps: ConsoleDeps) -> bool:
    """Forget the team's OAuth grant and revoke it at the provider (best effort). False when there was
    none. Stored figures stay; the next sync finds no connection. Raises NotFound for an unknown team."""
    with deps.uow() as uow:
        team_id = uow.teams.by_name(team_name).id
        connection = uow.console.connection(team_id)
        if connection is None:
            return False
        uow.console.delete_connection(team_id)
        uow.commit()
    _revoke(connection, deps)
    return True


def _revoke(connection: ConsoleConnection, deps: ConsoleDeps) -> None:
    try:
        deps.providers.revoke(deps.sealing.unseal(connection.sealed_refresh_token))
    except ConsoleError as exc:
        log.warning("console grant of team %s not revoked at the provider: %s", connection.team_id, exc)


# --- the daily sync --------------------------------------------------------------------------------------


def _sample(urls: Sequence[str], inspected: Sequence[StoredInspection], count: int) -> list[str]:
    """URLs to inspect: never inspected first (in URL order), then the longest since inspected."""
    when = {i.url: i.inspected_at for i in inspected}
    never = [u for u in urls if u not in when]
    known = sorted((u for u in urls if u in when), key=lambda u: (when[u], u))
    return (never + known)[: max(0, count)]


def spend_inspections(property_url: str, wanted: int, deps: ConsoleDeps, now: datetime) -> int:
    """Spend up to `wanted` inspections of the property's budget; how many were granted."""
    terms = deps.terms
    windows = budget_windows(now, daily=terms.daily_budget, per_minute=terms.minute_budget)
    with deps.uow() as uow:
        room = min(limit - uow.console.budget_used(property_url, key) for key, limit in windows)
        granted = max(0, min(wanted, room))
        if granted and not uow.console.spend_budget(property_url, windows, granted):
            granted = 0
        uow.commit()
    return granted


def stored_inspection(site_id: SiteId, inspection: Inspection, now: datetime, demo: bool) -> StoredInspection:
    """`inspection` kept as the site's latest of its URL, with when it was made and whether by the demo."""
    return copy_named(StoredInspection, inspection, site_id=site_id, inspected_at=now, demo=demo)


def sync_site(site: Site, deps: ConsoleDeps, *, pages: Sequence[PageRow] | None = None) -> ConsoleSync:
    """Sync one verified site now: 28 days of page figures per day (ending yesterday), then inspections
    of sampled URLs of its latest audit within the property's budget. Records and returns the outcome;
    never raises for what the console answers."""
    now = deps.clock.now()
    if pages is None:
        pages = audit_pages(deps.crawl, latest_done_audit(site, deps.uow()))
    source = console_source(site, deps, pages=pages)
    if source.client is None:
        sync = ConsoleSync(site.id, now, SyncStatus.NOT_CONNECTED, error=source.why)
    else:
        with deps.uow() as uow:
            previous = uow.console.sync(site.id)
            if previous is not None and previous.demo != source.client.demo:
                # Demo figures never mix with a real console's (nor the reverse): start afresh.
                uow.console.delete_site(site.id)
                uow.commit()
        sync = _sync_with(site, source.client, pages, deps, now)
        if sync.status is SyncStatus.OK:
            # Fix tasks rank by the figures just stored, not only after the next audit.
            refresh_task_traffic(site.id, uow=deps.uow, crawl=deps.crawl)
    with deps.uow() as uow:
        uow.console.save_sync(sync)
        uow.commit()
    return sync


def _sync_with(
    site: Site, client: SearchConsole, pages: Sequence[PageRow], deps: ConsoleDeps, now: datetime
) -> ConsoleSync:
    demo = client.demo
    try:
        prop = covering_property(client, site)
        if prop is None:
            return ConsoleSync(
                site.id,
                now,
                SyncStatus.FAILED,
                demo=demo,
                error=f"no property of the connection covers {site.url}",
            )
        end = now.astimezone(UTC).date() - timedelta(days=1)
        start = end - timedelta(days=deps.terms.sync_days - 1)
        days = client.page_days(prop.url, start=start, end=end)
        with deps.uow() as uow:
            written = uow.console.replace_days(site.id, days, start=start, end=end)
            uow.commit()
        with deps.uow() as uow:
            inspected = uow.console.inspections(site.id)
        urls = [r.url for r in indexable_pages(pages) if prop.covers(r.url)]
        sample = _sample(urls, inspected, deps.terms.sync_inspections)
        granted = spend_inspections(prop.url, len(sample), deps, now)
        done = 0
        for url in sample[:granted]:
            result = client.inspect(prop.url, url)
            with deps.uow() as uow:
                uow.console.save_inspection(stored_inspection(site.id, result, now, demo))
                uow.commit()
            done += 1
    except ConsoleError as exc:
        log.warning("console sync of site %s failed: %s", site.id, exc)
        return ConsoleSync(
            site.id, now, SyncStatus.FAILED, demo=demo, error=f"{type(exc).__name__}: {exc}"[:500]
        )
    return ConsoleSync(site.id, now, SyncStatus.OK, prop.url, demo, written, done)


def sync_due_sites(now: datetime, deps: ConsoleDeps) -> int:
    """The scheduler's daily sync: every verified site not synced for `terms.sync_every` (or never),
    `terms.batch` at a time, oldest first. How many sites were synced (whatever the outcome)."""
    with deps.uow() as uow:
        due = list(uow.console.due_syncs(now - deps.terms.sync_every, limit=deps.terms.batch))
    synced = 0
    for site_id in due:
        with deps.uow() as uow:
            try:
                site = uow.sites.get_any(site_id)
            except NotFound:
                continue
        if not site.verified:
            continue
        try:
            sync_site(site, deps)
        except Exception as exc:  # one site's failure must not hold up the others, pass after pass
            log.exception("console sync of site %s failed", site.id)
            with deps.uow() as uow:
                failed = ConsoleSync(site.id, now, SyncStatus.FAILED, error=f"{type(exc).__name__}"[:500])
                uow.console.save_sync(failed)
                uow.commit()
        synced += 1
    return synced
