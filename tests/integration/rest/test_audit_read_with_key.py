"""`GET /v1/crawls/{id}` reads its audit with the request's key (`Http.audit_with_key`): on PostgreSQL in
the key gate's one statement, kept only for a request let in and counted whose key's team holds the
audit; on SQLite (no gate) the handler reads it. Every refusal answers as before on both: a revoked or
replaced key 401, a holder removed from the team 403, over the limit 429 with its headers, another team's
audit or an unknown one 404 (the same body); and the answer is the same whichever read made it."""

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import falcon.testing
import pytest
from attrs import evolve, frozen
from gunicorn_app import sql_overrides
from live import Keys, seed

from siteaudit.adapters.answers import converter
from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter
from siteaudit.adapters.rest.app import dumps
from siteaudit.adapters.sql import dispose_engines
from siteaudit.adapters.sql.keygate import SqlKeyGate
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.apikey import hash_for_lookup, key_prefix
from siteaudit.domain.audit import Audit
from siteaudit.domain.credit import credits
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.lease import Lease
from siteaudit.ports.application import Admission, AuditDetail, run_declared
from siteaudit.ports.keys import KeyAdmission, KeyRequest
from siteaudit.ports.ratelimit import Limit
from siteaudit.settings import Settings

SECRET_KEY = "audit-with-key-test-secret-key-0123456789abcdef"
LEASE = timedelta(seconds=180)


@frozen
class Served:
    app: App
    client: falcon.testing.TestClient
    keys: Keys
    clock: FixedClock
    ours: int  # a running audit of Retro Clock (team 1) with a worker's lease
    theirs: int  # an audit of Other Shop (team 2)


def _audit(app: App, team: int, user: int) -> int:
    clock = app.clock
    with app.uow() as work:
        audit = work.audits.add(
            Audit(
                id=AuditId(0), team_id=TeamId(team), user_id=UserId(user), payer_id=UserId(user),
                url="https://retro-clock.example/", origin="https://retro-clock.example",
                created_at=clock.now(), max_pages=10, credits_reserved=credits(10),
            )
        )  # fmt: skip
        work.commit()
    return int(audit.id)


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    clock = FixedClock()
    if request.param == "sqlite":
        settings = Settings(database_url=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}", secret_key=SECRET_KEY)
        app = bootstrap(settings, clock=clock)
        assert app.application.key_gate is None  # type: ignore[attr-defined]
    else:
        create: Callable[..., str] = request.getfixturevalue("new_postgres_database")
        settings = Settings(database_url=create(migrated=True), secret_key=SECRET_KEY)
        app = bootstrap(settings, clock=clock, **sql_overrides(settings))
        assert isinstance(app.application.key_gate, SqlKeyGate)  # type: ignore[attr-defined]
    keys = seed(app)  # Retro Clock (team 1: owner 1, member 2), Other Shop (team 2: rival 3)
    ours, theirs = _audit(app, 1, 1), _audit(app, 2, 3)
    with app.uow() as work:  # running, its lease held by a worker
        work.audits.save(work.audits.get_any(AuditId(ours)).start(now=clock.now()))
        assert work.leases.claim(AuditId(ours), "worker-1", now=clock.now(), until=clock.now() + LEASE)
        work.commit()
    yield Served(app, falcon.testing.TestClient(app.rest_api()), keys, clock, ours, theirs)
    dispose_engines()


def get(served: Served, audit: int, key: str) -> falcon.testing.Result:
    return served.client.simulate_get(f"/v1/crawls/{audit}", headers={"Authorization": f"Bearer {key}"})


def test_the_answer_is_the_same_bytes_as_the_handlers_own_read(served: Served) -> None:
    caller = served.app.application.authenticate(served.keys.owner)
    for stalled in (False, True):  # live, then stalled: its lease's deadline passed with nobody renewing it
        answer = get(served, served.ours, served.keys.owner)
        assert answer.status_code == 200 and answer.json["stalled"] is stalled
        own_read = run_declared(served.app.application, "GetAudit", caller, crawl_id=AuditId(served.ours))
        assert answer.content == dumps(converter.unstructure(own_read))
        served.clock.advance(LEASE.total_seconds() + 1)


def test_a_revoked_or_replaced_key_is_refused(served: Served) -> None:
    application = served.app.application
    assert get(served, served.ours, served.keys.owner).status_code == 200
    application.revoke_key("owner@retro-clock.example", key_prefix(served.keys.owner))
    refused = get(served, served.ours, served.keys.owner)
    assert (refused.status_code, refused.json["error"]["code"]) == (401, "unauthenticated")
    assert get(served, served.ours, served.keys.member).status_code == 200
    application.rotate_key("member@retro-clock.example", "Retro Clock")
    replaced = get(served, served.ours, served.keys.member)
    assert (replaced.status_code, replaced.json["error"]["code"]) == (401, "unauthenticated")


def test_a_holder_removed_from_the_team_is_refused(served: Served) -> None:
    assert get(served, served.ours, served.keys.member).status_code == 200
    served.app.application.remove_member("Retro Clock", "member@retro-clock.example")
    refused = get(served, served.ours, served.keys.member)
    assert (refused.status_code, refused.json["error"]["code"]) == (403, "team_access_revoked")


def test_over_the_limit_answers_429_as_any_endpoint_does(served: Served) -> None:
    answers = [get(served, served.ours, served.keys.owner) for _ in range(60)]
    assert [a.status_code for a in answers] == [200] * 60
    assert [int(a.headers["RateLimit-Remaining"]) for a in answers] == list(range(59, -1, -1))
    refused = get(served, served.ours, served.keys.owner)
    served.clock.advance(60)  # the bucket drained: the same refusal met on another endpoint
    assert [get(served, served.theirs, served.keys.owner).status_code for _ in range(60)] == [404] * 60
    elsewhere = served.client.simulate_get(
        "/v1/crawls", headers={"Authorization": f"Bearer {served.keys.owner}"}
    )
    assert refused.status_code == elsewhere.status_code == 429
    assert refused.json == elsewhere.json and refused.json["error"]["code"] == "rate_limited"
    named = ("Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy")
    assert [refused.headers.get(n) for n in named] == [elsewhere.headers.get(n) for n in named]
    assert refused.headers["Retry-After"] == "1" and refused.headers["RateLimit-Remaining"] == "0"


def test_another_teams_audit_answers_404_as_an_unknown_one(served: Served) -> None:
    theirs = get(served, served.theirs, served.keys.owner)
    unknown = get(served, served.theirs + 1000, served.keys.owner)
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json["error"]["code"] == unknown.json["error"]["code"] == "not_found"
    assert get(served, served.theirs, served.keys.rival).status_code == 200


def test_the_handler_uses_an_admitted_audit_only_of_the_callers_team_and_id(served: Served) -> None:
    application = served.app.application
    owner = application.authenticate(served.keys.owner)
    with served.app.uow() as work:
        theirs = work.audits.get_any(AuditId(served.theirs))
    decision = MemoryRateLimiter().hit("b", Limit(60, 60.0), now=served.clock.now())
    forged = Admission(owner, decision, AuditDetail(theirs, stalled=False))
    asked = next(d for d in application.use_cases() if d.__name__ == "GetAudit")
    with pytest.raises(NotFound):  # another team's audit, however it came
        application.handle_admitted(asked(crawl_id=AuditId(served.theirs)), forged)
    another = evolve(forged, audit=AuditDetail(evolve(theirs, team_id=TeamId(1)), stalled=False))
    ours = application.handle_admitted(asked(crawl_id=AuditId(served.ours)), another)
    assert ours.crawl_id == served.ours  # not the audit admitted, another of the team: read by the handler
    rival = Caller(UserId(3), TeamId(2), key_prefix(served.keys.rival))
    shown = application.handle_admitted(asked(crawl_id=AuditId(served.theirs)), evolve(forged, caller=rival))
    assert shown.crawl_id == served.theirs


# --- the gate itself (PostgreSQL's one statement): which audit it keeps ----------------------------------


gated = pytest.mark.parametrize("served", ["postgresql"], indirect=True)  # SQLite has no gate


def _admit(served: Served, key: str, audit: int) -> KeyAdmission | None:
    gate = served.app.application.key_gate  # type: ignore[attr-defined]
    assert isinstance(gate, SqlKeyGate)
    now = served.clock.now()
    return gate.admit(
        KeyRequest(
            hash_for_lookup(key), f"key:{key_prefix(key)}", Limit(60, 60.0), now,
            touch_before=now - timedelta(minutes=1), audit=AuditId(audit),
        )
    )  # fmt: skip


@gated
def test_the_gate_reads_the_keys_teams_audit_with_its_lease(served: Served) -> None:
    admitted = _admit(served, served.keys.owner, served.ours)
    assert admitted is not None and admitted.audit is not None
    with served.app.uow() as work:
        assert admitted.audit == work.audits.get_with_lease(AuditId(served.ours), team=TeamId(1))
    assert isinstance(admitted.audit[1], Lease) and admitted.audit[1].holder == "worker-1"


@gated
def test_the_gate_keeps_no_audit_for_a_refused_key_or_another_teams_audit(served: Served) -> None:
    for unknown in (served.theirs, served.theirs + 1000):  # another team's, none
        admitted = _admit(served, served.keys.owner, unknown)
        assert admitted is not None and admitted.decision is not None and admitted.decision.allowed
        assert admitted.audit is None
    application = served.app.application
    application.revoke_key("owner@retro-clock.example", key_prefix(served.keys.owner))
    revoked = _admit(served, served.keys.owner, served.ours)
    assert revoked is not None and revoked.audit is None
    application.remove_member("Retro Clock", "member@retro-clock.example")
    removed = _admit(served, served.keys.member, served.ours)
    assert removed is not None and not removed.in_team and removed.audit is None


@gated
def test_the_gate_keeps_no_audit_for_a_request_over_the_limit(served: Served) -> None:
    for _ in range(60):
        assert _admit(served, served.keys.member, served.ours).audit is not None  # type: ignore[union-attr]
    refused = _admit(served, served.keys.member, served.ours)
    assert refused is not None and refused.decision is not None and not refused.decision.allowed
    assert refused.audit is None
