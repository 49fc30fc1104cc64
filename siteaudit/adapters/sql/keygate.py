"""The REST hot path on PostgreSQL: a request's key, its holder's membership, the shared per-key rate limit
and the key's last use in ONE statement, one round trip (`siteaudit.ports.keys.KeyGate`).

Before, an authenticated request paid a round trip for the key with its membership and another for the
limiter's upsert. Now one statement reads the key (with EXISTS on the membership's primary key), and two
data-modifying CTEs act on what it read: the limiter's upsert (`ratelimit._HIT`, the same GCRA arithmetic
and the same row-lock queueing) counts the request only for an active key whose holder is a member, and
`last_used_at` moves at most once a minute (docs/security.md "API keys") under the same condition. PostgreSQL
runs every data-modifying CTE to completion whether or not the final SELECT reads it. Nothing is cached: each
request reads the key's current row, so a key revoked (or a member removed) a moment ago is refused at once.

Like the limiter, the statement runs on the pooled driver connection in autocommit with an asynchronous
commit (no wait for the WAL on disk: a server crash may forget the last fraction of a second of counted
requests and uses, which only errs towards letting a few more in). A refused request costs one more round
trip, to read the TAT that refused it for Retry-After (as `SqlRateLimiter.hit` does).
"""

from typing import Any, Final

from sqlalchemy import Engine

from siteaudit.adapters.sql.apikey import key_from_row
from siteaudit.adapters.sql.audit import (
    WITH_LEASE_COLUMNS,
    WITH_LEASE_NAMES,
    audit_from_row,
    driver_values,
    lease_of,
)
from siteaudit.adapters.sql.engine import autocommit_driver, json_loads
from siteaudit.adapters.sql.ratelimit import _EPSILON, _allowed, _refused_now
from siteaudit.domain.apikey import ApiKeyStatus
from siteaudit.domain.audit import Audit
from siteaudit.domain.lease import Lease
from siteaudit.ports.keys import KeyAdmission, KeyRequest

_COLUMNS: Final = (
    "id", "user_id", "team_id", "kind", "prefix", "hash", "machine", "agents", "label", "created_at",
    "last_used_at", "revoked_at", "status", "version",
)  # fmt: skip
_TIMES: Final = frozenset(("created_at", "last_used_at", "revoked_at"))

# Driver SQL (psycopg's parameter style). `admitted` is the one condition both writes share: an active
# key whose holder is still in the key's team (what `ApiKey.authorise` lets in).
_ADMIT: Final = (  # with the audit's columns and join, or none
    "WITH k AS ("
    " SELECT a.id, a.user_id, a.team_id, a.kind, a.prefix, a.hash, a.machine, a.agents::text AS agents,"
    " a.label, a.created_at, a.last_used_at, a.revoked_at, a.status, a.version,"
    " EXISTS (SELECT 1 FROM memberships m WHERE m.team_id = a.team_id AND m.user_id = a.user_id) AS in_team"
    " FROM api_keys a WHERE a.hash = %(hash)s"
    "), admitted AS (SELECT k.id FROM k WHERE k.status = %(active)s AND k.in_team"
    "), hit AS ("
    " INSERT INTO rate_buckets AS b (key, tat) SELECT %(bucket)s, %(now)s + %(interval)s FROM admitted"
    " ON CONFLICT (key) DO UPDATE SET tat = GREATEST(b.tat, %(now)s) + %(interval)s"
    " WHERE GREATEST(b.tat, %(now)s) + %(interval)s - %(now)s <= %(period)s + %(epsilon)s"
    " RETURNING tat"
    "), used AS ("
    " UPDATE api_keys u SET last_used_at = %(at)s FROM admitted"
    " WHERE u.id = admitted.id AND (u.last_used_at IS NULL OR u.last_used_at <= %(touch_before)s)"
    " RETURNING u.id"
    ")"
    " SELECT k.*, (SELECT tat FROM hit) AS tat{audit}"
    # Until the end of the statement's own transaction, that is its commit (see `ratelimit._HIT`).
    " FROM k, (SELECT set_config('synchronous_commit', 'off', true)) AS sync_off{audit_join}"
)
# The audit of `GET /v1/crawls/{id}` with its lease, read in the same round trip (docs/security.md
# "API keys"): kept only when the request was counted (`hit` returned the bucket's row, which it writes
# only for an `admitted` key: active, its holder a member, and only under the limit) and the audit is the
# key's team's; else its columns are NULL.
_AUDIT_JOIN: Final = (
    f" LEFT JOIN LATERAL (SELECT {WITH_LEASE_COLUMNS}"
    " FROM audits a LEFT OUTER JOIN audit_leases l ON l.audit_id = a.id"
    " WHERE a.id = %(audit)s AND a.team_id = k.team_id AND EXISTS (SELECT 1 FROM hit)) AS au ON true"
)
_KEY_ONLY: Final = _ADMIT.format(audit="", audit_join="")
_WITH_AUDIT: Final = _ADMIT.format(audit=", au.*", audit_join=_AUDIT_JOIN)
_AUDIT_AT: Final = len(_COLUMNS) + 2  # the audit's first column: after the key's, in_team and tat


def _key_row(row: tuple[Any, ...]) -> dict[str, Any]:
    values = driver_values(_COLUMNS, row[: len(_COLUMNS)], times=_TIMES)
    values["agents"] = json_loads(values["agents"])
    return values


def _audit(row: tuple[Any, ...]) -> tuple[Audit, Lease | None] | None:
    """The audit read with the key and its lease; None when none was asked for or none was kept."""
    if len(row) <= _AUDIT_AT or row[_AUDIT_AT] is None:
        return None
    read = driver_values(WITH_LEASE_NAMES, row[_AUDIT_AT:])
    return audit_from_row(read), lease_of(read)


class SqlKeyGate:
    """`KeyGate` on PostgreSQL (SQLite and memory go through the unit of work and the limiter instead)."""

    def __init__(self, engine: Engine) -> None:
        if engine.dialect.name != "postgresql":
            raise ValueError("the one-statement key gate is PostgreSQL's; SQLite needs none")
        self.engine = engine

    def admit(self, request: KeyRequest) -> KeyAdmission | None:
        bucket, limit, audit = request.bucket, request.limit, request.audit
        moment = request.now.timestamp()
        # One statement on the pooled driver connection in autocommit, as `SqlRateLimiter.hit`.
        with autocommit_driver(self.engine) as driver:
            parameters = {
                "hash": request.key_hash,
                "active": ApiKeyStatus.ACTIVE.value,
                "bucket": bucket,
                "now": moment,
                "interval": limit.interval_s,
                "period": limit.period_s,
                "epsilon": _EPSILON,
                "at": request.now,
                "touch_before": request.touch_before,
                "audit": audit,
            }
            row = driver.execute(_KEY_ONLY if audit is None else _WITH_AUDIT, parameters).fetchone()
            if row is None:
                return None
            key = key_from_row(_key_row(row))
            in_team = bool(row[len(_COLUMNS)])
            kept = _audit(row)  # the statement's to keep: none for a request it did not count
            if not (key.active and in_team):
                return KeyAdmission(key, in_team, None, kept)
            tat = row[len(_COLUMNS) + 1]
            if tat is not None:
                return KeyAdmission(key, in_team, _allowed(float(tat), moment, limit), kept)
            # Refused: nothing was counted.
            return KeyAdmission(key, in_team, _refused_now(driver, bucket, moment, limit), kept)
