"""The composition root: the one place that chooses adapters, from settings, and binds them to services."""

import hashlib
import hmac
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attrs import define, field

from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditRequest
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.issue import Issue
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.report import AllowListAdvice, Report
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.crawl import CrawlStore, PageSummary
from siteaudit.ports.network import Fetcher, Resolver
from siteaudit.ports.parse import PageParser
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.ratelimit import RateLimiter
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.webhook import WebhookSender
from siteaudit.services import account as account_services
from siteaudit.services import archive as archive_services
from siteaudit.services import audit as audit_services
from siteaudit.services import crawl as crawl_services
from siteaudit.services import finalize as finalize_services
from siteaudit.services import key as key_services
from siteaudit.services import report as report_services
from siteaudit.services import webhook as webhook_services
from siteaudit.settings import Settings

log = logging.getLogger("siteaudit")

USER_AGENT = "siteaudit/0.1 (+https://github.com/siteaudit/siteaudit)"
VERIFY_HEADER = "X-Service-Verify"


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
        return audit_services.start_audit(
            request, caller, uow=a.uow(), clock=a.clock, queue=a.queue, public_only=(a.resolver, a.policy)
        )

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

    def report(self, audit_id: int, caller: Caller) -> Report:
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

    # --- worker-side use cases ------------------------------------------------------------------------

    def _crawler_secret(self, audit_id: AuditId) -> str | None:
        """The site's crawler secret for audits of verified sites: derived, never stored."""
        with self.app.uow() as uow:
            audit = uow.audits.get_any(audit_id)
            if audit.site_id is None:
                return None
            site = uow.sites.get(audit.site_id, team=TeamId(audit.team_id))
        if not site.verified:
            return None
        return self.app.crawler_secret(site.crawler_secret_ref)

    def run_crawl_slice(
        self, audit_id: int, *, verify_token: str | None = None
    ) -> crawl_services.SliceOutcome:
        a = self.app
        return crawl_services.run_crawl_slice(
            AuditId(audit_id),
            uow=a.uow(),
            crawl=a.crawl,
            fetcher_factory=a.fetcher_factory,
            parser=a.parser,
            clock=a.clock,
            queue=a.queue,
            settings=a.crawl_settings,
            verify_token=verify_token,
            crawler_secret=self._crawler_secret(AuditId(audit_id)),
        )

    def finalize_audit(self, audit_id: int) -> Audit:
        a = self.app
        return finalize_services.finalize_audit(
            AuditId(audit_id), uow=a.uow(), crawl=a.crawl, clock=a.clock, advice=a.allow_list_advice
        )

    def archive_audits(self) -> list[AuditId]:
        """Archive what SITEAUDIT_ARCHIVE_AFTER_DAYS / SITEAUDIT_ARCHIVE_KEEP_LAST select (nothing if unset)."""
        a, s = self.app, self.app.settings
        if s.archive_after_days is None and s.archive_keep_last is None:
            return []
        return archive_services.archive_audits(
            uow=a.uow(),
            crawl=a.crawl,
            clock=a.clock,
            older_than_days=s.archive_after_days,
            keep_last=s.archive_keep_last,
        )

    def deliver_webhooks(self, *, limit: int = 50) -> int:
        a = self.app
        return webhook_services.deliver_due_webhooks(
            uow=a.uow(), sender=a.webhook_sender, clock=a.clock, limit=limit
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
    resolver: Resolver
    policy: AddressPolicy
    parser: PageParser
    webhook_sender: WebhookSender
    secret_key: str = field(repr=False)
    broker: Any = None  # the Dramatiq broker behind `queue`, when it is one
    services: Services = field(init=False)

    def __attrs_post_init__(self) -> None:
        self.services = Services(self)

    @property
    def crawl_settings(self) -> crawl_services.CrawlSettings:
        s = self.settings
        return crawl_services.CrawlSettings(
            time_cap_s=s.crawl_time_cap_s,
            slice_pages=s.slice_pages,
            slice_seconds=s.slice_seconds,
            check_external=s.check_external_links,
            max_external_checks=s.max_external_checks,
            lease_s=s.lease_s,
            handover_s=s.handover_s,
        )

    @property
    def allow_list_advice(self) -> AllowListAdvice:
        return AllowListAdvice(
            user_agent=USER_AGENT,
            token_header=VERIFY_HEADER,
            docs_url=f"{self.settings.base_url}/v1/openapi.json",
        )

    def fetcher_factory(self, connections: int) -> Fetcher:
        """One small connection pool per audit (a shared pool at concurrency 20 is several times slower)."""
        from siteaudit.adapters.http.fetcher import FetchLimits, HttpxFetcher

        return HttpxFetcher(
            self.resolver, self.policy, limits=FetchLimits(max_connections=connections), user_agent=USER_AGENT
        )

    def unseal(self, sealed: str) -> str:
        """A value sealed by the queue adapter (the verify token travelling with crawl messages)."""
        from siteaudit.adapters.secretbox import SecretBox

        return SecretBox(self.secret_key).decrypt(sealed)

    def crawler_secret(self, reference: str) -> str:
        return hmac.new(self.secret_key.encode(), f"crawler:{reference}".encode(), hashlib.sha256).hexdigest()

    def rest_api(self) -> Any:
        """The Falcon WSGI application of `/v1`."""
        from siteaudit.adapters.rest import create_api

        return create_api(
            self.services,
            clock=self.clock,
            limiter=self.limiter,
            trusted_proxies=self.settings.trusted_proxies,
        )


def _secret_key(settings: Settings) -> str:
    """SITEAUDIT_SECRET_KEY, or for a SQLite file a key kept beside it (0600), or a per-process key for
    `memory://`. PostgreSQL deployments must set it: several processes have to share it."""
    if settings.secret_key:
        return settings.secret_key
    from siteaudit.adapters.secretbox import SecretBox

    url = settings.database_url
    if url.startswith("memory:"):
        return SecretBox.generate_key()
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///") + ".key")
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(SecretBox.generate_key())
        return path.read_text().strip()
    raise ValueError("SITEAUDIT_SECRET_KEY must be set when the database is not a local SQLite file")


def _storage(settings: Settings, secret_key: str) -> tuple[Callable[[], UnitOfWork], CrawlStore]:
    if settings.database_url.startswith("memory:"):
        from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
        from siteaudit.adapters.memory.crawl import MemoryCrawlStore

        store = MemoryStore()
        return (lambda: MemoryUnitOfWork(store)), MemoryCrawlStore()
    from siteaudit.adapters.sql import migrate, sql_crawl_store, sql_unit_of_work_factory

    migrate(settings.database_url)
    factory = sql_unit_of_work_factory(settings.database_url, secret_key=secret_key)
    return factory, sql_crawl_store(settings.database_url)


def bootstrap(settings: Settings | None = None, **overrides: Any) -> App:
    """Build the application. `overrides` replace any part by name: clock, secrets, uow, crawl, queue,
    limiter, resolver, policy, parser, webhook_sender. The database is migrated to the newest schema."""
    settings = settings or Settings.from_env()
    if settings.allow_networks:
        log.warning(
            "SITEAUDIT_ALLOW_NETWORKS is set (%s): outbound requests may reach these private networks",
            ", ".join(settings.allow_networks),
        )
    overrides.setdefault("secret_key", _secret_key(settings))
    if "clock" not in overrides:
        from siteaudit.adapters.system import SystemClock

        overrides["clock"] = SystemClock()
    if "secrets" not in overrides:
        from siteaudit.adapters.system import SystemSecrets

        overrides["secrets"] = SystemSecrets()
    if "uow" not in overrides or "crawl" not in overrides:
        uow, crawl = _storage(settings, overrides["secret_key"])
        overrides.setdefault("uow", uow)
        overrides.setdefault("crawl", crawl)
    if "queue" not in overrides:
        from siteaudit.adapters.queue.dramatiq import DramatiqTaskQueue, build_broker
        from siteaudit.adapters.secretbox import SecretBox

        overrides.setdefault("broker", build_broker(settings.broker_url, queue_prefix=settings.queue_prefix))
        overrides["queue"] = DramatiqTaskQueue(
            overrides["broker"], seal=SecretBox(overrides["secret_key"]).encrypt
        )
    if "limiter" not in overrides:
        if settings.database_url.startswith("postgresql"):
            # Every gunicorn worker and machine shares the limits through the database.
            from siteaudit.adapters.sql import engine_for
            from siteaudit.adapters.sql.ratelimit import SqlRateLimiter

            overrides["limiter"] = SqlRateLimiter(engine_for(settings.database_url))
        else:
            from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter

            overrides["limiter"] = MemoryRateLimiter()
    if "resolver" not in overrides:
        from siteaudit.adapters.http.resolver import SystemResolver

        overrides["resolver"] = SystemResolver()
    overrides.setdefault("policy", AddressPolicy.from_setting(",".join(settings.allow_networks)))
    if "parser" not in overrides:
        from siteaudit.adapters.parse import LibraryPageParser

        overrides["parser"] = LibraryPageParser()
    if "webhook_sender" not in overrides:
        from siteaudit.adapters.http.webhook import HttpxWebhookSender

        overrides["webhook_sender"] = HttpxWebhookSender(overrides["resolver"], overrides["policy"])
    return App(settings=settings, **overrides)
