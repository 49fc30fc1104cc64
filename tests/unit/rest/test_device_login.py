"""Device login over REST (SPEC 3.5, 4.11): start, the poll answers, the key once, the limits per address."""

from typing import Any

import pytest

from siteaudit.adapters.memory import MemoryStore
from siteaudit.domain.account import Caller
from siteaudit.domain.device import USER_CODE_ALPHABET
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.services import account as accounts
from tests.unit.rest.conftest import World

OWNER = Caller(UserId(1), TeamId(1))  # owner@retro-clock.example in Retro Clock
CONNECT = "connect on tea-kettle.local: codex, claude-code"


def start(world: World, name: str = CONNECT, ip: str = "198.51.100.7") -> dict[str, Any]:
    answer = world.client.simulate_post("/v1/device/start", json={"client_name": name}, remote_addr=ip)
    assert answer.status_code == 200, answer.text
    return answer.json  # type: ignore[no-any-return]


def poll(world: World, device_code: str, ip: str = "198.51.100.7") -> Any:
    return world.client.simulate_post("/v1/device/token", json={"device_code": device_code}, remote_addr=ip)


def error_of(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json["error"]["code"]


def test_a_start_answers_the_codes_the_interval_and_the_lifetime_without_a_key(world: World) -> None:
    started = start(world)
    assert set(started) == {
        "device_code",
        "user_code",
        "verification_uri",
        "verification_uri_complete",
        "interval",
        "expires_in",
    }
    assert (started["interval"], started["expires_in"]) == (5, 600)
    code = started["user_code"]
    assert len(code) == 9 and code[4] == "-"
    assert all(c in USER_CODE_ALPHABET for c in code.replace("-", ""))
    assert started["verification_uri"].endswith("/app/device")
    assert started["verification_uri_complete"] == f"{started['verification_uri']}?code={code}"
    assert len(started["device_code"]) >= 32


def test_the_device_code_is_stored_only_as_its_hash(world: World) -> None:
    started = start(world)
    store = world.app.uow().store  # type: ignore[attr-defined]
    assert isinstance(store, MemoryStore)
    stored = list(store.devices.values())
    assert stored and all(started["device_code"] not in repr(login) for login in stored)


def test_the_poll_answers_pending_then_slow_down_then_the_key_once_then_invalid_grant(world: World) -> None:
    started = start(world)
    assert error_of(poll(world, started["device_code"])) == (428, "authorization_pending")
    world.clock.advance(2)
    too_fast = poll(world, started["device_code"])
    assert error_of(too_fast) == (429, "slow_down")
    assert too_fast.headers["Retry-After"] == "5"
    world.app.application.approve_device_login(started["user_code"].lower(), OWNER)
    world.clock.advance(5)
    granted = poll(world, started["device_code"])
    assert granted.status_code == 200, granted.text
    assert granted.json["team"] == {"id": 1, "name": "Retro Clock"}
    assert granted.headers["Cache-Control"] == "no-store"
    key = granted.json["api_key"]
    account = world.client.simulate_get("/v1/account", headers=world.auth(key))
    assert account.status_code == 200 and account.json["team_id"] == 1
    world.clock.advance(5)
    assert error_of(poll(world, started["device_code"])) == (400, "invalid_grant")


def test_a_denied_login_answers_access_denied(world: World) -> None:
    started = start(world)
    world.app.application.deny_device_login(started["user_code"], UserId(1))
    assert error_of(poll(world, started["device_code"])) == (403, "access_denied")


def test_an_approver_who_left_the_team_is_refused_at_the_next_poll(world: World) -> None:
    started = start(world)
    world.app.application.approve_device_login(started["user_code"], Caller(UserId(2), TeamId(1)))
    accounts.remove_member("Retro Clock", "member@retro-clock.example", uow=world.app.uow())
    assert error_of(poll(world, started["device_code"])) == (403, "access_denied")


def test_a_code_expires_at_600_seconds_and_an_unknown_one_is_an_invalid_grant(world: World) -> None:
    started = start(world)
    world.clock.advance(600)
    assert error_of(poll(world, started["device_code"])) == (400, "expired_token")
    assert error_of(poll(world, "f" * 48)) == (400, "invalid_grant")
    assert error_of(world.client.simulate_post("/v1/device/token", json={})) == (422, "validation_failed")


def test_connecting_again_with_the_same_agents_and_team_replaces_the_machines_key(world: World) -> None:
    raw = []
    for name in (CONNECT, "connect on tea-kettle.local: claude-code, codex"):
        started = start(world, name)
        world.app.application.approve_device_login(started["user_code"], OWNER)
        raw.append(poll(world, started["device_code"]).json["api_key"])
        world.clock.advance(10)
    assert world.client.simulate_get("/v1/ping", headers=world.auth(raw[0])).status_code == 401
    assert world.client.simulate_get("/v1/ping", headers=world.auth(raw[1])).status_code == 200
    labels = [k.label for k in world.app.application.list_keys("owner@retro-clock.example") if k.active]
    assert "connect on tea-kettle.local: claude-code, codex" in labels


def test_ten_starts_an_hour_per_address_then_429_with_retry_after(world: World) -> None:
    for _ in range(10):
        start(world, ip="203.0.113.9")
    refused = world.client.simulate_post("/v1/device/start", json={}, remote_addr="203.0.113.9")
    assert error_of(refused) == (429, "rate_limited")
    assert int(refused.headers["Retry-After"]) > 0
    start(world, ip="203.0.113.10")  # another address is untouched


def test_sixty_polls_a_minute_per_address_then_slow_down(world: World) -> None:
    answers = [poll(world, f"unknown-{n}", ip="203.0.113.20").status_code for n in range(61)]
    assert answers[:60] == [400] * 60
    assert answers[60] == 429


def test_a_client_name_over_64_characters_is_refused(world: World) -> None:
    answer = world.client.simulate_post("/v1/device/start", json={"client_name": "x" * 65})
    assert error_of(answer) == (422, "validation_failed")


def cancel(world: World, device_code: str, ip: str = "198.51.100.7") -> Any:
    return world.client.simulate_post("/v1/device/cancel", json={"device_code": device_code}, remote_addr=ip)


def test_the_device_cancels_its_login_and_the_code_can_no_longer_be_approved(world: World) -> None:
    """Ctrl-C in `siteaudit connect`: the device code (which only the device holds) ends the login, the
    approval page no longer finds it, its poll answers access_denied; cancelling again is harmless."""
    started = start(world)
    answer = cancel(world, started["device_code"])
    assert answer.status_code == 200 and answer.json == {"status": "denied"}
    with pytest.raises(NotFound):
        world.app.application.device_login_to_decide(started["user_code"])
    with pytest.raises(NotFound):
        world.app.application.approve_device_login(started["user_code"], OWNER)
    assert error_of(poll(world, started["device_code"])) == (403, "access_denied")
    assert cancel(world, started["device_code"]).json == {"status": "denied"}

    approved = start(world)  # approved but not yet exchanged: no key was issued, none will be
    world.app.application.approve_device_login(approved["user_code"], OWNER)
    assert cancel(world, approved["device_code"]).json == {"status": "denied"}
    assert error_of(poll(world, approved["device_code"])) == (403, "access_denied")

    assert error_of(cancel(world, "f" * 48)) == (400, "invalid_grant")
    assert error_of(world.client.simulate_post("/v1/device/cancel", json={})) == (422, "validation_failed")
    late = start(world)
    world.clock.advance(600)
    assert cancel(world, late["device_code"]).json == {"status": "expired"}


def test_an_exchanged_login_cannot_be_cancelled(world: World) -> None:
    started = start(world)
    world.app.application.approve_device_login(started["user_code"], OWNER)
    key = poll(world, started["device_code"]).json["api_key"]
    assert error_of(cancel(world, started["device_code"])) == (400, "invalid_grant")
    assert world.client.simulate_get("/v1/ping", headers=world.auth(key)).status_code == 200


def test_sixty_cancels_a_minute_per_address(world: World) -> None:
    answers = [cancel(world, f"unknown-{n}", ip="203.0.113.30").status_code for n in range(61)]
    assert answers[:60] == [400] * 60 and answers[60] == 429
