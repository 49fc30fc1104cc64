# Over 400 lines: one fulfilment for every provider's events (packs, subscriptions, tier months) keeps the money rules in one place; split by provider event when one grows.
"""Billing use cases (docs/rest-api.md "Billing"): the team owner's payment links (declared in
`usecases.py`), the app's billing page and plan changes, and one fulfilment for every provider (Stripe's
webhook, the local test checkout).

The provider is called outside any transaction (a slow payment API never holds the SQLite writer or a
PostgreSQL row lock). Every payment event, whether Stripe's webhook or the local test checkout's button,
goes through `fulfil`: the event id is recorded in the same transaction as its effects, so an event
applies once, and the domain's rules (`siteaudit.domain.billing`) make replays and reordering harmless.
"""

import hashlib
import hmac
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Final

from attrs import evolve

from siteaudit.domain.account import Caller, NotTeamOwner, User
from siteaudit.domain.billing import (
    PACKS,
    BillingAccount,
    CheckoutCompleted,
    CheckoutSession,
    Fulfilment,
    Interval,
    InvalidPaymentSignature,
    NoBillingAccount,
    NoSubscription,
    Pack,
    PaidPeriod,
    PaymentEvent,
    PlanChoice,
    PriceNotConfigured,
    PurchaseKind,
    Subscription,
    SubscriptionChanged,
    SubscriptionPaid,
    SubscriptionStatus,
    add_months,
    month_grant_key,
    purchase_key,
)
from siteaudit.domain.credit import credits
from siteaudit.domain.error import ConcurrentUpdate, NotFound, RateLimited
from siteaudit.domain.ids import UserId
from siteaudit.ports.application import BillingStatus, LocalCheckout, LocalCheckoutDone
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.payment import CheckoutOrder, PaymentProvider
from siteaudit.ports.ratelimit import Limit, RateLimiter
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.usecases import copy_named
from siteaudit.services.billing.answers import PaymentLink
from siteaudit.services.billing.usecases import GetBillingPortalLink, GetCreditPackLink, GetSubscriptionLink

log = logging.getLogger("siteaudit.billing")

UowFactory = Callable[[], UnitOfWork]
LOCAL: str = "local"  # the name of the local test provider
# Validly signed provider webhooks per client address (docs/security.md): far above what the provider
# sends, so only a replayed-signature flood meets it; a refused one is answered 429 and the provider
# retries it later.
WEBHOOK_LIMIT: Final = Limit(300, 60.0)


def billing_page(public_url: str) -> str:
    """Where a checkout returns to and the portal's way back: the app's billing page."""
    return f"{public_url.rstrip('/')}/app/billing"


def _owner(caller: Caller, uow: UnitOfWork) -> tuple[User, BillingAccount | None]:
    """The caller when they own the key's team, with their billing account. Raises NotTeamOwner."""
    with uow:
        team = uow.teams.get(caller.team_id)
        if team.owner_id != caller.user_id:
            raise NotTeamOwner()
        return uow.users.get(caller.user_id), uow.billing.get(caller.user_id)


def _customer(
    user: User, account: BillingAccount | None, *, uow: UowFactory, provider: PaymentProvider
) -> BillingAccount:
    """The person's billing account with this provider, its customer made at the first checkout."""
    if account is not None and account.provider == provider.name:
        return account
    customer_id = provider.create_customer(user_id=user.id, email=user.email)
    with uow() as work:
        stored = work.billing.get(user.id)
        if stored is None:
            stored = BillingAccount(user.id, provider.name, customer_id)
            if not work.billing.add(stored):  # another request made it a moment ago
                stored = work.billing.get(user.id)
                assert stored is not None
        elif stored.provider != provider.name:
            # The operator switched providers: the account moves to a customer of the new one, and what
            # the old provider sold (its subscription, the first purchase) no longer counts there.
            stored = evolve(
                stored,
                provider=provider.name,
                customer_id=customer_id,
                subscription=None,
                purchased_at=None,
                version=stored.version + 1,
            )
            work.billing.save(stored)
        work.commit()
    return stored


def _open_checkout(
    user: User,
    account: BillingAccount | None,
    sale: Pack | PlanChoice,
    *,
    uow: UowFactory,
    provider: PaymentProvider,
    clock: Clock,
    public_url: str,
) -> PaymentLink:
    """A checkout of a credit pack or a subscription, the person made a customer of `provider` first."""
    account = _customer(user, account, uow=uow, provider=provider)
    pack, choice = (None, sale) if isinstance(sale, PlanChoice) else (sale, None)
    kind = PurchaseKind.PACK if pack is not None else PurchaseKind.SUBSCRIPTION
    back = billing_page(public_url)
    link = provider.checkout_link(
        CheckoutOrder(
            user_id=user.id,
            email=user.email,
            customer_id=account.customer_id,
            success_url=f"{back}?checkout=done",
            cancel_url=f"{back}?checkout=cancelled",
            offer=None if pack is None else PACKS[pack],
            choice=choice,
        )
    )
    with uow() as work:
        work.billing.add_session(
            CheckoutSession(
                id=link.session_id,
                provider=provider.name,
                user_id=user.id,
                kind=kind,
                url=link.url,
                created_at=clock.now(),
                pack=pack,
                choice=choice,
            )
        )
        work.commit()
    return PaymentLink(link.url)


def _provider(provider: PaymentProvider | None, what: str) -> PaymentProvider:
    if provider is None:
        raise PriceNotConfigured(f"{what} (no payment provider is configured)")
    return provider


def _seller_of(choice: PlanChoice, provider: PaymentProvider | None) -> PaymentProvider:
    seller = _provider(provider, f"the {choice.key} subscription")
    if not seller.offers(choice):
        raise PriceNotConfigured(f"the {choice.key} subscription")
    return seller


def credit_pack_link(
    asked: GetCreditPackLink,
    caller: Caller,
    *,
    uows: UowFactory,
    payments: PaymentProvider | None,
    clock: Clock,
    public_url: str,
) -> PaymentLink:
    """A checkout link for a credit pack. Raises NotTeamOwner, PriceNotConfigured, PaymentProviderFailed."""
    user, account = _owner(caller, uows())
    seller = _provider(payments, f"the {asked.pack} pack")
    return _open_checkout(
        user, account, asked.pack, uow=uows, provider=seller, clock=clock, public_url=public_url
    )


def subscription_link(
    asked: GetSubscriptionLink,
    caller: Caller,
    *,
    uows: UowFactory,
    payments: PaymentProvider | None,
    clock: Clock,
    public_url: str,
) -> PaymentLink:
    """A subscription checkout link. Raises NotTeamOwner, PriceNotConfigured (combination not offered),
    SubscriptionExists (one per account), PaymentProviderFailed."""
    choice = PlanChoice(asked.plan, asked.tier, asked.interval)
    user, account = _owner(caller, uows())
    seller = _seller_of(choice, payments)
    if account is not None and account.provider == seller.name:
        account.check_can_subscribe()
    return _open_checkout(
        user, account, choice, uow=uows, provider=seller, clock=clock, public_url=public_url
    )


def change_plan(
    choice: PlanChoice,
    caller: Caller,
    *,
    uow: UowFactory,
    provider: PaymentProvider | None,
    clock: Clock,
) -> BillingStatus:
    """Plan changes are made in the app (docs/rest-api.md "Billing"): the provider moves the live subscription
    to the new price, and its answer goes through `fulfil` at once as a subscription event (the provider's own
    webhook about the same change then carries the same choice)."""
    user, account = _owner(caller, uow())
    seller = _seller_of(choice, provider)
    if account is None or account.provider != seller.name:
        raise NoSubscription()
    current = account.subscription
    if current is None or current.ended:
        raise NoSubscription()
    if current.choice != choice:
        state = seller.change_subscription(subscription_id=current.id, choice=choice)
        # After the state it changed, whatever the clocks say: the provider's times are its own.
        now = max(clock.now(), current.as_of + timedelta(microseconds=1))
        fulfil(
            SubscriptionChanged(
                event_id=f"change:{current.id}:{choice.key}:{now.isoformat()}",
                customer_id=account.customer_id,
                subscription=Subscription(id=current.id, status=state, as_of=now, choice=choice),
                user_id=user.id,
            ),
            provider=seller.name,
            uow=uow(),
            clock=clock,
        )
    return status(caller, uow=uow(), provider=provider)


def billing_portal_link(
    asked: GetBillingPortalLink,
    caller: Caller,
    *,
    uows: UowFactory,
    payments: PaymentProvider | None,
    public_url: str,
) -> PaymentLink:
    """The provider's customer portal. Raises NotTeamOwner, NoBillingAccount (before the first completed
    purchase), PaymentProviderFailed."""
    uow, provider = uows, payments
    _, account = _owner(caller, uow())
    if account is None or provider is None or account.provider != provider.name:
        raise NoBillingAccount()
    account.check_has_purchased()
    return PaymentLink(
        provider.portal_link(customer_id=account.customer_id, return_url=billing_page(public_url))
    )


def status(caller: Caller, *, uow: UnitOfWork, provider: PaymentProvider | None) -> BillingStatus:
    with uow:
        user = uow.users.get(caller.user_id)
        account = uow.billing.get(caller.user_id)
    return BillingStatus(
        plan=user.plan,
        subscription=None if account is None else account.subscription,
        has_purchased=account is not None and account.purchased_at is not None,
        provider="" if provider is None else provider.name,
        paid_period=None if account is None else account.paid_period,
        prices={} if provider is None else provider.prices(),  # outside the unit of work
    )


# --- fulfilment: the one way a payment changes credits and plans ----------------------------------------


def fulfil(event: PaymentEvent, *, provider: str, uow: UnitOfWork, clock: Clock) -> Fulfilment:
    """Apply one provider event once (see the module)."""
    now = clock.now()
    with uow:
        if not uow.billing.record_event(f"{provider}:{event.event_id}", at=now):
            return Fulfilment.DUPLICATE
        account = uow.billing.by_customer(provider, event.customer_id)
        if account is None:
            # Not a customer this service made (another application sharing the provider account).
            log.info("payment event %s for unknown customer %s ignored", event.event_id, event.customer_id)
            uow.commit()
            return Fulfilment.IGNORED
        outcome = Fulfilment.IGNORED
        if isinstance(event, CheckoutCompleted):
            if event.paid:
                outcome = _checkout_paid(event, account, uow=uow, at=now)
        elif isinstance(event, SubscriptionPaid):
            outcome = _period_paid(event, account, uow=uow, at=now)
        else:
            outcome = _subscription_changed(event, account, uow=uow, at=now)
        uow.commit()
    return outcome


def _checkout_paid(
    event: CheckoutCompleted, account: BillingAccount, *, uow: UnitOfWork, at: datetime
) -> Fulfilment:
    session = uow.billing.session(event.session_id)
    kind = event.kind if session is None else session.kind
    if kind is PurchaseKind.PACK:
        pack = event.pack if session is None else session.pack
        if pack is None:
            log.warning("paid checkout %s names no pack; nothing credited", event.session_id)
            return Fulfilment.IGNORED
        credited = uow.credits.grant(
            account.user_id,
            PACKS[pack].tenths,
            key=purchase_key(event.session_id),
            at=at,
            reference=f"pack:{pack}",
        )
        if not credited:
            return Fulfilment.DUPLICATE  # another event already reported this payment
    if session is not None and session.completed_at is None:
        uow.billing.save_session(evolve(session, completed_at=at, form_token_hash=""))
    bought = account.purchased(at)
    if bought != account:
        uow.billing.save(bought)
    return Fulfilment.APPLIED


def _subscription_changed(
    event: SubscriptionChanged, account: BillingAccount, *, uow: UnitOfWork, at: datetime
) -> Fulfilment:
    updated = account.record(event.subscription)
    if updated == account:
        return Fulfilment.IGNORED
    if event.subscription.gives_plan and updated.purchased_at is None:
        updated = evolve(updated, purchased_at=at)  # a paid subscription is a purchase
    uow.billing.save(updated)
    plan = updated.plan
    user = uow.users.get(account.user_id)
    if plan is not None and user.plan != plan:
        uow.users.save(evolve(user, plan=plan))
    return Fulfilment.APPLIED


def _period_paid(
    event: SubscriptionPaid, account: BillingAccount, *, uow: UnitOfWork, at: datetime
) -> Fulfilment:
    """The period is recorded on the account and the months of it that have begun are granted, in the
    transaction that records the event: a crash before the commit leaves neither, so the provider's
    retry applies both once."""
    updated = account.paid(event.period)
    if updated.purchased_at is None:  # a paid period is a purchase too
        updated = evolve(updated, purchased_at=at)
    # The first month is granted on payment even when the period starts a moment later (clocks differ).
    months = event.period.due(max(at, event.period.start))
    granted = _grant_months(account.user_id, event.period, months, uow=uow, at=at)
    if updated.paid_period == event.period and updated.paid_months < len(months):
        updated = evolve(updated, paid_months=len(months))
    if updated != account:
        uow.billing.save(evolve(updated, version=account.version + 1))
    return Fulfilment.APPLIED if granted or updated != account else Fulfilment.DUPLICATE


def _grant_months(
    user_id: UserId, period: PaidPeriod, months: Sequence[datetime], *, uow: UnitOfWork, at: datetime
) -> int:
    """Grant each of `months` of `period` not granted before (the ledger's key decides); the number
    granted now."""
    granted = 0
    for month in months:
        granted += uow.credits.grant(
            user_id,
            credits(period.credits_per_month),
            key=month_grant_key(period.subscription_id, month),
            at=at,
            reference=f"subscription:{period.choice.key}",
        )
    return granted


# A pass grants the months of periods that ended this recently too: months a stopped scheduler missed.
CATCH_UP: Final = timedelta(days=366)


def grant_subscription_months(now: datetime, *, uow: UowFactory) -> int:
    """The scheduler's pass: every month that has begun of every recent paid period is granted once (a
    yearly subscription's months after the first come this way). An account whose begun months are all
    counted granted costs no write. Each account is its own transaction; a crash between two leaves
    the rest to the next pass, and a month granted before is never granted again (the ledger's key).
    The number of months granted now."""
    with uow() as work:
        accounts = work.billing.with_paid_period(ending_after=now - CATCH_UP)
    granted = 0
    for listed in accounts:
        if not listed.months_owed(now):
            continue
        try:
            with uow() as work:
                account = work.billing.get(listed.user_id)
                if account is None or account.paid_period is None or not account.months_owed(now):
                    continue
                months = account.paid_period.due(now)
                granted += _grant_months(account.user_id, account.paid_period, months, uow=work, at=now)
                work.billing.save(evolve(account, paid_months=len(months), version=account.version + 1))
                work.commit()
        except ConcurrentUpdate:
            continue  # another pass or event wrote the account meanwhile: the next pass looks again
    return granted


def webhook_bucket(client: str) -> str:
    return f"ip:{client}:payment-webhook"


def receive_event(
    payload: bytes,
    signature: str,
    client: str,
    *,
    provider: PaymentProvider | None,
    uow: UnitOfWork,
    clock: Clock,
    limiter: RateLimiter,
) -> Fulfilment:
    """The signature first, then the client address's webhook limit, then the event. An unsigned or
    badly signed post is refused before anything is written, the limit's bucket included, so a flood
    of them costs one HMAC each (docs/security.md, "Outbound addresses and signatures")."""
    if provider is None:
        raise InvalidPaymentSignature("no payment provider is configured")
    event = provider.read_event(payload, signature)
    decision = limiter.hit(webhook_bucket(client), WEBHOOK_LIMIT, now=clock.now())
    if not decision.allowed:
        raise RateLimited(
            max(1, int(decision.retry_after_s + 0.999)),
            what=f"payment webhooks: {WEBHOOK_LIMIT.count} a minute per address",
        )
    if event is None:
        return Fulfilment.IGNORED
    return fulfil(event, provider=provider.name, uow=uow, clock=clock)


# --- the local test checkout (the embedded default's provider) --------------------------------------------


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _local_session(
    session_id: str, buyer: UserId, work: UnitOfWork, provider: PaymentProvider | None
) -> CheckoutSession:
    """The local session `buyer` asked for; anyone else's is not found (its link alone proves nothing)."""
    session = work.billing.session(session_id)
    if provider is None or provider.name != LOCAL or session is None or session.provider != LOCAL:
        raise NotFound("checkout session", session_id)
    if session.user_id != buyer:
        raise NotFound("checkout session", session_id)
    return session


def open_local_checkout(
    session_id: str, buyer: UserId, *, uow: UnitOfWork, provider: PaymentProvider | None, secrets: Secrets
) -> LocalCheckout:
    token = secrets.token_hex(32)
    with uow:
        session = _local_session(session_id, buyer, uow, provider)
        if session.completed_at is not None:
            raise NotFound("open checkout session", session_id)
        session = evolve(session, form_token_hash=_digest(token))
        uow.billing.save_session(session)
        email = uow.users.get(session.user_id).email
        uow.commit()
    return LocalCheckout(
        session=session,
        email=email,
        form_token=token,
        offer=None if session.pack is None else PACKS[session.pack],
        choice=session.choice,
    )


def complete_local_checkout(
    session_id: str,
    form_token: str,
    buyer: UserId,
    *,
    uow: UowFactory,
    provider: PaymentProvider | None,
    clock: Clock,
) -> LocalCheckoutDone:
    """The test purchase's button: checks and spends the form token, then the provider's usual events
    (checkout completed; for a subscription also the subscription turning active) go through `fulfil`."""
    with uow() as work:
        session = _local_session(session_id, buyer, work, provider)
        if session.completed_at is None:
            if not session.form_token_hash or not hmac.compare_digest(
                session.form_token_hash, _digest(form_token)
            ):
                raise InvalidPaymentSignature("the form token is wrong or was used; reload the page")
            work.billing.save_session(evolve(session, form_token_hash=""))
            work.commit()
        account = work.billing.get(session.user_id)
    if account is None:
        return _done(session.id, Fulfilment.DUPLICATE, session.user_id, uow=uow)
    if session.completed_at is not None:
        # Completed before: its subscription's events again (each applies once, by its event id), so
        # a crash between the checkout's event and theirs is mended by pressing the button again.
        _local_subscription_events(session, account, clock=clock, uow=uow)
        return _done(session.id, Fulfilment.DUPLICATE, session.user_id, uow=uow)
    now = clock.now()
    outcome = fulfil(
        # What the session sells (its kind, user and pack), completed and paid now.
        copy_named(
            CheckoutCompleted,
            session,
            event_id=f"checkout:{session.id}",
            session_id=session.id,
            customer_id=account.customer_id,
            paid=True,
            at=now,
        ),
        provider=LOCAL,
        uow=uow(),
        clock=clock,
    )
    _local_subscription_events(session, account, clock=clock, uow=uow)
    return _done(session.id, outcome, session.user_id, uow=uow)


def _local_subscription_events(
    session: CheckoutSession, account: BillingAccount, *, clock: Clock, uow: UowFactory
) -> None:
    """A local subscription checkout's provider events: the subscription turning active, and its first
    period paid (as Stripe's first invoice reports it); nothing for a pack."""
    if session.kind is not PurchaseKind.SUBSCRIPTION:
        return
    now = clock.now()
    subscription_id = f"sub_local_{session.id.removeprefix('cs_local_')}"
    fulfil(
        SubscriptionChanged(
            event_id=f"subscription:{session.id}",
            customer_id=account.customer_id,
            subscription=Subscription(
                id=subscription_id,
                status=SubscriptionStatus.ACTIVE,
                as_of=now,
                choice=session.choice,
            ),
            user_id=session.user_id,
        ),
        provider=LOCAL,
        uow=uow(),
        clock=clock,
    )
    if session.choice is not None:  # the first period is paid, as Stripe's first invoice reports
        fulfil(
            SubscriptionPaid(
                event_id=f"invoice:{session.id}",
                customer_id=account.customer_id,
                period=_local_period(subscription_id, session.choice, now),
                user_id=session.user_id,
            ),
            provider=LOCAL,
            uow=uow(),
            clock=clock,
        )


def _local_period(subscription_id: str, choice: PlanChoice, start: datetime) -> PaidPeriod:
    months = 12 if choice.interval is Interval.YEARLY else 1
    return PaidPeriod(subscription_id, choice, start, add_months(start, months))


def renew_local_subscription(
    paid_from: str, caller: Caller, *, uow: UowFactory, provider: PaymentProvider | None, clock: Clock
) -> Fulfilment:
    """The local provider's TEST renewal: the live subscription's next period is paid now, as a renewal
    invoice would report, through `fulfil`. `paid_from` names the period being renewed (as the page
    showed it), so a form sent twice renews it once: the second is the same event."""
    _, account = _owner(caller, uow())
    if provider is None or provider.name != LOCAL or account is None or account.provider != LOCAL:
        raise NoSubscription()
    current, period = account.subscription, account.paid_period
    if current is None or current.ended or current.choice is None or period is None:
        raise NoSubscription()
    if paid_from != period.start.isoformat():
        # The page showed an earlier period: that one was renewed already.
        return Fulfilment.DUPLICATE
    now = max(clock.now(), period.start + timedelta(microseconds=1))
    return fulfil(
        SubscriptionPaid(
            event_id=f"renewal:{current.id}:{paid_from}",
            customer_id=account.customer_id,
            period=_local_period(current.id, current.choice, now),
            user_id=account.user_id,
        ),
        provider=LOCAL,
        uow=uow(),
        clock=clock,
    )


def _done(session_id: str, outcome: Fulfilment, user_id: UserId, *, uow: UowFactory) -> LocalCheckoutDone:
    with uow() as work:
        session = work.billing.session(session_id)
        assert session is not None
        return LocalCheckoutDone(session, outcome, work.credits.balance(user_id))
