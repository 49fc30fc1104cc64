"""Device logins on memory, SQLite and PostgreSQL: lookups, live user codes, and exactly one exchange."""

import threading
from datetime import datetime, timedelta

import pytest
from attrs import evolve
from sql_backend import T0, Backend, people

from siteaudit.domain.device import DeviceLogin, DeviceLoginStatus, PollAnswer, device_code_hash
from siteaudit.domain.error import ConcurrentUpdate, Conflict, NotFound
from siteaudit.domain.ids import DeviceLoginId

POLLERS = 8


def _login(
    code: str = "BCDFGHJK", device_code: str = "retro-clock-device-code-0001", at: datetime = T0
) -> DeviceLogin:
    return DeviceLogin.start(
        login_id=DeviceLoginId(0),
        device_code=device_code,
        user_code=code,
        client_name="workshop-laptop",
        requested_ip="203.0.113.9",
        now=at,
    )


def test_a_login_is_found_by_its_device_code_hash_and_while_live_by_its_user_code(backend: Backend) -> None:
    with backend.uow() as uow:
        login = uow.devices.add(_login())
        uow.commit()
    assert login.id > 0
    with backend.uow() as uow:
        assert uow.devices.by_device_code_hash(device_code_hash("retro-clock-device-code-0001")) == login
        assert uow.devices.by_device_code_hash(device_code_hash("unknown-device-code-000000")) is None
        assert uow.devices.live_by_user_code("BCDFGHJK", T0 + timedelta(seconds=599)) == login
        assert uow.devices.live_by_user_code("BCDFGHJK", T0 + timedelta(seconds=600)) is None
        assert uow.devices.live_by_user_code("CDFGHJKL", T0) is None


def test_a_user_code_is_unique_among_live_logins_only(backend: Backend) -> None:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        uow.devices.add(_login())
        with pytest.raises(Conflict):
            uow.devices.add(_login(device_code="retro-clock-device-code-0002", at=T0 + timedelta(seconds=30)))
        # the first login has expired by then: its code may be given out again
        again = uow.devices.add(
            _login(device_code="retro-clock-device-code-0003", at=T0 + timedelta(seconds=600))
        )
        uow.commit()
    with backend.uow() as uow:
        live = uow.devices.live_by_user_code("BCDFGHJK", T0 + timedelta(seconds=601))
        assert live == again
        approved, _ = live.approve(user=owner.id, team=team.id, now=T0 + timedelta(seconds=601))
        uow.devices.save(approved)
        uow.commit()
    with backend.uow() as uow:  # approved: no longer live, so its code is free again
        assert uow.devices.live_by_user_code("BCDFGHJK", T0 + timedelta(seconds=602)) is None
        uow.devices.add(_login(device_code="retro-clock-device-code-0004", at=T0 + timedelta(seconds=602)))


def test_a_saved_poll_and_decision_read_back_and_a_stale_copy_is_refused(backend: Backend) -> None:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        login = uow.devices.add(_login())
        uow.commit()
    first, second = backend.uow(), backend.uow()
    with first:
        mine = first.devices.by_device_code_hash(login.device_code_hash)
        assert mine is not None
    with second:
        loaded = second.devices.live_by_user_code("BCDFGHJK", T0)
        assert loaded is not None
        polled, outcome = loaded.poll(T0 + timedelta(seconds=6), approver_in_team=True)
        assert outcome.answer is PollAnswer.AUTHORIZATION_PENDING
        second.devices.save(polled)  # a poll is not a version: a second save in the same unit goes on
        approved, _ = polled.approve(user=owner.id, team=team.id, now=T0 + timedelta(seconds=7))
        second.devices.save(approved)
        second.commit()
    with first:
        with pytest.raises(ConcurrentUpdate):
            first.devices.save(mine.deny(now=T0 + timedelta(seconds=8))[0])
        with pytest.raises(NotFound):
            first.devices.save(evolve(mine, id=DeviceLoginId(login.id + 100)))
    with backend.uow() as uow:
        assert uow.devices.by_device_code_hash(login.device_code_hash) == approved


def test_an_approved_login_cancelled_by_its_device_reads_back_denied(backend: Backend) -> None:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        login = uow.devices.add(_login())
        approved, _ = login.approve(user=owner.id, team=team.id, now=T0 + timedelta(seconds=7))
        uow.devices.save(approved)
        uow.commit()
    with backend.uow() as uow:
        loaded = uow.devices.by_device_code_hash(login.device_code_hash)
        assert loaded is not None
        uow.devices.save(loaded.cancel(T0 + timedelta(seconds=8)))
        uow.commit()
    with backend.uow() as uow:
        stored = uow.devices.by_device_code_hash(login.device_code_hash)
        assert stored is not None and stored.status is DeviceLoginStatus.DENIED
        _, outcome = stored.poll(T0 + timedelta(seconds=20), approver_in_team=True)
        assert outcome.answer is PollAnswer.ACCESS_DENIED


def test_of_many_concurrent_polls_after_approval_exactly_one_exchanges(backend: Backend) -> None:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        login = uow.devices.add(_login())
        uow.devices.save(login.approve(user=owner.id, team=team.id, now=T0)[0])
        uow.commit()
    now = T0 + timedelta(seconds=30)
    answers: list[PollAnswer | str] = []
    lock = threading.Lock()
    start = threading.Barrier(POLLERS)

    def poll() -> None:
        start.wait()
        uow = backend.uow()
        with uow:
            found = uow.devices.by_device_code_hash(login.device_code_hash)
            assert found is not None
            updated, outcome = found.poll(now, approver_in_team=True)
            answer: PollAnswer | str = outcome.answer
            try:
                if updated is not found:
                    uow.devices.save(updated)
                uow.commit()
            except ConcurrentUpdate:
                answer = "lost the race"
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=poll) for _ in range(POLLERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers) == POLLERS
    assert answers.count(PollAnswer.GRANTED) == 1
    assert set(answers) - {PollAnswer.GRANTED} <= {PollAnswer.INVALID_GRANT, "lost the race"}
    with backend.uow() as uow:
        stored = uow.devices.by_device_code_hash(login.device_code_hash)
        assert stored is not None and stored.status is DeviceLoginStatus.EXCHANGED
