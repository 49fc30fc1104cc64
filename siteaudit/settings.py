"""Settings, read once from SITEAUDIT_* environment variables (each documented in docs/configuration.md)."""

import logging
import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path

from attrs import field, frozen

from siteaudit.domain.console import ConsoleTerms
from siteaudit.domain.crawl import (
    HANDOVER_S,
    LEASE_S,
    MAX_EXTERNAL_CHECKS,
    SLICE_PAGES,
    SLICE_SECONDS,
    TIME_CAP_S,
)
from siteaudit.domain.hostlimit import DEFAULT_HOST_BURST, DEFAULT_HOST_RPS, HostLimits, parse_host_limits
from siteaudit.domain.lease import ReapTerms
from siteaudit.domain.render import RenderBudget
from siteaudit.domain.signin import SignInTerms
from siteaudit.domain.site import SchedulerTerms


def _default_database_url() -> str:
    from platformdirs import user_data_dir

    return f"sqlite:///{Path(user_data_dir('siteaudit')) / 'siteaudit.sqlite3'}"


def _cidrs(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.replace(";", ",").split(",") if part.strip())


def _log_level(value: str) -> str:
    if value.upper() not in logging.getLevelNamesMapping():
        raise ValueError("use debug, info, warning, error or critical")
    return value


def _on(value: str) -> bool:
    return value.lower() in ("1", "true", "yes", "on")


@frozen
class Settings:
    database_url: str = field(factory=_default_database_url)
    broker_url: str = ""  # empty: the in-process queue of the embedded default
    host: str = "127.0.0.1"
    port: int = 8080
    public_url: str = ""  # how users reach the service (device login links); default http://host:port
    secret_key: str = ""  # encrypts webhook secrets at rest; generated and kept beside SQLite when empty
    allow_networks: tuple[str, ...] = ()  # CIDRs the SSRF guard lets through (tests, local development)
    ca_bundle: str = ""  # PEM file of certificate authorities trusted besides the default ones
    starting_credits: int = 10_000  # credits of the local owner created on first start
    local_owner_plan: str = "scale"
    log_level: str = "info"
    log_json: bool = False
    trusted_proxies: tuple[str, ...] = ()
    crawl_time_cap_s: float = TIME_CAP_S  # an audit stops (partial) after this long
    slice_pages: int = SLICE_PAGES  # pages per crawl slice before handing over to the next message
    slice_seconds: float = SLICE_SECONDS  # seconds per crawl slice
    worker_threads: int = 4  # threads of the in-process worker (`serve`) or of `siteaudit worker`
    worker_slices: int = 64  # crawl slices one process carries at once (its slice loop); at least 1
    lease_s: float = LEASE_S  # a crawl slice not heard from for this long has stalled
    handover_s: float = HANDOVER_S  # a handed-over audit not picked up for this long has stalled
    reap_grace_s: float = 60.0  # extra time before the reaper steps in
    reap_max_attempts: int = 3  # re-dispatches of stalled work before the audit fails `reaped: ...`
    reap_queued_s: float = 1800.0  # a queued audit nobody claimed for this long is dispatched again
    reap_every_s: float = 30.0  # how often each worker process runs the reaper
    queue_prefix: str = ""  # prefix of the RabbitMQ queue names (several deployments on one broker)
    archive_after_days: int | None = None  # archive issue and page rows of audits ended this long ago
    archive_keep_last: int | None = (
        None  # ...or of all but the last N ended audits per site (both: both apply)
    )
    check_external_links: bool = False  # also fetch (bounded) external link targets for broken_external_link
    max_external_checks: int = MAX_EXTERNAL_CHECKS  # external targets checked per audit when enabled
    # Registered sites: DNS servers asked for the dns ownership proof (`address` or `address:port`,
    # comma-separated); empty: the system's resolvers.
    dns_nameservers: tuple[str, ...] = ()
    metrics: bool = True  # GET /metrics (Prometheus) and the counters behind it
    # The monitoring scheduler: a verified site whose proof is gone stays verified this many days.
    proof_grace_days: int = 7
    scheduler_every_s: float = 60.0  # how often a scheduler looks for due audits and proofs to re-check
    # Alert mail: SMTP_URL (smtp://user:password@host:587, smtps://... for implicit TLS), or the parts
    # below; neither: mails are only logged.
    smtp_url: str = field(default="", repr=False)
    smtp_host: str = ""
    smtp_port: int = 587
    smtp_user: str = ""
    smtp_password: str = field(default="", repr=False)
    smtp_from: str = "siteaudit@localhost"
    smtp_starttls: bool = True
    # Billing (docs/rest-api.md "Billing"): `local` (test purchases, nothing charged), `stripe` or `none`;
    # empty: local on SQLite (the embedded default), none on PostgreSQL, so a production service never sells
    # for free.
    payment_provider: str = ""
    stripe_secret_key: str = field(default="", repr=False)
    stripe_webhook_secret: str = field(default="", repr=False)
    stripe_prices: str = ""  # plan:tier:interval=price_id entries (docs/operations.md)
    stripe_api_base: str = ""  # empty: Stripe's own; a local stand-in (stripe-mock, tests) otherwise

    @property
    def payments(self) -> str:
        """The payment provider in use: the setting, or its default for the database."""
        chosen = self.payment_provider.strip().lower()
        if chosen:
            return chosen
        return "none" if self.database_url.startswith("postgresql") else "local"

    # The agent tool server: streamable HTTP at /mcp (the MCP SDK is a dependency), and
    # the browser origins allowed to call it besides the service's own (SITEAUDIT_PUBLIC_URL's).
    mcp_http: bool = True
    mcp_allowed_origins: tuple[str, ...] = ()
    # IndexNow (docs/rest-api.md "IndexNow"): where submissions are POSTed (the shared endpoint passes them on
    # to every engine that takes part), and how long one request may take.
    indexnow_endpoint: str = "https://api.indexnow.org/indexnow"
    indexnow_timeout_s: float = 30.0
    indexnow_batch_urls: int = 10_000  # URLs per request to the endpoint (the protocol allows 10,000)
    # --- requests per second per target host, shared by every audit and worker process ---
    host_rps: float = DEFAULT_HOST_RPS
    host_burst: int = DEFAULT_HOST_BURST  # requests a quiet host may get back to back
    host_limits: tuple[tuple[str, float], ...] = ()  # the operator's rates for chosen hosts
    # Hosts whose audits skip their own pacing (max_rps, Crawl-delay): the operator's own sites, load
    # tests, benchmarks. The host limit above still caps them (give them a rate in host_limits).
    unpaced_hosts: tuple[str, ...] = ()
    # --- JavaScript rendering, opt-in per audit or site (docs/rendering.md) ---
    chromium: str = "/usr/bin/chromium"  # the browser executable; never downloaded
    render_timeout_s: float = 15.0  # per page: wall time in the browser
    render_max_requests: int = 200  # per page: requests, the page itself included
    render_max_bytes: int = 20 * 1024 * 1024  # per page: body bytes handed to the browser
    render_tabs: int = 4  # pages one process renders at once
    render_pages_per_browser: int = 500  # the browser is replaced after this many pages
    render_max_browser_mb: int = 2048  # ...or once its processes hold more memory than this
    render_sandbox: str = "auto"  # Chromium's sandbox: "auto" on unless the process runs as root

    @property
    def chromium_sandbox(self) -> bool:
        if self.render_sandbox.strip().lower() == "auto":
            return os.geteuid() != 0
        return _on(self.render_sandbox)

    render_third_party: bool = False  # a rendered page's requests to other hosts than the audited one

    @property
    def render_budget(self) -> RenderBudget:
        return RenderBudget(
            time_s=self.render_timeout_s,
            max_bytes=self.render_max_bytes,
            max_requests=self.render_max_requests,
        )

    @property
    def host_limits_terms(self) -> HostLimits:
        return HostLimits(self.host_rps, self.host_burst, self.host_limits)

    # --- the search-console integration ---
    # Demo console data for verified sites of teams without a connection. None: on in the embedded
    # default (SQLite or memory, no broker), off in production (PostgreSQL or a broker).
    console_demo: bool | None = None
    console_sync_inspections: int = 50  # URLs the daily sync inspects per site, within the budget
    gsc_service_account_file: str = ""  # a Google service-account key (JSON); empty: none
    gsc_service_account_teams: tuple[str, ...] = ()  # team names it serves; "*": every team
    gsc_client_id: str = ""  # OAuth client of the per-team connections
    gsc_client_secret: str = field(default="", repr=False)
    gsc_api_url: str = "https://www.googleapis.com/webmasters/v3"
    gsc_inspect_url: str = "https://searchconsole.googleapis.com/v1"
    gsc_token_url: str = "https://oauth2.googleapis.com/token"
    gsc_revoke_url: str = "https://oauth2.googleapis.com/revoke"
    gsc_row_limit: int = 25_000  # search-analytics rows per page (the API's maximum)
    # --- the app at /app (docs/app.md) ---
    app_sign_up: str = "invite"  # "open": anyone may sign up; "invite": people come in by a team's invitation
    app_session_idle_minutes: int = 120  # a session unused this long ends
    app_session_max_hours: int = 168  # ...and every session ends this long after sign-in
    app_reauth_minutes: int = 5  # showing a secret or making a key asks for the password after this long
    cookie_secure: str = "auto"  # "auto": Secure (and __Host-) cookies when SITEAUDIT_PUBLIC_URL is https

    @property
    def sign_in_terms(self) -> SignInTerms:
        return SignInTerms(
            open_sign_up=self.app_sign_up.strip().lower() == "open",
            idle=timedelta(minutes=self.app_session_idle_minutes),
            lifetime=timedelta(hours=self.app_session_max_hours),
            reauth=timedelta(minutes=self.app_reauth_minutes),
        )

    @property
    def secure_cookies(self) -> bool:
        if self.cookie_secure.strip().lower() == "auto":
            return self.base_url.startswith("https://")
        return _on(self.cookie_secure)

    # Rechecks (docs/rest-api.md "Fix tasks and rechecks"): a recheck ends `time_capped` after this long; URLs
    # fetched at once; link targets fetched per page to judge page-and-targets checks (not charged).
    recheck_time_cap_s: float = 300.0
    recheck_concurrency: int = 4
    recheck_max_targets: int = 100

    @property
    def base_url(self) -> str:
        return self.public_url.rstrip("/") or f"http://{self.host}:{self.port}"

    @property
    def reaping(self) -> ReapTerms:
        return ReapTerms(
            grace_s=self.reap_grace_s,
            max_attempts=self.reap_max_attempts,
            queued_s=self.reap_queued_s,
            every_s=self.reap_every_s,
        )

    @property
    def scheduling(self) -> SchedulerTerms:
        return SchedulerTerms(
            proof_grace=timedelta(days=self.proof_grace_days), every_s=self.scheduler_every_s
        )

    @property
    def embedded_default(self) -> bool:
        """The one-process default: a SQLite file (or memory) and no broker."""
        return not self.broker_url and not self.database_url.startswith("postgresql")

    @property
    def console(self) -> ConsoleTerms:
        demo = self.embedded_default if self.console_demo is None else self.console_demo
        return ConsoleTerms(
            demo=demo,
            service_account_teams=self.gsc_service_account_teams,
            sync_inspections=self.console_sync_inspections,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        """The settings of the environment. Raises ValueError naming the variable whose value cannot be read
        (a setting that stops the start: docs/cli.md "Settings that stop the start")."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(f"SITEAUDIT_{name}")
            return value if value not in (None, "") else None

        values: dict[str, object] = {}
        for name, convert in (
            ("DATABASE_URL", str),
            ("BROKER_URL", str),
            ("HOST", str),
            ("PORT", int),
            ("PUBLIC_URL", str),
            ("SECRET_KEY", str),
            ("ALLOW_NETWORKS", _cidrs),
            ("CA_BUNDLE", str),
            ("STARTING_CREDITS", int),
            ("LOCAL_OWNER_PLAN", str),
            ("LOG_LEVEL", _log_level),
            ("LOG_JSON", _on),
            ("TRUSTED_PROXIES", _cidrs),
            ("CRAWL_TIME_CAP_S", float),
            ("SLICE_PAGES", int),
            ("SLICE_SECONDS", float),
            ("WORKER_THREADS", int),
            ("WORKER_SLICES", int),
            ("LEASE_S", float),
            ("HANDOVER_S", float),
            ("REAP_GRACE_S", float),
            ("REAP_MAX_ATTEMPTS", int),
            ("REAP_QUEUED_S", float),
            ("REAP_EVERY_S", float),
            ("QUEUE_PREFIX", str),
            ("ARCHIVE_AFTER_DAYS", int),
            ("ARCHIVE_KEEP_LAST", int),
            ("CHECK_EXTERNAL_LINKS", _on),
            ("MAX_EXTERNAL_CHECKS", int),
            ("DNS_NAMESERVERS", lambda v: tuple(n.strip() for n in v.split(",") if n.strip())),
            ("METRICS", _on),
            ("PROOF_GRACE_DAYS", int),
            ("SCHEDULER_EVERY_S", float),
            ("SMTP_URL", str),
            ("SMTP_HOST", str),
            ("SMTP_PORT", int),
            ("SMTP_USER", str),
            ("SMTP_PASSWORD", str),
            ("SMTP_FROM", str),
            ("SMTP_STARTTLS", lambda v: v.lower() in ("1", "true", "yes", "on")),
            ("PAYMENT_PROVIDER", str),
            ("STRIPE_SECRET_KEY", str),
            ("STRIPE_WEBHOOK_SECRET", str),
            ("STRIPE_PRICES", str),
            ("STRIPE_API_BASE", str),
            # The agent tool server.
            ("MCP_HTTP", _on),
            ("MCP_ALLOWED_ORIGINS", lambda v: tuple(o.strip() for o in v.split(",") if o.strip())),
            ("INDEXNOW_ENDPOINT", str),
            ("INDEXNOW_TIMEOUT_S", float),
            ("INDEXNOW_BATCH_URLS", int),
            # the per-target-host limit
            ("HOST_RPS", float),
            ("HOST_BURST", int),
            ("HOST_LIMITS", parse_host_limits),
            (
                "UNPACED_HOSTS",
                lambda v: tuple(h.strip().rstrip(".").lower() for h in v.split(",") if h.strip()),
            ),
            ("CHROMIUM", str),
            ("RENDER_TIMEOUT_S", float),
            ("RENDER_MAX_REQUESTS", int),
            ("RENDER_MAX_BYTES", int),
            ("RENDER_TABS", int),
            ("RENDER_PAGES_PER_BROWSER", int),
            ("RENDER_MAX_BROWSER_MB", int),
            ("RENDER_SANDBOX", str),
            ("RENDER_THIRD_PARTY", _on),
            ("CONSOLE_DEMO", _on),
            ("CONSOLE_SYNC_INSPECTIONS", int),
            ("GSC_SERVICE_ACCOUNT_FILE", str),
            ("GSC_SERVICE_ACCOUNT_TEAMS", lambda v: tuple(n.strip() for n in v.split(",") if n.strip())),
            ("GSC_CLIENT_ID", str),
            ("GSC_CLIENT_SECRET", str),
            ("GSC_API_URL", lambda v: v.rstrip("/")),
            ("GSC_INSPECT_URL", lambda v: v.rstrip("/")),
            ("GSC_TOKEN_URL", str),
            ("GSC_REVOKE_URL", str),
            ("GSC_ROW_LIMIT", int),
            ("APP_SIGN_UP", str),
            ("APP_SESSION_IDLE_MINUTES", int),
            ("APP_SESSION_MAX_HOURS", int),
            ("APP_REAUTH_MINUTES", int),
            ("COOKIE_SECURE", str),
            ("RECHECK_TIME_CAP_S", float),
            ("RECHECK_CONCURRENCY", int),
            ("RECHECK_MAX_TARGETS", int),
        ):
            raw = get(name)
            if raw is not None:
                try:
                    values[name.lower()] = convert(raw)
                except ValueError as error:
                    raise ValueError(f"SITEAUDIT_{name}={raw!r} cannot be used: {error}") from None
        return cls(**values)  # type: ignore[arg-type]
