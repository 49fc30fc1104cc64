"""The app (`WebSession`, docs/app.md) beyond the callers' API: signing in and sessions, passwords, the
team's members, device approval, the billing page, the audits page and an audit's live progress."""

from collections.abc import Mapping, Sequence
from typing import Protocol

from attrs import field, frozen

from siteaudit.domain.account import Caller, Membership, Role, Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.billing import (
    Fulfilment,
    PaidPeriod,
    PlanChoice,
    PlanPrice,
    Subscription,
)
from siteaudit.domain.device import DeviceLogin
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.signin import AppSession
from siteaudit.ports.application.audits import AuditProgress, AuditQuery, Listing
from siteaudit.ports.application.keys import PersonKeys


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
