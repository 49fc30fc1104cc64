"""The ports and terms the application runs over, given once by `siteaudit.bootstrap`, and what its roles
share: the declared use cases' handlers bound to them, the crawl's, the console's and the event bus's
dependencies."""

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, TypeVar

from attrs import Factory, field, frozen

from siteaudit.domain.console import ConsoleTerms
from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.hostlimit import HostLimits
from siteaudit.domain.lease import ReapTerms
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.render import RenderBudget
from siteaudit.domain.report import AllowListAdvice
from siteaudit.domain.signin import SignInTerms
from siteaudit.domain.site import ProofCheck, SchedulerTerms, Site
from siteaudit.ports.application import ArchivePolicy
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.indexnow import IndexNowClient
from siteaudit.ports.keys import KeyGate
from siteaudit.ports.mailer import Mailer
from siteaudit.ports.metrics import NO_METRICS, Metrics
from siteaudit.ports.network import Fetcher, HostResolver
from siteaudit.ports.parse import PageParser
from siteaudit.ports.payment import PaymentProvider
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.ratelimit import RateLimiter
from siteaudit.ports.render import Renderer
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing
from siteaudit.ports.searchconsole import ConsoleProviders, NoConsoleProviders
from siteaudit.ports.signin import PasswordHasher
from siteaudit.ports.site import ProofReader
from siteaudit.ports.traffic import NO_TRAFFIC, TrafficSource
from siteaudit.ports.webhook import WebhookSender
from siteaudit.services import crawl as crawl_services
from siteaudit.services import inject
from siteaudit.services.console import source as console_services
from siteaudit.services.events import MessageBus
from siteaudit.services.key import CliKeys
from siteaudit.services.registry import Handlers
from siteaudit.services.signin import OneTimeLinks
from siteaudit.services.tasks.recheck_run import RecheckTerms

T = TypeVar("T")


@frozen(kw_only=True)
class LocalPorts:
    """The driven ports and the settings' terms of `LocalApplication`; each role's module adds its methods."""

    uow: Callable[[], UnitOfWork]
    crawl: CrawlStore
    clock: Clock
    secrets: Secrets
    sealing: Sealing = field(repr=False)
    queue: TaskQueue
    resolver: HostResolver
    policy: AddressPolicy
    parser: PageParser
    fetcher_factory: Callable[[int], Fetcher]  # one small connection pool per audit slice
    webhook_sender: WebhookSender
    proof_reader: ProofReader
    # What the settings decide, as the domain's values.
    crawl_limits: CrawlLimits
    reaping: ReapTerms
    archiving: ArchivePolicy
    advice: AllowListAdvice
    metrics: Metrics = NO_METRICS
    scheduling: SchedulerTerms = field(factory=SchedulerTerms)
    mailer: Mailer | None = None  # alert mails; None: none are sent
    public_url: str = "http://127.0.0.1:8080"  # links in mails
    payments: PaymentProvider | None = None  # billing (docs/billing.md); None: nothing is sold
    indexnow_client: IndexNowClient | None = None  # IndexNow submissions; None: none are sent
    indexnow_batch_urls: int = 10_000  # URLs per request to the IndexNow endpoint
    # --- the per-target-host request limit shared by every audit and worker process (SITEAUDIT_HOST_RPS) ---
    host_limiter: RateLimiter | None = None  # None: each audit paces only itself
    host_limits: HostLimits = field(factory=HostLimits)
    # JavaScript rendering (docs/rendering.md): this process's browser pool; None: no browser here.
    renderer: Renderer | None = None
    render_budget: RenderBudget = field(factory=RenderBudget)
    render_third_party: bool = False
    # The search-console integration: which providers exist and the terms settings decide.
    console_providers: ConsoleProviders = field(factory=NoConsoleProviders)
    console_terms: ConsoleTerms = field(factory=ConsoleTerms)
    # The app (docs/app.md): passwords, and how long sessions and links live.
    hasher: PasswordHasher | None = None
    sign_in_terms: SignInTerms = field(factory=SignInTerms)
    # --- fix tasks and rechecks ---
    limiter: RateLimiter | None = None  # the recheck rate limit (30 an hour per team); None: memory
    traffic: TrafficSource = NO_TRAFFIC  # search-console figures per URL (the console store plugs in here)
    recheck_terms: RecheckTerms = field(factory=RecheckTerms)
    # The REST hot path: a request's key, membership and rate-limit hit in one round trip (PostgreSQL);
    # None: `authenticate` then `limiter.hit`.
    key_gate: KeyGate | None = None
    # The event bus over the ports above, its handlers' dependencies injected once (`_event_bus`).
    _events: MessageBus = field(
        init=False, repr=False, eq=False, default=Factory(lambda self: self._event_bus(), takes_self=True)
    )

    @cached_property
    def providers(self) -> Mapping[str, Callable[[], Any]]:
        """Each port and term a use case asks for by name, as a provider called at each use (`uow` a fresh
        unit of work, `uows` their factory; the registry's names, docs/architecture.md "Feature packages and
        declared use cases"): what the declared use cases' handlers are bound to and what `_call` gives."""
        return {
            "uow": self.uow,
            "clock": lambda: self.clock,
            "metrics": lambda: self.metrics,
            "crawl": lambda: self.crawl,
            "queue": lambda: self.queue,
            "limiter": self._limiter,
            "traffic": lambda: self.traffic,
            "secrets": lambda: self.secrets,
            "sealing": lambda: self.sealing,
            "reader": lambda: self.proof_reader,
            "indexnow_client": lambda: self.indexnow_client,
            "indexnow_batch_urls": lambda: self.indexnow_batch_urls,
            "console": lambda: self.console_deps,
            "uows": lambda: self.uow,
            "payments": lambda: self.payments,
            "public_url": lambda: self.public_url,
            "public_only": lambda: (self.resolver, self.policy),
            "parser": lambda: self.parser,
            "console_proof": lambda: self._console_proof,
            "console_connection": lambda: self._console_connection,
            "hasher": lambda: self._hasher,
            "mailer": lambda: self._mailer,
            "sign_in_terms": lambda: self.sign_in_terms,
            "links": lambda: OneTimeLinks(self.clock, self.secrets, self.sign_in_terms, self.public_url),
            "cli_keys": lambda: CliKeys(self.clock, self.secrets),
        }

    @cached_property
    def handlers(self) -> Handlers:
        """The declared use cases' handlers, bound once to this application's ports (`services/registry.py`);
        not a field, so the application is built from its ports alone."""
        return Handlers.of(self.providers)

    def _call(self, service: Callable[..., T], /, *args: Any, **given: Any) -> T:
        """`service(*args, **given)` with each keyword-only parameter `given` lacks filled from `providers`
        (`services/inject.py`, as the registry binds a declared use case's handler): a use case not declared
        yet states its ports once, in its signature, not again in each method here. A port a service names
        otherwise (`provider` for `payments`) and a term (`terms`) are given."""
        return inject.call(service, self.providers, *args, **given)

    def _limiter(self) -> RateLimiter:
        assert self.limiter is not None, "bootstrap gives the application its rate limiter"
        return self.limiter

    @property
    def crawl_deps(self) -> crawl_services.CrawlDeps:
        return crawl_services.CrawlDeps(
            uow=self.uow,
            crawl=self.crawl,
            fetcher_factory=self.fetcher_factory,
            parser=self.parser,
            clock=self.clock,
            queue=self.queue,
            limits=self.crawl_limits,
            metrics=self.metrics,
            host_limiter=self.host_limiter,
            host_limits=self.host_limits,
            renderer=self.renderer,
            render_budget=self.render_budget,
            render_third_party=self.render_third_party,
        )

    @property
    def console_deps(self) -> console_services.ConsoleDeps:
        return self._call(
            console_services.ConsoleDeps, providers=self.console_providers, terms=self.console_terms
        )

    def _console_proof(self, site: Site) -> ProofCheck:
        return console_services.console_proof(site, self.console_deps)

    def _console_connection(self, site: Site) -> tuple[bool, str | None]:
        return console_services.console_connection_view(site, self.console_deps)

    def _event_bus(self) -> MessageBus:
        """The event bus over this application's providers (`services/events.py`): a port it lacks (no
        mailer, no IndexNow client) leaves out the handlers that need it."""
        lacking = {
            name
            for name, port in (("mailer", self.mailer), ("indexnow_client", self.indexnow_client))
            if port is None
        }
        return MessageBus({name: make for name, make in self.providers.items() if name not in lacking})

    @property
    def _hasher(self) -> PasswordHasher:
        if self.hasher is None:
            raise RuntimeError("this application was built without a password hasher")
        return self.hasher

    @property
    def _mailer(self) -> Mailer:
        if self.mailer is None:
            raise RuntimeError("this application was built without a mailer")
        return self.mailer
