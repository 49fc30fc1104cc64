"""Billing accounts, checkout sessions and payment events seen, in memory."""

from collections.abc import Sequence
from datetime import datetime

from attrs import define, field

from siteaudit.adapters.memory.table import Table
from siteaudit.domain.billing import BillingAccount, CheckoutSession
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.domain.ids import UserId


@define
class MemoryBillingStore:
    accounts: Table[UserId, BillingAccount] = field(factory=Table)
    sessions: Table[str, CheckoutSession] = field(factory=Table)
    events: Table[str, datetime] = field(factory=Table)

    def tables(self) -> list[Table]:  # type: ignore[type-arg]
        return [self.accounts, self.sessions, self.events]


class MemoryBillingRepository:
    def __init__(self, store: MemoryBillingStore) -> None:
        self._s = store

    def get(self, user_id: UserId) -> BillingAccount | None:
        return self._s.accounts.get(user_id)

    def by_customer(self, provider: str, customer_id: str) -> BillingAccount | None:
        return next(
            self._s.accounts.find(lambda a: a.provider == provider and a.customer_id == customer_id), None
        )

    def add(self, account: BillingAccount) -> bool:
        if self._s.accounts.get(account.user_id) is not None:
            return False
        self._s.accounts.put(account.user_id, account)
        return True

    def save(self, account: BillingAccount) -> None:
        stored = self._s.accounts.found(account.user_id, "billing account")
        if stored.version != account.version - 1:
            raise ConcurrentUpdate("billing account", account.user_id)
        self._s.accounts.put(account.user_id, account)

    def with_paid_period(self, *, ending_after: datetime) -> Sequence[BillingAccount]:
        found = self._s.accounts.find(
            lambda a: a.paid_period is not None and a.paid_period.end > ending_after
        )
        return sorted(found, key=lambda a: a.user_id)

    def add_session(self, session: CheckoutSession) -> None:
        self._s.sessions.put(session.id, session)

    def session(self, session_id: str) -> CheckoutSession | None:
        return self._s.sessions.get(session_id)

    def save_session(self, session: CheckoutSession) -> None:
        if self._s.sessions.get(session.id) is None:
            raise NotFound("checkout session", session.id)
        self._s.sessions.put(session.id, session)

    def record_event(self, event_id: str, *, at: datetime) -> bool:
        if self._s.events.get(event_id) is not None:
            return False
        self._s.events.put(event_id, at)
        return True
