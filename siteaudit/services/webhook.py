"""Webhook use cases: queue the audit-ended event, deliver due events, create and rotate signing secrets."""

import logging
import random
import string
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Final

from attrs import frozen

from siteaudit.domain.audit import Audit, origin_of
from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.domain.ids import UserId
from siteaudit.domain.site import InvalidUrl
from siteaudit.domain.webhook import (
    DEADLINE_S,
    DeliveryStatus,
    SendOutcome,
    WebhookAttempt,
    WebhookDelivery,
    sign,
)
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.metrics import (
    DELIVERED,
    FAILED_ATTEMPT,
    GIVEN_UP,
    NO_METRICS,
    REDIRECTED,
    Metrics,
)
from siteaudit.ports.webhook import WebhookRepository, WebhookSecrets, WebhookSender, WebhookUnitOfWork

if TYPE_CHECKING:
    from siteaudit.ports.repository import UnitOfWork

SECRET_PREFIX: Final = "whsec_"
SECRET_LENGTH: Final = 40
_SECRET_ALPHABET: Final = string.ascii_letters + string.digits
# One attempt: its 10 s deadline with room to sign and record it. A claim holds a delivery this long and
# is renewed for this long right before its attempt, so a batch of slow receivers never outlives its
# leases (another dispatcher would send them again) and a dispatcher that dies frees its deliveries
# after this long.
DEFAULT_LEASE_S: Final = DEADLINE_S + 20.0
DEFAULT_BATCH: Final = 20

Jitter = Callable[[], float]

log = logging.getLogger("siteaudit.audit")


def uniform_jitter() -> float:
    """A draw in [-1, 1] for retry_delay; not a secret, so the ordinary generator serves."""
    return random.uniform(-1.0, 1.0)


def new_webhook_secret(secrets: Secrets) -> str:
    return SECRET_PREFIX + secrets.token(SECRET_LENGTH, _SECRET_ALPHABET)


def create_webhook_secret(user_id: UserId, *, webhook_secrets: WebhookSecrets, secrets: Secrets) -> str:
    """Inside the transaction that creates the account: stage the person's first secret and return it."""
    secret = new_webhook_secret(secrets)
    webhook_secrets.create(user_id, secret)
    return secret


def rotate_webhook_secret(user_id: UserId, *, uow: WebhookUnitOfWork, secrets: Secrets) -> str:
    """Replace the person's secret; from the commit on it signs every attempt, retries included."""
    secret = new_webhook_secret(secrets)
    with uow:
        uow.webhook_secrets.rotate(user_id, secret)
        uow.commit()
    return secret


def queue_webhook(audit: Audit, *, webhooks: WebhookRepository, at: datetime) -> WebhookDelivery | None:
    """Inside the transaction that ends `audit`: stage its audit-ended event, due at once.

    Only for audits that asked for a webhook (None otherwise). Once per audit: a second call returns
    the delivery queued the first time and changes nothing.
    """
    if audit.webhook_url is None:
        return None
    return webhooks.add(WebhookDelivery.for_audit(audit, now=at))


@frozen
class _Signed:
    delivery: WebhookDelivery
    signature: str | None  # None: the starter has no secret, and nothing unsigned is ever sent


def _sign_now(delivery: WebhookDelivery, uow: WebhookUnitOfWork) -> _Signed:
    with uow:
        try:
            secret = uow.webhook_secrets.get(delivery.user_id)
        except NotFound:
            return _Signed(delivery, None)
    return _Signed(delivery, sign(secret, delivery.body))


def _send(sender: WebhookSender, delivery: WebhookDelivery, signature: str) -> SendOutcome:
    try:
        return sender.send(delivery.url, delivery.body, delivery.headers(signature=signature))
    except Exception as error:  # a sender bug counts as a failed attempt, so it cannot retry forever
        return SendOutcome(None, error="internal", detail=f"{type(error).__name__}: {error}")


def _renewed(
    delivery: WebhookDelivery, uow: WebhookUnitOfWork, now: datetime, lease_s: float
) -> WebhookDelivery | None:
    """The claimed delivery with its lease renewed for one attempt, or None when it is no longer ours."""
    renewed = delivery.renew(now=now, seconds=lease_s)
    with uow:
        try:
            uow.webhooks.save(renewed)
        except ConcurrentUpdate:
            return None
        uow.commit()
    return renewed


def delivery_result(status: DeliveryStatus) -> str:
    """What an attempt that left its delivery in `status` did, as `Metrics.webhook_delivery` counts it."""
    return {
        DeliveryStatus.DELIVERED: DELIVERED,
        DeliveryStatus.REDIRECTED: REDIRECTED,
        DeliveryStatus.DROPPED: GIVEN_UP,
        DeliveryStatus.PENDING: FAILED_ATTEMPT,
    }[status]


def deliver_due_webhooks(
    *,
    uow: WebhookUnitOfWork,
    sender: WebhookSender,
    clock: Clock,
    jitter: Jitter = uniform_jitter,
    limit: int = DEFAULT_BATCH,
    lease_s: float = DEFAULT_LEASE_S,
    metrics: Metrics = NO_METRICS,
) -> int:
    """Make one attempt for each of up to `limit` due deliveries; return how many attempts were recorded.

    Claims the due deliveries under a lease of `lease_s` and commits, then for each: renews its lease
    for one attempt (skipping it when another dispatcher took it after the claim ran out), reads the
    starter's current secret, signs the stored body, sends it outside any transaction, and records the
    attempt with the next attempt time (about 1, 5, 15, 30 minutes after each failure) or the end.
    """
    with uow:
        claimed = list(uow.webhooks.claim_due(clock.now(), limit, lease_s))
        uow.commit()
    recorded = 0
    for claim in claimed:
        delivery = _renewed(claim, uow, clock.now(), lease_s)
        if delivery is None:
            continue  # its claim ran out while earlier ones were sent, and another dispatcher took it
        signed = _sign_now(delivery, uow)
        started_at = clock.now()
        if signed.signature is None:
            outcome = SendOutcome(None, error="unsigned", detail="the audit's starter has no webhook secret")
        else:
            outcome = _send(sender, delivery, signed.signature)
        updated, attempt = delivery.record(outcome, started_at=started_at, now=clock.now(), jitter=jitter())
        with uow:
            try:
                uow.webhooks.save(updated)
            except ConcurrentUpdate:
                continue
            uow.webhooks.add_attempt(attempt)
            uow.commit()
        metrics.webhook_delivery(delivery_result(updated.status))
        recorded += 1
        _log_end(updated, attempt)
    return recorded


def _log_end(delivery: WebhookDelivery, attempt: WebhookAttempt) -> None:
    """The line of a delivery that ended: the receiver's origin only, never its full URL."""
    if not delivery.status.ended:
        return
    try:
        receiver = origin_of(delivery.url)
    except InvalidUrl:
        receiver = "an invalid URL"
    tries = f"{delivery.attempts} attempt{'s' if delivery.attempts != 1 else ''}"
    if delivery.status is DeliveryStatus.DELIVERED:
        log.info("audit %s webhook delivered to %s after %s", delivery.audit_id, receiver, tries)
        return
    status = None if attempt.status_code is None else f"status {attempt.status_code}"
    last = " after ".join(part for part in (attempt.error, status) if part is not None)
    how = "redirected, not followed" if delivery.status is DeliveryStatus.REDIRECTED else f"last: {last}"
    log.warning("audit %s webhook to %s given up after %s (%s)", delivery.audit_id, receiver, tries, how)


def person_webhook_secret(email: str, *, rotate: bool, uow: "UnitOfWork", secrets: Secrets) -> str:
    """The person's webhook signing secret, replaced first when `rotate` (effective at once)."""
    from siteaudit.domain.account import normalise_email

    with uow:
        user = uow.users.by_email(normalise_email(email))
    if rotate:
        return rotate_webhook_secret(user.id, uow=uow, secrets=secrets)
    with uow:
        return uow.webhook_secrets.get(user.id)
