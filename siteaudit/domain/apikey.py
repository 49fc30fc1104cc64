"""API keys: their format, their lifecycle (active, revoked, replaced) and letting a request in."""

import enum
import hashlib
import re
import string
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Final, Self

from attrs import evolve, field, frozen

from siteaudit.domain.error import (
    Conflict,
    InvalidTransition,
    NotFound,
    TeamAccessRevoked,
    Unauthenticated,
    ValidationFailed,
)
from siteaudit.domain.ids import ApiKeyId, TeamId, UserId
from siteaudit.domain.lifecycle import next_state
from siteaudit.domain.records import copy_named

KEY_MARK: Final = "sk_"
KEY_RANDOM_LENGTH: Final = 40
KEY_ALPHABET: Final = string.ascii_letters + string.digits
PREFIX_LENGTH: Final = 12
# A read must not turn into a write on every request.
LAST_USED_EVERY: Final = timedelta(minutes=1)
MAX_MACHINE_LENGTH: Final = 255

# No re.IGNORECASE and no `$`: `$` would accept a trailing newline.
_KEY_SHAPE: Final = re.compile(r"sk_[A-Za-z0-9]{40}")


class ApiKeyKind(enum.StrEnum):
    SETTINGS = "settings"
    CLI = "cli"


class ApiKeyStatus(enum.StrEnum):
    ACTIVE = "active"
    REVOKED = "revoked"
    REPLACED = "replaced"


class ApiKeyMove(enum.StrEnum):
    REVOKE = "revoke"
    ROTATE = "rotate"  # Settings keys only: the old key is revoked and a new one issued
    REPLACE = "replace"  # CLI keys only: the same machine, agents and team connected again


API_KEY_MOVES: Final[Mapping[tuple[ApiKeyStatus, ApiKeyMove], ApiKeyStatus]] = MappingProxyType(
    {
        (ApiKeyStatus.ACTIVE, ApiKeyMove.REVOKE): ApiKeyStatus.REVOKED,
        (ApiKeyStatus.ACTIVE, ApiKeyMove.ROTATE): ApiKeyStatus.REVOKED,
        (ApiKeyStatus.ACTIVE, ApiKeyMove.REPLACE): ApiKeyStatus.REPLACED,
    }
)

# Which kind of key each move applies to; a move missing here applies to every kind.
_MOVE_KIND: Final[Mapping[ApiKeyMove, ApiKeyKind]] = MappingProxyType(
    {ApiKeyMove.ROTATE: ApiKeyKind.SETTINGS, ApiKeyMove.REPLACE: ApiKeyKind.CLI}
)


class SettingsKeyExists(Conflict):
    """A second Settings key for the same holder and team: the app must rotate the existing one instead."""

    def __init__(self, user_id: UserId, team_id: TeamId) -> None:
        super().__init__(f"user {user_id} already has a Settings key for team {team_id}; rotate it instead")
        self.user_id = user_id
        self.team_id = team_id


def is_well_formed(raw: str) -> bool:
    """True for exactly `sk_` plus 40 characters of [A-Za-z0-9], nothing before or after."""
    return _KEY_SHAPE.fullmatch(raw) is not None


def key_hash(raw: str) -> str:
    """The stored form of a key: lowercase SHA-256 hex of its UTF-8 bytes."""
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def key_prefix(raw: str) -> str:
    """The part shown in listings and returned as `api_key_prefix`."""
    return raw[:PREFIX_LENGTH]


def hash_for_lookup(raw: str) -> str:
    """The hash to look a presented key up by. Raises Unauthenticated for a malformed key, so a malformed
    key costs no database query and answers the same 401 as an unknown one (docs/security.md "API keys")."""
    if not is_well_formed(raw):
        raise Unauthenticated()
    return key_hash(raw)


@frozen
class KeyMaterial:
    """A freshly made key: `raw` is shown once and never stored; `prefix` and `hash` are what is kept."""

    raw: str = field(repr=False)
    prefix: str
    hash: str


def new_key_material(random_chars: str) -> KeyMaterial:
    """Build a key from 40 characters of KEY_ALPHABET drawn by the caller's secure random source.

    Raises ValueError when the characters are not that: a broken random source is a bug, not a user error.
    """
    if len(random_chars) != KEY_RANDOM_LENGTH or any(c not in KEY_ALPHABET for c in random_chars):
        raise ValueError(f"an API key needs exactly {KEY_RANDOM_LENGTH} characters of [A-Za-z0-9]")
    raw = KEY_MARK + random_chars
    return KeyMaterial(raw=raw, prefix=key_prefix(raw), hash=key_hash(raw))


def listing_label(kind: ApiKeyKind, machine: str = "", agents: Iterable[str] = ()) -> str:
    """How a key is named in the holder's key list (docs/app.md): a CLI key in the form the connect command
    writes into the device login's client name (`siteaudit.domain.device.CONNECT_FORM`)."""
    if kind is ApiKeyKind.SETTINGS:
        return "Settings key"
    names = ", ".join(sorted(agents))
    return f"connect on {machine}: {names}" if names else f"connect on {machine}"


@frozen
class ApiKeyIssued:
    key_id: ApiKeyId
    user_id: UserId
    team_id: TeamId
    kind: ApiKeyKind
    at: datetime
    supersedes: tuple[ApiKeyId, ...] = ()  # the rotated-out or replaced keys


@frozen
class ApiKeyStopped:
    key_id: ApiKeyId
    user_id: UserId
    team_id: TeamId
    status: ApiKeyStatus
    at: datetime


@frozen(kw_only=True)
class ApiKey:
    """One key of one holder, acting for exactly one team.

    `revoked_at` is when the key stopped working, whether revoked, rotated out or replaced; `version`
    counts status moves only: recording `last_used_at` is not a move, so concurrent requests never race
    on it.
    """

    id: ApiKeyId
    user_id: UserId
    team_id: TeamId
    kind: ApiKeyKind
    prefix: str
    hash: str
    machine: str = ""  # the hostname a CLI key was connected on; empty for a Settings key
    agents: frozenset[str] = frozenset()  # the agents a CLI key was connected for; empty for a Settings key
    label: str
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    status: ApiKeyStatus = ApiKeyStatus.ACTIVE
    version: int = 0

    @property
    def active(self) -> bool:
        return self.status is ApiKeyStatus.ACTIVE

    @property
    def cli_slot(self) -> tuple[UserId, str, frozenset[str], TeamId]:
        """What a CLI key is unique by among active keys: connecting again with it replaces the key."""
        return (self.user_id, self.machine, self.agents, self.team_id)

    def authorise(self, *, holder_in_team: bool, now: datetime) -> Self:
        """Let a request with this key in, and return the key with its last use recorded when due.

        Raises Unauthenticated (401) for a revoked, rotated-out or replaced key, and TeamAccessRevoked
        (403) when the holder is no longer a member of the key's team: that key stays active
        (docs/agents.md).
        """
        if not self.active:
            raise Unauthenticated()
        if not holder_in_team:
            raise TeamAccessRevoked()
        return self.touched(now)

    def should_touch(self, now: datetime) -> bool:
        """Whether a request at `now` must write `last_used_at`: at most once a minute, never backwards."""
        return self.last_used_at is None or now - self.last_used_at >= LAST_USED_EVERY

    def touched(self, now: datetime) -> Self:
        """The key after a request at `now`; unchanged (the same object) when no write is due."""
        if not self.should_touch(now):
            return self
        return evolve(self, last_used_at=now)

    def revoke(self, *, by: UserId, now: datetime) -> tuple[Self, ApiKeyStopped]:
        """The holder revokes the key. Another user's key answers NotFound: it is not in their list."""
        self._require_holder(by)
        return self._stop(ApiKeyMove.REVOKE, now)

    def rotate(
        self, *, by: UserId, new_key_id: ApiKeyId, material: KeyMaterial, now: datetime
    ) -> tuple[Self, "ApiKey", ApiKeyIssued]:
        """Rotate a Settings key: this one is revoked at once; returns it, its successor (same holder and
        team) and the issue event. CLI keys of the holder are untouched."""
        self._require_holder(by)
        old, _ = self._stop(ApiKeyMove.ROTATE, now)
        new = _new_key(
            ApiKeyKind.SETTINGS,
            key_id=new_key_id,
            user=self.user_id,
            team=self.team_id,
            material=material,
            now=now,
        )
        return old, new, _issued(new, supersedes=(self.id,))

    def replace(self, *, now: datetime) -> tuple[Self, ApiKeyStopped]:
        """A CLI key whose machine connected again with the same agents and team stops working."""
        return self._stop(ApiKeyMove.REPLACE, now)

    def _require_holder(self, user: UserId) -> None:
        if user != self.user_id:
            raise NotFound("API key", self.id)

    def _stop(self, move: ApiKeyMove, now: datetime) -> tuple[Self, ApiKeyStopped]:
        entity = f"{self.kind.value} API key"
        wanted_kind = _MOVE_KIND.get(move, self.kind)
        status = next_state(API_KEY_MOVES, self.status, move, entity=entity)
        if wanted_kind is not self.kind:
            # Checked after the table so a stopped key always answers the same way, whatever its kind.
            raise InvalidTransition(entity, self.status.value, move.value)
        stopped = evolve(self, status=status, revoked_at=now, version=self.version + 1)
        event = ApiKeyStopped(
            key_id=self.id, user_id=self.user_id, team_id=self.team_id, status=status, at=now
        )
        return stopped, event


def _new_key(
    kind: ApiKeyKind,
    *,
    key_id: ApiKeyId,
    user: UserId,
    team: TeamId,
    material: KeyMaterial,
    now: datetime,
    machine: str = "",
    agents: frozenset[str] = frozenset(),
) -> ApiKey:
    return ApiKey(
        id=key_id,
        user_id=user,
        team_id=team,
        kind=kind,
        prefix=material.prefix,
        hash=material.hash,
        machine=machine,
        agents=agents,
        label=listing_label(kind, machine, agents),
        created_at=now,
    )


def _issued(key: ApiKey, *, supersedes: tuple[ApiKeyId, ...] = ()) -> ApiKeyIssued:
    """The event of `key` being issued (at its creation): its holder, team and kind by name."""
    return copy_named(ApiKeyIssued, key, key_id=key.id, at=key.created_at, supersedes=supersedes)


def new_settings_key(
    existing: Iterable[ApiKey],
    *,
    key_id: ApiKeyId,
    user: UserId,
    team: TeamId,
    material: KeyMaterial,
    now: datetime,
) -> tuple[ApiKey, ApiKeyIssued]:
    """Create the holder's Settings key for `team`, given the holder's keys (any team, any status).

    Raises SettingsKeyExists (409 conflict) when an active one exists: there is one per user and team,
    and replacing it is a rotation, which the holder asks for explicitly.
    """
    for key in existing:
        if key.active and key.kind is ApiKeyKind.SETTINGS and key.user_id == user and key.team_id == team:
            raise SettingsKeyExists(user, team)
    key = _new_key(ApiKeyKind.SETTINGS, key_id=key_id, user=user, team=team, material=material, now=now)
    return key, _issued(key)


def connect_cli_key(
    existing: Iterable[ApiKey],
    *,
    key_id: ApiKeyId,
    user: UserId,
    team: TeamId,
    machine: str,
    agents: Iterable[str],
    material: KeyMaterial,
    now: datetime,
) -> tuple[ApiKey, tuple[ApiKey, ...], ApiKeyIssued]:
    """Issue a CLI key (the device login's exchange), given the holder's keys (any team, any status).

    Returns the new key, the previously active keys of the same machine, agents and team now `replaced`,
    and the issue event. Raises ValidationFailed for an empty machine name or an empty set of agents.
    """
    agent_set = frozenset(agents)
    problems: dict[str, str] = {}
    if not machine.strip() or len(machine) > MAX_MACHINE_LENGTH:
        problems["machine"] = f"a hostname of 1 to {MAX_MACHINE_LENGTH} characters is required"
    if not agent_set or any(not a.strip() for a in agent_set):
        problems["agents"] = "at least one agent, each with a non-empty name, is required"
    if problems:
        raise ValidationFailed(problems)
    key = _new_key(
        ApiKeyKind.CLI,
        key_id=key_id,
        user=user,
        team=team,
        material=material,
        now=now,
        machine=machine,
        agents=agent_set,
    )
    replaced = tuple(
        old.replace(now=now)[0]
        for old in existing
        if old.active and old.kind is ApiKeyKind.CLI and old.cli_slot == key.cli_slot
    )
    return key, replaced, _issued(key, supersedes=tuple(old.id for old in replaced))
