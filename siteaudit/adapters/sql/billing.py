"""Billing accounts, checkout sessions and payment events seen, in SQL.

An event id is a primary key inserted with ON CONFLICT DO NOTHING: of two deliveries of one event, on
PostgreSQL the second waits for the first's transaction and then inserts nothing, so it applies nothing.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from sqlalchemy import select, update

from siteaudit.adapters.sql.dialect import insert_ignoring_conflicts
from siteaudit.adapters.sql.rows import SqlRepository, column, reader, row_values
from siteaudit.adapters.sql.tables import billing_accounts, checkout_sessions, payment_events
from siteaudit.domain.billing import (
    BillingAccount,
    CheckoutSession,
    PaidPeriod,
    PlanChoice,
    Subscription,
    SubscriptionStatus,
)
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.domain.ids import UserId


def _choice(key: str | None) -> PlanChoice | None:
    return None if key is None else PlanChoice.from_key(key)


def account_from_row(row: Any) -> BillingAccount:
    subscription = None
    if row.subscription_id is not None:
        subscription = Subscription(
            id=row.subscription_id,
            status=SubscriptionStatus(row.subscription_status),
            as_of=row.subscription_as_of,
            choice=_choice(row.subscription_choice),
        )
    paid = None
    if row.paid_subscription_id is not None:
        paid = PaidPeriod(
            subscription_id=row.paid_subscription_id,
            choice=PlanChoice.from_key(row.paid_choice),
            start=row.paid_from,
            end=row.paid_until,
        )
    return BillingAccount(
        user_id=UserId(row.user_id),
        provider=row.provider,
        customer_id=row.customer_id,
        subscription=subscription,
        purchased_at=row.purchased_at,
        version=row.version,
        paid_period=paid,
        paid_months=row.paid_months,
    )


def account_values(account: BillingAccount) -> dict[str, Any]:
    sub, paid = account.subscription, account.paid_period
    return {
        "provider": account.provider,
        "customer_id": account.customer_id,
        "subscription_id": None if sub is None else sub.id,
        "subscription_status": None if sub is None else sub.status.value,
        "subscription_as_of": None if sub is None else sub.as_of,
        "subscription_choice": None if sub is None or sub.choice is None else sub.choice.key,
        "purchased_at": account.purchased_at,
        "version": account.version,
        "paid_subscription_id": None if paid is None else paid.subscription_id,
        "paid_choice": None if paid is None else paid.choice.key,
        "paid_from": None if paid is None else paid.start,
        "paid_until": None if paid is None else paid.end,
        "paid_months": account.paid_months,
    }


session_from_row: Final = reader(CheckoutSession, choice=column(read=_choice))


def session_values(session: CheckoutSession) -> dict[str, Any]:
    return row_values(
        session, leave_out=("id",), choice=None if session.choice is None else session.choice.key
    )


class SqlBillingRepository(SqlRepository):
    def get(self, user_id: UserId) -> BillingAccount | None:
        row = self._c().execute(select(billing_accounts).where(billing_accounts.c.user_id == user_id)).first()
        return None if row is None else account_from_row(row)

    def by_customer(self, provider: str, customer_id: str) -> BillingAccount | None:
        row = (
            self._c()
            .execute(
                select(billing_accounts).where(
                    billing_accounts.c.provider == provider, billing_accounts.c.customer_id == customer_id
                )
            )
            .first()
        )
        return None if row is None else account_from_row(row)

    def add(self, account: BillingAccount) -> bool:
        conn = self._c()
        inserted = conn.execute(
            insert_ignoring_conflicts(conn, billing_accounts)
            .values(user_id=account.user_id, **account_values(account))
            .returning(billing_accounts.c.user_id)
        ).first()
        return inserted is not None

    def save(self, account: BillingAccount) -> None:
        result = self._c().execute(
            update(billing_accounts)
            .where(
                billing_accounts.c.user_id == account.user_id,
                billing_accounts.c.version == account.version - 1,
            )
            .values(account_values(account))
        )
        if result.rowcount != 1:
            raise ConcurrentUpdate("billing account", account.user_id)

    def with_paid_period(self, *, ending_after: datetime) -> Sequence[BillingAccount]:
        rows = self._c().execute(
            select(billing_accounts)
            .where(billing_accounts.c.paid_until > ending_after)
            .order_by(billing_accounts.c.user_id)
        )
        return [account_from_row(row) for row in rows]

    def add_session(self, session: CheckoutSession) -> None:
        self._c().execute(checkout_sessions.insert().values(id=session.id, **session_values(session)))

    def session(self, session_id: str) -> CheckoutSession | None:
        row = self._c().execute(select(checkout_sessions).where(checkout_sessions.c.id == session_id)).first()
        return None if row is None else session_from_row(row)

    def save_session(self, session: CheckoutSession) -> None:
        result = self._c().execute(
            update(checkout_sessions)
            .where(checkout_sessions.c.id == session.id)
            .values(session_values(session))
        )
        if result.rowcount != 1:
            raise NotFound("checkout session", session.id)

    def record_event(self, event_id: str, *, at: datetime) -> bool:
        conn = self._c()
        inserted = conn.execute(
            insert_ignoring_conflicts(conn, payment_events)
            .values(event_id=event_id, received_at=at)
            .returning(payment_events.c.event_id)
        ).first()
        return inserted is not None
