# Over 400 lines: the one composition root; each adapter's choice from settings is a few lines, and there is one per port.
"""The composition root: the one place that chooses adapters, from settings, and builds the application
over them. It holds no business logic: no unit of work opened, no key derived, nothing unsealed."""

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from attrs import define

from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.identity import USER_AGENT, VERIFY_HEADER
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.report import AllowListAdvice
from siteaudit.ports.application import Application, ArchivePolicy, DeviceCancel
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.keys import KeyGate
from siteaudit.ports.mailer import Mailer
from siteaudit.ports.metrics import NO_METRICS
from siteaudit.ports.network import Fetcher, HostResolver
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.ratelimit import RateLimiter
from siteaudit.ports.render import Renderer
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing
from siteaudit.ports.searchconsole import ConsoleProviders
from siteaudit.ports.usecases import copy_named
from siteaudit.services import registry
from siteaudit.services.application import LocalApplication
from siteaudit.services.tasks.recheck_run import RecheckTerms
from siteaudit.services.traffic import ConsoleTraffic
from siteaudit.settings import Settings

# The declared use cases (`services/registry.py`), for the doors built on a client of a remote service.
USE_CASES: Final = registry.USE_CASES

if TYPE_CHECKING:
    from siteaudit.adapters.metrics import PrometheusMetrics
    from siteaudit.adapters.sql import Migrated
    from siteaudit.ports.payment import PaymentProvider

log = logging.getLogger("siteaudit")


@define
class App:
    """What `bootstrap` built: the application every door calls, and what the doors need besides it."""

    settings: Settings
    application: Application
    clock: Clock
    limiter: RateLimiter  # the REST door's rate limits
    broker: Any  # the Dramatiq broker behind the queue, when it is one: the worker door consumes it
    # The driven adapters under the application, for tests and tools that seed or inspect storage.
    uow: Callable[[], UnitOfWork]
    crawl: CrawlStore
    queue: TaskQueue
    secrets: Secrets
    sealing: Sealing  # the deployment's secret key: sealed values, derived secrets, signed cookies
    # The Prometheus metrics every part of this process counts in; None when SITEAUDIT_METRICS is off.
    metrics: "PrometheusMetrics | None" = None
    devices: DeviceCancel | None = None  # the device's own cancel of its login (the application does it)

    def service(self) -> Any:
        """The whole WSGI service: the app's pages under `/app`, and `/v1` (with `/metrics`)."""
        from siteaudit.adapters.rest.billing import TEST_CHECKOUT_PATH
        from siteaudit.adapters.web import create_web_app, mount

        web = create_web_app(
            self.application,
            clock=self.clock,
            limiter=self.limiter,
            sealing=self.sealing,
            secrets=self.secrets,
            trusted_proxies=self.settings.trusted_proxies,
            secure_cookies=self.settings.secure_cookies,
            public_url=self.settings.base_url,
        )
        # The local test purchase page is billing's (REST adapter), though it lives under /app.
        test_checkout = TEST_CHECKOUT_PATH.split("{", 1)[0]
        return mount(web, self.rest_api(), rest_prefixes=(test_checkout,))

    def rest_api(self) -> Any:
        """The Falcon WSGI application of `/v1` (and `/metrics` unless metrics are off)."""
        from siteaudit.adapters.rest import create_api
        from siteaudit.adapters.web.guard import CookieNames

        api = create_api(
            self.application,
            clock=self.clock,
            limiter=self.limiter,
            trusted_proxies=self.settings.trusted_proxies,
            metrics=self.metrics,
            # The local test checkout page is for the person signed in to the app who asked for it.
            app_session_cookie=CookieNames(self.settings.secure_cookies).session,
            devices=self.devices,
        )
        # The agent tool server: streamable HTTP at /mcp (the MCP SDK is a dependency; docs/agents.md).
        if self.settings.mcp_http:
            from siteaudit.adapters.mcp.http import mount_mcp

            settings = self.settings
            mount_mcp(
                api,
                self.application,
                clock=self.clock,
                limiter=self.limiter,
                trusted_proxies=settings.trusted_proxies,
                allowed_origins=(settings.base_url, *settings.mcp_allowed_origins),
            )
        return api


def _key_gate(limiter: RateLimiter) -> KeyGate | None:
    """With the SQL rate limiter on PostgreSQL, the REST door's key, membership and per-key count in one
    round trip on the limiter's database; otherwise none (the unit of work, then the limiter)."""
    sql_limits = sys.modules.get("siteaudit.adapters.sql.ratelimit")  # not loaded: not the SQL limiter
    if sql_limits is None or not isinstance(limiter, sql_limits.SqlRateLimiter):
        return None
    if limiter.engine.dialect.name != "postgresql":
        return None
    from siteaudit.adapters.sql.keygate import SqlKeyGate

    return SqlKeyGate(limiter.engine)


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
    from siteaudit.adapters.sql import sql_crawl_store, sql_unit_of_work_factory

    migrate_database(settings.database_url)
    factory = sql_unit_of_work_factory(settings.database_url, secret_key=secret_key)
    return factory, sql_crawl_store(settings.database_url)


def migrate_database(database_url: str) -> "Migrated":
    """Bring the database of SITEAUDIT_DATABASE_URL to the newest schema. Raises ValueError, in one line
    naming the setting, when the database cannot be reached or used (a setting that stops the start)."""
    from sqlalchemy.exc import SQLAlchemyError

    from siteaudit.adapters.sql import migrate

    try:
        return migrate(database_url)
    except SQLAlchemyError as error:
        reason = " ".join(str(getattr(error, "orig", None) or error).split())
        raise ValueError(f"SITEAUDIT_DATABASE_URL: cannot use the database: {reason}") from None


def _crawl_limits(settings: Settings) -> CrawlLimits:
    """The service's crawl terms (the settings named alike, and two named otherwise); each slice fills in
    its audit's own limits."""
    return copy_named(
        CrawlLimits,
        settings,
        time_cap_s=settings.crawl_time_cap_s,
        check_external=settings.check_external_links,
        unpaced_hosts=frozenset(settings.unpaced_hosts),
    )


def _mailer(settings: Settings) -> Mailer:
    """SMTP when SITEAUDIT_SMTP_URL or SITEAUDIT_SMTP_HOST is set; otherwise mails are only logged."""
    from siteaudit.adapters.mail import LogMailer, SmtpMailer, SmtpServer

    if settings.smtp_url:
        return SmtpMailer(SmtpServer.from_url(settings.smtp_url, sender=settings.smtp_from))
    if settings.smtp_host:
        return SmtpMailer(
            SmtpServer(
                host=settings.smtp_host,
                port=settings.smtp_port,
                user=settings.smtp_user,
                password=settings.smtp_password,
                sender=settings.smtp_from,
                starttls=settings.smtp_starttls,
            )
        )
    return LogMailer()


def _console_providers(settings: Settings) -> "ConsoleProviders":
    """Google (OAuth grants, the service account) and the demo provider; URLs from SITEAUDIT_GSC_*."""
    from siteaudit.adapters.console.google import GoogleEndpoints
    from siteaudit.adapters.console.providers import ConsoleClients

    return ConsoleClients(
        GoogleEndpoints(
            api=settings.gsc_api_url,
            inspect=settings.gsc_inspect_url,
            token=settings.gsc_token_url,
            revoke=settings.gsc_revoke_url,
        ),
        client_id=settings.gsc_client_id,
        client_secret=settings.gsc_client_secret,
        service_account_file=settings.gsc_service_account_file,
        row_limit=settings.gsc_row_limit,
    )


def _fetcher_factory(resolver: HostResolver, policy: AddressPolicy) -> Callable[[int], Fetcher]:
    def fetcher(connections: int) -> Fetcher:
        """One small connection pool per audit (a shared pool at concurrency 20 is several times slower)."""
        from siteaudit.adapters.http.fetcher import FetchLimits, HttpxFetcher

        return HttpxFetcher(
            resolver, policy, limits=FetchLimits(max_connections=connections), user_agent=USER_AGENT
        )

    return fetcher


def _payments(settings: Settings, secrets: Secrets) -> "PaymentProvider | None":
    """SITEAUDIT_PAYMENT_PROVIDER: Stripe, the local test provider, or none (nothing is sold)."""
    chosen = settings.payments
    if chosen == "stripe":
        from siteaudit.adapters.payment.stripe import PriceTable, StripePayments

        return StripePayments(
            secret_key=settings.stripe_secret_key,
            webhook_secret=settings.stripe_webhook_secret,
            prices=PriceTable.parse(settings.stripe_prices),
            api_base=settings.stripe_api_base,
        )
    if chosen == "local":
        from siteaudit.adapters.payment.local import LocalPayments

        return LocalPayments(settings.base_url, secrets)
    if chosen == "none":
        return None
    raise ValueError(f"SITEAUDIT_PAYMENT_PROVIDER is {chosen!r}: use local, stripe or none")


def _renderer(settings: Settings) -> Renderer | None:
    """The process's browser pool (docs/rendering.md), started on the first page an audit renders; None
    when the browser executable is missing (audits asking for rendering then report it on each page)."""
    if not os.path.exists(settings.chromium):
        return None
    from siteaudit.adapters.render.playwright import PlaywrightRenderer

    return PlaywrightRenderer(
        executable=settings.chromium,
        max_tabs=max(1, settings.render_tabs),
        pages_per_browser=max(1, settings.render_pages_per_browser),
        max_browser_mb=max(1, settings.render_max_browser_mb),
        sandbox=settings.chromium_sandbox,
    )


def warn_if_networks_allowed(settings: Settings) -> None:
    """The warning the long-running processes (serve, worker, the WSGI app) log once at start when the
    SSRF guard lets private networks through; one-off commands (admin, migrate) stay quiet."""
    if settings.allow_networks:
        log.warning(
            "SITEAUDIT_ALLOW_NETWORKS is set (%s): outbound requests may reach these private networks "
            "(for tests and local development only)",
            ", ".join(settings.allow_networks),
        )


def bootstrap(settings: Settings | None = None, **overrides: Any) -> App:
    """Build the application. `overrides` replace any part by name: clock, secrets, uow, crawl, queue,
    broker, limiter, resolver, policy, parser, webhook_sender, proof_reader, mailer, indexnow_client,
    console_providers, hasher, renderer, key_gate (by default the one-statement gate when the limiter is the SQL one
    on PostgreSQL, else None). The database is migrated to the newest schema."""
    settings = settings or Settings.from_env()
    from siteaudit.adapters.http.guard import trust_authorities
    from siteaudit.adapters.secretbox import SecretBox

    trust_authorities(settings.ca_bundle)  # read once, refused at startup when unreadable
    secret_key = _secret_key(settings)
    sealing = SecretBox(secret_key)
    if "clock" not in overrides:
        from siteaudit.adapters.system import SystemClock

        overrides["clock"] = SystemClock()
    if "secrets" not in overrides:
        from siteaudit.adapters.system import SystemSecrets

        overrides["secrets"] = SystemSecrets()
    if "uow" not in overrides or "crawl" not in overrides:
        uow, crawl = _storage(settings, secret_key)
        overrides.setdefault("uow", uow)
        overrides.setdefault("crawl", crawl)
    if "queue" not in overrides:
        from siteaudit.adapters.queue.dramatiq import DramatiqTaskQueue, build_broker

        overrides.setdefault("broker", build_broker(settings.broker_url, queue_prefix=settings.queue_prefix))
        overrides["queue"] = DramatiqTaskQueue(overrides["broker"], seal=sealing.seal)
    if "limiter" not in overrides:
        if settings.database_url.startswith("postgresql"):
            # Every gunicorn worker and machine shares the limits through the database.
            from siteaudit.adapters.sql import engine_for
            from siteaudit.adapters.sql.ratelimit import SqlRateLimiter

            overrides["limiter"] = SqlRateLimiter(engine_for(settings.database_url))
        else:
            from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter

            overrides["limiter"] = MemoryRateLimiter()
    if "key_gate" not in overrides:
        overrides["key_gate"] = _key_gate(overrides["limiter"])
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
    if "proof_reader" not in overrides:
        from siteaudit.adapters.http.fetcher import HttpxBlockingFetcher
        from siteaudit.adapters.proofs import GuardedProofReader

        overrides["proof_reader"] = GuardedProofReader(
            HttpxBlockingFetcher(overrides["resolver"], overrides["policy"], user_agent=USER_AGENT),
            settings.dns_nameservers,
        )
    if "mailer" not in overrides:
        overrides["mailer"] = _mailer(settings)
    if "payments" not in overrides:
        overrides["payments"] = _payments(settings, overrides["secrets"])
    if "indexnow_client" not in overrides:  # IndexNow (docs/rest-api.md "IndexNow")
        from siteaudit.adapters.http.indexnow import HttpxIndexNowClient

        overrides["indexnow_client"] = HttpxIndexNowClient(
            settings.indexnow_endpoint, timeout_s=settings.indexnow_timeout_s
        )
    if "console_providers" not in overrides:
        overrides["console_providers"] = _console_providers(settings)
    if "hasher" not in overrides:
        from siteaudit.adapters.password import Argon2Hasher

        overrides["hasher"] = Argon2Hasher()
    o = overrides
    metrics = None
    if settings.metrics:
        from siteaudit.adapters.metrics import PrometheusMetrics

        metrics = PrometheusMetrics()
    application = LocalApplication(
        uow=o["uow"],
        crawl=o["crawl"],
        clock=o["clock"],
        secrets=o["secrets"],
        sealing=sealing,
        queue=o["queue"],
        resolver=o["resolver"],
        policy=o["policy"],
        parser=o["parser"],
        fetcher_factory=_fetcher_factory(o["resolver"], o["policy"]),
        webhook_sender=o["webhook_sender"],
        proof_reader=o["proof_reader"],
        crawl_limits=_crawl_limits(settings),
        reaping=settings.reaping,
        scheduling=settings.scheduling,
        mailer=o["mailer"],
        public_url=settings.base_url,
        archiving=ArchivePolicy(settings.archive_after_days, settings.archive_keep_last),
        advice=AllowListAdvice(
            user_agent=USER_AGENT,
            token_header=VERIFY_HEADER,
            docs_url=f"{settings.base_url}/v1/openapi.json",
        ),
        metrics=NO_METRICS if metrics is None else metrics,
        payments=o["payments"],
        indexnow_client=o["indexnow_client"],
        indexnow_batch_urls=max(1, min(settings.indexnow_batch_urls, 10_000)),
        # Every audit's requests to a host share its rate, through the REST door's limiter
        host_limiter=o["limiter"],
        host_limits=settings.host_limits_terms,
        renderer=o["renderer"] if "renderer" in o else _renderer(settings),
        render_budget=settings.render_budget,
        render_third_party=settings.render_third_party,
        console_providers=o["console_providers"],
        console_terms=settings.console,
        hasher=o["hasher"],
        sign_in_terms=settings.sign_in_terms,
        # --- fix tasks and rechecks ---
        limiter=o["limiter"],
        recheck_terms=RecheckTerms(
            time_cap_s=settings.recheck_time_cap_s,
            concurrency=settings.recheck_concurrency,
            max_targets=settings.recheck_max_targets,
            lease_s=settings.lease_s,
        ),
        # --- fix impact: tasks, rechecks and fix-impact events read the stored console figures ---
        traffic=o["traffic"] if "traffic" in o else ConsoleTraffic(o["uow"]),
        key_gate=o["key_gate"],
    )
    if metrics is not None:
        from siteaudit.adapters.metrics import AuditsByStatus, QueueDepth, queue_depths

        broker = o.get("broker")
        metrics.read_at_scrape(AuditsByStatus(application.audits_by_status))
        metrics.read_at_scrape(QueueDepth(lambda: queue_depths(broker)))
    return App(
        settings=settings,
        application=application,
        clock=o["clock"],
        limiter=o["limiter"],
        broker=o.get("broker"),
        uow=o["uow"],
        crawl=o["crawl"],
        queue=o["queue"],
        secrets=o["secrets"],
        sealing=sealing,
        metrics=metrics,
        devices=application,
    )
