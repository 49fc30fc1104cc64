"""API keys: stored by SHA-256 hash and prefix only."""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from siteaudit.domain.apikey import ApiKey
from siteaudit.domain.ids import ApiKeyId, UserId


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
