"""Credits: integer tenths of a credit, an append-only ledger with idempotency keys, and the cost rules.

Money-like state is never a float. A reservation takes credits out of the balance at once; settling it
returns the reservation (`release`) and takes the actual cost (`charge`), both in one step and at most
once per reservation key. Hence for every account, at every moment:

    balance = sum(entries) = grants - settled charges - open reservations
"""

import enum
from collections.abc import Iterable
from datetime import datetime
from typing import Final, Self

from attrs import evolve, frozen

from siteaudit.domain.error import DomainError, ErrorCode, InsufficientCredits
from siteaudit.domain.ids import AuditId, TeamId, UserId

TENTHS_PER_CREDIT: Final = 10
PAGE_COST: Final = 10  # 1 credit per page fetched
RENDERED_PAGE_COST: Final = 50  # 5 credits per page fetched and rendered (JavaScript rendering opt-in)
NOT_MODIFIED_PAGE_COST: Final = 2  # 0.2 credit per page that answered 304 since the previous audit
RECHECK_URL_COST: Final = 10  # 1 credit per URL rechecked


def audit_reference(audit_id: AuditId) -> str:
    """The ledger key of an audit's reservation: reserved when it starts, settled once when it ends."""
    return f"audit:{audit_id}"


def credits(amount: int) -> int:
    """Whole credits in tenths."""
    return amount * TENTHS_PER_CREDIT


def as_number(tenths: int) -> float | int:
    """Tenths as the interface shows them: an integer when whole, else one decimal."""
    return tenths // TENTHS_PER_CREDIT if tenths % TENTHS_PER_CREDIT == 0 else tenths / TENTHS_PER_CREDIT


def round_up_to_credit(tenths: int) -> int:
    return -(-tenths // TENTHS_PER_CREDIT) * TENTHS_PER_CREDIT


def page_cost(*, render: bool) -> int:
    """What one page fetched in full costs, in tenths: 1 credit raw, 5 credits rendered in a browser."""
    return RENDERED_PAGE_COST if render else PAGE_COST


def audit_cost(*, pages_fetched: int, pages_not_modified: int, reserved: int, render: bool = False) -> int:
    """What an audit costs: 1 per page fetched in full (5 when the audit renders JavaScript), 0.2 per
    page that answered 304, rounded up once.

    A page that answered 304 costs 0.2 instead of 1 (its facts are reused from the previous audit, and it
    is not rendered again). The cost never exceeds the reservation: the page cap bounds both.
    """
    if pages_fetched < 0 or pages_not_modified < 0:
        raise ValueError("page counts are never negative")
    raw = pages_fetched * page_cost(render=render) + pages_not_modified * NOT_MODIFIED_PAGE_COST
    return min(round_up_to_credit(raw), reserved)


def recheck_cost(*, urls_fetched: int, reserved: int) -> int:
    return min(urls_fetched * RECHECK_URL_COST, reserved)


class EntryKind(enum.StrEnum):
    GRANT = "grant"  # credits bought, granted by an operator, or the starting balance
    RESERVE = "reserve"  # held at an audit's or recheck's start (negative)
    RELEASE = "release"  # the hold returned at settlement (positive)
    CHARGE = "charge"  # the actual cost taken at settlement (negative)


@frozen
class LedgerEntry:
    """One append-only line. `key` is unique: writing the same key twice is a no-op."""

    account: UserId
    kind: EntryKind
    amount: int  # signed tenths: positive adds to the balance
    key: str
    at: datetime
    reference: str = ""  # "audit:42", "recheck:7", "grant:operator"
    team_id: TeamId | None = None  # the team whose audit or recheck the entry pays for


def reservation_key(reference: str) -> str:
    return f"{reference}:reserve"


@frozen
class CreditAccount:
    """A person's credits. The balance is the sum of the account's ledger entries."""

    user_id: UserId
    balance: int = 0
    version: int = 0

    def grant(
        self, amount: int, *, key: str, at: datetime, reference: str = "grant"
    ) -> tuple[Self, LedgerEntry]:
        if amount <= 0:
            raise DomainError("a grant must be positive", code=ErrorCode.VALIDATION_FAILED)
        entry = LedgerEntry(self.user_id, EntryKind.GRANT, amount, key, at, reference)
        return self._apply(entry), entry

    def reserve(
        self, amount: int, *, reference: str, at: datetime, team_id: TeamId | None = None
    ) -> tuple[Self, LedgerEntry]:
        """Hold `amount` tenths. Raises InsufficientCredits (402) when the balance cannot cover it."""
        if amount < 0:
            raise ValueError("a reservation is never negative")
        if amount > self.balance:
            raise InsufficientCredits(amount, self.balance)
        entry = LedgerEntry(
            self.user_id, EntryKind.RESERVE, -amount, reservation_key(reference), at, reference, team_id
        )
        return self._apply(entry), entry

    def settle(
        self, *, reserved: int, cost: int, reference: str, at: datetime, team_id: TeamId | None = None
    ) -> tuple[Self, tuple[LedgerEntry, LedgerEntry]]:
        """Return the hold and take the cost: one step, keyed by the reservation's reference."""
        if not 0 <= cost <= reserved:
            raise ValueError(f"cost {cost} must lie within the reservation {reserved}")
        release = LedgerEntry(
            self.user_id, EntryKind.RELEASE, reserved, f"{reference}:release", at, reference, team_id
        )
        charge = LedgerEntry(
            self.user_id, EntryKind.CHARGE, -cost, f"{reference}:charge", at, reference, team_id
        )
        return self._apply(release)._apply(charge), (release, charge)

    def _apply(self, entry: LedgerEntry) -> Self:
        return evolve(self, balance=self.balance + entry.amount, version=self.version + 1)


def balance_of(entries: Iterable[LedgerEntry]) -> int:
    return sum(entry.amount for entry in entries)


def spent(entries: Iterable[LedgerEntry], *, since: datetime, team_id: TeamId | None = None) -> int:
    """Settled charges since a moment (for one team's work when `team_id` is given), in positive tenths."""
    return -sum(
        e.amount
        for e in entries
        if e.kind is EntryKind.CHARGE and e.at >= since and (team_id is None or e.team_id == team_id)
    )
