"""Audit leases on memory, SQLite and PostgreSQL: the claim table, heartbeats, the reaper's conditional steps."""

import threading
from datetime import timedelta

from sql_backend import T0, Backend, people

from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId
from siteaudit.domain.lease import Lease

CLAIMERS = 6


def _audits(backend: Backend, count: int) -> list[Audit]:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        made = [
            uow.audits.add(
                Audit(
                    id=AuditId(0),
                    team_id=team.id,
                    user_id=owner.id,
                    payer_id=owner.id,
                    url="https://retro-clock.example/",
                    origin="https://retro-clock.example",
                    created_at=T0 + timedelta(minutes=n),
                    max_pages=500,
                )
            )
            for n in range(count)
        ]
        uow.commit()
    return made


def test_claims_follow_the_table_and_holders_renew_and_release(backend: Backend) -> None:
    [audit] = _audits(backend, 1)
    soon, later = T0 + timedelta(minutes=1), T0 + timedelta(minutes=2)
    with backend.uow() as uow:
        assert uow.leases.get(audit.id) is None
        first = uow.leases.claim(audit.id, "worker-a", now=T0, until=soon)
        assert first == Lease(audit.id, "worker-a", soon, attempts=0, version=1)
        assert uow.leases.claim(audit.id, "worker-b", now=T0, until=later) is None  # live for another
        assert uow.leases.claim(audit.id, "worker-a", now=T0, until=later) == Lease(
            audit.id, "worker-a", later, 0, 2
        )
        assert uow.leases.renew(audit.id, "worker-a", until=later + timedelta(minutes=1)) is True
        assert uow.leases.renew(audit.id, "worker-b", until=later) is False
        assert uow.leases.release(audit.id, "worker-b", until=later) is False
        assert uow.leases.release(audit.id, "worker-a", until=later) is True
        uow.commit()
    with backend.uow() as uow:
        assert uow.leases.get(audit.id) == Lease(audit.id, None, later, 0, 4)
        free_taken = uow.leases.claim(audit.id, "worker-b", now=T0, until=later)
        assert free_taken == Lease(audit.id, "worker-b", later, 0, 5)
        # worker-b dies; at its deadline worker-c takes over, one more attempt
        taken_over = uow.leases.claim(audit.id, "worker-c", now=later, until=later + timedelta(minutes=1))
        assert taken_over == Lease(audit.id, "worker-c", later + timedelta(minutes=1), 1, 6)
        uow.commit()
    with backend.uow() as uow:
        assert uow.leases.get(audit.id) == taken_over


def test_the_reaper_finds_stuck_leases_oldest_first_and_acts_only_on_what_it_read(backend: Backend) -> None:
    audits = _audits(backend, 4)
    with backend.uow() as uow:
        for n, audit in enumerate(audits[:3]):
            uow.leases.claim(audit.id, f"worker-{n}", now=T0, until=T0 + timedelta(minutes=3 - n))
        uow.commit()
    now = T0 + timedelta(minutes=10)
    with backend.uow() as uow:
        stuck = list(uow.leases.stuck(now, grace_s=60, limit=10))
        assert [s.audit_id for s in stuck] == [a.id for a in reversed(audits[:3])]
        assert list(uow.leases.stuck(now, grace_s=60, limit=1)) == stuck[:1]
        assert uow.leases.stuck(T0 + timedelta(minutes=2), grace_s=60, limit=10) == []
        requeued = uow.leases.requeue(stuck[0], until=now + timedelta(minutes=5))
        assert requeued == Lease(stuck[0].audit_id, None, now + timedelta(minutes=5), 1, 2)
        assert uow.leases.requeue(stuck[0], until=now) is None  # a second reaper read the old row
        assert uow.leases.forget(stuck[0]) is False
        assert uow.leases.forget(stuck[1]) is True
        assert uow.leases.get(stuck[1].audit_id) is None
        uow.commit()
    with backend.uow() as uow:
        assert uow.leases.get(stuck[0].audit_id) == requeued


def test_queued_audits_nobody_claimed_are_found_and_adopted_once(backend: Backend) -> None:
    audits = _audits(backend, 4)
    with backend.uow() as uow:
        uow.leases.claim(audits[1].id, "worker-a", now=T0, until=T0 + timedelta(minutes=1))
        running = audits[2].start(now=T0)
        uow.audits.get_any(running.id)
        uow.audits.save(running)
        uow.commit()
    with backend.uow() as uow:
        before = T0 + timedelta(minutes=10)
        assert list(uow.leases.unclaimed(created_before=before, limit=10)) == [audits[0].id, audits[3].id]
        assert list(uow.leases.unclaimed(created_before=T0 + timedelta(minutes=3), limit=10)) == [
            audits[0].id
        ]
        assert list(uow.leases.unclaimed(created_before=before, limit=1)) == [audits[0].id]
        adopted = uow.leases.adopt(audits[0].id, until=before)
        assert adopted == Lease(audits[0].id, None, before, attempts=1, version=1)
        assert uow.leases.adopt(audits[0].id, until=before) is None
        assert uow.leases.adopt(audits[1].id, until=before) is None
        uow.commit()
    with backend.uow() as uow:
        assert list(uow.leases.unclaimed(created_before=T0 + timedelta(minutes=10), limit=10)) == [
            audits[3].id
        ]


def test_of_workers_claiming_one_audit_at_once_exactly_one_holds_it(backend: Backend) -> None:
    [audit] = _audits(backend, 1)
    winners: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(CLAIMERS)

    def claim(name: str) -> None:
        start.wait()
        with backend.uow() as uow:
            lease = uow.leases.claim(audit.id, name, now=T0, until=T0 + timedelta(minutes=1))
            uow.commit()
        if lease is not None:
            with lock:
                winners.append(name)

    threads = [threading.Thread(target=claim, args=(f"worker-{n}",)) for n in range(CLAIMERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1
    with backend.uow() as uow:
        stored = uow.leases.get(audit.id)
        assert stored is not None and stored.holder == winners[0] and stored.version == 1
