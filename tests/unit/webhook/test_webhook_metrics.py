"""Each recorded webhook attempt is counted by what it did: delivered, redirected, failed (retried
later) or given up after the last attempt."""

from collections.abc import Mapping

from siteaudit.adapters.memory.metrics import MemoryMetrics
from siteaudit.adapters.memory.webhook import MemoryWebhookStore, MemoryWebhookUnitOfWork
from siteaudit.adapters.system import FixedClock
from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.domain.webhook import SendOutcome
from siteaudit.services.webhook import deliver_due_webhooks, queue_webhook

STARTER = UserId(7)


class Script:
    """A receiver answering each POST with the next status of its script (None: the connection failed)."""

    def __init__(self, *statuses: int | None) -> None:
        self.statuses = list(statuses)

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendOutcome:
        status = self.statuses.pop(0)
        return SendOutcome(status) if status is not None else SendOutcome(None, error="connect")


def deliveries(*statuses: int | None, audits: int = 1) -> MemoryMetrics:
    clock = FixedClock()
    uow = MemoryWebhookUnitOfWork(MemoryWebhookStore())
    metrics = MemoryMetrics()
    with uow:
        uow.webhook_secrets.create(STARTER, "whsec_RetroClockSigningSecret0123456789abcd")
        for number in range(1, audits + 1):
            audit = Audit(
                id=AuditId(number),
                team_id=TeamId(3),
                user_id=STARTER,
                payer_id=STARTER,
                url="https://retro-clock.example/",
                origin="https://retro-clock.example",
                created_at=clock.now(),
                max_pages=5,
                webhook_url="https://hooks.retro-clock.example/siteaudit",
            )
            ended, _ = (
                audit.start(now=clock.now())
                .stop_crawling(partial=False, now=clock.now())
                .publish_report(health_score=90, now=clock.now())
            )
            queue_webhook(ended, webhooks=uow.webhooks, at=clock.now())
        uow.commit()
    sender = Script(*statuses)
    while sender.statuses:
        deliver_due_webhooks(uow=uow, sender=sender, clock=clock, jitter=lambda: 0.0, metrics=metrics)
        clock.advance(3600)
    return metrics


def test_five_failures_are_four_failed_attempts_then_given_up() -> None:
    assert deliveries(500, None, 503, 500, 500).webhooks == {"failed_attempt": 4, "given_up": 1}


def test_a_2xx_is_delivered_and_a_3xx_ends_redirected() -> None:
    assert deliveries(204, 302, audits=2).webhooks == {"delivered": 1, "redirected": 1}
