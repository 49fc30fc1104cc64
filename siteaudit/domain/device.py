# Over 400 lines: the device login's codes, lifecycle, poll decision and guard are one RFC 8628 flow.
"""Device login (RFC 8628, as docs/app.md describes it): codes, the lifecycle, the poll decision, the guard.

Decisions this module makes, so that every adapter answers alike:

- The device may cancel its own login with its device code (`cancel`: `siteaudit connect` does on
  Ctrl-C): a pending or approved login becomes denied, so the code can no longer be approved and its
  next poll answers `access_denied`; no key was issued before the exchange, so none is left behind. A
  login already denied or expired is left as it is (cancelling twice is harmless); an exchanged one
  answers `invalid_grant`: its key exists, and is revoked in the app.
- A code expires at exactly `created_at + 600 s`: a poll or an approval at 600.0 s finds it expired.
- The poll answer, first match wins: exchanged -> `invalid_grant`; at or past expiry -> `expired_token`
  (so a denied code polled after 600 s answers `expired_token`: any poll after 600 s);
  denied -> `access_denied`; sooner than 5 s after the previous poll -> `slow_down`; pending ->
  `authorization_pending`; approved but the approver left the team -> `access_denied` (and the login
  becomes denied, so re-joining the team later does not revive it); approved -> exchanged, key granted.
  Final answers outrank `slow_down` because they tell the client to stop polling at all.
- A slow poll still records `last_polled_at`. RFC 8628 3.5 asks a client that got `slow_down` to poll
  less often; measuring from the latest poll, slow or not, means a client that keeps hammering keeps
  getting `slow_down` and never an answer, while one that backs off is served on its next poll. The
  required interval itself stays 5 s, as the device start answers (`interval`).
- `last_polled_at` is written for polls of a live (pending or approved) login only; polls of an ended
  login change nothing, so the loser of an exchange race writes nothing. It is not a status move, so it
  does not count in `version`.
- The device start takes only `{client_name}` (64 characters): the connect command writes the place
  and its agents there as `connect on HOST: agent1, agent2` for the machine's user configuration, and
  `connect on HOST in FOLDER: ...` for a project's (CONNECT_FORM). `client_identity` reads them back for
  the CLI key's label and its replace rule (docs/agents.md): the place, `HOST` or `HOST in FOLDER`, is the
  key's machine, so connecting one project replaces neither the user configuration's key nor another
  project's. A name in any other form is the machine, connected for DEFAULT_AGENTS.
"""

import enum
import hashlib
import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Final, Self

from attrs import evolve, field, frozen, validators

from siteaudit.domain.error import DomainError, ErrorCode, ValidationFailed
from siteaudit.domain.ids import DeviceLoginId, TeamId, UserId
from siteaudit.domain.lifecycle import next_state

LIFETIME: Final = timedelta(seconds=600)
POLL_INTERVAL: Final = timedelta(seconds=5)
# Consonants only, and none of the letters easily misread (A E I O U Y): 20 letters, 8 of them ~34.6 bits.
USER_CODE_ALPHABET: Final = "BCDFGHJKLMNPQRSTVWXZ"
USER_CODE_LENGTH: Final = 8
MAX_CLIENT_NAME_LENGTH: Final = 64
# secrets.token_urlsafe(16) gives 22 characters: the 128 bits of docs/security.md "Device login".
MIN_DEVICE_CODE_LENGTH: Final = 22
CONNECT_FORM: Final = "connect on HOST[ in FOLDER]: agent1, agent2"
# The agents of a login whose client name does not follow CONNECT_FORM: the CLI itself.
DEFAULT_AGENTS: Final = ("siteaudit-cli",)
UNNAMED_MACHINE: Final = "unnamed device"
_CONNECT: Final = re.compile(
    r"connect on\s+(?P<host>[^:\s]+)(?:\s+in\s+(?P<folder>.+?))?\s*(?::\s*(?P<agents>[^:]*))?$", re.IGNORECASE
)


class DeviceLoginStatus(enum.StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"
    EXCHANGED = "exchanged"


class DeviceMove(enum.StrEnum):
    APPROVE = "approve"
    DENY = "deny"
    APPROVER_LEFT = "approver_left"  # polled after approval, but the approver is no longer in the team
    EXPIRE = "expire"
    EXCHANGE = "exchange"
    CANCEL = "cancel"  # the device itself gives up (Ctrl-C in `siteaudit connect`) before the exchange


_S = DeviceLoginStatus
_M = DeviceMove
DEVICE_MOVES: Final[Mapping[tuple[DeviceLoginStatus, DeviceMove], DeviceLoginStatus]] = MappingProxyType(
    {
        (_S.PENDING, _M.APPROVE): _S.APPROVED,
        (_S.PENDING, _M.DENY): _S.DENIED,
        (_S.PENDING, _M.EXPIRE): _S.EXPIRED,
        (_S.APPROVED, _M.EXCHANGE): _S.EXCHANGED,
        (_S.APPROVED, _M.APPROVER_LEFT): _S.DENIED,
        (_S.APPROVED, _M.EXPIRE): _S.EXPIRED,
        (_S.PENDING, _M.CANCEL): _S.DENIED,
        (_S.APPROVED, _M.CANCEL): _S.DENIED,
    }
)


class DevicePollRefused(DomainError):
    """A device-token poll that yields no key; `code` is its RFC 8628 error name."""


class AuthorizationPending(DevicePollRefused):
    code = ErrorCode.AUTHORIZATION_PENDING
    default_message = "the login has not been approved yet; poll again after the interval"


class SlowDown(DevicePollRefused):
    code = ErrorCode.SLOW_DOWN

    def __init__(self, interval_seconds: int = int(POLL_INTERVAL.total_seconds())) -> None:
        super().__init__(f"polled too fast; wait at least {interval_seconds} s between polls")
        self.interval_seconds = interval_seconds


class AccessDenied(DevicePollRefused):
    code = ErrorCode.ACCESS_DENIED
    default_message = "the login was denied, or its approver is no longer in the team"


class ExpiredToken(DevicePollRefused):
    code = ErrorCode.EXPIRED_TOKEN
    default_message = "the device code has expired; start a new login"


class InvalidGrant(DevicePollRefused):
    code = ErrorCode.INVALID_GRANT
    default_message = "the device code is unknown or has already been used"


class PollAnswer(enum.StrEnum):
    GRANTED = "granted"
    AUTHORIZATION_PENDING = "authorization_pending"
    SLOW_DOWN = "slow_down"
    ACCESS_DENIED = "access_denied"
    EXPIRED_TOKEN = "expired_token"
    INVALID_GRANT = "invalid_grant"


_REFUSALS: Final[Mapping[PollAnswer, Callable[[], DevicePollRefused]]] = MappingProxyType(
    {
        PollAnswer.AUTHORIZATION_PENDING: AuthorizationPending,
        PollAnswer.SLOW_DOWN: SlowDown,
        PollAnswer.ACCESS_DENIED: AccessDenied,
        PollAnswer.EXPIRED_TOKEN: ExpiredToken,
        PollAnswer.INVALID_GRANT: InvalidGrant,
    }
)


@frozen
class KeyGrant:
    """Issue a CLI key now, once, for this holder and team (the exchange has already been recorded)."""

    login_id: DeviceLoginId
    user_id: UserId
    team_id: TeamId
    client_name: str


@frozen
class PollOutcome:
    """What a poll answered: a grant, or a refusal the caller raises after saving the login."""

    answer: PollAnswer
    grant: KeyGrant | None = None

    def __attrs_post_init__(self) -> None:
        if (self.answer is PollAnswer.GRANTED) != (self.grant is not None):
            raise ValueError("a poll outcome carries a grant exactly when it is granted")

    @property
    def granted(self) -> bool:
        return self.grant is not None

    def refusal(self) -> DevicePollRefused:
        """The typed error for a refused poll. Raises ValueError for a granted one."""
        if self.answer is PollAnswer.GRANTED:
            raise ValueError("a granted poll has no refusal")
        return _REFUSALS[self.answer]()

    def raise_if_refused(self) -> KeyGrant:
        """The grant, or raise the refusal's typed error."""
        if self.grant is None:
            raise self.refusal()
        return self.grant


@frozen
class DeviceLoginDecided:
    login_id: DeviceLoginId
    status: DeviceLoginStatus
    by: UserId | None
    team_id: TeamId | None
    at: datetime


def client_identity(client_name: str) -> tuple[str, tuple[str, ...]]:
    """The place and the agents (sorted, without repeats) a client name names, as CONNECT_FORM says.

    `connect on tea-kettle.local: codex, claude-code` -> (`tea-kettle.local`, (`claude-code`, `codex`));
    `connect on tea-kettle in /src/shop: codex` -> (`tea-kettle in /src/shop`, (`codex`,));
    `siteaudit connect on tea-kettle.local` -> (`tea-kettle.local`, DEFAULT_AGENTS); `laptop` ->
    (`laptop`, DEFAULT_AGENTS); an empty name -> (UNNAMED_MACHINE, DEFAULT_AGENTS).
    """
    found = _CONNECT.search(client_name)
    if found is None:
        return client_name.strip() or UNNAMED_MACHINE, DEFAULT_AGENTS
    agents = tuple(sorted({a.strip() for a in (found["agents"] or "").split(",") if a.strip()}))
    place = found["host"].strip()
    if found["folder"] and found["folder"].strip():
        place += f" in {found['folder'].strip()}"
    return place, agents or DEFAULT_AGENTS


def device_code_hash(device_code: str) -> str:
    """The stored form of a device code: it is a bearer secret until exchanged, so only its hash is kept."""
    return hashlib.sha256(device_code.encode("utf-8")).hexdigest()


def new_user_code(random_letters: str) -> str:
    """A user code from 8 letters of USER_CODE_ALPHABET drawn by the caller's secure random source.

    Raises ValueError when the letters are not that: a broken random source is a bug, not a user error.
    """
    if len(random_letters) != USER_CODE_LENGTH or any(c not in USER_CODE_ALPHABET for c in random_letters):
        raise ValueError(f"a user code needs exactly {USER_CODE_LENGTH} letters of {USER_CODE_ALPHABET}")
    return random_letters


def format_user_code(code: str) -> str:
    """How a user code is shown: `XXXX-XXXX`."""
    half = USER_CODE_LENGTH // 2
    return f"{code[:half]}-{code[half:]}"


def is_user_code(text: str) -> bool:
    """True when `text` is a stored-form user code: 8 letters of USER_CODE_ALPHABET, nothing else."""
    return len(text) == USER_CODE_LENGTH and all(c in USER_CODE_ALPHABET for c in text)


def normalise_user_code(text: str) -> str:
    """The stored form of what a person typed: case, spaces and dashes do not matter (`bcdf-ghjk ` works).

    Raises ValidationFailed (field `user_code`) when what is left is not 8 letters of the alphabet.
    """
    cleaned = "".join(c for c in text.upper() if not c.isspace() and c not in "-\u2010\u2011\u2012\u2013")
    if not is_user_code(cleaned):
        raise ValidationFailed({"user_code": f"expected {format_user_code('X' * USER_CODE_LENGTH)}"})
    return cleaned


@frozen(kw_only=True)
class DeviceLogin:
    """One device login, from `POST /device/start` to the key exchange or its end.

    `approved_by` and `team_id` are set by approval; `version` counts status moves only.
    """

    id: DeviceLoginId
    device_code_hash: str
    user_code: str  # stored form: 8 letters, no dash
    client_name: str
    requested_ip: str
    created_at: datetime
    expires_at: datetime
    interval: timedelta = POLL_INTERVAL
    last_polled_at: datetime | None = None
    status: DeviceLoginStatus = DeviceLoginStatus.PENDING
    approved_by: UserId | None = None
    team_id: TeamId | None = None
    version: int = 0

    @classmethod
    def start(
        cls,
        *,
        login_id: DeviceLoginId,
        device_code: str,
        user_code: str,
        client_name: str,
        requested_ip: str,
        now: datetime,
    ) -> Self:
        """A new pending login. `device_code` and `user_code` come from the caller's secure random source;
        only the device code's hash is kept. Raises ValidationFailed for a client name over 64 characters,
        ValueError for codes a secure source could not have produced."""
        if len(client_name) > MAX_CLIENT_NAME_LENGTH:
            raise ValidationFailed({"client_name": f"at most {MAX_CLIENT_NAME_LENGTH} characters"})
        if len(device_code) < MIN_DEVICE_CODE_LENGTH:
            raise ValueError(f"a device code needs at least {MIN_DEVICE_CODE_LENGTH} characters")
        if not is_user_code(user_code):
            raise ValueError("the user code must be in stored form; see new_user_code")
        return cls(
            id=login_id,
            device_code_hash=device_code_hash(device_code),
            user_code=user_code,
            client_name=client_name,
            requested_ip=requested_ip,
            created_at=now,
            expires_at=now + LIFETIME,
        )

    @property
    def display_user_code(self) -> str:
        return format_user_code(self.user_code)

    def expired_at(self, now: datetime) -> bool:
        """True from the 600th second on: at exactly `expires_at` the code no longer works."""
        return now >= self.expires_at

    def is_live(self, now: datetime) -> bool:
        """Still waiting for the person's decision: the approval page may approve or deny it."""
        return self.status is DeviceLoginStatus.PENDING and not self.expired_at(now)

    def seconds_left(self, now: datetime) -> int:
        """Whole seconds until expiry (rounded up, never negative): `expires_in` for a fresh login."""
        return max(0, math.ceil((self.expires_at - now).total_seconds()))

    def approve(self, *, user: UserId, team: TeamId, now: datetime) -> tuple[Self, DeviceLoginDecided]:
        """The person approves on the approval page, choosing the team the key will act for.

        Raises InvalidTransition (409 conflict) unless pending, ExpiredToken (400) once expired.
        """
        status = self._decidable(DeviceMove.APPROVE, now)
        approved = evolve(self, status=status, approved_by=user, team_id=team, version=self.version + 1)
        return approved, DeviceLoginDecided(login_id=self.id, status=status, by=user, team_id=team, at=now)

    def deny(self, *, now: datetime) -> tuple[Self, DeviceLoginDecided]:
        """The person denies on the approval page. Raises like `approve`."""
        status = self._decidable(DeviceMove.DENY, now)
        denied = evolve(self, status=status, version=self.version + 1)
        return denied, DeviceLoginDecided(login_id=self.id, status=status, by=None, team_id=None, at=now)

    def cancel(self, now: datetime) -> Self:
        """The device gives its login up (rules in the module docstring). Raises InvalidGrant once
        exchanged."""
        if self.status is DeviceLoginStatus.EXCHANGED:
            raise InvalidGrant()
        if self.status in (DeviceLoginStatus.DENIED, DeviceLoginStatus.EXPIRED):
            return self
        move = DeviceMove.EXPIRE if self.expired_at(now) else DeviceMove.CANCEL
        status = next_state(DEVICE_MOVES, self.status, move, entity="device login")
        return evolve(self, status=status, version=self.version + 1)

    def poll(self, now: datetime, *, approver_in_team: bool) -> tuple[Self, PollOutcome]:
        """Decide a `POST /device/token` poll (order and rules in the module docstring).

        `approver_in_team` is whether `approved_by` is still a member of `team_id`; it is read only for an
        approved login. On a grant the login is already `exchanged`: the caller creates the key in the
        same transaction that stores this login with a conditional update from `approved`, so a racing
        poll finds nothing to update and answers `invalid_grant`.
        """
        if self.status is DeviceLoginStatus.EXCHANGED:
            return self, PollOutcome(PollAnswer.INVALID_GRANT)
        if self.status is DeviceLoginStatus.EXPIRED:
            return self, PollOutcome(PollAnswer.EXPIRED_TOKEN)
        if self.expired_at(now):
            if self.status is DeviceLoginStatus.DENIED:
                return self, PollOutcome(PollAnswer.EXPIRED_TOKEN)
            return self._polled(DeviceMove.EXPIRE, now), PollOutcome(PollAnswer.EXPIRED_TOKEN)
        if self.status is DeviceLoginStatus.DENIED:
            return self, PollOutcome(PollAnswer.ACCESS_DENIED)
        if self.last_polled_at is not None and now - self.last_polled_at < self.interval:
            return self._polled(None, now), PollOutcome(PollAnswer.SLOW_DOWN)
        if self.status is DeviceLoginStatus.PENDING:
            return self._polled(None, now), PollOutcome(PollAnswer.AUTHORIZATION_PENDING)
        if not approver_in_team:
            return self._polled(DeviceMove.APPROVER_LEFT, now), PollOutcome(PollAnswer.ACCESS_DENIED)
        # An approved login always has both; the check keeps a malformed row from issuing a key.
        if self.approved_by is None or self.team_id is None:
            raise ValueError(f"device login {self.id} is approved without an approver and team")
        exchanged = self._polled(DeviceMove.EXCHANGE, now)
        grant = KeyGrant(
            login_id=self.id, user_id=self.approved_by, team_id=self.team_id, client_name=self.client_name
        )
        return exchanged, PollOutcome(PollAnswer.GRANTED, grant)

    def _decidable(self, move: DeviceMove, now: datetime) -> DeviceLoginStatus:
        status = next_state(DEVICE_MOVES, self.status, move, entity="device login")
        if self.expired_at(now):
            raise ExpiredToken()
        return status

    def _polled(self, move: DeviceMove | None, now: datetime) -> Self:
        # max(): a clock that steps back must not reopen the interval for a fast poller.
        last = now if self.last_polled_at is None else max(now, self.last_polled_at)
        if move is None:
            return evolve(self, last_polled_at=last)
        status = next_state(DEVICE_MOVES, self.status, move, entity="device login")
        return evolve(self, status=status, last_polled_at=last, version=self.version + 1)


@frozen
class FailedAttempts:
    """Failed user-code attempts on the approval page within a sliding window (docs/security.md "Device
    login").

    One value per IP, one per user and one global budget, each with its own limit. Only the latest
    `limit` failures are kept: older ones cannot change the answer.
    """

    limit: int = field(default=10, validator=validators.ge(1))
    window: timedelta = timedelta(minutes=15)
    recent: tuple[datetime, ...] = ()

    def _within(self, now: datetime) -> tuple[datetime, ...]:
        return tuple(t for t in self.recent if now - t < self.window)

    def allowed(self, now: datetime) -> bool:
        """Whether another attempt may be judged at `now`."""
        return len(self._within(now)) < self.limit

    def register_failure(self, now: datetime) -> Self:
        """The value after a failed attempt at `now`."""
        kept = (*self._within(now), now)
        return evolve(self, recent=kept[-self.limit :])

    def retry_after(self, now: datetime) -> int:
        """Whole seconds (rounded up) until an attempt is allowed again; 0 when it is now."""
        within = sorted(self._within(now))
        if len(within) < self.limit:
            return 0
        # The attempt frees up when the oldest failure that still counts against the limit leaves the window.
        frees_at = within[len(within) - self.limit] + self.window
        return max(1, math.ceil((frees_at - now).total_seconds()))
