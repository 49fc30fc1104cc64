"""Administration (`Admin`: the `siteaudit admin` CLI and `archive`), the first run's local owner
(`LocalOwner`) and what the metrics read at scrape time (`Operations`)."""

from collections.abc import Mapping, Sequence
from typing import Protocol

from attrs import frozen

from siteaudit.domain.account import Membership, Team, User
from siteaudit.domain.apikey import ApiKey
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.site import Site
from siteaudit.ports.application.keys import IssuedKey, PersonKeys


@frozen
class ArchivePolicy:
    """Which ended audits lose their issue and page rows: those ended `older_than_days` ago or more, and
    those beyond the last `keep_last` per site (both given: an audit must meet both). Neither: none."""

    older_than_days: int | None = None
    keep_last: int | None = None

    @property
    def selects_anything(self) -> bool:
        return self.older_than_days is not None or self.keep_last is not None


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
