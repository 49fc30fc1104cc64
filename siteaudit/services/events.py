"""Events on a small in-process bus: what follows an audit's end, in one table (docs/architecture.md
"Events").

`HANDLERS` maps each event type to its handlers, in order. A handler is a plain function over ports: the
event first, then keyword-only dependencies that `MessageBus` injects by name once from the application's
one table of providers (`services/inject.py`), but `uow`, which each call gets: inside the ending transaction, the unit of work that is open; after it,
one the handler opens transactions on. A handler may return a follow-up event, which goes through the
same table.

Handlers `IN_TRANSACTION` run inside the transaction that ends the audit, so what they write commits with
the audit's move or not at all (credits never settle without the audit ending, nor the other way round).
Handlers `AFTER_COMMIT` talk to the world (mail, IndexNow) once that transaction committed. Every handler
is idempotent, each by a record (the table's comments say which): handling an event again, as a redelivered
finalisation message does, changes nothing that was done, and does what a crash left undone.

A bus binds only the handlers whose dependencies it was given (`MessageBus.unbound` names the others):
the application gives every port it has, so an application without a mailer has no alert-mail handler;
a bus over the metrics alone (`MessageBus.settling`, what cancelling and failing an audit use) settles
credits, queues the webhook and counts the credits.
"""

import enum
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from attrs import frozen

from siteaudit.domain.audit import AuditEnded, AuditStatus
from siteaudit.domain.credit import audit_cost, audit_reference
from siteaudit.domain.events import CreditsCharged, Event, FindingsPublished
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.mailer import Mailer
from siteaudit.ports.metrics import Metrics
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.alert import mail_site_alert
from siteaudit.services.indexnow.indexnow import auto_submit_indexnow
from siteaudit.services.inject import Providers, Unprovided, bind, provided
from siteaudit.services.tasks.task import refresh_site_tasks
from siteaudit.services.traffic import FixedTraffic
from siteaudit.services.webhook import queue_webhook

log = logging.getLogger(__name__)

PER_CALL: Final = "uow"  # the one dependency each call gets instead of the bus


class When(enum.Enum):
    IN_TRANSACTION = "in_transaction"  # inside the transaction that ends the audit
    AFTER_COMMIT = "after_commit"  # once it committed, each in transactions of its own


# --- the handlers --------------------------------------------------------------------------------------


def settle_credits(event: AuditEnded, *, uow: UnitOfWork) -> CreditsCharged | None:
    """Charge what the audit fetched and refund the rest of its reservation. Idempotent: the ledger
    settles a reservation once (`CreditRepository.settle` answers False after)."""
    audit = event.audit
    cost = audit_cost(
        pages_fetched=audit.pages_fetched_in_full,
        pages_not_modified=audit.pages_not_modified,
        reserved=audit.credits_reserved,
        render=audit.render,
    )
    if not uow.credits.settle(audit_reference(audit.id), cost=cost, at=event.at):
        return None
    return CreditsCharged(audit.id, cost)


def queue_audit_webhook(event: AuditEnded, *, uow: UnitOfWork) -> None:
    """Stage the audit-ended webhook of an audit started with a `webhook_url` (the outbox: the periodic
    dispatcher sends it). Idempotent: one delivery per audit (`WebhookRepository.add` returns the first)."""
    queue_webhook(event.audit, webhooks=uow.webhooks, at=event.at)


def refresh_fix_tasks(event: FindingsPublished, *, uow: UnitOfWork, crawl: CrawlStore, clock: Clock) -> None:
    """Refresh the site's fix tasks from a full audit's findings (`services/task.py`). Idempotent: a
    refresh stamps every task it opens, finds again or fixes with the audit, so a site with a task stamped
    with this audit was refreshed by it already."""
    audit = event.audit
    if audit.site_id is not None and any(t.audit_id == audit.id for t in uow.tasks.of_site(audit.site_id)):
        return
    refresh_site_tasks(
        audit,
        event.findings,
        crawled=event.crawled,
        uow=uow,
        crawl=crawl,
        clock=clock,
        traffic=FixedTraffic(audit.site_id, event.traffic),
    )


def count_charged_credits(event: CreditsCharged, *, metrics: Metrics) -> None:
    """Count the credits charged, once the settlement committed. Once per settlement: the event is raised
    only by the settlement that happened now."""
    metrics.credits_charged(event.tenths)


def mail_alert(
    event: AuditEnded, *, uow: UnitOfWork, crawl: CrawlStore, clock: Clock, mailer: Mailer, public_url: str
) -> None:
    """The monitoring alert mail of a done scheduled audit that ended worse (`services/alert.py`).
    Idempotent: the audit's mark is claimed and committed before the mail is sent (at most once)."""
    if event.status is not AuditStatus.DONE:
        return
    mail_site_alert(event.audit_id, uow=uow, crawl=crawl, mailer=mailer, clock=clock, public_url=public_url)


@frozen
class Subscription:
    handler: Callable[..., Event | None]
    when: When


# --- the table -------------------------------------------------------------------------------------------

HANDLERS: Final[Mapping[type[Event], tuple[Subscription, ...]]] = {
    AuditEnded: (  # done, failed or cancelled
        Subscription(settle_credits, When.IN_TRANSACTION),  # the ledger settles a reference once
        Subscription(queue_audit_webhook, When.IN_TRANSACTION),  # one delivery per audit
        Subscription(mail_alert, When.AFTER_COMMIT),  # done only; the alert mark, claimed before sending
        Subscription(auto_submit_indexnow, When.AFTER_COMMIT),  # done only; one submission per audit
    ),
    FindingsPublished: (  # a finalisation's findings, with its AuditEnded
        Subscription(refresh_fix_tasks, When.IN_TRANSACTION),  # tasks stamped with the audit
    ),
    CreditsCharged: (  # raised by settle_credits when it settled now
        Subscription(count_charged_credits, When.AFTER_COMMIT),
    ),
}

# --- the bus ---------------------------------------------------------------------------------------------

Run = Callable[[Event, UnitOfWork], Event | None]


def inject_dependencies(handler: Callable[..., Event | None], providers: Providers) -> Run:
    """The handler with its dependencies bound by name (`services/inject.py`), `uow` left for each call.
    Raises Unprovided naming what it needs that no provider gives."""
    bound = bind(handler, providers, given=(PER_CALL,))
    if PER_CALL in bound.given:
        return lambda event, uow: bound(event, uow=uow)
    return lambda event, uow: bound(event)


@frozen
class Bound:
    name: str
    when: When
    run: Run


@frozen
class Published:
    """The events handled inside a transaction (follow-ups included), for `MessageBus.after_commit`."""

    events: tuple[Event, ...]


class MessageBus:
    """Runs the handlers of `table` for each event published, with the dependencies of `providers` injected
    by name (a `uow` provider is not called: each call gives its unit of work)."""

    def __init__(
        self,
        providers: Providers,
        *,
        table: Mapping[type[Event], Sequence[Subscription]] = HANDLERS,
    ) -> None:
        self._handlers: dict[type[Event], list[Bound]] = {}
        unbound: dict[str, tuple[str, ...]] = {}
        for event_type, subscriptions in table.items():
            bound = self._handlers.setdefault(event_type, [])
            for subscription in subscriptions:
                name = subscription.handler.__name__
                try:
                    run = inject_dependencies(subscription.handler, providers)
                except Unprovided as lacking:
                    unbound[name] = lacking.names
                    continue
                bound.append(Bound(name, subscription.when, run))
        self.unbound: Mapping[str, tuple[str, ...]] = unbound

    @classmethod
    def settling(cls, metrics: Metrics) -> "MessageBus":
        """The bus over the metrics alone: settles credits, queues the webhook, counts the credits."""
        return cls(provided({"metrics": metrics}))

    def handlers(self, event_type: type[Event], when: When) -> list[str]:
        """The names of the handlers bound for `event_type` that run `when`, in order."""
        return [h.name for h in self._handlers.get(event_type, ()) if h.when is when]

    def in_transaction(self, *events: Event, uow: UnitOfWork) -> Published:
        """Inside the open transaction of `uow`: run the in-transaction handlers of `events` and of the
        events they raise. The caller commits, then hands the result to `after_commit`."""
        queue, published = list(events), []
        while queue:
            event = queue.pop(0)
            published.append(event)
            for handler in self._handlers.get(type(event), ()):
                if handler.when is When.IN_TRANSACTION:
                    raised = handler.run(event, uow)
                    if raised is not None:
                        queue.append(raised)
        return Published(tuple(published))

    def after_commit(self, published: Published, *, uow: UnitOfWork) -> None:
        """Once the transaction committed: run the after-commit handlers of every event it published.

        Each runs even when one before it raised; the first error is raised again at the end, so the
        message that carried the work is retried (and the handlers that did their part do nothing more).
        """
        failed: Exception | None = None
        for event in published.events:
            for handler in self._handlers.get(type(event), ()):
                if handler.when is not When.AFTER_COMMIT:
                    continue
                try:
                    raised = handler.run(event, uow)
                    if raised is not None:
                        self.handle(raised, uow=uow)
                except Exception as exc:
                    log.exception("event handler %s failed on %s", handler.name, event)
                    failed = failed or exc
        if failed is not None:
            raise failed

    def handle(self, event: Event, *, uow: UnitOfWork) -> None:
        """Outside any transaction (an event handled again): its in-transaction handlers in one
        transaction of their own, then the after-commit ones."""
        with uow:
            published = self.in_transaction(event, uow=uow)
            uow.commit()
        self.after_commit(published, uow=uow)
