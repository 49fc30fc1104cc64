"""The event bus (`services/events.py`): one table from event to handlers, dependencies injected by name,
and every handler idempotent: handling an event again, after a crash anywhere between the handlers,
never settles credits, queues the webhook or counts the credits twice."""

from collections.abc import Callable
from typing import Any

import pytest
from attrs import evolve
from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.memory.metrics import MemoryMetrics
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditEnded, AuditRequest, AuditStatus
from siteaudit.domain.checks import PageContext, check_page
from siteaudit.domain.credit import audit_reference, credits
from siteaudit.domain.error import Conflict
from siteaudit.domain.events import CreditsCharged, Event, FindingsPublished
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.issue import Issue
from siteaudit.domain.task import TaskIssues
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services import account as accounts
from siteaudit.services import audit as audits
from siteaudit.services import events, finalize
from siteaudit.services.events import HANDLERS, MessageBus, Subscription, When
from siteaudit.services.indexnow import indexnow
from siteaudit.services.inject import provided
from tests.unit.application.test_application_doors import owner
from tests.unit.services.test_finalize import SITE, a_page
from tests.unit.tasks.shop import Shop, audit, shop_app, verified_site


class Crash(Exception):
    """The process dying at that point: nothing after it runs."""


def test_the_table_names_each_events_handlers_and_when_they_run() -> None:
    bus = MessageBus(
        provided({"crawl": object(), "clock": object(), "metrics": object(), "secrets": object()} | ALL)
    )
    assert bus.unbound == {}
    assert bus.handlers(AuditEnded, When.IN_TRANSACTION) == ["settle_credits", "queue_audit_webhook"]
    assert bus.handlers(AuditEnded, When.AFTER_COMMIT) == ["mail_alert", "auto_submit_indexnow"]
    assert bus.handlers(FindingsPublished, When.IN_TRANSACTION) == ["refresh_fix_tasks"]
    assert bus.handlers(CreditsCharged, When.AFTER_COMMIT) == ["count_charged_credits"]
    assert set(HANDLERS) == {AuditEnded, FindingsPublished, CreditsCharged}


ALL = {"mailer": object(), "public_url": "https://audit.example", "indexnow_client": object()}
ALL |= {"indexnow_batch_urls": 10}


def test_a_bus_binds_the_handlers_whose_dependencies_it_was_given() -> None:
    settling = MessageBus.settling(MemoryMetrics())
    assert settling.handlers(AuditEnded, When.IN_TRANSACTION) == ["settle_credits", "queue_audit_webhook"]
    assert settling.handlers(AuditEnded, When.AFTER_COMMIT) == []
    assert settling.handlers(CreditsCharged, When.AFTER_COMMIT) == ["count_charged_credits"]
    assert settling.unbound == {
        "mail_alert": ("crawl", "clock", "mailer", "public_url"),
        "auto_submit_indexnow": ("crawl", "clock", "secrets", "indexnow_client"),  # a batch size by default
        "refresh_fix_tasks": ("crawl", "clock"),
    }


def test_the_applications_bus_binds_every_handler_and_leaves_out_what_has_no_port() -> None:
    app = shop_app()
    application = app.application
    assert application.mailer is not None and application.indexnow_client is not None  # type: ignore[attr-defined]
    assert application._events.unbound == {}  # type: ignore[attr-defined]  # the bus, private to finalising
    bare = evolve(application, mailer=None, indexnow_client=None)  # type: ignore[misc]
    assert set(bare._events.unbound) == {"mail_alert", "auto_submit_indexnow"}


def test_dependencies_are_injected_by_name_once_and_the_unit_of_work_per_call() -> None:
    seen: list[tuple[Event, object, object]] = []

    def note(event: CreditsCharged, *, uow: UnitOfWork, metrics: object) -> None:
        seen.append((event, uow, metrics))

    def no_unit_of_work_from_the_table() -> UnitOfWork:
        raise AssertionError("the call gives the unit of work")

    metrics = MemoryMetrics()
    bus = MessageBus(
        {**provided({"metrics": metrics, "mailer": object()}), "uow": no_unit_of_work_from_the_table},
        table={CreditsCharged: (Subscription(note, When.AFTER_COMMIT),)},
    )
    store = MemoryStore()
    first, second = MemoryUnitOfWork(store), MemoryUnitOfWork(store)
    event = CreditsCharged(AuditId(3), 20)
    bus.handle(event, uow=first)
    bus.handle(event, uow=second)
    assert seen == [(event, first, metrics), (event, second, metrics)]


# --- a plain audit with a webhook, finalised over memory ---------------------------------------------


class World:
    """An owner with 1,000 credits and a team, over the units of work and crawl store given (memory by
    default; tests/integration/sql runs the same on SQLite and PostgreSQL)."""

    def __init__(self, uow: Callable[[], UnitOfWork] | None = None, crawl: CrawlStore | None = None) -> None:
        store = MemoryStore()
        self.uow = uow or (lambda: MemoryUnitOfWork(store))
        self.crawl = crawl or MemoryCrawlStore()
        self.clock = FixedClock()
        self.metrics = MemoryMetrics()
        user = accounts.create_user(
            "owner@retro-clock.example", uow=self.uow(), clock=self.clock, secrets=SystemSecrets()
        )
        team = accounts.create_team(
            "Retro Clock", owner_email="owner@retro-clock.example", uow=self.uow(), clock=self.clock
        )
        accounts.grant_credits(
            "owner@retro-clock.example", credits(1_000), key="g", uow=self.uow(), clock=self.clock
        )
        self.owner = Caller(user.id, team.id)

    def bus(self) -> MessageBus:
        return MessageBus(provided({"metrics": self.metrics, "crawl": self.crawl, "clock": self.clock}))

    def crawled_audit(self) -> AuditId:
        """An audit with a webhook that crawled 3 pages and waits for finalisation."""
        started = audits.start_audit(
            AuditRequest(url=SITE + "/", max_pages=100, webhook_url="https://hooks.example/ended"),
            self.owner,
            uow=self.uow(),
            clock=self.clock,
            queue=MemoryTaskQueue(),
        )
        audit_id = started.audit.id
        audits.begin_audit(audit_id, uow=self.uow(), clock=self.clock)
        pages = [
            a_page("/", title="Retro Clock", links=("/a", "/b"), depth=0),
            a_page("/a", title="A"),
            a_page("/b", title="B"),
        ]
        self.crawl.write_pages(audit_id, pages)
        context = PageContext(start_url=SITE + "/")
        self.crawl.write_issues(
            audit_id, [i for p in pages for i in check_page(p, thresholds=Thresholds(), context=context)]
        )
        audits.record_progress(
            audit_id, pages_crawled=3, pages_not_modified=0, uow=self.uow(), clock=self.clock
        )
        audits.stop_crawling(audit_id, partial=False, uow=self.uow(), clock=self.clock)
        self.clock.advance(30)
        return audit_id

    def finalize(self, audit_id: AuditId, bus: MessageBus | None = None) -> Audit:
        return finalize.finalize_audit(
            audit_id, uow=self.uow(), crawl=self.crawl, clock=self.clock, bus=bus or self.bus()
        )

    def state(self, audit_id: AuditId) -> tuple[AuditStatus, int, bool, int, int]:
        """The audit's status, the owner's balance, whether its reservation settled, its webhook
        deliveries and the credits the metrics counted."""
        with self.uow() as uow:
            return (
                uow.audits.get_any(audit_id).status,
                uow.credits.balance(self.owner.user_id),
                uow.credits.is_settled(audit_reference(audit_id)),
                0 if uow.webhooks.of_audit(audit_id) is None else 1,
                self.metrics.credits_tenths,
            )


DONE_ONCE = (AuditStatus.DONE, credits(1_000 - 3), True, 1, credits(3))


def test_finalising_settles_queues_the_webhook_and_counts_the_credits_once() -> None:
    world = World()
    audit_id = world.crawled_audit()
    assert world.state(audit_id) == (AuditStatus.FINALIZING, credits(1_000 - 100), False, 0, 0)
    world.finalize(audit_id)
    assert world.state(audit_id) == DONE_ONCE
    world.finalize(audit_id)  # a redelivered message: its AuditEnded handled again
    assert world.state(audit_id) == DONE_ONCE


def test_each_audit_ended_handler_run_again_does_nothing() -> None:
    world = World()
    audit_id = world.crawled_audit()
    world.finalize(audit_id)
    with world.uow() as uow:
        ended = uow.audits.get_any(audit_id).ended_event()
        assert events.settle_credits(ended, uow=uow) is None
        events.queue_audit_webhook(ended, uow=uow)
        uow.commit()
    assert world.state(audit_id) == DONE_ONCE


def test_a_crash_inside_the_ending_transaction_leaves_nothing_and_the_redelivery_does_it_all_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = World()
    audit_id = world.crawled_audit()

    def crash(*args: object, **kwargs: object) -> None:
        raise Crash("between settling and queueing the webhook")

    with monkeypatch.context() as patched:
        patched.setattr(events, "queue_webhook", crash)
        with pytest.raises(Crash):
            world.finalize(audit_id)
    # Rolled back: the audit is still finalising, its credits held, no webhook, nothing counted.
    assert world.state(audit_id) == (AuditStatus.FINALIZING, credits(1_000 - 100), False, 0, 0)
    world.finalize(audit_id)  # the message, redelivered
    assert world.state(audit_id) == DONE_ONCE


def test_a_crash_after_the_commit_then_the_redeliveries_settle_and_queue_the_webhook_once() -> None:
    world = World()
    audit_id = world.crawled_audit()
    died: list[AuditId] = []

    def dies_after_commit(event: AuditEnded) -> None:
        died.append(event.audit_id)
        raise Crash("right after the commit")

    # The process dies after the commit, before any after-commit handler ran (the credits not counted).
    crashing = {
        **HANDLERS,
        AuditEnded: (Subscription(dies_after_commit, When.AFTER_COMMIT), *HANDLERS[AuditEnded]),
        CreditsCharged: (),
    }
    with pytest.raises(Crash):
        world.finalize(
            audit_id,
            MessageBus(
                provided({"metrics": world.metrics, "crawl": world.crawl, "clock": world.clock}),
                table=crashing,
            ),
        )
    assert died == [audit_id]
    assert world.state(audit_id) == (AuditStatus.DONE, credits(1_000 - 3), True, 1, 0)
    world.finalize(audit_id)  # redelivered: settled once, one webhook
    world.finalize(audit_id)
    assert world.state(audit_id)[:4] == DONE_ONCE[:4]


def test_the_after_commit_handlers_all_run_when_one_fails_and_the_first_error_is_raised() -> None:
    ran: list[str] = []

    def first(event: CreditsCharged) -> None:
        ran.append("first")
        raise Crash("the mail server is down")

    def second(event: CreditsCharged) -> None:
        ran.append("second")

    table = {
        CreditsCharged: (Subscription(first, When.AFTER_COMMIT), Subscription(second, When.AFTER_COMMIT))
    }
    with pytest.raises(Crash, match="mail server"):
        MessageBus({}, table=table).handle(
            CreditsCharged(AuditId(1), 10), uow=MemoryUnitOfWork(MemoryStore())
        )
    assert ran == ["first", "second"]


def test_cancelling_settles_through_the_bus_once() -> None:
    world = World()
    audit_id = world.crawled_audit()
    audits.cancel_audit(audit_id, world.owner, uow=world.uow(), clock=world.clock, metrics=world.metrics)
    status, balance, settled, deliveries, counted = world.state(audit_id)
    assert (status, settled, deliveries) == (AuditStatus.CANCELLED, True, 1)
    assert balance == credits(1_000 - 3) and counted == credits(3)
    world.finalize(audit_id)  # a finalisation message still queued: the cancelled audit's event again
    assert world.state(audit_id) == (status, balance, settled, deliveries, counted)


# --- the site's fix tasks ---------------------------------------------------------------------------------


def test_refreshing_the_fix_tasks_again_for_the_same_audit_changes_nothing(httpserver: HTTPServer) -> None:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, Shop(httpserver), caller)
    audit_id = audit(app, site, caller)
    with app.uow() as uow:
        before = sorted(uow.tasks.of_site(site.id), key=lambda t: t.key)
    assert before and all(t.audit_id == audit_id for t in before)
    findings = TaskIssues.of(
        Issue(i.check_code, i.severity, i.url, i.template) for i in app.crawl.stream_issue_lines(audit_id)
    )
    crawled = {p.facts.url for p in app.crawl.stream_site_pages(audit_id)}
    app.clock.advance(3600)  # type: ignore[attr-defined]
    with app.uow() as uow:
        published = FindingsPublished(uow.audits.get_any(audit_id), findings, crawled)
        events.refresh_fix_tasks(published, uow=uow, crawl=app.crawl, clock=app.clock)
        uow.commit()
    with app.uow() as uow:
        assert sorted(uow.tasks.of_site(site.id), key=lambda t: t.key) == before


def test_the_alert_mail_and_indexnow_touch_no_port_for_what_they_do_not_act_on() -> None:
    """Each port here is a bare object: a handler that used one would raise."""
    world = World()
    with world.uow() as uow:
        finalizing = uow.audits.get_any(world.crawled_audit())
    _, cancelled = evolve(finalizing, site_id=SiteId(4)).cancel(now=world.clock.now())
    _, plain_done = finalizing.publish_report(health_score=90, now=world.clock.now())
    unused: Any = object()
    events.mail_alert(cancelled, uow=unused, crawl=unused, clock=unused, mailer=unused, public_url="x")
    for ended in (cancelled, plain_done):  # a plain URL: not even a read
        indexnow.auto_submit_indexnow(
            ended,
            uow=unused,
            crawl=unused,
            clock=unused,
            secrets=unused,
            indexnow_client=unused,
            indexnow_batch_urls=10,
        )


def test_an_ended_audit_raises_its_event_again_as_it_was_raised() -> None:
    world = World()
    audit_id = world.crawled_audit()
    with world.uow() as uow:
        finalizing = uow.audits.get_any(audit_id)
    with pytest.raises(Conflict):
        finalizing.ended_event()
    done, ended = finalizing.publish_report(health_score=90, now=world.clock.now())
    assert done.ended_event() == ended == AuditEnded(done)
    assert (ended.audit_id, ended.status, ended.at) == (audit_id, AuditStatus.DONE, world.clock.now())
