"""Doubles for the lease and reaper tests: a tiny site answered in memory, and a world of audits on memory
adapters whose messages a test delivers, duplicates or loses by hand (a worker killed mid-slice)."""

from collections.abc import Callable, Mapping
from datetime import timedelta

from attrs import define, field

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditRequest
from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.credit import EntryKind, audit_cost, credits
from siteaudit.domain.ids import AuditId
from siteaudit.domain.lease import ReapTerms
from siteaudit.domain.network import FetchRequest, FetchResponse
from siteaudit.ports.application import Reaped
from siteaudit.ports.network import Fetcher
from siteaudit.ports.repository import TeamAuditQuery
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from siteaudit.services.audit import audit_reference, start_audit
from siteaudit.services.crawl import CrawlDeps, SliceOutcome, run_crawl_slice
from siteaudit.services.finalize import finalize_audit
from siteaudit.services.reaper import reap

SITE = "https://retro-clock.example"
PAGES: Mapping[str, tuple[str, ...]] = {
    "/": ("/catalogue", "/about"),
    "/catalogue": ("/catalogue/cuckoo", "/catalogue/mantel"),
    "/catalogue/cuckoo": ("/",),
    "/catalogue/mantel": ("/",),
    "/about": ("/",),
}
STARTING_CREDITS = credits(1_000)
LEASE_S = 30.0
HANDOVER_S = 120.0


class MemorySiteFetcher:
    """The Fetcher port over PAGES: every path is an HTML page linking to its children, others 404."""

    def __init__(self, hits: list[str], on_fetch: Callable[[str], None]) -> None:
        self.hits = hits
        self.on_fetch = on_fetch

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        path = "/" + request.url.split("/", 3)[3] if request.url.count("/") >= 3 else "/"
        self.on_fetch(path)
        self.hits.append(path)
        links = PAGES.get(path)
        if links is None:
            return FetchResponse(url=request.url, status=404, headers=(("content-type", "text/plain"),))
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        body = (
            f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Retro Clock {path}</title>"
            f'<meta name="description" content="Clocks of {path}"></head><body><h1>{path}</h1>{anchors}'
            "</body></html>"
        ).encode()
        return FetchResponse(
            url=request.url,
            status=200,
            headers=(("content-type", "text/html; charset=utf-8"),),
            body=body,
            ttfb_ms=1,
            total_ms=1,
        )

    async def aclose(self) -> None:
        return None


@define
class World:
    """Audits started through the service on memory adapters; messages handled by hand."""

    clock: FixedClock = field(factory=FixedClock)
    store: MemoryStore = field(factory=MemoryStore)
    crawl: MemoryCrawlStore = field(factory=MemoryCrawlStore)
    queue: MemoryTaskQueue = field(factory=MemoryTaskQueue)
    limits: CrawlLimits = field(
        factory=lambda: CrawlLimits(
            unlimited_rate=True, slice_pages=2, lease_s=LEASE_S, handover_s=HANDOVER_S
        )
    )
    hits: list[str] = field(factory=list)
    on_fetch: Callable[[str], None] = lambda _path: None  # runs before each answer: stalls, takeovers
    callers: list[Caller] = field(factory=list)

    def __attrs_post_init__(self) -> None:
        for name in ("owner", "partner"):
            email = f"{name}@retro-clock.example"
            accounts.create_user(
                email, plan="growth", uow=self.uow(), clock=self.clock, secrets=SystemSecrets()
            )
            accounts.create_team(f"Retro Clock {name}", owner_email=email, uow=self.uow(), clock=self.clock)
            accounts.grant_credits(
                email, STARTING_CREDITS, key=f"start:{email}", uow=self.uow(), clock=self.clock
            )
            raw = keys.create_settings_key(
                email, f"Retro Clock {name}", uow=self.uow(), clock=self.clock, secrets=SystemSecrets()
            ).raw
            self.callers.append(keys.authenticate(raw, uow=self.uow(), clock=self.clock))

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def fetcher_factory(self) -> Callable[[int], Fetcher]:
        return lambda _connections: MemorySiteFetcher(self.hits, self.on_fetch)

    def start(self, caller: int = 0, *, webhook: bool = True, max_pages: int = 20) -> AuditId:
        request = AuditRequest(
            url=f"{SITE}/",
            max_pages=max_pages,
            webhook_url="https://hooks.retro-clock.example/audit-ended" if webhook else None,
        )
        started = start_audit(
            request, self.callers[caller], uow=self.uow(), clock=self.clock, queue=self.queue
        )
        return started.audit.id

    def audit(self, audit_id: AuditId) -> Audit:
        with self.uow() as uow:
            return uow.audits.get_any(audit_id)

    def slice(self, audit_id: AuditId, *, holder: str | None = None) -> SliceOutcome:
        deps = CrawlDeps(
            uow=self.uow,
            crawl=self.crawl,
            fetcher_factory=self.fetcher_factory(),
            parser=LibraryPageParser(),
            clock=self.clock,
            queue=self.queue,
            limits=self.limits,
        )
        return run_crawl_slice(audit_id, deps, holder=holder)

    def finalize(self, audit_id: AuditId) -> Audit:
        return finalize_audit(audit_id, uow=self.uow(), crawl=self.crawl, clock=self.clock)

    def deliver(self, message: tuple[str, int | None]) -> None:
        actor, argument = message
        assert argument is not None
        if actor == "crawl_slice":
            self.slice(AuditId(argument))
        elif actor == "finalize_audit":
            self.finalize(AuditId(argument))

    def drain(self, *, limit: int = 1_000) -> int:
        """Deliver queued messages in order until none is left; how many were delivered."""
        delivered = 0
        while delivered < limit and (message := self.queue.take()) is not None:
            self.deliver(message)
            delivered += 1
        return delivered

    def kill_slice(self, audit_id: AuditId, holder: str = "doomed-worker:4242:0") -> None:
        """A worker took the audit's lease and died before doing anything else (SIGKILL)."""
        with self.uow() as uow:
            now = self.clock.now()
            uow.leases.claim(audit_id, holder, now=now, until=now + timedelta(seconds=LEASE_S))
            uow.commit()

    def reap(self, *, grace_s: float = 5.0, max_attempts: int = 3, queued_s: float = 600.0) -> Reaped:
        return reap(
            uow=self.uow(),
            queue=self.queue,
            clock=self.clock,
            terms=ReapTerms(grace_s=grace_s, max_attempts=max_attempts, queued_s=queued_s, every_s=30.0),
            handover_s=HANDOVER_S,
        )

    # --- the invariants of SECURITY.md section 6 ------------------------------------------------------

    def ledger_problems(self) -> list[str]:
        problems: list[str] = []
        with self.uow() as uow:
            audits = [
                a
                for c in self.callers
                for a in uow.audits.list(TeamAuditQuery(team=c.team_id, limit=100_000))[0]
            ]
            for caller in self.callers:
                entries = uow.credits.entries(caller.user_id)
                balance = uow.credits.balance(caller.user_id)
                if balance != sum(e.amount for e in entries):
                    problems.append(f"user {caller.user_id}: balance {balance} != sum of entries")
                used = sum(
                    audit_cost(
                        pages_fetched=a.pages_fetched_in_full,
                        pages_not_modified=a.pages_not_modified,
                        reserved=a.credits_reserved,
                    )
                    for a in audits
                    if a.payer_id == caller.user_id and a.status.ended
                )
                held = sum(
                    a.credits_reserved for a in audits if a.payer_id == caller.user_id and not a.status.ended
                )
                if balance != STARTING_CREDITS - used - held:
                    problems.append(
                        f"user {caller.user_id}: balance {balance} != start - used {used} - held {held}"
                    )
            for audit in audits:
                entries = [
                    e
                    for caller in self.callers
                    for e in uow.credits.entries(caller.user_id)
                    if e.reference == audit_reference(audit.id)
                ]
                settlements = sum(1 for e in entries if e.kind is EntryKind.RELEASE)
                if settlements != (1 if audit.status.ended else 0):
                    problems.append(f"audit {audit.id} ({audit.status}): {settlements} settlements")
                delivery = uow.webhooks.of_audit(audit.id)
                if audit.status.ended and audit.webhook_url and delivery is None:
                    problems.append(f"audit {audit.id}: ended without its webhook event")
        return problems
