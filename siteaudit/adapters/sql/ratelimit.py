"""Rate limits shared by every process: one GCRA theoretical arrival time (TAT) per bucket in `rate_buckets`.

On PostgreSQL a request is decided by ONE statement (SECURITY 4): an upsert whose `DO UPDATE ... WHERE`
lets the TAT move only when the request fits, so concurrent requests on one bucket queue on its row lock
and each sees the TAT the previous one left; no row returned means refused. On SQLite the same
arithmetic (`siteaudit.domain.ratelimit.gcra`) runs inside the single write transaction. Either way the
answer is the one the in-memory limiter gives for the same sequence.
"""

from datetime import datetime
from typing import Final

from sqlalchemy import Connection, Engine, select, text

from siteaudit.adapters.sql.dialect import dialect_insert
from siteaudit.adapters.sql.engine import READ_ONLY, is_sqlite
from siteaudit.adapters.sql.tables import rate_buckets
from siteaudit.domain.ratelimit import gcra
from siteaudit.ports.ratelimit import Limit, RateDecision

# The domain's tolerance, so a request landing exactly on the period's edge is decided alike everywhere.
_EPSILON: Final = 1e-9

_HIT: Final = text(
    "INSERT INTO rate_buckets AS b (key, tat) VALUES (:key, :now + :interval)"
    " ON CONFLICT (key) DO UPDATE SET tat = GREATEST(b.tat, :now) + :interval"
    " WHERE GREATEST(b.tat, :now) + :interval - :now <= :period + :epsilon"
    " RETURNING tat"
)


def _allowed(tat: float, now: float, limit: Limit) -> RateDecision:
    """The decision for a counted request that moved the bucket's TAT to `tat` (as `gcra` computes it)."""
    remaining = int((limit.period_s - (tat - now)) / limit.interval_s + _EPSILON)
    return RateDecision(True, limit.count, remaining, tat - now, 0.0)


def _refused(tat: float | None, now: float, limit: Limit) -> RateDecision:
    current = tat if tat is not None else now
    retry = max(current, now) + limit.interval_s - now - limit.period_s
    return RateDecision(False, limit.count, 0, max(0.0, current - now), max(0.0, retry))


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
        with self.engine.begin() as conn:
            tat = conn.execute(
                _HIT,
                {
                    "key": bucket,
                    "now": moment,
                    "interval": limit.interval_s,
                    "period": limit.period_s,
                    "epsilon": _EPSILON,
                },
            ).scalar()
            if tat is not None:
                return _allowed(float(tat), moment, limit)
            # Refused: nothing was written. The TAT read now is at least the one that refused (it never
            # moves back), so Retry-After errs on the patient side.
            return _refused(self._tat(conn, bucket), moment, limit)

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
