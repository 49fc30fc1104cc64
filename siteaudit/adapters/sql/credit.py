"""The credit ledger in SQL: entries unique by key, balances moved by one conditional statement each.

Concurrency: every balance change is a single `UPDATE credit_accounts ... WHERE user_id = :u [AND balance
>= :c]`. On PostgreSQL that statement takes the account's row lock until the transaction ends, so two
reservations against one account run one after the other and the second sees the first's balance; on
SQLite the transaction holds the single write lock (BEGIN IMMEDIATE) from its first write on. Idempotency
keys are a unique constraint: a replayed grant, reservation or settlement inserts nothing and changes
nothing.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from sqlalchemy import func, select, update

from siteaudit.adapters.sql.dialect import dialect_insert, insert_ignoring_conflicts
from siteaudit.adapters.sql.rows import SqlRepository, found, reader, row_values
from siteaudit.adapters.sql.tables import credit_accounts, credit_entries
from siteaudit.domain.credit import CreditAccount, EntryKind, LedgerEntry, reservation_key
from siteaudit.domain.error import InsufficientCredits
from siteaudit.domain.ids import TeamId, UserId

entry_from_row: Final = reader(LedgerEntry)


def entry_values(entry: LedgerEntry) -> dict[str, Any]:
    return row_values(entry)


class SqlCreditLedger(SqlRepository):
    def _append(self, entry: LedgerEntry) -> bool:
        """Insert the entry unless its key exists; True when it was new."""
        conn = self._c()
        inserted = conn.execute(
            insert_ignoring_conflicts(conn, credit_entries)
            .values(entry_values(entry))
            .returning(credit_entries.c.id)
        ).first()
        return inserted is not None

    def _ensure_account(self, user_id: UserId) -> None:
        conn = self._c()
        conn.execute(
            insert_ignoring_conflicts(conn, credit_accounts).values(user_id=user_id, balance=0, version=0)
        )

    def _add_to_balance(self, user_id: UserId, amount: int) -> None:
        conn = self._c()
        statement = dialect_insert(conn, credit_accounts).values(user_id=user_id, balance=amount, version=1)
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=[credit_accounts.c.user_id],
                set_={
                    "balance": credit_accounts.c.balance + statement.excluded.balance,
                    "version": credit_accounts.c.version + 1,
                },
            )
        )

    def balance(self, user_id: UserId) -> int:
        value = (
            self._c()
            .execute(select(credit_accounts.c.balance).where(credit_accounts.c.user_id == user_id))
            .scalar_one_or_none()
        )
        return 0 if value is None else int(value)

    def grant(
        self, user_id: UserId, amount: int, *, key: str, at: datetime, reference: str = "grant"
    ) -> bool:
        _, entry = CreditAccount(user_id).grant(amount, key=key, at=at, reference=reference)
        with self._c().begin_nested():
            if not self._append(entry):
                return False
            self._add_to_balance(user_id, amount)
        return True

    def reserve(
        self, user_id: UserId, amount: int, *, reference: str, at: datetime, team: TeamId | None = None
    ) -> bool:
        if amount < 0:
            raise ValueError("a reservation is never negative")
        entry = LedgerEntry(
            user_id, EntryKind.RESERVE, -amount, reservation_key(reference), at, reference, team
        )
        conn = self._c()
        # A savepoint: when the balance cannot cover the hold, the entry just inserted goes too, even if
        # the caller catches InsufficientCredits and commits the rest of its unit of work.
        with conn.begin_nested():
            if not self._append(entry):
                return False
            self._ensure_account(user_id)
            taken = conn.execute(
                update(credit_accounts)
                .where(credit_accounts.c.user_id == user_id, credit_accounts.c.balance >= amount)
                .values(balance=credit_accounts.c.balance - amount, version=credit_accounts.c.version + 1)
            )
            if taken.rowcount != 1:
                raise InsufficientCredits(amount, self.balance(user_id))
        return True

    def settle(self, reference: str, *, cost: int, at: datetime) -> bool:
        conn = self._c()
        held = credit_entries.c.key == reservation_key(reference)
        hold = found(conn, credit_entries, held, entity="reservation", key=reference)
        reserved = -int(hold.amount)
        account = UserId(hold.account)
        team = None if hold.team_id is None else TeamId(hold.team_id)
        _, (release, charge) = CreditAccount(account).settle(
            reserved=reserved, cost=min(cost, reserved), reference=reference, at=at, team_id=team
        )
        with conn.begin_nested():
            if not self._append(release):
                return False
            self._append(charge)
            conn.execute(
                update(credit_accounts)
                .where(credit_accounts.c.user_id == account)
                .values(
                    balance=credit_accounts.c.balance + (release.amount + charge.amount),
                    version=credit_accounts.c.version + 1,
                )
            )
        return True

    def reserved(self, reference: str) -> int | None:
        amount = (
            self._c()
            .execute(
                select(credit_entries.c.amount).where(credit_entries.c.key == reservation_key(reference))
            )
            .scalar_one_or_none()
        )
        return None if amount is None else -int(amount)

    def is_settled(self, reference: str) -> bool:
        found = (
            self._c()
            .execute(select(credit_entries.c.id).where(credit_entries.c.key == f"{reference}:release"))
            .first()
        )
        return found is not None

    def entries(self, user_id: UserId) -> Sequence[LedgerEntry]:
        rows = self._c().execute(
            select(credit_entries)
            .where(credit_entries.c.account == user_id)
            .order_by(credit_entries.c.at, credit_entries.c.key)
        )
        return [entry_from_row(r) for r in rows]

    def spent_since(self, user_id: UserId, since: datetime, *, team: TeamId | None = None) -> int:
        query = select(func.coalesce(func.sum(credit_entries.c.amount), 0)).where(
            credit_entries.c.account == user_id,
            credit_entries.c.kind == EntryKind.CHARGE.value,
            credit_entries.c.at >= since,
        )
        if team is not None:
            query = query.where(credit_entries.c.team_id == team)
        return -int(self._c().execute(query).scalar_one())
