"""Rate limits shared by every process: one GCRA theoretical arrival time (TAT) per bucket in `rate_buckets`.

On PostgreSQL a request is decided by ONE statement (docs/security.md "Rate limits"): an upsert whose `DO
UPDATE ... WHERE` lets the TAT move only when the request fits, so concurrent requests on one bucket queue on
its row lock and each sees the TAT the previous one left; no row returned means refused. The statement runs in
autocommit with an asynchronous commit: one round trip, no wait for the WAL to reach the disk (a server
crash may forget the last fraction of a second of counted requests, which only errs towards letting a
few more in; it never corrupts a bucket). On SQLite the same
arithmetic (`siteaudit.domain.ratelimit.gcra`) runs inside the single write transaction. Either way the
answer is the one the in-memory limiter gives for the same sequence.
"""

from datetime import datetime
from typing import Any, Final

from sqlalchemy import Connection, Engine, select

from siteaudit.adapters.sql.dialect import dialect_insert
from siteaudit.adapters.sql.engine import READ_ONLY, autocommit_driver, is_sqlite
from siteaudit.adapters.sql.tables import rate_buckets
from siteaudit.domain.ratelimit import gcra
from siteaudit.ports.ratelimit import Limit, RateDecision

# The domain's tolerance, so a request landing exactly on the period's edge is decided alike everywhere.
_EPSILON: Final = 1e-9

# `set_config(..., true)` lasts until the end of the statement's own transaction, that is its commit: the
# derived table makes the server evaluate it (an unreferenced CTE would not be) before the row is written.
# Driver SQL (psycopg's parameter style): the statement runs on the pooled driver connection directly.
_HIT: Final = (
    "INSERT INTO rate_buckets AS b (key, tat)"
    " SELECT %(key)s, %(now)s + %(interval)s"
    " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS sync_off"
    " ON CONFLICT (key) DO UPDATE SET tat = GREATEST(b.tat, %(now)s) + %(interval)s"
    " WHERE GREATEST(b.tat, %(now)s) + %(interval)s - %(now)s <= %(period)s + %(epsilon)s"
    " RETURNING tat"
)
_TAT: Final = "SELECT tat FROM rate_buckets WHERE key = %(key)s"


def _allowed(tat: float, now: float, limit: Limit) -> RateDecision:
    """The decision for a counted request that moved the bucket's TAT to `tat` (as `gcra` computes it)."""
    remaining = int((limit.period_s - (tat - now)) / limit.interval_s + _EPSILON)
    return RateDecision(True, limit.count, remaining, tat - now, 0.0)


def _refused(tat: float | None, now: float, limit: Limit) -> RateDecision:
    current = tat if tat is not None else now
    retry = max(current, now) + limit.interval_s - now - limit.period_s
    return RateDecision(False, limit.count, 0, max(0.0, current - now), max(0.0, retry))


def _refused_now(driver: Any, bucket: str, now: float, limit: Limit) -> RateDecision:
    """A refusal, from the TAT read now: at least the one that refused (it never moves back), so
    Retry-After errs on the patient side."""
    current = driver.execute(_TAT, {"key": bucket}).fetchone()
    return _refused(None if current is None else float(current[0]), now, limit)


def _decision(tat: float | None, now: float, limit: Limit) -> RateDecision:
    result = gcra(tat, now, count=limit.count, period_s=limit.period_s)
    return RateDecision(result.allowed, limit.count, result.remaining, result.reset_s, result.retry_after_s)


class SqlRateLimiter:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sqlite = is_sqlite(engine)

    def _tat(self, conn: Connection, bucket: str) -> float | None:
        value = conn.execute(select(rate_buckets.c.tat).where(rate_buckets.c.key == bucket)).scalar()
        return None if value is None else float(value)

    def hit(self, bucket: str, limit: Limit, *, now: datetime) -> RateDecision:
        moment = now.timestamp()
        if self._sqlite:
            return self._hit_sqlite(bucket, limit, moment)
        # Every request runs this: one statement on the pooled driver connection in autocommit.
        with autocommit_driver(self.engine) as driver:
            parameters = {
                "key": bucket,
                "now": moment,
                "interval": limit.interval_s,
                "period": limit.period_s,
                "epsilon": _EPSILON,
            }
            row = driver.execute(_HIT, parameters).fetchone()
            if row is not None:
                return _allowed(float(row[0]), moment, limit)
            # Refused: nothing was written.
            return _refused_now(driver, bucket, moment, limit)

    def _hit_sqlite(self, bucket: str, limit: Limit, moment: float) -> RateDecision:
        with self.engine.begin() as conn:  # BEGIN IMMEDIATE: the one writer, from read to write
            result = gcra(self._tat(conn, bucket), moment, count=limit.count, period_s=limit.period_s)
            if result.allowed:
                statement = dialect_insert(conn, rate_buckets).values(key=bucket, tat=result.tat)
                conn.execute(
                    statement.on_conflict_do_update(
                        index_elements=[rate_buckets.c.key], set_={"tat": statement.excluded.tat}
                    )
                )
        return RateDecision(
            result.allowed, limit.count, result.remaining, result.reset_s, result.retry_after_s
        )

    def peek(self, bucket: str, limit: Limit, *, now: datetime) -> RateDecision:
        with self.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
            return _decision(self._tat(conn, bucket), now.timestamp(), limit)
