# Over 500 lines: the one application interface and its typed inputs and results, a section per noun.
"""The application interface (the driving port): every use case a door may call, by noun and verb.

REST resources, CLI commands, Dramatiq actors, periodic jobs, and a Python app embedding siteaudit call
this and nothing else of the services. Each door turns its input into the typed request below, makes one
call, and renders the typed result. `siteaudit.services.application.LocalApplication` implements it once
over the driven ports; `siteaudit.bootstrap.bootstrap(settings).application` builds it.

`Application` is the union of roles: `CallerApi` (a key holder's), `Jobs`, `Admin`, `WebSession` and the
small ones between them; each door is typed against the roles it uses (docs/architecture.md "Roles"). They
share this module because they share its inputs and results.

Errors are `siteaudit.domain.error.DomainError`s carrying the error code that the REST interface answers
(docs/rest-api.md "Errors and limits"): NotFound, Conflict, InsufficientCredits, ...; each door maps them
its own way (an HTTP status, an exit code).
"""

import enum
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any, Generic, Protocol, TypeVar

from attrs import field, frozen

from siteaudit.domain.account import Caller, Membership, Role, Team, User
from siteaudit.domain.apikey import ApiKey
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.billing import (
    CheckoutSession,
    Fulfilment,
    PackOffer,
    PaidPeriod,
    PlanChoice,
    PlanPrice,
    Subscription,
)
from siteaudit.domain.console import PageTotals
from siteaudit.domain.device import DeviceLogin
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TeamId, UserId
from siteaudit.domain.issue import Issue
from siteaudit.domain.signin import AppSession
from siteaudit.domain.site import MonitoringSkip, Notice, Site
from siteaudit.ports.crawl import LinkLine, PageRow
from siteaudit.ports.ratelimit import Limit, RateDecision
from siteaudit.ports.usecases import Declared, Result, UseCase

T = TypeVar("T")


# --- inputs ------------------------------------------------------------------------------------------


@frozen
class AuditQuery:
    """Which of the team's audits to list (newest first); `site_id` narrows to one registered site,
    `statuses` (when not empty) to audits in one of them."""

    site_id: SiteId | None = None
    offset: int = 0
    limit: int = 20
    statuses: tuple[AuditStatus, ...] = ()


class ExportKind(enum.StrEnum):
    """Which rows of an audit an export streams (`Application.export_rows`)."""

    PAGES = "pages"  # `PageRow`s, by URL id
    ISSUES = "issues"  # `Issue`s, in writing order
    LINKS = "links"  # `LinkLine`s, by source


# One row of an export: a `PageRow`, an `Issue` or a `LinkLine`, as `ExportKind` says.
ExportRow = PageRow | Issue | LinkLine


@frozen
class ArchivePolicy:
    """Which ended audits lose their issue and page rows: those ended `older_than_days` ago or more, and
    those beyond the last `keep_last` per site (both given: an audit must meet both). Neither: none."""

    older_than_days: int | None = None
    keep_last: int | None = None

    @property
    def selects_anything(self) -> bool:
        return self.older_than_days is not None or self.keep_last is not None


# --- results -----------------------------------------------------------------------------------------


@frozen
class Listing(Generic[T]):
    """One page of a longer list: `items` from the query's offset, `total` of the whole list."""

    items: Sequence[T]
    total: int


@frozen
class AuditStarted:
    audit: Audit
    notices: tuple[Notice, ...] = ()  # why it runs slower than asked (`warnings` of the answer)

    @property
    def estimated_credits(self) -> int:
        """Credits reserved for the audit, in tenths."""
        return self.audit.credits_reserved


@frozen
class AuditDetail:
    """An audit as its detail shows it (`GET /crawls/{id}`): the audit, and whether its work stalled, its
    lease's deadline passed with no worker taking it over (`siteaudit.domain.lease.is_stalled`)."""

    audit: Audit
    stalled: bool


@frozen
class AuditProgress:
    """A running audit as the app's live view shows it: the detail, and the URLs found and waiting to be
    fetched (`queued`, from the frontier's counters; 0 once the audit ended)."""

    detail: AuditDetail
    queued: int


@frozen
class IssuedKey:
    """A key as created: `raw` is shown once and never stored."""

    key: ApiKey
    raw: str


@frozen
class CrawlProgress:
    """What one crawl slice left behind: the audit's pages so far, and what it queued next ("slice",
    "finalize", or "" when it queued nothing: the audit ended, or another slice holds the audit)."""

    audit_id: AuditId
    pages_crawled: int
    next: str


# --- the monitoring scheduler ---------------------------------------------------------------------------


@frozen
class ScheduledAudits:
    """What one pass over due scheduled audits did: the audits started, the sites skipped and why
    (`last_skip_reason`)."""

    started: tuple[AuditId, ...] = ()
    skipped: Mapping[SiteId, MonitoringSkip] = field(factory=dict)


@frozen
class ProofRechecks:
    """What one pass of the daily ownership re-checks found: proofs still there, proofs missing (the
    site keeps its verification during the grace period), and sites that lost it."""

    confirmed: int = 0
    missing: int = 0
    lost: int = 0


@frozen
class Reaped:
    """What one reaper pass did."""

    slices: int = 0
    finalizations: int = 0
    failed: int = 0
    forgotten: int = 0
    dispatch_errors: int = 0

    @property
    def total(self) -> int:
        return self.slices + self.finalizations + self.failed + self.forgotten


# --- the search-console reads (docs/rest-api.md "Search console") ---------------------------------------


# --- administration views (what `siteaudit admin list-users`, `list-teams` and `whoami` show) ----------


@frozen
class PersonView:
    """A person with their own credit balance (tenths) and the names of their teams, oldest first."""

    user: User
    balance: int
    teams: Sequence[str]


@frozen
class TeamView:
    """A team with its owner's email, the owner's balance (tenths; it pays for the team's site audits)
    and its number of members."""

    team: Team
    owner_email: str
    owner_balance: int
    members: int


@frozen
class KeyHolder:
    """Whose a key is: its holder's email and the name of the team it acts for."""

    key: ApiKey
    email: str
    team_name: str


# --- billing (docs/rest-api.md "Billing") ----------------------------------------------------------------


@frozen
class BillingStatus:
    """What the app's billing page shows: the plan, the subscription (None before one), whether a
    first purchase completed (the portal needs one), and which provider sells ("" when none does)."""

    plan: str
    subscription: Subscription | None
    has_purchased: bool
    provider: str
    paid_period: PaidPeriod | None = None  # the latest period the subscription paid for
    prices: Mapping[PlanChoice, PlanPrice] = field(factory=dict)  # as the provider states them


@frozen
class LocalCheckout:
    """The local provider's checkout page: what the session sells, to whom, and a single-use form token
    (shown once, only its hash kept) that completing the purchase needs. `offer` for a pack, `choice`
    for a subscription."""

    session: CheckoutSession
    email: str
    form_token: str
    offer: PackOffer | None = None
    choice: PlanChoice | None = None


@frozen
class LocalCheckoutDone:
    """What completing a local test checkout did; `fulfilment` DUPLICATE when it was completed before."""

    session: CheckoutSession
    fulfilment: Fulfilment
    balance: int  # the buyer's credits afterwards, in tenths


# --- device login (docs/security.md "Device login") ---------------------------------------------------


@frozen
class DeviceLoginStarted:
    """`POST /device/start`: the device code (shown this once; only its hash is kept), the user code as
    people see it (`XXXX-XXXX`) and where they enter it."""

    device_code: str = field(repr=False)
    user_code: str
    verification_uri: str
    verification_uri_complete: str
    interval: int
    expires_in: int


@frozen
class DeviceGranted:
    """An approved device login's exchange: the CLI key (returned exactly once) and its team."""

    key: IssuedKey
    team_id: TeamId
    team_name: str


# --- the app: signing in, sessions, team members (docs/app.md) ----------------------------------------


@frozen
class SignedIn:
    """A new app session: `token` goes into the browser's cookie, shown this once; only its hash is kept."""

    token: str = field(repr=False)
    session: AppSession


@frozen
class AppViewer:
    """Who a browser session is: the person, their teams (oldest first), the team being viewed (None for
    a person in no team) and whether the session may show secrets and make keys without the password."""

    session: AppSession
    user: User
    teams: Sequence[Team]
    team: Team | None
    fresh: bool = False  # the password was given recently enough to show a secret or make a key

    @property
    def caller(self) -> Caller:
        """The person acting for the team being viewed, as the use cases taking a Caller want it."""
        return Caller(self.user.id, self.team.id if self.team is not None else TeamId(0))


@frozen
class MemberView:
    user: User
    role: Role
    pending: bool = False  # invited, and has not chosen a password yet


@frozen
class Invitation:
    """An invitation made: the membership, whether a mail was sent, and, when none was (no mail server),
    the one-time link for the owner to hand over (only for someone new; None otherwise)."""

    membership: Membership
    mailed: bool
    link: str | None = field(default=None, repr=False)


# --- fix tasks and rechecks (docs/rest-api.md "Fix tasks and rechecks") --------------------------------


@frozen
class RecheckRun:
    """What one run of a recheck did: `ended` when it ended (or had), `lease_lost` when another runner
    held it."""

    recheck_id: RecheckId
    fetched: int = 0
    ended: bool = False
    lease_lost: bool = False


@frozen
class RecheckReaped:
    redispatched: int = 0
    failed: int = 0
    dispatch_errors: int = 0

    @property
    def total(self) -> int:
        return self.redispatched + self.failed + self.dispatch_errors


@frozen
class Admission:
    """A request's key let in: who it acts for, and the decision of the rate limit it was counted
    against (not allowed: the door answers 429 with the decision's Retry-After)."""

    caller: Caller
    decision: RateDecision


# --- the use cases -----------------------------------------------------------------------------------


class DeviceCancel(Protocol):
    """The device's own cancel of its login, by the device code only it holds (`POST /v1/device/cancel`,
    what Ctrl-C in `siteaudit connect` sends). A door of the device flow like start and poll, but not a use
    case of a key's holder, so not one of Application's (each of which is an agent tool or says why not).
    """

    def cancel_device_login(self, device_code: str) -> DeviceLogin:
        """A pending or approved login becomes denied (it can no longer be approved, its next poll
        answers AccessDenied), a denied or expired one stays. Raises InvalidGrant for an unknown or
        exchanged code."""
        ...


class CallerApi(Protocol):
    """The callers' API: what a key holder does, through REST, the tools (MCP over HTTP and stdio, the
    remote CLI), the typed HTTP client (`adapters/client`, which implements exactly this) and a Python
    program embedding siteaudit. Every call but `authenticate` acts for a caller and is scoped to its
    team; the declared use cases run through `handle`."""

    def authenticate(self, raw_key: str) -> Caller:
        """Who a bearer key acts for. Raises Unauthenticated (unknown, malformed, revoked or replaced
        key) or TeamAccessRevoked (its holder left the key's team)."""
        ...

    def handle(self, use_case: UseCase[Result], caller: Caller) -> Result:
        """Run a declared use case for the caller (`siteaudit.ports.usecases`): its handler's result, or
        the DomainError it raises. Every call is scoped to the caller's team (NotFound otherwise)."""
        ...

    def use_cases(self) -> Sequence[Declared]:
        """The declared use cases `handle` runs, in the order the doors list them."""
        ...

    # Starting an audit (docs/rest-api.md "Endpoints"), the billing links (docs/rest-api.md "Billing"):
    # declared use cases (`handle`).

    # IndexNow (docs/rest-api.md "IndexNow"): declared use cases (`handle`).

    # The search console (docs/rest-api.md "Search console"): declared use cases (`handle`).


def run_declared(application: CallerApi, name: str, caller: Caller, **inputs: Any) -> Any:
    """The answer of the declared use case named `name` run with `inputs` for `caller`: how a door reaches
    a declaration at run time, never importing the services' modules (docs/architecture.md)."""
    declared = next(d for d in application.use_cases() if d.__name__ == name)
    return application.handle(declared(**inputs), caller)


# --- the roles beyond the callers' API: each door is typed against those it uses ------------------------


class RequestAdmission(Protocol):
    """The REST and MCP doors themselves: a key let in and its request counted."""

    def authenticate_and_hit(self, raw_key: str, *, bucket: str, limit: Limit) -> Admission:
        """`authenticate`, and one request of the key counted against the rate-limit `bucket` (shared by
        every process) only when the key is let in; on PostgreSQL both in one round trip. Raises as
        `authenticate` does; a request over the limit is not counted and answers `decision.allowed`
        False."""
        ...


class Exports(Protocol):
    """An audit's rows streamed to a file: the REST export and the app's downloads."""

    def export_rows(self, audit_id: AuditId, kind: ExportKind, caller: Caller) -> Iterator[ExportRow]:
        """Every row of one kind of the audit, read from the crawl store in batches (memory stays
        bounded however large the audit). The audit is checked before this returns: raises NotFound
        (another team's audit) or CrawlArchived. Exhaust or close the iterator: it holds a database
        connection until then."""
        ...


class DeviceFlow(DeviceCancel, Protocol):
    """The device's side of a device login (docs/security.md "Device login"): start, poll and cancel, by the
    REST door's `/v1/device/*` without a key; the app's approval page decides (`WebSession`)."""

    def start_device_login(self, client_name: str, requested_ip: str) -> DeviceLoginStarted:
        """A pending login. `client_name` (at most 64 characters, ValidationFailed beyond) names the
        machine and agents as `siteaudit.domain.device.CONNECT_FORM` says."""
        ...

    def poll_device_login(self, device_code: str) -> DeviceGranted:
        """One poll. Raises AuthorizationPending, SlowDown, AccessDenied, ExpiredToken or InvalidGrant;
        after approval returns the CLI key once (it replaces the key of the same machine, agents and
        team)."""
        ...


class Payments(Protocol):
    """What no key calls in billing: the payment provider's webhook and the local provider's test checkout
    page (docs/billing.md), served by the REST door."""

    def receive_payment_event(self, payload: bytes, signature: str, client: str) -> Fulfilment:
        """A provider webhook from address `client`: the signature checked over the raw bytes, then
        the address's webhook limit counted (validly signed posts only), then applied once per event
        id (a paid pack credits once; subscription events set and end the plan). Raises
        InvalidPaymentSignature, RateLimited."""
        ...

    def open_test_checkout(self, session_id: str, buyer: UserId) -> LocalCheckout:
        """The local provider's checkout page for an open session `buyer` asked for, with a fresh
        single-use form token. Raises NotFound (unknown, completed or someone else's session, or the
        local provider is not in use)."""
        ...

    def complete_test_checkout(self, session_id: str, form_token: str, buyer: UserId) -> LocalCheckoutDone:
        """Complete a local test purchase `buyer` asked for, through the same fulfilment as the
        provider's webhooks.
        Raises NotFound as above, InvalidPaymentSignature for a wrong or used form token."""
        ...


class PersonKeys(Protocol):
    """A person's Settings keys and webhook secret, by their email: the admin CLI and the app's key pages."""

    def create_key(self, email: str, team_name: str) -> IssuedKey:
        """The person's Settings key for the team. Raises SettingsKeyExists when one is active."""
        ...

    def rotate_key(self, email: str, team_name: str) -> IssuedKey:
        """Revoke the person's Settings key for the team at once and issue its successor."""
        ...

    def list_keys(self, email: str) -> Sequence[ApiKey]: ...

    def revoke_key(self, email: str, prefix: str) -> ApiKey:
        """Raises NotFound for a prefix that is not one of the person's active keys."""
        ...

    def webhook_secret(self, email: str, *, rotate: bool = False) -> str:
        """The person's webhook signing secret, replaced first when `rotate` (effective at once)."""
        ...


class LocalOwner(Protocol):
    """The first run of a local service (the embedded server, the one-shot audit, the stdio tools): its owner
    and key."""

    def ensure_local_owner(self, *, plan: str, starting_credits: int) -> IssuedKey | None:
        """On an empty database: a local owner with a team, the plan, `starting_credits` (whole
        credits) and a Settings key, returned once. None when the database already has people."""
        ...


class Operations(Protocol):
    """What the service's metrics read at scrape time."""

    def audits_by_status(self) -> Mapping[AuditStatus, int]:
        """How many audits of every team are in each status now (every status present, 0 when none)."""
        ...


class Jobs(Protocol):
    """What the service does by itself: the Dramatiq actors (crawl slices, finalisation, webhooks, rechecks),
    the reapers and the scheduler's periodic passes."""

    def run_crawl_slice(
        self,
        audit_id: AuditId,
        *,
        verify_token: str | None = None,
        sealed_verify_token: str | None = None,
    ) -> CrawlProgress:
        """One bounded slice of the audit's crawl, then the next slice or the finalisation queued. The
        verify token comes as the caller gave it, or sealed as it travelled in a queue message."""
        ...

    async def arun_crawl_slice(
        self,
        audit_id: AuditId,
        *,
        verify_token: str | None = None,
        sealed_verify_token: str | None = None,
    ) -> CrawlProgress:
        """`run_crawl_slice` on the caller's event loop (the worker's slice loop carries many at once)."""
        ...

    def finalize_audit(self, audit_id: AuditId) -> Audit:
        """Site-wide checks, report, settlement; idempotent on the audit's status. Then, once the audit is
        done, a scheduled audit's alert mail and, for a site with IndexNow auto-submit on, the submission
        of its new and changed pages (each once per audit)."""
        ...

    def deliver_webhooks(self, *, limit: int = 50) -> int:
        """Send the webhook deliveries that came due; how many attempts were recorded."""
        ...

    def reap_stalled_audits(self) -> Reaped:
        """Re-dispatch stalled work (or end its audit `failed`) as the reaper settings say."""
        ...

    def run_recheck(self, recheck_id: RecheckId) -> RecheckRun:
        """The worker's job: fetch the recheck's remaining URLs under its lease, then end it, settle its
        credits and its tasks. Idempotent under redelivery."""
        ...

    def reap_stalled_rechecks(self) -> RecheckReaped:
        """Re-dispatch stalled rechecks (or end them `failed`) as the reaper settings say."""
        ...

    def dispatch_due_site_audits(self, now: datetime) -> ScheduledAudits:
        """Start each scheduled audit due at `now` once, even with several schedulers running (trigger
        `schedule`, charged to the team owner, no webhook); skipped sites say why in `last_skip_reason`."""
        ...

    def recheck_site_proofs(self, now: datetime) -> ProofRechecks:
        """Read again the ownership proof of verified sites not checked for a day; a proof gone past
        the grace period (SITEAUDIT_PROOF_GRACE_DAYS) loses the verification and pauses monitoring."""
        ...

    def grant_subscription_months(self, now: datetime) -> int:
        """The scheduler's pass granting every begun month of every paid subscription period once (a
        yearly subscription's later months); the number of months granted."""
        ...

    def sync_search_consoles(self, now: datetime) -> int:
        """The daily sync (run by the scheduler): every verified site not synced for a day gets 28 days
        of page figures and sampled inspections. How many sites were synced."""
        ...

    def measure_fix_impacts(self, now: datetime) -> int:
        """The scheduler's daily pass: fix-impact events not looked at for a day are brought up to date
        with the stored console figures. How many were measured."""
        ...


class Admin(PersonKeys, LocalOwner, Protocol):
    """Administration (the `siteaudit admin` CLI and the `archive` command): people, teams, plans, credits,
    keys and passwords, sites for support, the console connection, the archive."""

    def create_user(self, email: str, *, plan: str = "free") -> User:
        """A person with their webhook signing secret. An unknown plan is refused (validation_failed)."""
        ...

    def create_team(self, name: str, *, owner_email: str) -> Team: ...

    def add_member(self, team_name: str, email: str) -> Membership: ...

    def remove_member(self, team_name: str, email: str) -> None:
        """Their keys for the team then answer TeamAccessRevoked. Raises Conflict for the owner."""
        ...

    def set_plan(self, email: str, plan: str) -> User: ...

    def grant_credits(self, email: str, tenths: int, *, idempotency_key: str) -> int:
        """Add credits to a person's own balance (a repeated key is a no-op); the balance, in tenths."""
        ...

    def list_users(self) -> Sequence[PersonView]:
        """Every person, oldest first."""
        ...

    def list_teams(self) -> Sequence[TeamView]:
        """Every team, oldest first."""
        ...

    def whoami(self, key_or_prefix: str) -> KeyHolder:
        """Whose a key is, given the key itself or the start of its prefix (at least `sk_` and 4
        characters). Raises NotFound for an unknown key, and Conflict when a prefix fits several keys."""
        ...

    def set_password(self, email: str, password: str) -> User:
        """Administration: set a person's password; every session of theirs ends."""
        ...

    def password_link(self, email: str) -> str:
        """Administration: a one-time link (valid an hour) where the person chooses a password."""
        ...

    def list_team_sites(self, team_name: str) -> Sequence[Site]:
        """Every site of the named team. Raises NotFound."""
        ...

    def verify_site_by_hand(self, site_id: SiteId, reason: str) -> Site:
        """Mark a site verified without a proof, logging `reason` (the daily re-check keeps it so).
        Raises NotFound."""
        ...

    def archive_audits(self, policy: ArchivePolicy | None = None) -> Sequence[AuditId]:
        """Archive what `policy` selects (by default the SITEAUDIT_ARCHIVE_* settings); the audits whose
        rows this run deleted."""
        ...

    def connect_search_console(self, team_name: str, refresh_token: str, *, account: str) -> None:
        """Store the team's OAuth grant (refresh token sealed); replaces and revokes an earlier one.
        Raises NotFound for an unknown team (`siteaudit admin console-connect`; later the web app)."""
        ...

    def disconnect_search_console(self, team_name: str) -> bool:
        """Forget and revoke the team's OAuth grant; False when there was none."""
        ...


class WebSession(PersonKeys, Protocol):
    """The app (docs/app.md) beyond the callers' API: signing in and sessions, passwords, the team's members,
    device approval, the billing page, the audits page and an audit's live progress."""

    def sign_up_open(self) -> bool:
        """Whether anyone may sign up (SITEAUDIT_APP_SIGN_UP=open), or only invited people come in."""
        ...

    def sign_in(self, email: str, password: str) -> SignedIn:
        """A new session. Raises SignInRefused alike for an unknown email and a wrong password."""
        ...

    def sign_up(self, email: str, password: str) -> SignedIn:
        """A new person with their own team, signed in. Raises SignUpClosed, ValidationFailed, Conflict."""
        ...

    def app_viewer(self, session_token: str) -> AppViewer:
        """Who a session is (its idle time restarts). Raises Unauthenticated for an unknown or ended one."""
        ...

    def sign_out(self, session_token: str) -> None: ...

    def confirm_password(self, session_token: str, password: str) -> AppSession:
        """The password again, before a secret is shown or a key made. Raises SignInRefused."""
        ...

    def switch_team(self, session_token: str, team_id: TeamId) -> AppSession:
        """View another of the person's teams. Raises NotFound for a team that is not theirs."""
        ...

    def request_password_reset(self, email: str) -> None:
        """Mail a one-time link when a person has the address; nothing is said either way."""
        ...

    def reset_password(self, link_token: str, password: str) -> User:
        """Set a password through a one-time link (reset or invitation); every session of the person
        ends. Raises LinkInvalid, ValidationFailed."""
        ...

    def team_members(self, caller: Caller) -> Sequence[MemberView]:
        """The caller's team's members, owner first."""
        ...

    def invite_member(self, caller: Caller, email: str) -> Invitation:
        """The owner adds a person by email (new people get a link to choose a password). Raises
        NotTeamOwner."""
        ...

    def remove_team_member(self, caller: Caller, user_id: UserId) -> None:
        """The owner removes a member; their keys for the team then answer TeamAccessRevoked. Raises
        NotTeamOwner, Conflict for the owner, NotFound for a non-member."""
        ...

    def device_login_to_decide(self, user_code: str) -> DeviceLogin:
        """The live login with this user code (case, spaces and dashes ignored), to show before a
        decision. Raises ValidationFailed for a malformed code, NotFound for no live login."""
        ...

    def approve_device_login(self, user_code: str, caller: Caller) -> DeviceLogin:
        """Approve for the caller's team (the team chosen on the approval page); the caller must be in it
        (NotFound otherwise). Raises ExpiredToken, NotFound, or Conflict for a decided login."""
        ...

    def deny_device_login(self, user_code: str, user: UserId) -> DeviceLogin:
        """Deny; the next poll answers AccessDenied. Raises like `approve_device_login`."""
        ...

    def billing_status(self, caller: Caller) -> BillingStatus:
        """The caller's plan, subscription and purchases (the app's billing page)."""
        ...

    def billing_change_plan(self, choice: PlanChoice, caller: Caller) -> BillingStatus:
        """Move the caller's live subscription to another plan, tier or interval (changes are made
        in the app, docs/billing.md "In the app"), applied at once. Raises NotTeamOwner, PriceNotConfigured,
        NoSubscription (none live: subscribe instead), PaymentProviderFailed."""
        ...

    def renew_test_subscription(self, paid_from: str, caller: Caller) -> Fulfilment:
        """The local provider's TEST renewal of the team owner's live subscription: the period that
        began at `paid_from` (ISO time, as the billing page shows it) is followed by a new one paid now.
        DUPLICATE when that period was renewed before. Raises NotTeamOwner, NoSubscription."""
        ...

    def audit_progress(self, audit_id: AuditId, caller: Caller) -> AuditProgress:
        """`get_audit` and the URLs its crawl has queued (the app's live progress). Raises NotFound as
        `get_audit` does."""
        ...

    def list_audits(self, query: AuditQuery, caller: Caller) -> Listing[Audit]:
        """The app's audits page: the team's audits as the declared list gives them (newest first, the
        caller's own from before teams existed), also filtered by status (`query.statuses`), with the
        domain's audits its live progress reads. Raises NotFound for another team's site."""
        ...


class Application(
    CallerApi, RequestAdmission, Exports, DeviceFlow, Payments, Jobs, Admin, WebSession, Operations, Protocol
):
    """The whole application interface, which `LocalApplication` implements: the callers' API and every role
    beyond it. Doors are typed against the roles they use (docs/architecture.md "Roles"); only the
    composition root holds the whole."""

    # No door calls it: fix impact reads the same inside the service; embedders and tests read it here.

    def console_page_totals(
        self, site_id: SiteId, caller: Caller, urls: Sequence[str] | None, start: date, end: date
    ) -> Mapping[str, PageTotals]:
        """Clicks and impressions (and impression-weighted position) per URL of the caller's site, summed
        over `start` to `end` inclusive from the figures the daily sync stored (one row per page and
        day). `urls` None: every URL with figures. A URL without stored figures is left out: no data,
        not zero. For fix impact and task traffic; services read the same through
        `uow.console.page_totals(site_id, urls, start, end)`. Raises NotFound for another team's site."""
        ...
