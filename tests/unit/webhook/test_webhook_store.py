"""The memory webhook store, the queueing service inside the audit-ending transaction, and SecretBox."""

import threading
from datetime import timedelta
from types import TracebackType
from typing import Self

import pytest
from cryptography.fernet import Fernet

from siteaudit.adapters.memory.store import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.webhook import (
    MemoryWebhookRepository,
    MemoryWebhookSecrets,
    MemoryWebhookStore,
    MemoryWebhookUnitOfWork,
)
from siteaudit.adapters.secretbox import SecretBox, SecretUnreadable
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.domain.audit import Audit
from siteaudit.domain.error import ConcurrentUpdate, Conflict, NotFound
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.webhook import DeliveryStatus, SendOutcome, WebhookDelivery
from siteaudit.services.webhook import (
    SECRET_PREFIX,
    create_webhook_secret,
    queue_webhook,
    rotate_webhook_secret,
)

STARTER = UserId(7)
HOOK = "https://hooks.retro-clock.example/audit-ended"


def cancelled_audit(clock: FixedClock, audit_id: int = 42, webhook_url: str | None = HOOK) -> Audit:
    audit = Audit(
        id=AuditId(audit_id),
        team_id=TeamId(3),
        user_id=STARTER,
        payer_id=STARTER,
        url="https://retro-clock.example/",
        origin="https://retro-clock.example",
        created_at=clock.now(),
        max_pages=50,
        webhook_url=webhook_url,
    )
    cancelled, _ = audit.cancel(now=clock.now())
    return cancelled


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def uow() -> MemoryWebhookUnitOfWork:
    return MemoryWebhookUnitOfWork(MemoryWebhookStore())


# --- queueing ----------------------------------------------------------------------------------------


def test_queueing_twice_for_one_audit_yields_one_delivery(
    uow: MemoryWebhookUnitOfWork, clock: FixedClock
) -> None:
    audit = cancelled_audit(clock)
    with uow:
        first = queue_webhook(audit, webhooks=uow.webhooks, at=clock.now())
        again_in_the_same_transaction = queue_webhook(audit, webhooks=uow.webhooks, at=clock.now())
        uow.commit()
    clock.advance(30)
    with uow:
        again_later = queue_webhook(audit, webhooks=uow.webhooks, at=clock.now())
        uow.commit()

    assert first is not None and first.id != 0
    assert again_in_the_same_transaction == first == again_later
    assert len(list(uow.store.deliveries.values())) == 1


def test_an_audit_without_a_webhook_url_queues_nothing(
    uow: MemoryWebhookUnitOfWork, clock: FixedClock
) -> None:
    with uow:
        assert (
            queue_webhook(cancelled_audit(clock, webhook_url=None), webhooks=uow.webhooks, at=clock.now())
            is None
        )
        uow.commit()

    assert list(uow.store.deliveries.values()) == []


class AuditAndWebhookUnitOfWork(MemoryUnitOfWork):
    """The wiring recipe of siteaudit.adapters.memory.webhook, applied to the application's unit of work."""

    def __init__(self, store: MemoryStore, webhook_store: MemoryWebhookStore) -> None:
        super().__init__(store)
        self.webhook_store = webhook_store
        self.webhooks = self._guard(MemoryWebhookRepository(webhook_store))
        self.webhook_secrets = self._guard(MemoryWebhookSecrets(webhook_store))

    def __enter__(self) -> Self:
        return super().__enter__()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        super().__exit__(exc_type, exc, tb)

    def commit(self) -> None:
        super().commit()
        for table in self.webhook_store.tables():
            table.commit()

    def rollback(self) -> None:
        super().rollback()
        for table in self.webhook_store.tables():
            table.rollback()


def test_the_event_is_queued_with_the_audits_end_or_not_at_all(clock: FixedClock) -> None:
    store = MemoryStore()
    webhook_store = MemoryWebhookStore(lock=store.lock)
    uow = AuditAndWebhookUnitOfWork(store, webhook_store)
    audit = cancelled_audit(clock)

    with uow:
        queue_webhook(audit, webhooks=uow.webhooks, at=clock.now())
        # no commit: the ending transaction failed, so no event may survive it

    with uow:
        assert uow.webhooks.of_audit(audit.id) is None
        queue_webhook(audit, webhooks=uow.webhooks, at=clock.now())
        uow.commit()

    with MemoryWebhookUnitOfWork(webhook_store) as alone:
        assert alone.webhooks.of_audit(audit.id) is not None


# --- claiming ----------------------------------------------------------------------------------------


def queue_some(uow: MemoryWebhookUnitOfWork, clock: FixedClock, count: int) -> None:
    with uow:
        for offset in range(count):
            queue_webhook(
                cancelled_audit(clock, audit_id=100 + offset), webhooks=uow.webhooks, at=clock.now()
            )
            clock.advance(1)
        uow.commit()


def test_claims_take_the_earliest_due_first_up_to_the_limit(
    uow: MemoryWebhookUnitOfWork, clock: FixedClock
) -> None:
    queue_some(uow, clock, 5)

    with uow:
        first = uow.webhooks.claim_due(clock.now(), 2, 60)
        uow.commit()
    with uow:
        second = uow.webhooks.claim_due(clock.now(), 10, 60)
        uow.commit()
    with uow:
        third = uow.webhooks.claim_due(clock.now(), 10, 60)

    assert [d.audit_id for d in first] == [100, 101]
    assert [d.audit_id for d in second] == [102, 103, 104]
    assert third == []


def test_a_claim_that_is_not_committed_leases_nothing(
    uow: MemoryWebhookUnitOfWork, clock: FixedClock
) -> None:
    queue_some(uow, clock, 1)

    with uow:
        assert len(uow.webhooks.claim_due(clock.now(), 10, 60)) == 1
    with uow:
        assert len(uow.webhooks.claim_due(clock.now(), 10, 60)) == 1


def test_concurrent_dispatchers_never_claim_the_same_delivery(
    uow: MemoryWebhookUnitOfWork, clock: FixedClock
) -> None:
    queue_some(uow, clock, 40)
    claimed: list[AuditId] = []
    lock = threading.Lock()

    def dispatcher() -> None:
        own = MemoryWebhookUnitOfWork(uow.store)
        while True:
            with own:
                batch = own.webhooks.claim_due(clock.now(), 3, 60)
                own.commit()
            if not batch:
                return
            with lock:
                claimed.extend(d.audit_id for d in batch)

    workers = [threading.Thread(target=dispatcher) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert sorted(claimed) == list(range(100, 140))


def test_a_dispatcher_whose_lease_ran_out_cannot_record_over_the_next_one(
    uow: MemoryWebhookUnitOfWork, clock: FixedClock
) -> None:
    queue_some(uow, clock, 1)
    with uow:
        (slow,) = uow.webhooks.claim_due(clock.now(), 1, 60)
        uow.commit()
    clock.advance(61)
    with uow:
        (taken_over,) = uow.webhooks.claim_due(clock.now(), 1, 60)
        uow.commit()

    late, _ = slow.record(SendOutcome(200), started_at=clock.now(), now=clock.now(), jitter=0.0)
    with uow, pytest.raises(ConcurrentUpdate):
        uow.webhooks.save(late)
    on_time, attempt = taken_over.record(
        SendOutcome(200), started_at=clock.now(), now=clock.now(), jitter=0.0
    )
    with uow:
        uow.webhooks.save(on_time)
        uow.webhooks.add_attempt(attempt)
        uow.webhooks.add_attempt(attempt)
        uow.commit()

    with uow:
        assert uow.webhooks.get(on_time.id).status is DeliveryStatus.DELIVERED
        assert len(uow.webhooks.attempts(on_time.audit_id)) == 1


def test_a_retry_is_not_claimed_before_it_is_due(uow: MemoryWebhookUnitOfWork, clock: FixedClock) -> None:
    queue_some(uow, clock, 1)
    with uow:
        (claimed,) = uow.webhooks.claim_due(clock.now(), 1, 60)
        failed, _ = claimed.record(SendOutcome(500), started_at=clock.now(), now=clock.now(), jitter=0.0)
        uow.webhooks.save(failed)
        uow.commit()

    with uow:
        assert uow.webhooks.claim_due(clock.now() + timedelta(seconds=59), 1, 60) == []
        assert len(uow.webhooks.claim_due(clock.now() + timedelta(seconds=60), 1, 60)) == 1


def test_an_unknown_delivery_is_not_found(uow: MemoryWebhookUnitOfWork, clock: FixedClock) -> None:
    with uow, pytest.raises(NotFound):
        uow.webhooks.save(WebhookDelivery.for_audit(cancelled_audit(clock), now=clock.now()))


# --- secrets -----------------------------------------------------------------------------------------


def test_a_secret_is_created_with_the_account_once_and_rotated_in_place(uow: MemoryWebhookUnitOfWork) -> None:
    secrets = SystemSecrets()
    with uow:
        first = create_webhook_secret(STARTER, webhook_secrets=uow.webhook_secrets, secrets=secrets)
        with pytest.raises(Conflict):
            create_webhook_secret(STARTER, webhook_secrets=uow.webhook_secrets, secrets=secrets)
        uow.commit()

    rotated = rotate_webhook_secret(STARTER, uow=uow, secrets=secrets)

    assert first.startswith(SECRET_PREFIX) and len(first) == len(SECRET_PREFIX) + 40
    assert rotated != first
    with uow:
        assert uow.webhook_secrets.get(STARTER) == rotated
        with pytest.raises(NotFound):
            uow.webhook_secrets.get(UserId(99))
    with pytest.raises(NotFound):
        rotate_webhook_secret(UserId(99), uow=uow, secrets=secrets)


# --- SecretBox ---------------------------------------------------------------------------------------


def test_a_secret_round_trips_and_is_not_stored_in_the_clear() -> None:
    box = SecretBox(SecretBox.generate_key())

    token = box.encrypt("whsec_RetroClockSigningSecret")

    assert "RetroClock" not in token
    assert box.decrypt(token) == "whsec_RetroClockSigningSecret"
    assert box.encrypt("whsec_RetroClockSigningSecret") != token  # a fresh IV every time


def test_a_fernet_key_is_used_as_it_is_and_a_passphrase_is_derived_the_same_way_every_time() -> None:
    key = SecretBox.generate_key()
    assert Fernet(key.encode()).decrypt(SecretBox(key).encrypt("s").encode()) == b"s"

    token = SecretBox("correct horse battery staple").encrypt("s")
    assert SecretBox("correct horse battery staple").decrypt(token) == "s"
    with pytest.raises(SecretUnreadable):
        SecretBox("correct horse battery stapler").decrypt(token)


def test_a_tampered_or_foreign_value_is_unreadable() -> None:
    box = SecretBox(SecretBox.generate_key())
    token = box.encrypt("whsec_x")

    with pytest.raises(SecretUnreadable):
        box.decrypt(token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"))
    with pytest.raises(SecretUnreadable):
        SecretBox(SecretBox.generate_key()).decrypt(token)


def test_after_a_key_change_old_values_still_decrypt_and_move_to_the_new_key() -> None:
    old, new = SecretBox.generate_key(), SecretBox.generate_key()
    token = SecretBox(old).encrypt("whsec_x")
    box = SecretBox(new, old)

    moved = box.reencrypt(token)

    assert box.decrypt(token) == "whsec_x"
    assert SecretBox(new).decrypt(moved) == "whsec_x"


def test_an_empty_key_is_refused() -> None:
    with pytest.raises(ValueError, match="SITEAUDIT_SECRET_KEY"):
        SecretBox("  ")
