"""Webhook deliveries, attempts and signing secrets on memory, SQLite and PostgreSQL."""

from datetime import timedelta

import pytest
from attrs import evolve
from sql_backend import T0, Backend, people
from sqlalchemy import Engine

from siteaudit.adapters.sql import SqlCrawlStore, SqlUnitOfWork
from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.error import ConcurrentUpdate, Conflict, NotFound
from siteaudit.domain.ids import AuditId, UserId
from siteaudit.domain.webhook import (
    DeliveryMove,
    DeliveryStatus,
    SendOutcome,
    WebhookDelivery,
    WebhookDeliveryId,
)

LEASE_S = 60.0


def _ended_audits(backend: Backend, owner: User, team: Team, count: int) -> list[Audit]:
    with backend.uow() as uow:
        made = []
        for n in range(count):
            audit = uow.audits.add(
                Audit(
                    id=AuditId(0),
                    team_id=team.id,
                    user_id=owner.id,
                    payer_id=owner.id,
                    url=f"https://retro-clock.example/{n}",
                    origin="https://retro-clock.example",
                    created_at=T0,
                    max_pages=500,
                    webhook_url="https://hooks.retro-clock.example/done",
                )
            )
            made.append(audit.cancel(now=T0)[0])
        uow.commit()
    return made


def _deliveries(backend: Backend, audits: list[Audit], *, due: list[int]) -> list[WebhookDelivery]:
    """One delivery per audit, the n-th first due `due[n]` minutes after T0."""
    with backend.uow() as uow:
        made = [
            uow.webhooks.add(WebhookDelivery.for_audit(a, now=T0 + timedelta(minutes=m)))
            for a, m in zip(audits, due, strict=True)
        ]
        uow.commit()
    return made


def test_a_delivery_is_unique_per_audit_and_reads_back_equal(backend: Backend) -> None:
    owner, _, team = people(backend)
    [audit] = _ended_audits(backend, owner, team, 1)
    [delivery] = _deliveries(backend, [audit], due=[0])
    assert delivery.id > 0
    with backend.uow() as uow:
        again = uow.webhooks.add(WebhookDelivery.for_audit(audit, now=T0 + timedelta(hours=1)))
        assert again == delivery  # a redelivered "audit ended" queues nothing twice
        uow.commit()
    with backend.uow() as uow:
        assert uow.webhooks.get(delivery.id) == delivery
        assert uow.webhooks.of_audit(audit.id) == delivery
        assert uow.webhooks.get(delivery.id).body == b'{"crawl_id":%d,"status":"cancelled",' % audit.id + (
            b'"pages_crawled":0,"health_score":null}'
        )
        assert uow.webhooks.of_audit(AuditId(audit.id + 1)) is None
        with pytest.raises(NotFound):
            uow.webhooks.get(WebhookDeliveryId(delivery.id + 100))


def test_claiming_leases_due_deliveries_earliest_first_until_the_lease_runs_out(backend: Backend) -> None:
    owner, _, team = people(backend)
    audits = _ended_audits(backend, owner, team, 4)
    made = _deliveries(backend, audits, due=[3, 1, 2, 30])
    now = T0 + timedelta(minutes=5)
    with backend.uow() as uow:
        claimed = list(uow.webhooks.claim_due(now, 2, LEASE_S))
        uow.commit()
    assert [d.id for d in claimed] == [made[1].id, made[2].id]
    assert all(d.lease_until == now + timedelta(seconds=LEASE_S) and d.version == 1 for d in claimed)
    with backend.uow() as uow:
        assert [d.id for d in uow.webhooks.claim_due(now, 10, LEASE_S)] == [made[0].id]
        assert uow.webhooks.claim_due(now + timedelta(seconds=1), 10, LEASE_S) == []
        uow.commit()
    with backend.uow() as uow:
        assert uow.webhooks.get(made[1].id) == claimed[0]
        later = now + timedelta(seconds=LEASE_S)  # the first dispatcher died: its leases ran out
        assert [d.id for d in uow.webhooks.claim_due(later, 10, LEASE_S)] == [made[i].id for i in (1, 2, 0)]
        assert uow.webhooks.claim_due(later, 0, LEASE_S) == []


def test_a_claim_rolled_back_leaves_the_deliveries_due(backend: Backend) -> None:
    owner, _, team = people(backend)
    made = _deliveries(backend, _ended_audits(backend, owner, team, 1), due=[0])
    with backend.uow() as uow:
        assert len(uow.webhooks.claim_due(T0, 5, LEASE_S)) == 1
    with backend.uow() as uow:
        assert [d.id for d in uow.webhooks.claim_due(T0, 5, LEASE_S)] == [made[0].id]


def test_an_ended_delivery_is_never_claimed_and_its_attempts_are_kept_once_in_order(backend: Backend) -> None:
    owner, _, team = people(backend)
    [delivery] = _deliveries(backend, _ended_audits(backend, owner, team, 1), due=[0])
    with backend.uow() as uow:
        [claimed] = uow.webhooks.claim_due(T0, 1, LEASE_S)
        uow.commit()
    failed, first = claimed.record(SendOutcome(503), started_at=T0, now=T0 + timedelta(seconds=1), jitter=0.0)
    with backend.uow() as uow:
        uow.webhooks.save(failed)
        uow.webhooks.add_attempt(first)
        uow.webhooks.add_attempt(first)  # recorded twice by a redelivered message: kept once
        uow.commit()
    retry_at = T0 + timedelta(minutes=1, seconds=1)
    with backend.uow() as uow:
        assert uow.webhooks.claim_due(retry_at - timedelta(seconds=1), 5, LEASE_S) == []
        [again] = uow.webhooks.claim_due(retry_at, 5, LEASE_S)
        uow.commit()
    delivered, second = again.record(SendOutcome(204), started_at=retry_at, now=retry_at, jitter=0.0)
    with backend.uow() as uow:
        uow.webhooks.save(delivered)
        uow.webhooks.add_attempt(second)
        uow.commit()
    with backend.uow() as uow:
        stored = uow.webhooks.get(delivery.id)
        assert (stored.status, stored.attempts, stored.next_attempt_at) == (DeliveryStatus.DELIVERED, 2, None)
        assert uow.webhooks.claim_due(retry_at + timedelta(days=1), 5, LEASE_S) == []
        assert list(uow.webhooks.attempts(delivery.audit_id)) == [first, second]
        assert [a.move for a in uow.webhooks.attempts(delivery.audit_id)] == [
            DeliveryMove.RETRY,
            DeliveryMove.SUCCEED,
        ]
        assert uow.webhooks.attempts(AuditId(delivery.audit_id + 1)) == []


def test_a_dispatcher_whose_lease_was_taken_over_cannot_record_its_attempt(backend: Backend) -> None:
    owner, _, team = people(backend)
    [delivery] = _deliveries(backend, _ended_audits(backend, owner, team, 1), due=[0])
    with backend.uow() as uow:
        [slow] = uow.webhooks.claim_due(T0, 1, LEASE_S)
        uow.commit()
    with backend.uow() as uow:
        [fast] = uow.webhooks.claim_due(T0 + timedelta(seconds=LEASE_S), 1, LEASE_S)
        uow.commit()
    late = T0 + timedelta(seconds=LEASE_S + 5)
    with backend.uow() as uow:
        with pytest.raises(ConcurrentUpdate):
            uow.webhooks.save(slow.record(SendOutcome(200), started_at=T0, now=late, jitter=0.0)[0])
        with pytest.raises(NotFound):
            uow.webhooks.save(evolve(slow, id=WebhookDeliveryId(delivery.id + 100), version=2))
        uow.webhooks.save(fast.record(SendOutcome(200), started_at=late, now=late, jitter=0.0)[0])
        uow.commit()
    with backend.uow() as uow:
        assert uow.webhooks.get(delivery.id).status is DeliveryStatus.DELIVERED


@pytest.mark.postgres
def test_two_dispatchers_claiming_at_once_on_postgresql_get_disjoint_deliveries(
    postgres_engine: Engine,
) -> None:
    backend = Backend("postgres", lambda: SqlUnitOfWork(postgres_engine), SqlCrawlStore(postgres_engine))
    owner, _, team = people(backend)
    made = _deliveries(backend, _ended_audits(backend, owner, team, 5), due=[0, 1, 2, 3, 4])
    now = T0 + timedelta(minutes=10)
    first, second = backend.uow(), backend.uow()
    with first, second:
        mine = first.webhooks.claim_due(now, 3, LEASE_S)  # rows locked until `first` commits
        theirs = second.webhooks.claim_due(now, 3, LEASE_S)  # skips them instead of waiting
        second.commit()
        first.commit()
    assert [d.id for d in mine] == [d.id for d in made[:3]]
    assert [d.id for d in theirs] == [d.id for d in made[3:]]


# --- signing secrets -----------------------------------------------------------------------------------


def test_a_persons_secret_is_created_once_read_back_and_rotated(backend: Backend) -> None:
    owner, member, _ = people(backend)
    with backend.uow() as uow:
        uow.webhook_secrets.create(owner.id, "whsec_first_secret_of_the_retro_clock")
        with pytest.raises(Conflict):
            uow.webhook_secrets.create(owner.id, "whsec_second")
        uow.commit()
    with backend.uow() as uow:
        assert uow.webhook_secrets.get(owner.id) == "whsec_first_secret_of_the_retro_clock"
        uow.webhook_secrets.rotate(owner.id, "whsec_rotated_secret")
        with pytest.raises(NotFound):
            uow.webhook_secrets.rotate(member.id, "whsec_nobody")
        with pytest.raises(NotFound):
            uow.webhook_secrets.get(member.id)
        uow.commit()
    with backend.uow() as uow:
        assert uow.webhook_secrets.get(owner.id) == "whsec_rotated_secret"
        with pytest.raises(NotFound):
            uow.webhook_secrets.get(UserId(member.id + 100))
