"""Crashes: a unit of work cut off half-way (process killed, connection closed) leaves no partial state."""

import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from siteaudit.adapters.sql import SqlUnitOfWork
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, TeamId, UserId

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)

CHILD = textwrap.dedent(
    """
    import sys, time
    from datetime import UTC, datetime
    from siteaudit.adapters.sql import SqlUnitOfWork
    from siteaudit.adapters.sql.engine import create_engine
    from siteaudit.domain.account import User
    from siteaudit.domain.audit import Audit
    from siteaudit.domain.ids import AuditId, TeamId, UserId

    t0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
    with SqlUnitOfWork(create_engine(sys.argv[1])) as uow:
        payer = uow.users.add(User(UserId(0), "crash@retro-clock.example", "scale", t0))
        uow.credits.grant(payer.id, 1000, key="grant:crash", at=t0)
        audit = uow.audits.add(Audit(AuditId(0), TeamId(0), payer.id, payer.id, "https://retro-clock.example/",
                                     "https://retro-clock.example", t0, max_pages=50))
        uow.credits.reserve(payer.id, 500, reference=f"audit:{audit.id}", at=t0)
        print("staged", flush=True)
        time.sleep(120)  # killed here, before commit
        uow.commit()
    """
)


def _nothing_was_kept(engine: Engine) -> None:
    with SqlUnitOfWork(engine) as uow:
        assert uow.users.count() == 0
        assert uow.audits.count_started_by(UserId(1)) == 0
    with engine.connect() as conn:
        for table in ("credit_entries", "credit_accounts", "audits"):
            assert conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == 0


def _kill_mid_use_case(engine: Engine) -> None:
    url = engine.url.render_as_string(hide_password=False)
    child = subprocess.Popen([sys.executable, "-c", CHILD, url], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "staged"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL


def test_a_process_killed_mid_use_case_leaves_nothing_on_sqlite(sqlite_engine: Engine) -> None:
    sqlite_engine.dispose()
    _kill_mid_use_case(sqlite_engine)
    _nothing_was_kept(sqlite_engine)
    with SqlUnitOfWork(sqlite_engine) as uow:  # and the write lock died with the process
        uow.users.add(User(UserId(0), "after@retro-clock.example", "free", T0))
        uow.commit()


@pytest.mark.postgres
def test_a_process_killed_mid_use_case_leaves_nothing_on_postgresql(postgres_engine: Engine) -> None:
    _kill_mid_use_case(postgres_engine)
    _nothing_was_kept(postgres_engine)


@pytest.mark.postgres
def test_a_connection_closed_mid_use_case_rolls_it_all_back(postgres_engine: Engine) -> None:
    uow = SqlUnitOfWork(postgres_engine)
    with uow:
        owner = uow.users.add(User(UserId(0), "cut@retro-clock.example", "scale", T0))
        team = uow.teams.add(Team(TeamId(0), "Cut Off", owner.id, T0))
        uow.credits.grant(owner.id, 1000, key="grant:cut", at=T0)
        uow.audits.add(
            Audit(
                AuditId(0),
                team.id,
                owner.id,
                owner.id,
                "https://retro-clock.example/",
                "https://retro-clock.example",
                T0,
                10,
            )
        )
        pid = uow.users._c().exec_driver_sql("SELECT pg_backend_pid()").scalar_one()  # type: ignore[attr-defined]
        with postgres_engine.connect() as admin:
            admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with pytest.raises(DBAPIError):  # the connection is gone, and the transaction with it
            uow.credits.reserve(owner.id, 500, reference="audit:cut", at=T0)
    _nothing_was_kept(postgres_engine)
    with postgres_engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM teams")).scalar_one() == 0
