# Over 500 lines: one thin method per use case of the application interface, by design one call each.
"""The one implementation of the application interface: each use case bound to the driven ports.

Every method is one call into the use case that does the work (`services/<noun>.py`); what it needs
from the outside world arrives here once, from `siteaudit.bootstrap`.
"""

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date, datetime
from functools import cached_property

from attrs import Factory, field, frozen

from siteaudit.domain.account import Caller, Membership, Team, User
from siteaudit.domain.apikey import ApiKey
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.billing import Fulfilment, PlanChoice
from siteaudit.domain.console import ConsoleTerms, PageTotals
from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.device import DeviceLogin
from siteaudit.domain.hostlimit import HostLimits
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TeamId, UserId
from siteaudit.domain.lease import ReapTerms
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.render import RenderBudget
from siteaudit.domain.report import AllowListAdvice
from siteaudit.domain.signin import AppSession, SignInTerms
from siteaudit.domain.site import ProofCheck, SchedulerTerms, Site
from siteaudit.ports.application import (
    Admission,
    AppViewer,
    ArchivePolicy,
    AuditProgress,
    AuditQuery,
    BillingStatus,
    CrawlProgress,
    DeviceGranted,
    DeviceLoginStarted,
    ExportKind,
    ExportRow,
    Invitation,
    IssuedKey,
    KeyHolder,
    Listing,
    LocalCheckout,
    LocalCheckoutDone,
    MemberView,
    PersonView,
    ProofRechecks,
    Reaped,
    RecheckReaped,
    RecheckRun,
    ScheduledAudits,
    SignedIn,
    TeamView,
)
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
from siteaudit.ports.ratelimit import Limit, RateLimiter
from siteaudit.ports.render import Renderer
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.sealing import Sealing
from siteaudit.ports.searchconsole import ConsoleProviders, NoConsoleProviders
from siteaudit.ports.signin import PasswordHasher
from siteaudit.ports.site import ProofReader
from siteaudit.ports.traffic import NO_TRAFFIC, TrafficSource
from siteaudit.ports.usecases import Declared, Result, UseCase
from siteaudit.ports.webhook import WebhookSender
from siteaudit.services import account as account_services
from siteaudit.services import archive as archive_services
from siteaudit.services import audit as audit_services
from siteaudit.services import crawl as crawl_services
from siteaudit.services import finalize as finalize_services
from siteaudit.services import key as key_services
from siteaudit.services import reaper as reaper_services
from siteaudit.services import report as report_services
from siteaudit.services import schedule as schedule_services
from siteaudit.services import signin as signin_services
from siteaudit.services import site as site_services
from siteaudit.services import team as team_services
from siteaudit.services import webhook as webhook_services
from siteaudit.services.access.sending import access_for_audit
from siteaudit.services.billing import billing as billing_services
from siteaudit.services.console import read as console_read
from siteaudit.services.console import source as console_services
from siteaudit.services.device import approval as device_approval
from siteaudit.services.device import flow as device_flow
from siteaudit.services.events import MessageBus
from siteaudit.services.impact import impact as impact_services
from siteaudit.services.registry import USE_CASES, Handlers
from siteaudit.services.tasks import recheck as recheck_services
from siteaudit.services.tasks import recheck_run as recheck_run_services
from siteaudit.services.tasks.recheck_run import RecheckTerms


@frozen(kw_only=True)
class LocalApplication:
    """`siteaudit.ports.application.Application` in this process, over the driven ports given."""

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
    def handlers(self) -> Handlers:
        """The declared use cases' handlers, bound once to this application's ports (`services/registry.py`);
        not a field, so the application is built from its ports alone."""
        return Handlers.of(
            {
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
            }
        )

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

    # --- callers ---------------------------------------------------------------------------------------

    def handle(self, use_case: UseCase[Result], caller: Caller) -> Result:
        return self.handlers.handle(use_case, caller)

    def use_cases(self) -> Sequence[Declared]:
        return USE_CASES

    def authenticate(self, raw_key: str) -> Caller:
        return key_services.authenticate(raw_key, uow=self.uow(), clock=self.clock)

    def authenticate_and_hit(self, raw_key: str, *, bucket: str, limit: Limit) -> Admission:
        assert self.limiter is not None, "bootstrap gives the application its rate limiter"
        return key_services.authenticate_and_hit(
            raw_key,
            bucket=bucket,
            limit=limit,
            uow=self.uow,
            clock=self.clock,
            gate=self.key_gate,
            limiter=self.limiter,
        )

    def list_audits(self, query: AuditQuery, caller: Caller) -> Listing[Audit]:
        audits, total = audit_services.list_audits(
            caller,
            site_id=query.site_id,
            offset=query.offset,
            limit=query.limit,
            statuses=query.statuses,
            uow=self.uow(),
        )
        return Listing(audits, total)

    def audit_progress(self, audit_id: AuditId, caller: Caller) -> AuditProgress:
        detail = audit_services.get_audit(audit_id, caller, uow=self.uow(), clock=self.clock)
        return report_services.audit_progress(detail, crawl=self.crawl)

    def export_rows(self, audit_id: AuditId, kind: ExportKind, caller: Caller) -> Iterator[ExportRow]:
        return report_services.export_rows(audit_id, kind, caller, uow=self.uow(), crawl=self.crawl)

    # --- work ------------------------------------------------------------------------------------------

    def run_crawl_slice(
        self,
        audit_id: AuditId,
        *,
        verify_token: str | None = None,
        sealed_verify_token: str | None = None,
    ) -> CrawlProgress:
        return asyncio.run(
            self.arun_crawl_slice(
                audit_id, verify_token=verify_token, sealed_verify_token=sealed_verify_token
            )
        )

    async def arun_crawl_slice(
        self,
        audit_id: AuditId,
        *,
        verify_token: str | None = None,
        sealed_verify_token: str | None = None,
    ) -> CrawlProgress:
        if sealed_verify_token is not None:
            verify_token = self.sealing.unseal(sealed_verify_token)
        secret = await asyncio.to_thread(
            site_services.crawler_secret, audit_id, uow=self.uow(), sealing=self.sealing
        )
        access = await asyncio.to_thread(access_for_audit, audit_id, uow=self.uow(), sealing=self.sealing)
        outcome = await crawl_services.arun_crawl_slice(
            audit_id, self.crawl_deps, verify_token=verify_token, crawler_secret=secret, access=access
        )
        return CrawlProgress(audit_id, outcome.pages_crawled, outcome.next)

    def finalize_audit(self, audit_id: AuditId) -> Audit:
        return finalize_services.finalize_audit(
            audit_id,
            uow=self.uow(),
            crawl=self.crawl,
            clock=self.clock,
            advice=self.advice,
            metrics=self.metrics,
            traffic=self.traffic,
            bus=self._events,
        )

    def _event_bus(self) -> MessageBus:
        """The event bus over this application's ports (`services/events.py`): a port it lacks (no mailer,
        no IndexNow client) leaves out the handlers that need it."""
        ports: dict[str, object] = {
            "crawl": self.crawl,
            "clock": self.clock,
            "metrics": self.metrics,
            "secrets": self.secrets,
            "public_url": self.public_url,
            "indexnow_batch_urls": self.indexnow_batch_urls,
        }
        if self.mailer is not None:
            ports["mailer"] = self.mailer
        if self.indexnow_client is not None:
            ports["indexnow_client"] = self.indexnow_client
        return MessageBus(ports)

    def deliver_webhooks(self, *, limit: int = 50) -> int:
        return webhook_services.deliver_due_webhooks(
            uow=self.uow(), sender=self.webhook_sender, clock=self.clock, limit=limit, metrics=self.metrics
        )

    def reap_stalled_audits(self) -> Reaped:
        return reaper_services.reap(
            uow=self.uow(),
            queue=self.queue,
            clock=self.clock,
            terms=self.reaping,
            handover_s=self.crawl_limits.handover_s,
            metrics=self.metrics,
        )

    # --- the monitoring scheduler ---------------------------------------------------------------------

    def dispatch_due_site_audits(self, now: datetime) -> ScheduledAudits:
        started, skipped = schedule_services.dispatch_due_site_audits(
            now,
            uow=self.uow,
            clock=self.clock,
            queue=self.queue,
            terms=self.scheduling,
            public_only=(self.resolver, self.policy),
        )
        return ScheduledAudits(tuple(started), skipped)

    def recheck_site_proofs(self, now: datetime) -> ProofRechecks:
        return ProofRechecks(
            *schedule_services.recheck_site_proofs(
                now,
                uow=self.uow,
                reader=self.proof_reader,
                terms=self.scheduling,
                console=self._console_proof,
            )
        )

    # --- registered sites for support -----------------------------------------------------------------

    def list_team_sites(self, team_name: str) -> Sequence[Site]:
        return site_services.list_team_sites(team_name, uow=self.uow())

    def verify_site_by_hand(self, site_id: SiteId, reason: str) -> Site:
        return site_services.verify_site_by_hand(site_id, reason=reason, uow=self.uow(), clock=self.clock)

    def archive_audits(self, policy: ArchivePolicy | None = None) -> Sequence[AuditId]:
        policy = policy or self.archiving
        if not policy.selects_anything:
            return []
        return archive_services.archive_audits(
            uow=self.uow(),
            crawl=self.crawl,
            clock=self.clock,
            older_than_days=policy.older_than_days,
            keep_last=policy.keep_last,
        )

    # --- operations ------------------------------------------------------------------------------------

    def audits_by_status(self) -> Mapping[AuditStatus, int]:
        return audit_services.audits_by_status(uow=self.uow())

    # --- administration --------------------------------------------------------------------------------

    def create_user(self, email: str, *, plan: str = "free") -> User:
        return account_services.create_user(
            email, plan=plan, uow=self.uow(), clock=self.clock, secrets=self.secrets
        )

    def create_team(self, name: str, *, owner_email: str) -> Team:
        return account_services.create_team(name, owner_email=owner_email, uow=self.uow(), clock=self.clock)

    def add_member(self, team_name: str, email: str) -> Membership:
        return account_services.add_member(team_name, email, uow=self.uow())

    def remove_member(self, team_name: str, email: str) -> None:
        account_services.remove_member(team_name, email, uow=self.uow())

    def set_plan(self, email: str, plan: str) -> User:
        return account_services.set_plan(email, plan, uow=self.uow())

    def grant_credits(self, email: str, tenths: int, *, idempotency_key: str) -> int:
        return account_services.grant_credits(
            email, tenths, key=idempotency_key, uow=self.uow(), clock=self.clock
        )

    def create_key(self, email: str, team_name: str) -> IssuedKey:
        return key_services.create_settings_key(
            email, team_name, uow=self.uow(), clock=self.clock, secrets=self.secrets
        )

    def rotate_key(self, email: str, team_name: str) -> IssuedKey:
        return key_services.rotate_settings_key(
            email, team_name, uow=self.uow(), clock=self.clock, secrets=self.secrets
        )

    def revoke_key(self, email: str, prefix: str) -> ApiKey:
        return key_services.revoke_key(email, prefix, uow=self.uow(), clock=self.clock)

    def list_keys(self, email: str) -> Sequence[ApiKey]:
        return key_services.list_keys(email, uow=self.uow())

    def webhook_secret(self, email: str, *, rotate: bool = False) -> str:
        return webhook_services.person_webhook_secret(
            email, rotate=rotate, uow=self.uow(), secrets=self.secrets
        )

    def ensure_local_owner(self, *, plan: str, starting_credits: int) -> IssuedKey | None:
        return account_services.ensure_local_owner(
            plan=plan,
            starting_credits=starting_credits,
            uow=self.uow(),
            clock=self.clock,
            secrets=self.secrets,
        )

    def list_users(self) -> Sequence[PersonView]:
        return account_services.list_users(uow=self.uow())

    def list_teams(self) -> Sequence[TeamView]:
        return account_services.list_teams(uow=self.uow())

    def whoami(self, key_or_prefix: str) -> KeyHolder:
        return key_services.key_holder(key_or_prefix, uow=self.uow())

    # --- billing (docs/rest-api.md "Billing") -----------------------------------------------------------

    def billing_status(self, caller: Caller) -> BillingStatus:
        return billing_services.status(caller, uow=self.uow(), provider=self.payments)

    def billing_change_plan(self, choice: PlanChoice, caller: Caller) -> BillingStatus:
        return billing_services.change_plan(
            choice, caller, uow=self.uow, provider=self.payments, clock=self.clock
        )

    def receive_payment_event(self, payload: bytes, signature: str, client: str) -> Fulfilment:
        assert self.limiter is not None, "bootstrap gives the application its rate limiter"
        return billing_services.receive_event(
            payload,
            signature,
            client,
            provider=self.payments,
            uow=self.uow(),
            clock=self.clock,
            limiter=self.limiter,
        )

    def open_test_checkout(self, session_id: str, buyer: UserId) -> LocalCheckout:
        return billing_services.open_local_checkout(
            session_id, buyer, uow=self.uow(), provider=self.payments, secrets=self.secrets
        )

    def complete_test_checkout(self, session_id: str, form_token: str, buyer: UserId) -> LocalCheckoutDone:
        return billing_services.complete_local_checkout(
            session_id, form_token, buyer, uow=self.uow, provider=self.payments, clock=self.clock
        )

    def renew_test_subscription(self, paid_from: str, caller: Caller) -> Fulfilment:
        return billing_services.renew_local_subscription(
            paid_from, caller, uow=self.uow, provider=self.payments, clock=self.clock
        )

    def grant_subscription_months(self, now: datetime) -> int:
        return billing_services.grant_subscription_months(now, uow=self.uow)

    # --- the search-console integration (docs/rest-api.md "Search console") ----------------------------

    @property
    def console_deps(self) -> console_services.ConsoleDeps:
        return console_services.ConsoleDeps(
            uow=self.uow,
            crawl=self.crawl,
            clock=self.clock,
            sealing=self.sealing,
            providers=self.console_providers,
            terms=self.console_terms,
        )

    def _console_proof(self, site: Site) -> ProofCheck:
        return console_services.console_proof(site, self.console_deps)

    def _console_connection(self, site: Site) -> tuple[bool, str | None]:
        return console_services.console_connection_view(site, self.console_deps)

    def sync_search_consoles(self, now: datetime) -> int:
        return console_services.sync_due_sites(now, self.console_deps)

    def connect_search_console(self, team_name: str, refresh_token: str, *, account: str) -> None:
        console_services.connect(team_name, refresh_token, account, self.console_deps)

    def disconnect_search_console(self, team_name: str) -> bool:
        return console_services.disconnect(team_name, self.console_deps)

    def console_page_totals(
        self, site_id: SiteId, caller: Caller, urls: Sequence[str] | None, start: date, end: date
    ) -> Mapping[str, PageTotals]:
        return console_read.page_totals(site_id, caller.team_id, urls, start, end, self.console_deps)

    # --- device login -----------------------------------------------------------------------------------

    def start_device_login(self, client_name: str, requested_ip: str) -> DeviceLoginStarted:
        started = device_flow.start_device_login(
            client_name, requested_ip, uow=self.uow(), clock=self.clock, secrets=self.secrets
        )
        return started.answer(self.public_url)

    def poll_device_login(self, device_code: str) -> DeviceGranted:
        return device_flow.poll_device_login(
            device_code, uow=self.uow(), clock=self.clock, secrets=self.secrets
        )

    def cancel_device_login(self, device_code: str) -> DeviceLogin:
        return device_flow.cancel_device_login(device_code, uow=self.uow(), clock=self.clock)

    def device_login_to_decide(self, user_code: str) -> DeviceLogin:
        return device_approval.login_to_decide(user_code, uow=self.uow(), clock=self.clock)

    def approve_device_login(self, user_code: str, caller: Caller) -> DeviceLogin:
        return device_approval.approve_device_login(
            user_code, caller.user_id, caller.team_id, uow=self.uow(), clock=self.clock
        )

    def deny_device_login(self, user_code: str, user: UserId) -> DeviceLogin:
        return device_approval.deny_device_login(user_code, uow=self.uow(), clock=self.clock)

    # --- the app: signing in, sessions, team members ------------------------------------------------------

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

    def sign_up_open(self) -> bool:
        return self.sign_in_terms.open_sign_up

    def sign_in(self, email: str, password: str) -> SignedIn:
        return signin_services.sign_in(
            email, password, uow=self.uow(), clock=self.clock, secrets=self.secrets, hasher=self._hasher
        )

    def sign_up(self, email: str, password: str) -> SignedIn:
        return signin_services.sign_up(
            email,
            password,
            uow=self.uow(),
            clock=self.clock,
            secrets=self.secrets,
            hasher=self._hasher,
            terms=self.sign_in_terms,
        )

    def app_viewer(self, session_token: str) -> AppViewer:
        return signin_services.viewer(
            session_token, uow=self.uow(), clock=self.clock, terms=self.sign_in_terms
        )

    def sign_out(self, session_token: str) -> None:
        signin_services.sign_out(session_token, uow=self.uow())

    def confirm_password(self, session_token: str, password: str) -> AppSession:
        return signin_services.confirm_password(
            session_token,
            password,
            uow=self.uow(),
            clock=self.clock,
            hasher=self._hasher,
            terms=self.sign_in_terms,
        )

    def switch_team(self, session_token: str, team_id: TeamId) -> AppSession:
        return signin_services.switch_team(
            session_token, team_id, uow=self.uow(), clock=self.clock, terms=self.sign_in_terms
        )

    def request_password_reset(self, email: str) -> None:
        signin_services.request_password_reset(
            email,
            uow=self.uow(),
            clock=self.clock,
            secrets=self.secrets,
            terms=self.sign_in_terms,
            mailer=self._mailer,
            public_url=self.public_url,
        )

    def reset_password(self, link_token: str, password: str) -> User:
        return signin_services.reset_password(
            link_token, password, uow=self.uow(), clock=self.clock, hasher=self._hasher
        )

    def set_password(self, email: str, password: str) -> User:
        return signin_services.set_password(
            email, password, uow=self.uow(), clock=self.clock, hasher=self._hasher
        )

    def password_link(self, email: str) -> str:
        return signin_services.password_link(
            email,
            uow=self.uow(),
            clock=self.clock,
            secrets=self.secrets,
            terms=self.sign_in_terms,
            public_url=self.public_url,
        )

    def team_members(self, caller: Caller) -> Sequence[MemberView]:
        return team_services.team_members(caller, uow=self.uow())

    def invite_member(self, caller: Caller, email: str) -> Invitation:
        return team_services.invite_member(
            caller,
            email,
            uow=self.uow(),
            clock=self.clock,
            secrets=self.secrets,
            terms=self.sign_in_terms,
            mailer=self._mailer,
            public_url=self.public_url,
        )

    def remove_team_member(self, caller: Caller, user_id: UserId) -> None:
        team_services.remove_team_member(caller, user_id, uow=self.uow())

    # --- fix tasks and rechecks (docs/rest-api.md "Fix tasks and rechecks") -----------------------------

    def run_recheck(self, recheck_id: RecheckId) -> RecheckRun:
        deps = recheck_run_services.RecheckDeps(
            uow=self.uow,
            clock=self.clock,
            fetcher_factory=self.fetcher_factory,
            parser=self.parser,
            sealing=self.sealing,
            limits=self.crawl_limits,
            terms=self.recheck_terms,
        )
        return recheck_run_services.run_recheck(recheck_id, deps)

    def reap_stalled_rechecks(self) -> RecheckReaped:
        return recheck_services.reap_rechecks(
            uow=self.uow(),
            queue=self.queue,
            clock=self.clock,
            terms=self.reaping,
            handover_s=self.crawl_limits.handover_s,
        )

    # --- fix impact (docs/rest-api.md "Fix impact") ---------------------------------------------------------

    def measure_fix_impacts(self, now: datetime) -> int:
        return impact_services.measure_fix_impacts(now, uow=self.uow, crawl=self.crawl)
