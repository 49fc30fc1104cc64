"""API keys in SQL: the SHA-256 hash (unique) and the prefix, never the key; `last_used_at` outside versions."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from attrs import evolve
from sqlalchemy import bindparam, case, exists, func, literal, or_, select, true, update

from siteaudit.adapters.sql.rows import found, inserted_id, reader, row_values
from siteaudit.adapters.sql.tables import UtcDateTime, api_keys, memberships
from siteaudit.adapters.sql.version import Versioned
from siteaudit.domain.apikey import ApiKey
from siteaudit.domain.error import Conflict
from siteaudit.domain.ids import ApiKeyId, UserId

key_from_row: Final = reader(ApiKey)


def key_values(key: ApiKey) -> dict[str, Any]:
    return row_values(key, leave_out=("id",), agents=sorted(key.agents))


def _later_use(at: datetime) -> Any:
    """`last_used_at` moved to `at` unless it is already later: a use recorded late never rewinds it."""
    column = api_keys.c.last_used_at
    moment = literal(at, UtcDateTime)
    return case((or_(column.is_(None), column < moment), moment), else_=column)


# The key and whether its holder is still in the key's team, in one round trip (every request runs it);
# EXISTS keeps the membership check one primary-key probe however many memberships there are.
_FOR_REQUEST: Final = select(
    api_keys,
    exists()
    .where(memberships.c.team_id == api_keys.c.team_id, memberships.c.user_id == api_keys.c.user_id)
    .label("in_team"),
).where(api_keys.c.hash == bindparam("hash"))


# `set_config(..., true)`: until the end of the transaction, which then commits asynchronously. Evaluated
# once per statement (an uncorrelated subquery), at the latest when the first row to update is found.
_ASYNC_COMMIT: Final = (
    select(func.set_config("synchronous_commit", "off", true())).scalar_subquery().is_not(None)
)


class SqlApiKeyRepository(Versioned):
    kind = "API key"

    def _loaded(self, row: Any) -> ApiKey:
        return self._seen_as(key_from_row(row))

    def add(self, key: ApiKey) -> ApiKey:
        taken = Conflict("an API key with this hash exists")
        new_id = inserted_id(self._c(), api_keys, key_values(key), id=key.id, taken=taken)
        return self._seen_as(evolve(key, id=ApiKeyId(new_id)))

    def get(self, key_id: ApiKeyId) -> ApiKey:
        row = found(self._c(), api_keys, api_keys.c.id == key_id, entity="API key", key=key_id)
        return self._loaded(row)

    def by_hash(self, key_hash: str) -> ApiKey | None:
        row = self._c().execute(select(api_keys).where(api_keys.c.hash == key_hash)).one_or_none()
        return None if row is None else self._loaded(row)

    def by_hash_for_request(self, key_hash: str) -> tuple[ApiKey, bool] | None:
        row = self._c().execute(_FOR_REQUEST, {"hash": key_hash}).one_or_none()
        return None if row is None else (self._loaded(row), row.in_team)

    def of_user(self, user_id: UserId) -> Sequence[ApiKey]:
        rows = self._c().execute(
            select(api_keys).where(api_keys.c.user_id == user_id).order_by(api_keys.c.id)
        )
        return [self._loaded(r) for r in rows]

    def with_prefix(self, start: str) -> Sequence[ApiKey]:
        rows = self._c().execute(
            select(api_keys)
            .where(api_keys.c.prefix.startswith(start[:12], autoescape=True))
            .order_by(api_keys.c.id)
        )
        return [self._loaded(r) for r in rows]

    def save(self, key: ApiKey) -> None:
        values = key_values(key)
        del values["last_used_at"]
        if key.last_used_at is not None:
            values["last_used_at"] = _later_use(key.last_used_at)
        self._update(api_keys, [api_keys.c.id == key.id], key.id, values)

    def touch(self, key_id: ApiKeyId, at: datetime) -> None:
        statement = (
            update(api_keys)
            .where(
                api_keys.c.id == key_id,
                or_(api_keys.c.last_used_at.is_(None), api_keys.c.last_used_at < literal(at, UtcDateTime)),
            )
            .values(last_used_at=at)
        )
        conn = self._c()
        if conn.dialect.name == "postgresql":
            # A use is a hint, not a record (written at most once a minute: docs/security.md "API keys"): the
            # transaction commits without waiting for the disk, in the same round trip as the update.
            statement = statement.where(_ASYNC_COMMIT)
        conn.execute(statement)
