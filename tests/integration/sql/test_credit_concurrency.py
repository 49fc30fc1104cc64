"""Credits under concurrency: many threads reserving against one account never overdraw it."""

import threading
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine

from siteaudit.adapters.sql import SqlUnitOfWork
from siteaudit.domain.account import User
from siteaudit.domain.error import InsufficientCredits
from siteaudit.domain.ids import UserId

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
THREADS = 12
ATTEMPTS = 8
HOLD = 70  # tenths; the balance covers 1000 // 70 = 14 of the 96 attempts


def _race(uow: Callable[[], SqlUnitOfWork]) -> tuple[UserId, list[str], list[str]]:
    with uow() as u:
        payer = u.users.add(User(UserId(0), "payer@retro-clock.example", "scale", T0)).id
        u.credits.grant(payer, 1000, key="grant:start", at=T0)
        u.commit()
    won: list[str] = []
    refused: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def worker(n: int) -> None:
        start.wait()
        for attempt in range(ATTEMPTS):
            reference = f"audit:{n}-{attempt}"
            with uow() as u:
                try:
                    u.credits.reserve(payer, HOLD, reference=reference, at=T0)
                    # settle half of them at once, in the same transaction: holds and settlements interleave
                    if attempt % 2:
                        u.credits.settle(reference, cost=HOLD // 2, at=T0)
                    u.commit()
                except InsufficientCredits:
                    with lock:
                        refused.append(reference)
                    continue
            with lock:
                won.append(reference)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return payer, won, refused


def _check(engine: Engine) -> None:
    payer, won, refused = _race(lambda: SqlUnitOfWork(engine))
    assert len(won) + len(refused) == THREADS * ATTEMPTS
    with SqlUnitOfWork(engine) as u:
        balance = u.credits.balance(payer)
        entries = u.credits.entries(payer)
        settled = [r for r in won if u.credits.is_settled(r)]
    assert balance >= 0
    assert sum(e.amount for e in entries) == balance, "the ledger sums exactly to the balance"
    assert balance == 1000 - HOLD * len(won) + (HOLD - HOLD // 2) * len(settled)
    assert len(won) >= 1000 // HOLD
    assert balance < HOLD, "every refusal was right: the balance could not cover one more hold"


@pytest.mark.postgres
def test_concurrent_reservations_never_overdraw_an_account_on_postgresql(postgres_engine: Engine) -> None:
    _check(postgres_engine)


def test_concurrent_reservations_never_overdraw_an_account_on_sqlite(sqlite_engine: Engine) -> None:
    _check(sqlite_engine)
