"""The composition root: the one place that chooses adapters, from settings, and binds them to services."""

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import define, field

from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditRequest
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.issue import Issue
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.crawl import CrawlStore, PageSummary
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.ratelimit import RateLimiter
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services import account as account_services
from siteaudit.services import audit as audit_services
from siteaudit.services import key as key_services
from siteaudit.services import report as report_services
from siteaudit.settings import Settings

log = logging.getLogger("siteaudit")


@define
class Services:
    """The use cases with their ports bound: what entrypoints call."""

    app: "App"

    def authenticate(self, raw_key: str) -> Caller:
        return key_services.authenticate(raw_key, uow=self.app.uow(), clock=self.app.clock)

    def account(self, caller: Caller) -> account_services.AccountView:
        return account_services.account_view(caller, uow=self.app.uow(), clock=self.app.clock)

    def start_audit(self, request: AuditRequest, caller: Caller) -> audit_services.AuditStarted:
        a = self.app
        return audit_services.start_audit(request, caller, uow=a.uow(), clock=a.clock, queue=a.queue)

    def list_audits(
        self, caller: Caller, *, site_id: int | None, offset: int, limit: int
    ) -> tuple[Sequence[Audit], int]:
        site = SiteId(site_id) if site_id is not None else None
        return audit_services.list_audits(
            caller, site_id=site, offset=offset, limit=limit, uow=self.app.uow()
        )

    def get_audit(self, audit_id: int, caller: Caller) -> Audit:
        return audit_services.get_audit(AuditId(audit_id), caller, uow=self.app.uow())

    def cancel_audit(self, audit_id: int, caller: Caller) -> Audit:
        return audit_services.cancel_audit(
            AuditId(audit_id), caller, uow=self.app.uow(), clock=self.app.clock
        )

    def report(self, audit_id: int, caller: Caller) -> Mapping[str, Any]:
        return report_services.report(AuditId(audit_id), caller, uow=self.app.uow(), crawl=self.app.crawl)

    def issues(
        self,
        audit_id: int,
        caller: Caller,
        *,
        check: str | None,
        severity: str | None,
        template: str | None,
        offset: int,
        limit: int,
    ) -> tuple[Sequence[Issue], int]:
        return report_services.issues(
            AuditId(audit_id),
            caller,
            check=check,
            severity=severity,
            template=template,
            offset=offset,
            limit=limit,
            uow=self.app.uow(),
            crawl=self.app.crawl,
        )

    def pages(
        self, audit_id: int, caller: Caller, *, status_code: int | None, offset: int, limit: int
    ) -> tuple[Sequence[PageSummary], int]:
        return report_services.pages(
            AuditId(audit_id),
            caller,
            status_code=status_code,
            offset=offset,
            limit=limit,
            uow=self.app.uow(),
            crawl=self.app.crawl,
        )


@define
class App:
    settings: Settings
    clock: Clock
    secrets: Secrets
    uow: Callable[[], UnitOfWork]
    crawl: CrawlStore
    queue: TaskQueue
    limiter: RateLimiter
    services: Services = field(init=False)

    def __attrs_post_init__(self) -> None:
        self.services = Services(self)

    def rest_api(self) -> Any:
        """The Falcon WSGI application of `/v1`."""
        from siteaudit.adapters.rest import create_api

        return create_api(
            self.services,
            clock=self.clock,
            limiter=self.limiter,
            trusted_proxies=self.settings.trusted_proxies,
        )


def _storage(settings: Settings) -> tuple[Callable[[], UnitOfWork], CrawlStore]:
    if settings.database_url.startswith("memory:"):
        from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
        from siteaudit.adapters.memory.crawl import MemoryCrawlStore

        store = MemoryStore()
        return (lambda: MemoryUnitOfWork(store)), MemoryCrawlStore()
    from siteaudit.adapters.sql import migrate, sql_crawl_store, sql_unit_of_work_factory

    migrate(settings.database_url)
    return sql_unit_of_work_factory(settings.database_url), sql_crawl_store(settings.database_url)


def bootstrap(settings: Settings | None = None, **overrides: Any) -> App:
    """Build the application. `overrides` replace any part by name: clock, secrets, uow, crawl, queue,
    limiter. The database is migrated to the newest schema on the way."""
    settings = settings or Settings.from_env()
    if settings.allow_networks:
        log.warning(
            "SITEAUDIT_ALLOW_NETWORKS is set (%s): outbound requests may reach these private networks",
            ", ".join(settings.allow_networks),
        )
    if "clock" not in overrides:
        from siteaudit.adapters.system import SystemClock

        overrides["clock"] = SystemClock()
    if "secrets" not in overrides:
        from siteaudit.adapters.system import SystemSecrets

        overrides["secrets"] = SystemSecrets()
    if "uow" not in overrides or "crawl" not in overrides:
        uow, crawl = _storage(settings)
        overrides.setdefault("uow", uow)
        overrides.setdefault("crawl", crawl)
    if "queue" not in overrides:
        from siteaudit.adapters.memory.queue import MemoryTaskQueue

        overrides["queue"] = MemoryTaskQueue()
    if "limiter" not in overrides:
        from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter

        overrides["limiter"] = MemoryRateLimiter()
    return App(settings=settings, **overrides)
