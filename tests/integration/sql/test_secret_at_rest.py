"""Secrets at rest: what a copy of the database shows, and where the key that seals webhook secrets lives."""

import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from sql_backend import T0, Backend
from sqlalchemy import JSON, Engine, LargeBinary, String, Text, select

from siteaudit.adapters.sql import sql_unit_of_work_factory
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.tables import metadata
from siteaudit.adapters.sql.unit_of_work import MissingSecretKey
from siteaudit.domain.account import Team, User
from siteaudit.domain.apikey import new_key_material, new_settings_key
from siteaudit.domain.ids import ApiKeyId, TeamId, UserId
from siteaudit.ports.repository import UnitOfWork

PEOPLE = 25


def _dump(engine: Engine) -> str:
    """Every text, JSON and binary value of every table, as one string (SECURITY 3's database dump)."""
    values: list[str] = []
    with engine.connect() as conn:
        for table in metadata.sorted_tables:
            columns = [c for c in table.columns if isinstance(c.type, String | Text | JSON | LargeBinary)]
            if not columns:
                continue
            for row in conn.execute(select(*columns)):
                values.extend(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in row)
    return "\n".join(values)


def test_a_database_dump_holds_no_api_key_and_no_webhook_secret_in_plaintext(sql_backend: Backend) -> None:
    assert sql_backend.engine is not None
    keys: list[str] = []
    secrets: list[str] = []
    with sql_backend.uow() as uow:
        for n in range(PEOPLE):
            user = uow.users.add(User(UserId(0), f"person-{n}@retro-clock.example", "free", T0))
            team = uow.teams.add(Team(TeamId(0), f"Team {n}", user.id, T0))
            material = new_key_material(f"{n:02d}".ljust(40, "Q").replace(" ", "Q")[:40])
            key, _ = new_settings_key(
                (), key_id=ApiKeyId(0), user=user.id, team=team.id, material=material, now=T0
            )
            uow.keys.add(key)
            secret = f"whsec_{n:02d}_retro_clock_signing_secret"
            uow.webhook_secrets.create(user.id, secret)
            keys.append(material.raw)
            secrets.append(secret)
        uow.commit()
    dump = _dump(sql_backend.engine)
    # The dump does hold what was stored, so a miss below is not a dump that reads nothing:
    assert all(raw[:12] in dump for raw in keys), "every key's prefix is stored"
    leaked = [raw for raw in keys if raw in dump or raw[3:] in dump]
    shown = [s for s in secrets if s in dump or s.removeprefix("whsec_") in dump]
    print(
        f"dump of {len(dump):,} characters: {len(leaked)}/{PEOPLE} keys, {len(shown)}/{PEOPLE} secrets found"
    )
    assert leaked == []
    assert shown == []
    with sql_backend.uow() as uow:
        assert [uow.webhook_secrets.get(UserId(u.id)) for u in _users(uow)] == secrets


def _users(uow: UnitOfWork) -> list[User]:
    return [uow.users.by_email(f"person-{n}@retro-clock.example") for n in range(PEOPLE)]


def test_on_sqlite_without_a_key_one_is_made_beside_the_database_and_reused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'data' / 'siteaudit.sqlite3'}"
    first: Callable[[], UnitOfWork] = sql_unit_of_work_factory(url)
    key_file = tmp_path / "data" / "siteaudit.sqlite3.key"
    assert key_file.exists()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    made = key_file.read_text()
    with first() as uow:
        owner = uow.users.add(User(UserId(0), "owner@retro-clock.example", "free", T0))
        uow.webhook_secrets.create(owner.id, "whsec_kept_across_restarts")
        uow.commit()
    again = sql_unit_of_work_factory(url)  # a restart
    assert key_file.read_text() == made
    with again() as uow:
        assert uow.webhook_secrets.get(owner.id) == "whsec_kept_across_restarts"


def test_a_configured_key_is_used_and_no_key_file_is_made(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"
    factory = sql_unit_of_work_factory(url, secret_key="a long passphrase typed by the operator")
    with factory() as uow:
        owner = uow.users.add(User(UserId(0), "owner@retro-clock.example", "free", T0))
        uow.webhook_secrets.create(owner.id, "whsec_configured")
        uow.commit()
    assert not (tmp_path / "siteaudit.sqlite3.key").exists()
    with sql_unit_of_work_factory(url, secret_key="a long passphrase typed by the operator")() as uow:
        assert uow.webhook_secrets.get(owner.id) == "whsec_configured"


@pytest.mark.postgres
def test_postgresql_without_a_key_refuses_to_start(postgres_url: str) -> None:
    engine = create_engine(postgres_url)
    try:
        with pytest.raises(MissingSecretKey, match="SITEAUDIT_SECRET_KEY"):
            sql_unit_of_work_factory(engine, migrate=False)
        sql_unit_of_work_factory(engine, secret_key="shared by every process", migrate=False)
    finally:
        engine.dispose()
