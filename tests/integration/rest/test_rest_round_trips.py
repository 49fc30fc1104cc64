"""The REST hot path on PostgreSQL, as production wires it: an authenticated read is at most two round trips
(the key, its holder's membership, the shared per-key rate limit and the key's last use in one statement,
then the handler's read; `GET /v1/crawls/{id}` reads its audit in the key's statement, one round trip in
all; the first page of an audit's issues reads the audit, then its total and rows in
one more), and nothing is cached on the way: a revoked key or a removed member is refused
at once, and the 60-a-minute limit holds with its headers.

Round trips are counted below SQLAlchemy, on the wire: libpq's trace of every pooled connection, where
each round trip ends with the server's ReadyForQuery (BEGIN and COMMIT count too; the limiter's and the
key gate's driver SQL, which no SQLAlchemy event sees, as well).
"""

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import falcon.testing
import pytest
from attrs import frozen
from gunicorn_app import sql_overrides
from live import Keys, seed
from psycopg.pq import Trace
from sqlalchemy import Engine, event

from siteaudit.adapters.sql import dispose_engines, engine_for, migrate
from siteaudit.adapters.sql.keygate import SqlKeyGate
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.apikey import key_prefix
from siteaudit.domain.audit import Audit
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.settings import Settings

pytestmark = pytest.mark.postgres

SECRET_KEY = "round-trip-test-secret-key-0123456789abcdef"
LEASE = timedelta(seconds=180)


@frozen
class Served:
    app: App
    client: falcon.testing.TestClient
    keys: Keys
    clock: FixedClock
    engine: Engine
    audit: int  # a finished audit of team Retro Clock


@pytest.fixture
def served(new_postgres_database: Callable[..., str]) -> Iterator[Served]:
    url = new_postgres_database(migrated=True)
    migrate(url)
    settings = Settings(database_url=url, secret_key=SECRET_KEY)
    clock = FixedClock()
    app = bootstrap(settings, clock=clock, **sql_overrides(settings))
    assert isinstance(app.application.key_gate, SqlKeyGate)  # type: ignore[attr-defined]
    keys = seed(app)
    with app.uow() as work:
        audit = work.audits.add(
            Audit(
                id=AuditId(0), team_id=TeamId(1), user_id=UserId(1), payer_id=UserId(1),
                url="https://retro-clock.example/", origin="https://retro-clock.example",
                created_at=clock.now(), max_pages=10, credits_reserved=credits(10),
            )
        )  # fmt: skip
        work.commit()
    with app.uow() as work:  # crawled and reported: an ended audit, as a finished report's reader sees it
        running = work.audits.get_any(audit.id).start(now=clock.now())
        finishing = running.stop_crawling(partial=False, now=clock.advance(60))
        done, _ = finishing.publish_report(health_score=90, now=clock.advance(60))
        work.audits.save(done)
        work.commit()
    client = falcon.testing.TestClient(app.rest_api())
    yield Served(app, client, keys, clock, engine_for(url), int(audit.id))
    dispose_engines()


@contextmanager
def wire(engine: Engine) -> Iterator[list[str]]:
    """The round trips of every connection the engine hands out meanwhile: one string each, naming the
    statements sent (from libpq's trace: each round trip ends with the server's ReadyForQuery)."""
    trips: list[str] = []
    traced: list[Any] = []
    with tempfile.TemporaryFile() as log:

        def trace(dbapi_connection: Any, record: Any, proxy: Any) -> None:
            if dbapi_connection not in traced:
                dbapi_connection.pgconn.trace(log.fileno())
                dbapi_connection.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)
                traced.append(dbapi_connection)

        event.listen(engine, "checkout", trace)
        try:
            yield trips
        finally:
            event.remove(engine, "checkout", trace)
            for dbapi_connection in traced:
                if not dbapi_connection.closed:
                    dbapi_connection.pgconn.untrace()
            log.seek(0)
            sent: list[str] = []
            for line in log.read().decode(errors="replace").splitlines():
                fields = line.split("\t")
                if len(fields) >= 4 and fields[0] == "F" and fields[2] in ("Query", "Parse"):
                    sent.append(fields[3].strip())
                elif len(fields) >= 3 and fields[0] == "F" and fields[2] == "Bind":
                    sent.append(sent.pop() if sent else "(a prepared statement)")
                elif len(fields) >= 3 and fields[0] == "B" and fields[2] == "ReadyForQuery":
                    trips.append(" / ".join(sent) or "?")
                    sent = []


def get(served: Served, path: str, key: str) -> falcon.testing.Result:
    return served.client.simulate_get(path, headers={"Authorization": f"Bearer {key}"})


def test_an_authenticated_read_of_an_audit_is_one_round_trip(served: Served) -> None:
    path = f"/v1/crawls/{served.audit}"
    assert get(served, path, served.keys.owner).status_code == 200  # the pool's connection is made
    for step in range(3):
        if step == 1:
            served.clock.advance(120)  # a use is due again: recorded in the same statement
        with wire(served.engine) as trips:
            answer = get(served, path, served.keys.owner)
        assert answer.status_code == 200
        assert answer.json["crawl_id"] == served.audit
        assert answer.headers["RateLimit-Limit"] == "60"
        assert len(trips) == 1, trips  # one statement lets it in and reads the audit
        assert all(table in trips[0] for table in ("rate_buckets", "api_keys", "audits")), trips
    with served.app.uow() as work:  # the last use was recorded, by the key gate's statement
        key = work.keys.with_prefix(key_prefix(served.keys.owner))[0]
        assert key.last_used_at == served.clock.now()


def test_a_revoked_key_is_refused_at_once(served: Served) -> None:
    path = f"/v1/crawls/{served.audit}"
    assert get(served, path, served.keys.owner).status_code == 200
    served.app.application.revoke_key("owner@retro-clock.example", key_prefix(served.keys.owner))
    refused = get(served, path, served.keys.owner)
    assert refused.status_code == 401
    assert refused.json["error"]["code"] == "unauthenticated"
    assert get(served, path, served.keys.member).status_code == 200  # another key of the team still works


def test_a_member_removed_from_the_team_is_refused_at_once(served: Served) -> None:
    path = f"/v1/crawls/{served.audit}"
    assert get(served, path, served.keys.member).status_code == 200
    served.app.application.remove_member("Retro Clock", "member@retro-clock.example")
    refused = get(served, path, served.keys.member)
    assert refused.status_code == 403
    assert refused.json["error"]["code"] == "team_access_revoked"


def test_an_unknown_key_answers_401_and_counts_against_no_key(served: Served) -> None:
    forged = served.keys.owner[:12] + "x" * 31  # the owner's prefix: the owner's bucket must not move
    assert len(forged) == len(served.keys.owner)
    for _ in range(5):
        assert get(served, "/v1/ping", forged).status_code == 401
    answer = get(served, "/v1/ping", served.keys.owner)
    assert answer.status_code == 200
    assert answer.headers["RateLimit-Remaining"] == "59"


def test_the_per_key_limit_still_applies_with_its_headers(served: Served) -> None:
    remaining = [get(served, "/v1/ping", served.keys.owner) for _ in range(60)]
    assert [r.status_code for r in remaining] == [200] * 60
    assert [int(r.headers["RateLimit-Remaining"]) for r in remaining] == list(range(59, -1, -1))
    assert {r.headers["RateLimit-Policy"] for r in remaining} == {"60;w=60"}
    refused = get(served, "/v1/ping", served.keys.owner)
    assert refused.status_code == 429
    assert refused.json["error"]["code"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) == 1
    assert refused.headers["RateLimit-Remaining"] == "0"
    assert get(served, "/v1/ping", served.keys.member).status_code == 200  # buckets are per key
    served.clock.advance(1)  # one request's worth of the bucket drained
    assert get(served, "/v1/ping", served.keys.owner).status_code == 200
    assert get(served, "/v1/ping", served.keys.owner).status_code == 429


def test_a_running_audit_and_its_lease_are_read_in_the_same_round_trip(served: Served) -> None:
    clock = served.clock
    with served.app.uow() as work:
        audit = work.audits.add(
            Audit(
                id=AuditId(0), team_id=TeamId(1), user_id=UserId(1), payer_id=UserId(1),
                url="https://retro-clock.example/", origin="https://retro-clock.example",
                created_at=clock.now(), max_pages=10, credits_reserved=credits(10),
            )
        )  # fmt: skip
        work.audits.save(work.audits.get_any(audit.id).start(now=clock.now()))
        assert work.leases.claim(audit.id, "worker-1", now=clock.now(), until=clock.now() + LEASE) is not None
        work.commit()
    path = f"/v1/crawls/{audit.id}"
    assert get(served, path, served.keys.owner).status_code == 200  # the pool's connection is made
    with wire(served.engine) as trips:
        answer = get(served, path, served.keys.owner)
    assert answer.status_code == 200 and answer.json["status"] == "running"
    assert answer.json["stalled"] is False
    assert len(trips) == 1 and "audit_leases" in trips[0], trips  # the lease too, in the key's statement
    clock.advance(LEASE.total_seconds() + 1)  # nobody renewed it: the audit's work stalled
    assert get(served, path, served.keys.owner).json["stalled"] is True


def test_the_first_page_of_an_audits_issues_is_one_round_trip_after_the_audits(served: Served) -> None:
    path = f"/v1/crawls/{served.audit}/issues"
    assert get(served, path, served.keys.owner).status_code == 200  # the pool's connection is made
    with wire(served.engine) as trips:
        answer = get(served, path, served.keys.owner)
    assert answer.status_code == 200
    assert answer.json["meta"] == {"current_page": 1, "per_page": 50, "total": 0, "last_page": 1}
    listing = [trip for trip in trips if "crawl_issue" in trip]
    # JIT off, the total and the rows sent together, in no transaction of their own (no BEGIN, no ROLLBACK).
    assert len(listing) == 1 and "set_config('jit'" in listing[0], trips
    assert not any("BEGIN" in trip or "ROLLBACK" in trip for trip in trips), trips
    assert len(trips) <= 3, trips
