"""The REST hot path's storage: the key read with its membership, lazy transactions and cheap checkouts."""

from datetime import timedelta
from typing import Any

import pytest
from sql_backend import T0, Backend, people
from sqlalchemy import Engine, text

from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql import SqlUnitOfWork
from siteaudit.adapters.sql.engine import READ_ONLY, json_loads
from siteaudit.domain.account import Membership, Role, User
from siteaudit.domain.apikey import ApiKey, new_key_material, new_settings_key
from siteaudit.domain.audit import Audit
from siteaudit.domain.credit import credits
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import ApiKeyId, AuditId, TeamId, UserId

IDLE, IN_TRANSACTION = 0, 2  # psycopg.pq.TransactionStatus
BOX = SecretBox(SecretBox.generate_key())


def _postgres(engine: Engine) -> Backend:
    return Backend("postgres", lambda: SqlUnitOfWork(engine, BOX), None, engine)  # type: ignore[arg-type]


def _key(user: UserId, team: TeamId) -> ApiKey:
    key, _ = new_settings_key(
        (), key_id=ApiKeyId(0), user=user, team=team, material=new_key_material("k" * 40), now=T0
    )
    return key


def _audit(team: TeamId, user: UserId) -> Audit:
    return Audit(
        id=AuditId(0), team_id=team, user_id=user, payer_id=user, url="https://retro-clock.example/",
        origin="https://retro-clock.example", created_at=T0, max_pages=10, credits_reserved=credits(10),
    )  # fmt: skip


def _status(uow: Any) -> int:
    return int(uow._connection.connection.driver_connection.info.transaction_status)


def test_a_key_is_read_with_whether_its_holder_is_still_in_its_team(backend: Backend) -> None:
    _, member, team = people(backend)
    with backend.uow() as uow:
        uow.teams.add_member(Membership(team.id, member.id, Role.MEMBER))
        key = uow.keys.add(_key(member.id, team.id))
        uow.commit()
    with backend.uow() as uow:
        assert uow.keys.by_hash_for_request(key.hash) == (key, True)
        assert uow.keys.by_hash_for_request("0" * 64) is None
        uow.teams.remove_member(team.id, member.id)
        uow.commit()
    with backend.uow() as uow:
        assert uow.keys.by_hash_for_request(key.hash) == (key, False)


def test_a_key_read_for_a_request_can_be_saved_in_the_same_unit_of_work(backend: Backend) -> None:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        key = uow.keys.add(_key(owner.id, team.id))
        uow.commit()
    with backend.uow() as uow:
        found = uow.keys.by_hash_for_request(key.hash)
        assert found is not None
        revoked, _ = found[0].revoke(by=owner.id, now=T0 + timedelta(minutes=5))
        uow.keys.save(revoked)
        uow.commit()
    with backend.uow() as uow:
        assert uow.keys.get(key.id).status == revoked.status


@pytest.mark.postgres
def test_on_postgres_reads_open_no_transaction_and_the_first_write_opens_one(postgres_engine: Engine) -> None:
    backend = _postgres(postgres_engine)
    owner, _, team = people(backend)
    with backend.uow() as uow:
        audit = uow.audits.add(_audit(team.id, owner.id))
        uow.commit()
    with backend.uow() as uow:
        assert uow.audits.get(audit.id, team=team.id) == audit
        assert _status(uow) == IDLE  # no BEGIN was sent: nothing to roll back either
        started = audit.start(now=T0)
        uow.audits.save(started)
        assert _status(uow) == IN_TRANSACTION
        assert uow.audits.get(audit.id, team=team.id) == started  # later reads run inside it
        uow.commit()
    with backend.uow() as uow:
        assert uow.audits.get(audit.id, team=team.id) == started
    with backend.uow() as uow:
        uow.users.add(User(UserId(0), "late@retro-clock.example", "free", T0))
        assert _status(uow) == IN_TRANSACTION
        assert uow.users.by_email("late@retro-clock.example").email == "late@retro-clock.example"
        # leaving without commit rolls the transaction back
    with backend.uow() as uow:
        with pytest.raises(NotFound):
            uow.users.by_email("late@retro-clock.example")
        assert _status(uow) == IDLE


@pytest.mark.postgres
def test_on_postgres_a_unit_of_work_commits_then_reads_outside_a_transaction_again(
    postgres_engine: Engine,
) -> None:
    backend = _postgres(postgres_engine)
    people(backend)
    with backend.uow() as uow:
        uow.users.add(User(UserId(0), "first@retro-clock.example", "free", T0))
        uow.commit()
        assert uow.users.by_email("first@retro-clock.example").plan == "free"
        assert _status(uow) == IDLE
        uow.users.add(User(UserId(0), "second@retro-clock.example", "free", T0))
        assert _status(uow) == IN_TRANSACTION
        uow.commit()
    with backend.uow() as uow:
        assert uow.users.count() == 4


@pytest.mark.postgres
def test_on_postgres_a_connection_left_lazy_is_handed_out_with_transactions_again(
    postgres_engine: Engine,
) -> None:
    with postgres_engine.connect().execution_options(**{READ_ONLY: True}) as conn:
        conn.execute(text("SELECT 1")).scalar()  # text: may write, so it begins a transaction
        conn.rollback()
        conn.execute(text("SELECT 1").columns()).all()
    for _ in range(3):  # whichever pooled connection comes next
        with postgres_engine.begin() as conn:
            driver: Any = conn.connection.driver_connection
            assert driver.autocommit is False
            # what the crawl store does: the driver's own cursor inside the SQLAlchemy transaction
            driver.cursor().execute("SELECT 1")
            assert driver.info.transaction_status == IN_TRANSACTION


@pytest.mark.postgres
def test_on_postgres_a_pooled_connection_the_server_ended_is_replaced_before_use(
    postgres_engine: Engine,
) -> None:
    with postgres_engine.connect() as victim, postgres_engine.connect() as other:
        pid = victim.execute(text("SELECT pg_backend_pid()")).scalar_one()
        victim.commit()  # idle when the server ends it: the pool takes it back unknowing
        assert other.execute(text("SELECT pg_terminate_backend(:pid, 5000)"), {"pid": pid}).scalar_one()
        other.commit()
    for _ in range(5):  # each of these checkouts may meet the ended connection: none fails
        with postgres_engine.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar_one() == 1


def test_json_columns_parse_as_the_standard_library_would_even_where_orjson_refuses() -> None:
    assert json_loads(b'{"a": [1, 2.5, null, true], "b": "\\u00e9"}') == {"a": [1, 2.5, None, True], "b": "é"}
    assert json_loads("[123456789012345678901234567890]") == [123456789012345678901234567890]
