"""Crawl slices under leases and the reaper, on memory adapters with a fixed clock: duplicates do no work,
stalled audits are re-dispatched a bounded number of times, then failed and settled once."""

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from lease_doubles import HANDOVER_S, LEASE_S, PAGES, World

from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.credit import EntryKind
from siteaudit.domain.ids import AuditId
from siteaudit.services.audit import audit_reference, cancel_audit


def lease_of(world: World, audit_id: AuditId):  # type: ignore[no-untyped-def]
    with world.uow() as uow:
        return uow.leases.get(audit_id)


def charged(world: World, audit_id: AuditId) -> list[int]:
    with world.uow() as uow:
        entries = uow.credits.entries(world.audit(audit_id).payer_id)
    return [
        -e.amount for e in entries if e.reference == audit_reference(audit_id) and e.kind is EntryKind.CHARGE
    ]


def test_an_audit_runs_slice_by_slice_to_done_releasing_its_lease_at_every_hand_over() -> None:
    world = World()
    audit_id = world.start()
    world.drain()
    audit = world.audit(audit_id)
    assert audit.status is AuditStatus.DONE and audit.pages_crawled == len(PAGES)
    lease = lease_of(world, audit_id)
    assert lease is not None and lease.free and lease.attempts == 0
    assert charged(world, audit_id) == [len(PAGES) * 10]
    assert world.ledger_problems() == []


def test_a_duplicate_message_for_an_audit_held_by_a_live_slice_returns_at_once_without_work() -> None:
    world = World()
    audit_id = world.start()
    world.queue.take()
    world.kill_slice(audit_id, holder="busy-worker:1:0")  # alive, as far as anyone can tell
    outcome = world.slice(audit_id)
    assert outcome.lease_lost and outcome.fetched == 0
    assert world.hits == [] and world.queue.pending() == []
    assert world.audit(audit_id).status is AuditStatus.QUEUED


def test_a_killed_slice_is_redispatched_by_the_reaper_only_after_its_deadline_and_grace() -> None:
    world = World()
    audit_id = world.start()
    world.drain(limit=1)  # the first slice: robots.txt, sitemaps, two pages; the next slice is queued
    lost = world.queue.take()
    assert lost == ("crawl_slice", audit_id)
    world.kill_slice(audit_id)  # the next slice's worker took the lease and was SIGKILLed
    world.clock.advance(LEASE_S + 5)
    assert world.reap(grace_s=5).total == 0
    world.clock.advance(0.5)
    assert world.reap(grace_s=5).slices == 1
    assert world.queue.pending() == [("crawl_slice", audit_id)]
    world.drain()
    assert world.audit(audit_id).status is AuditStatus.DONE
    assert world.ledger_problems() == []


def test_a_slice_that_lost_its_lease_mid_way_stops_without_writing_its_batch_or_queueing_anything() -> None:
    world = World()
    audit_id = world.start()
    world.queue.take()

    def stall_and_get_taken_over(path: str) -> None:
        if path == "/catalogue":
            # The worker stalls past its deadline and a redelivered message takes the audit over.
            world.clock.advance(LEASE_S + 1)
            now = world.clock.now()
            with world.uow() as uow:
                assert uow.leases.claim(audit_id, "other", now=now, until=now + timedelta(seconds=60))
                uow.commit()

    world.on_fetch = stall_and_get_taken_over
    world.limits = CrawlLimits(unlimited_rate=True, slice_pages=100, lease_s=LEASE_S)
    outcome = world.slice(audit_id)
    assert outcome.lease_lost and outcome.next == ""
    assert world.queue.pending() == []
    assert world.audit(audit_id).pages_crawled <= 1  # the batch with /catalogue was not recorded
    lease = lease_of(world, audit_id)
    assert lease is not None and lease.holder == "other"


def test_a_finalizing_audit_whose_message_was_lost_is_finalized_again() -> None:
    world = World()
    audit_id = world.start()
    while (message := world.queue.take()) is not None and message[0] == "crawl_slice":
        world.deliver(message)
    assert message == ("finalize_audit", audit_id)  # lost with its worker
    assert world.audit(audit_id).status is AuditStatus.FINALIZING
    world.clock.advance(HANDOVER_S + 6)
    assert world.reap(grace_s=5).finalizations == 1
    world.drain()
    assert world.audit(audit_id).status is AuditStatus.DONE
    assert world.ledger_problems() == []


def test_after_max_attempts_the_reaper_fails_the_audit_and_charges_only_what_was_fetched() -> None:
    world = World()
    audit_id = world.start()
    world.drain(limit=1)
    fetched = world.audit(audit_id).pages_crawled
    assert 0 < fetched < len(PAGES)
    for attempt in range(1, 4):
        assert world.queue.take() == ("crawl_slice", audit_id)
        world.kill_slice(audit_id)
        world.clock.advance(LEASE_S + 6)
        assert world.reap(grace_s=5, max_attempts=3).slices == 1
        lease = lease_of(world, audit_id)
        assert lease is not None and lease.attempts == attempt
    world.queue.take()
    world.kill_slice(audit_id)
    world.clock.advance(LEASE_S + 6)
    reaped = world.reap(grace_s=5, max_attempts=3)
    assert reaped.failed == 1 and reaped.slices == 0 and world.queue.pending() == []
    audit = world.audit(audit_id)
    assert audit.status is AuditStatus.FAILED
    assert audit.failure_reason is not None and audit.failure_reason.startswith(
        "reaped: work stalled 4 times"
    )
    assert charged(world, audit_id) == [fetched * 10]
    assert lease_of(world, audit_id) is None
    with world.uow() as uow:
        assert uow.webhooks.of_audit(audit_id) is not None
    assert world.ledger_problems() == []


def test_a_queued_audit_nobody_claimed_is_dispatched_again_after_the_queued_timeout() -> None:
    world = World()
    audit_id = world.start()
    assert world.queue.take() == ("crawl_slice", audit_id)  # published, then lost
    world.clock.advance(599)
    assert world.reap(queued_s=600).total == 0
    world.clock.advance(2)
    assert world.reap(queued_s=600).slices == 1
    assert world.reap(queued_s=600).total == 0  # adopted: the lease now carries the deadline
    world.drain()
    assert world.audit(audit_id).status is AuditStatus.DONE


def test_the_lease_of_an_audit_cancelled_while_its_worker_was_dead_is_forgotten() -> None:
    world = World()
    audit_id = world.start()
    world.queue.take()
    world.kill_slice(audit_id)
    cancel_audit(audit_id, world.callers[0], uow=world.uow(), clock=world.clock)
    world.clock.advance(LEASE_S + 6)
    assert world.reap(grace_s=5).forgotten == 1
    assert lease_of(world, audit_id) is None and world.queue.pending() == []
    assert world.ledger_problems() == []


# --- at-least-once delivery with crashes, on a fixed clock -----------------------------------------------

STEPS = st.lists(
    st.sampled_from(
        ["deliver", "deliver", "deliver", "duplicate", "kill", "tick", "reap", "start", "cancel"]
    ),
    min_size=10,
    max_size=80,
)


@settings(max_examples=60, deadline=None)
@given(steps=STEPS, caller=st.integers(0, 1))
def test_under_duplicates_kills_and_cancels_every_audit_ends_and_settles_exactly_once(
    steps: list[str], caller: int
) -> None:
    world = World()
    started = [world.start(caller)]
    for step in steps:
        if step == "start":
            started.append(world.start(len(started) % 2))
        elif step == "deliver" and (message := world.queue.take()) is not None:
            world.deliver(message)
        elif step == "duplicate" and (pending := world.queue.pending()):
            actor, argument = pending[0]
            assert argument is not None
            world.deliver((actor, argument))  # the copy runs now; the original stays queued
        elif step == "kill" and (message := world.queue.take()) is not None and message[1] is not None:
            if message[0] == "crawl_slice":
                world.kill_slice(AuditId(message[1]))
        elif step == "tick":
            world.clock.advance(LEASE_S / 2)
        elif step == "reap":
            world.reap(grace_s=5, max_attempts=3)
        elif step == "cancel":
            audit = world.audit(started[-1])
            if not audit.status.ended:
                caller_of = next(c for c in world.callers if c.team_id == audit.team_id)
                cancel_audit(audit.id, caller_of, uow=world.uow(), clock=world.clock)
    # Then the system is left alone: messages are delivered, time passes, the reaper runs.
    for _ in range(40):
        world.drain()
        world.clock.advance(HANDOVER_S + 10)
        world.reap(grace_s=5, max_attempts=3, queued_s=HANDOVER_S)
    for audit_id in started:
        assert world.audit(audit_id).status.ended, world.audit(audit_id)
    assert world.ledger_problems() == []
