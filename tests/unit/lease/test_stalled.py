"""A stalled audit is visible (GET /crawls/{id}): `stalled` once its lease's deadline passed and nobody
took the audit over, `last_progress_at` the time of its last batch, lease renewal or state move. Memory
adapters and a fixed clock; messages are delivered, lost and killed by hand."""

from datetime import timedelta

from lease_doubles import HANDOVER_S, LEASE_S, World

from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId
from siteaudit.ports.application import AuditDetail
from siteaudit.services.audit import cancel_audit, get_audit


def detail(world: World, audit_id: AuditId) -> AuditDetail:
    return get_audit(audit_id, world.callers[0], uow=world.uow(), clock=world.clock)


def test_a_queued_audit_no_slice_claimed_has_no_progress_and_no_deadline_to_miss() -> None:
    world = World()
    audit_id = world.start()
    world.clock.advance(HANDOVER_S * 10)
    seen = detail(world, audit_id)
    assert seen.audit.last_progress_at is None and not seen.stalled


def test_a_running_audit_with_a_live_lease_is_not_stalled_and_its_progress_follows_batches_and_renewals() -> (
    None
):
    world = World()
    audit_id = world.start()
    world.queue.take()
    started = world.clock.now()
    seen: dict[str, AuditDetail] = {}

    def look(path: str) -> None:
        seen[path] = detail(world, audit_id)
        if path == "/robots.txt":
            world.clock.advance(LEASE_S / 3 + 1)  # the heartbeat before the first sitemap renews the lease
        elif not path.endswith((".txt", ".xml")):
            world.clock.advance(1)  # a page

    world.on_fetch = look
    outcome = world.slice(audit_id)
    assert outcome.next == "slice"
    assert seen["/robots.txt"].audit.last_progress_at == started  # the slice started the audit
    renewed = started + timedelta(seconds=LEASE_S / 3 + 1)
    assert seen["/sitemap.xml"].audit.last_progress_at == renewed  # renewal, no batch yet
    assert all(not d.stalled and d.audit.status is AuditStatus.RUNNING for d in seen.values())
    after = detail(world, audit_id)
    assert after.audit.last_progress_at is not None and after.audit.last_progress_at > renewed  # its batch
    assert not after.stalled  # handed over: the next message has HANDOVER_S to claim it


def test_a_killed_slice_is_stalled_after_its_lease_expired_and_not_once_the_reaper_redispatched_it() -> None:
    world = World()
    audit_id = world.start()
    world.drain(limit=1)  # the first slice hands over
    world.queue.take()
    world.kill_slice(audit_id)  # the next slice's worker took the lease and was SIGKILLed
    last_progress = detail(world, audit_id).audit.last_progress_at
    world.clock.advance(LEASE_S - 0.5)
    assert not detail(world, audit_id).stalled
    world.clock.advance(0.5)
    stalled = detail(world, audit_id)
    assert stalled.stalled and stalled.audit.status is AuditStatus.RUNNING
    assert stalled.audit.last_progress_at == last_progress
    world.clock.advance(5.5)
    assert world.reap(grace_s=5).slices == 1
    assert not detail(world, audit_id).stalled  # re-dispatched: the message has a new deadline
    during: list[bool] = []
    world.on_fetch = lambda _path: during.append(detail(world, audit_id).stalled)
    world.drain()
    assert during and not any(during)
    done = detail(world, audit_id)
    assert done.audit.status is AuditStatus.DONE and not done.stalled


def test_a_handed_over_audit_whose_message_was_lost_is_stalled_after_the_hand_over_deadline() -> None:
    world = World()
    audit_id = world.start()
    world.drain(limit=1)
    assert world.queue.take() == ("crawl_slice", audit_id)  # lost on its way
    world.clock.advance(HANDOVER_S - 1)
    assert not detail(world, audit_id).stalled
    world.clock.advance(1)
    assert detail(world, audit_id).stalled


def test_ended_audits_are_never_stalled_and_last_progressed_when_they_ended() -> None:
    world = World()
    done_id = world.start()
    world.drain()
    cancelled_id = world.start()
    world.queue.take()
    world.kill_slice(cancelled_id)  # a live holder, then the caller cancels
    cancel_audit(cancelled_id, world.callers[0], uow=world.uow(), clock=world.clock)
    world.clock.advance(HANDOVER_S * 10)
    for audit_id, status in ((done_id, AuditStatus.DONE), (cancelled_id, AuditStatus.CANCELLED)):
        seen = detail(world, audit_id)
        assert seen.audit.status is status and not seen.stalled
        assert seen.audit.last_progress_at == seen.audit.finished_at
