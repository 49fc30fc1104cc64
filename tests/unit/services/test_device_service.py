"""Device login through the services: one key per approval, whatever the number of racing polls."""

import threading

import pytest

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from siteaudit.services.device import approval, flow
from siteaudit.services.key import CliKeys


@pytest.fixture
def setup() -> tuple[MemoryStore, FixedClock]:
    store, clock = MemoryStore(), FixedClock()
    accounts.create_user(
        "owner@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    accounts.create_team(
        "Retro Clock", owner_email="owner@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock
    )
    return store, clock


def poll(store: MemoryStore, clock: FixedClock, code: str) -> flow.DeviceGranted:
    return flow.poll_device_login(
        code, uow=MemoryUnitOfWork(store), clock=clock, cli_keys=CliKeys(clock, SystemSecrets())
    )


def code_of(error: BaseException) -> ErrorCode:
    assert isinstance(error, DomainError)
    return error.code


def test_twenty_concurrent_polls_after_approval_give_exactly_one_key(
    setup: tuple[MemoryStore, FixedClock],
) -> None:
    store, clock = setup
    started = flow.start_device_login(
        "laptop", "127.0.0.1", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    approval.approve_device_login(
        started.login.display_user_code.lower(), 1, 1, uow=MemoryUnitOfWork(store), clock=clock
    )
    clock.advance(5)
    granted: list[flow.DeviceGranted] = []
    refused: list[ErrorCode] = []
    barrier = threading.Barrier(20)

    def racer() -> None:
        barrier.wait()
        try:
            granted.append(poll(store, clock, started.device_code))
        except DomainError as error:
            refused.append(error.code)

    threads = [threading.Thread(target=racer) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == 1
    assert set(refused) <= {ErrorCode.INVALID_GRANT, ErrorCode.SLOW_DOWN}
    assert refused.count(ErrorCode.INVALID_GRANT) == 19
    assert granted[0].team_name == "Retro Clock"
    assert granted[0].key.raw.startswith("sk_")
    caller = keys.authenticate(granted[0].key.raw, uow=MemoryUnitOfWork(store), clock=clock)
    assert (caller.user_id, caller.team_id) == (1, 1)
    clock.advance(5)
    with pytest.raises(DomainError) as later:
        poll(store, clock, started.device_code)
    assert later.value.code is ErrorCode.INVALID_GRANT


def test_polling_sooner_than_five_seconds_answers_slow_down(setup: tuple[MemoryStore, FixedClock]) -> None:
    store, clock = setup
    started = flow.start_device_login(
        "laptop", "127.0.0.1", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    with pytest.raises(DomainError) as first:
        poll(store, clock, started.device_code)
    assert code_of(first.value) is ErrorCode.AUTHORIZATION_PENDING
    clock.advance(2)
    with pytest.raises(DomainError) as early:
        poll(store, clock, started.device_code)
    assert (code_of(early.value), early.value.status) == (ErrorCode.SLOW_DOWN, 429)


def test_a_code_expires_at_exactly_600_seconds(setup: tuple[MemoryStore, FixedClock]) -> None:
    store, clock = setup
    started = flow.start_device_login(
        "laptop", "127.0.0.1", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    clock.advance(599.999)
    with pytest.raises(DomainError) as before:
        poll(store, clock, started.device_code)
    assert code_of(before.value) is ErrorCode.AUTHORIZATION_PENDING
    clock.advance(0.001)
    with pytest.raises(DomainError) as at:
        poll(store, clock, started.device_code)
    assert (code_of(at.value), at.value.status) == (ErrorCode.EXPIRED_TOKEN, 400)


def test_a_denied_login_answers_access_denied_and_never_a_key(setup: tuple[MemoryStore, FixedClock]) -> None:
    store, clock = setup
    started = flow.start_device_login(
        "laptop", "127.0.0.1", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    approval.deny_device_login(started.login.display_user_code, uow=MemoryUnitOfWork(store), clock=clock)
    with pytest.raises(DomainError) as denied:
        poll(store, clock, started.device_code)
    assert (code_of(denied.value), denied.value.status) == (ErrorCode.ACCESS_DENIED, 403)


def test_an_approver_who_left_the_team_gets_access_denied(setup: tuple[MemoryStore, FixedClock]) -> None:
    store, clock = setup
    accounts.create_user(
        "member@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    accounts.add_member("Retro Clock", "member@retro-clock.example", uow=MemoryUnitOfWork(store))
    started = flow.start_device_login(
        "laptop", "127.0.0.1", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    approval.approve_device_login(started.login.user_code, 2, 1, uow=MemoryUnitOfWork(store), clock=clock)
    accounts.remove_member("Retro Clock", "member@retro-clock.example", uow=MemoryUnitOfWork(store))
    with pytest.raises(DomainError) as refused:
        poll(store, clock, started.device_code)
    assert code_of(refused.value) is ErrorCode.ACCESS_DENIED


def test_an_unknown_device_code_answers_invalid_grant(setup: tuple[MemoryStore, FixedClock]) -> None:
    store, clock = setup
    with pytest.raises(DomainError) as unknown:
        poll(store, clock, "not-a-code-anyone-was-given")
    assert (code_of(unknown.value), unknown.value.status) == (ErrorCode.INVALID_GRANT, 400)


def test_connecting_again_replaces_the_machines_previous_cli_key(
    setup: tuple[MemoryStore, FixedClock],
) -> None:
    store, clock = setup
    raw_keys = []
    for _ in range(2):
        started = flow.start_device_login(
            "laptop", "127.0.0.1", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
        )
        approval.approve_device_login(started.login.user_code, 1, 1, uow=MemoryUnitOfWork(store), clock=clock)
        raw_keys.append(poll(store, clock, started.device_code).key.raw)
        clock.advance(10)
    with pytest.raises(DomainError) as old:
        keys.authenticate(raw_keys[0], uow=MemoryUnitOfWork(store), clock=clock)
    assert old.value.code is ErrorCode.UNAUTHENTICATED
    assert keys.authenticate(raw_keys[1], uow=MemoryUnitOfWork(store), clock=clock).user_id == 1
