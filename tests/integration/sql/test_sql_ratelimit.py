"""The SQL rate limiter: the memory limiter's answers, independent buckets, and exact counts under races."""

import threading
from datetime import timedelta

import pytest
from sql_backend import T0
from sqlalchemy import Engine, func, select

from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter
from siteaudit.adapters.sql.ratelimit import SqlRateLimiter
from siteaudit.adapters.sql.tables import rate_buckets
from siteaudit.ports.ratelimit import Limit, RateDecision, RateLimiter

PER_MINUTE = Limit(60, 60.0)
HITS = 100
THREADS = 8

# (seconds after T0, bucket, limit): bursts past the limit, refills, and a stricter second bucket.
SCRIPT = [
    *((0.0, "key:a", Limit(5, 10.0)) for _ in range(7)),
    (1.0, "key:a", Limit(5, 10.0)),
    (2.0, "key:a", Limit(5, 10.0)),
    (2.0, "endpoint:recheck", Limit(2, 60.0)),
    (2.5, "endpoint:recheck", Limit(2, 60.0)),
    (3.0, "endpoint:recheck", Limit(2, 60.0)),
    (9.9, "key:a", Limit(5, 10.0)),
    (10.0, "key:a", Limit(5, 10.0)),
    (31.0, "endpoint:recheck", Limit(2, 60.0)),
    (31.0, "endpoint:recheck", Limit(2, 60.0)),
    (45.0, "key:a", Limit(5, 10.0)),
    *((45.0 + n / 10, "key:a", Limit(5, 10.0)) for n in range(8)),
    (1.0, "key:a", Limit(5, 10.0)),  # a request stamped earlier than the last (a slow clock)
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest) -> Engine:
    found: Engine = request.getfixturevalue(f"{request.param}_engine")
    return found


def _run(limiter: RateLimiter) -> list[tuple[RateDecision, RateDecision]]:
    results = []
    for seconds, bucket, limit in SCRIPT:
        now = T0 + timedelta(seconds=seconds)
        peeked = limiter.peek(bucket, limit, now=now)
        results.append((peeked, limiter.hit(bucket, limit, now=now)))
    return results


def _same(a: RateDecision, b: RateDecision) -> bool:
    return (a.allowed, a.limit, a.remaining) == (b.allowed, b.limit, b.remaining) and all(
        abs(x - y) < 1e-6 for x, y in ((a.reset_s, b.reset_s), (a.retry_after_s, b.retry_after_s))
    )


def test_a_scripted_sequence_gets_the_memory_limiters_answers(engine: Engine) -> None:
    expected = _run(MemoryRateLimiter())
    got = _run(SqlRateLimiter(engine))
    assert [d.allowed for _, d in expected].count(False) >= 6, "the script exercises refusals"
    mismatches = [
        (n, SCRIPT[n], want, have)
        for n, (want, have) in enumerate(zip(expected, got, strict=True))
        if not (_same(want[0], have[0]) and _same(want[1], have[1]))
    ]
    assert mismatches == []


def test_peeking_counts_nothing(engine: Engine) -> None:
    limiter = SqlRateLimiter(engine)
    limit = Limit(1, 60.0)
    for _ in range(3):
        assert limiter.peek("key:a", limit, now=T0).allowed
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(rate_buckets)).scalar_one() == 0
    assert limiter.hit("key:a", limit, now=T0).allowed
    assert not limiter.peek("key:a", limit, now=T0).allowed


def test_exhausting_one_key_leaves_another_untouched(engine: Engine) -> None:
    limiter = SqlRateLimiter(engine)
    passed_a = sum(limiter.hit("key:a", PER_MINUTE, now=T0).allowed for _ in range(HITS))
    refused = limiter.hit("key:a", PER_MINUTE, now=T0)
    first_b = limiter.hit("key:b", PER_MINUTE, now=T0)
    assert passed_a == 60
    assert not refused.allowed and refused.retry_after_s == pytest.approx(1.0)
    assert first_b.allowed and first_b.remaining == 59


def test_of_a_hundred_concurrent_hits_exactly_sixty_pass(engine: Engine) -> None:
    limiter = SqlRateLimiter(engine)
    decisions: list[RateDecision] = []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def hammer(share: int) -> None:
        start.wait()
        for _ in range(share):
            decision = limiter.hit("key:shared", PER_MINUTE, now=T0)
            with lock:
                decisions.append(decision)

    shares = [HITS // THREADS + (1 if n < HITS % THREADS else 0) for n in range(THREADS)]
    threads = [threading.Thread(target=hammer, args=(share,)) for share in shares]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    allowed = [d for d in decisions if d.allowed]
    print(f"{len(decisions)} concurrent hits from {THREADS} threads: {len(allowed)} passed")
    assert len(decisions) == HITS
    assert len(allowed) == 60
    assert sorted(d.remaining for d in allowed) == list(range(60))
    assert all(d.retry_after_s > 0 for d in decisions if not d.allowed)
