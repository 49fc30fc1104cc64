"""The event bus's promises on every backend (memory, SQLite, PostgreSQL): finalising settles the credits,
queues the webhook and counts the credits once, whatever crashes between the handlers and however often the
message is redelivered (tests/unit/services/test_events.py says each on memory)."""

import pytest
from sql_backend import Backend

from siteaudit.domain.audit import AuditEnded, AuditStatus
from siteaudit.domain.credit import credits
from siteaudit.domain.events import CreditsCharged
from siteaudit.services import events
from siteaudit.services.events import HANDLERS, MessageBus, Subscription, When
from siteaudit.services.inject import provided
from tests.unit.services.test_events import DONE_ONCE, Crash, World


def test_finalising_twice_settles_and_queues_once(backend: Backend) -> None:
    world = World(backend.uow, backend.crawl)
    audit_id = world.crawled_audit()
    world.finalize(audit_id)
    world.finalize(audit_id)
    assert world.state(audit_id) == DONE_ONCE


def test_a_crash_inside_the_ending_transaction_rolls_it_all_back(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = World(backend.uow, backend.crawl)
    audit_id = world.crawled_audit()

    def crash(*args: object, **kwargs: object) -> None:
        raise Crash

    with monkeypatch.context() as patched:
        patched.setattr(events, "queue_webhook", crash)
        with pytest.raises(Crash):
            world.finalize(audit_id)
    assert world.state(audit_id) == (AuditStatus.FINALIZING, credits(1_000 - 100), False, 0, 0)
    world.finalize(audit_id)
    world.finalize(audit_id)
    assert world.state(audit_id) == DONE_ONCE


def test_a_crash_after_the_commit_then_redeliveries_settle_once(backend: Backend) -> None:
    world = World(backend.uow, backend.crawl)
    audit_id = world.crawled_audit()

    def dies(event: AuditEnded) -> None:
        raise Crash

    crashing = {
        **HANDLERS,
        AuditEnded: (Subscription(dies, When.AFTER_COMMIT), *HANDLERS[AuditEnded]),
        CreditsCharged: (),
    }
    with pytest.raises(Crash):
        world.finalize(
            audit_id, MessageBus(provided({"crawl": world.crawl, "clock": world.clock}), table=crashing)
        )
    world.finalize(audit_id)
    world.finalize(audit_id)
    assert world.state(audit_id)[:4] == DONE_ONCE[:4]
