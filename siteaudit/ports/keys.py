"""API keys: stored by SHA-256 hash and prefix only."""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from attrs import frozen

from siteaudit.domain.apikey import ApiKey
from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import ApiKeyId, AuditId, UserId
from siteaudit.domain.lease import Lease
from siteaudit.ports.ratelimit import Limit, RateDecision


class ApiKeyRepository(Protocol):
    def add(self, key: ApiKey) -> ApiKey:
        """Stage a new key; an id of 0 is replaced by a fresh one. Raises Conflict if the hash exists."""
        ...

    def get(self, key_id: ApiKeyId) -> ApiKey:
        """Raises NotFound."""
        ...

    def by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this SHA-256 hex hash, whatever its status; None when unknown."""
        ...

    def by_hash_for_request(self, key_hash: str) -> tuple[ApiKey, bool] | None:
        """`by_hash` and whether the key's holder is still a member of the key's team, in one read."""
        ...

    def of_user(self, user_id: UserId) -> Sequence[ApiKey]:
        """The holder's keys of every team and status, oldest first."""
        ...

    def with_prefix(self, start: str) -> Sequence[ApiKey]:
        """Keys of every holder whose prefix starts with `start` (at most 12 characters), oldest first."""
        ...

    def save(self, key: ApiKey) -> None:
        """Stage a status change. Raises ConcurrentUpdate if the stored version moved since it was loaded."""
        ...

    def touch(self, key_id: ApiKeyId, at: datetime) -> None:
        """Record a use at `at` (never moving `last_used_at` backwards); not a versioned change. A use is a
        hint: an adapter may let the transaction that records it commit without waiting for the disk, so
        record it in a transaction of its own."""
        ...


@frozen
class KeyRequest:
    """A request at the key gate: its key's hash, the rate bucket and limit it is counted against, when
    it came, the moment at or before which a key's last use is recorded again, and the audit it asks
    for, if any."""

    key_hash: str
    bucket: str
    limit: Limit
    now: datetime
    touch_before: datetime
    audit: AuditId | None = None


@frozen
class KeyAdmission:
    """What `KeyGate.admit` found: the key, whether its holder is still in its team, and the rate
    decision of the request, None when the request was not counted (a key not active, or its holder
    no longer in the team); and the audit asked for with its lease, only when the request was let in
    and counted and the audit is the key's team's (None otherwise, and when none was asked for)."""

    key: ApiKey
    in_team: bool
    decision: RateDecision | None
    audit: tuple[Audit, Lease | None] | None = None


class KeyGate(Protocol):
    """Letting a request's key in and counting the request, in ONE round trip to the database (the REST
    door's hot path). Nothing is cached: a key revoked or a member removed a moment ago is seen as such."""

    def admit(self, request: KeyRequest) -> KeyAdmission | None:
        """The key with the request's hash and whether its holder is in its team; when the key is active
        and the holder a member, one request counted against `bucket` as `RateLimiter.hit` counts it (a
        refused request is not counted) and the key's use recorded at `now` when its last recorded
        use is at or before `touch_before` or missing (never moving it backwards). None for an unknown key,
        and then nothing is counted or written. With `audit`, that audit and its lease are read in the
        same round trip and kept only for a request let in and counted, when the audit is the key's
        team's (`KeyAdmission.audit`)."""
        ...
