"""Repositories and the unit of work: the durable state of the service, scoped by team."""

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from attrs import frozen

from siteaudit.domain.account import Membership, Team, User
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.credit import LedgerEntry
from siteaudit.domain.ids import AuditId, SiteId, TeamId, UserId
from siteaudit.domain.lease import Lease
from siteaudit.ports.access import SiteAccessRepository
from siteaudit.ports.device import DeviceLoginRepository
from siteaudit.ports.impact import FixImpactRepository
from siteaudit.ports.indexnow import IndexNowRepository
from siteaudit.ports.keys import ApiKeyRepository
from siteaudit.ports.lease import LeaseRepository
from siteaudit.ports.payment import BillingRepository
from siteaudit.ports.searchconsole import ConsoleStore
from siteaudit.ports.signin import SignInRepository
from siteaudit.ports.site import FixTaskRepository, RecheckRepository, SiteRepository
from siteaudit.ports.webhook import WebhookRepository, WebhookSecrets


class VersionedAggregate(Protocol):
    """An aggregate saved with an optimistic version check (ConcurrentUpdate when its version moved): a
    unit of work saves only what it loaded, under the id the store numbered."""

    @property
    def id(self) -> int: ...

    @property
    def version(self) -> int: ...


class UserRepository(Protocol):
    def add(self, user: User) -> User:
        """Stage a new user; an id of 0 is replaced by a fresh one. Raises Conflict if the email is taken."""
        ...

    def get(self, user_id: UserId) -> User:
        """Raises NotFound."""
        ...

    def by_email(self, email: str) -> User:
        """`email` is already normalised. Raises NotFound."""
        ...

    def save(self, user: User) -> None:
        """Stage an update of an existing user."""
        ...

    def count(self) -> int: ...

    def all(self) -> Sequence[User]:
        """Every person, oldest first (administration)."""
        ...


class TeamRepository(Protocol):
    def add(self, team: Team) -> Team:
        """Stage a new team (an id of 0 gets a fresh one) with its owner as a member."""
        ...

    def get(self, team_id: TeamId) -> Team:
        """Raises NotFound."""
        ...

    def by_name(self, name: str) -> Team:
        """Raises NotFound."""
        ...

    def membership(self, team_id: TeamId, user_id: UserId) -> Membership | None:
        """The user's membership of the team, or None when they are not (or no longer) a member."""
        ...

    def add_member(self, membership: Membership) -> None:
        """Stage a membership; adding an existing member again changes nothing."""
        ...

    def remove_member(self, team_id: TeamId, user_id: UserId) -> None:
        """Stage the removal; removing a non-member changes nothing."""
        ...

    def members(self, team_id: TeamId) -> Sequence[Membership]: ...

    def of_user(self, user_id: UserId) -> Sequence[Team]:
        """Teams the user belongs to, oldest first."""
        ...

    def all(self) -> Sequence[Team]:
        """Every team, oldest first (administration)."""
        ...


class CreditLedger(Protocol):
    """Append-only credit entries in tenths. Every operation is atomic and idempotent on its key.

    Balances change only through one conditional step each (never read-then-write), so concurrent
    reservations can never overdraw an account.
    """

    def balance(self, user_id: UserId) -> int:
        """The account's balance in tenths (0 for an account never credited)."""
        ...

    def grant(
        self, user_id: UserId, amount: int, *, key: str, at: datetime, reference: str = "grant"
    ) -> bool:
        """Add `amount` tenths. Returns False, changing nothing, when `key` was used before."""
        ...

    def reserve(
        self, user_id: UserId, amount: int, *, reference: str, at: datetime, team: TeamId | None = None
    ) -> bool:
        """Hold `amount` tenths for `reference` ("audit:42"). Returns False when already reserved for it.

        Raises InsufficientCredits when the balance cannot cover `amount`; nothing changes then.
        """
        ...

    def settle(self, reference: str, *, cost: int, at: datetime) -> bool:
        """Release `reference`'s hold and charge `cost` (at most the hold), once.

        Returns False, changing nothing, when it was settled before. Raises NotFound when nothing was
        reserved for `reference`.
        """
        ...

    def reserved(self, reference: str) -> int | None:
        """The tenths held for `reference`, or None when nothing was reserved."""
        ...

    def is_settled(self, reference: str) -> bool: ...

    def entries(self, user_id: UserId) -> Sequence[LedgerEntry]:
        """The account's entries, oldest first."""
        ...

    def spent_since(self, user_id: UserId, since: datetime, *, team: TeamId | None = None) -> int:
        """Tenths charged to the account since `since` (positive), only for `team`'s work if given."""
        ...


@frozen
class TeamAuditQuery:
    """Which audits `AuditRepository.list` gives: the team's (plus `user`'s audits without a team, if
    given), of `site` if given, in one of `statuses` if any are given; then one page of them."""

    team: TeamId
    user: UserId | None = None
    site: SiteId | None = None
    offset: int = 0
    limit: int = 20
    statuses: Collection[AuditStatus] = ()


class AuditRepository(Protocol):
    def add(self, audit: Audit) -> Audit:
        """Stage a new audit; an id of 0 is replaced by a fresh one, returned in the result."""
        ...

    def get(self, audit_id: AuditId, *, team: TeamId) -> Audit:
        """The team's audit. Raises NotFound when it does not exist or belongs to another team."""
        ...

    def get_with_lease(self, audit_id: AuditId, *, team: TeamId) -> tuple[Audit, Lease | None]:
        """`get`, and the audit's lease (None: never claimed) read in the same statement: the hot REST
        read of an audit is one round trip."""
        ...

    def get_any(self, audit_id: AuditId) -> Audit:
        """Any team's audit, for workers. Raises NotFound."""
        ...

    def save(self, audit: Audit) -> None:
        """Stage an update. Raises ConcurrentUpdate if the stored version is not `audit.version - 1`...

        ...or, for several updates in one unit of work, not the version this unit of work last saw.
        """
        ...

    def note_progress(self, audit_id: AuditId, *, at: datetime) -> None:
        """Stage `at` as the audit's `last_progress_at` (its lease was renewed) unless it ended or already
        shows a later time; no version change, so nobody's optimistic update is refused for it."""
        ...

    def list(self, query: TeamAuditQuery) -> tuple[Sequence[Audit], int]:
        """The query's audits, newest first, and the total."""
        ...

    def count_started_by(self, user_id: UserId) -> int: ...

    def count_by_status(self) -> Mapping[AuditStatus, int]:
        """How many audits of every team are in each status (statuses without audits left out)."""
        ...

    def ended(self) -> Sequence[Audit]:
        """Every ended audit (done, failed, cancelled) of every team, earliest finished first: archival."""
        ...

    def latest_done(
        self, *, team: TeamId, origin: str, site: SiteId | None, before: AuditId, scored: bool = False
    ) -> Audit | None:
        """The latest `done` audit of the same site (or, without a site, of the same origin in the team);
        `scored`: the latest with a health score (one that audited an HTML page, docs/scoring.md)."""
        ...


class UnitOfWork(Protocol):
    """One transaction per use case: `with uow: ...; uow.commit()`. Leaving without commit rolls back."""

    users: UserRepository
    teams: TeamRepository
    credits: CreditLedger
    audits: AuditRepository
    keys: ApiKeyRepository
    sites: SiteRepository
    tasks: FixTaskRepository
    rechecks: RecheckRepository
    devices: DeviceLoginRepository
    webhooks: WebhookRepository
    webhook_secrets: WebhookSecrets
    leases: LeaseRepository
    # Billing: billing accounts, checkout sessions, payment events seen.
    billing: BillingRepository
    indexnow: IndexNowRepository  # IndexNow
    console: ConsoleStore  # the search-console integration's stored data
    signins: SignInRepository  # the app's passwords, sessions and one-time links
    fix_impacts: FixImpactRepository  # fix-impact events
    site_access: SiteAccessRepository  # sites' staging access, sealed

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def commit(self) -> None:
        """Make every staged change durable at once."""
        ...

    def rollback(self) -> None: ...
