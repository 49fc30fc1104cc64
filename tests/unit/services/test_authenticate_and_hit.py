"""`authenticate_and_hit`: the REST door's key, membership and per-key count in one call, through the
unit of work and the limiter (memory, SQLite) or through a key gate (PostgreSQL's one statement)."""

from datetime import datetime

import pytest
from attrs import evolve

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.apikey import ApiKey, key_hash
from siteaudit.domain.error import TeamAccessRevoked, Unauthenticated
from siteaudit.ports.keys import KeyAdmission, KeyRequest
from siteaudit.ports.ratelimit import Limit
from siteaudit.settings import Settings

LIMIT = Limit(3, 60.0)


@pytest.fixture
def app() -> App:
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue(), clock=FixedClock())
    app.application.create_user("ada@retro-clock.example")
    app.application.create_user("bob@retro-clock.example")
    app.application.create_team("Retro Clock", owner_email="ada@retro-clock.example")
    app.application.add_member("Retro Clock", "bob@retro-clock.example")
    return app


def test_without_a_gate_the_key_is_let_in_and_counted_until_the_limit(app: App) -> None:
    raw = app.application.create_key("ada@retro-clock.example", "Retro Clock").raw
    decisions = [app.application.authenticate_and_hit(raw, bucket="b", limit=LIMIT) for _ in range(4)]
    assert [d.decision.allowed for d in decisions] == [True, True, True, False]
    assert [d.decision.remaining for d in decisions] == [2, 1, 0, 0]
    assert decisions[0].caller == app.application.authenticate(raw)


def test_without_a_gate_refused_keys_count_nothing(app: App) -> None:
    issued = app.application.create_key("bob@retro-clock.example", "Retro Clock")
    with pytest.raises(Unauthenticated):
        app.application.authenticate_and_hit("sk_" + "z" * 40, bucket="b", limit=LIMIT)
    app.application.remove_member("Retro Clock", "bob@retro-clock.example")
    with pytest.raises(TeamAccessRevoked):
        app.application.authenticate_and_hit(issued.raw, bucket="b", limit=LIMIT)
    now = app.clock.now()
    assert app.limiter.peek("b", LIMIT, now=now) == MemoryRateLimiter().peek("b", LIMIT, now=now)  # untouched


class FakeGate:
    """A gate answering what it is told, recording what it was asked."""

    def __init__(self, answer: KeyAdmission | None) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str, datetime]] = []

    def admit(self, request: KeyRequest) -> KeyAdmission | None:
        self.asked.append((request.key_hash, request.bucket, request.touch_before))
        return self.answer


def _gated(app: App, answer: KeyAdmission | None) -> tuple[FakeGate, object]:
    gate = FakeGate(answer)
    return gate, evolve(app.application, key_gate=gate)  # type: ignore[type-var]


def _key(app: App) -> tuple[str, ApiKey]:
    issued = app.application.create_key("ada@retro-clock.example", "Retro Clock")
    return issued.raw, issued.key


def test_with_a_gate_one_call_lets_the_key_in_with_the_gates_decision(app: App) -> None:
    raw, key = _key(app)
    decision = MemoryRateLimiter().hit("b", LIMIT, now=app.clock.now())
    gate, application = _gated(app, KeyAdmission(key, True, decision))
    admitted = application.authenticate_and_hit(raw, bucket="key:x", limit=LIMIT)  # type: ignore[attr-defined]
    assert admitted.decision == decision
    assert (admitted.caller.user_id, admitted.caller.team_id, admitted.caller.key_prefix) == (
        key.user_id,
        key.team_id,
        key.prefix,
    )
    ((asked_hash, bucket, touch_before),) = gate.asked
    assert (asked_hash, bucket) == (key_hash(raw), "key:x")
    assert (app.clock.now() - touch_before).total_seconds() == 60  # a use is recorded once a minute


def test_with_a_gate_unknown_revoked_and_removed_answer_as_authenticate_does(app: App) -> None:
    raw, key = _key(app)
    for answer, error in (
        (None, Unauthenticated),
        (KeyAdmission(evolve(key, status=key.status.REVOKED), True, None), Unauthenticated),
        (KeyAdmission(key, False, None), TeamAccessRevoked),
    ):
        _, application = _gated(app, answer)
        with pytest.raises(error):
            application.authenticate_and_hit(raw, bucket="b", limit=LIMIT)  # type: ignore[attr-defined]
    _, application = _gated(app, None)
    with pytest.raises(Unauthenticated):  # malformed: no question asked
        application.authenticate_and_hit("sk_short", bucket="b", limit=LIMIT)  # type: ignore[attr-defined]
