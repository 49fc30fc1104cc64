"""Dramatiq brokers and the TaskQueue adapter that publishes to them by actor name.

Actors are declared by `siteaudit.entrypoints.worker.declare_actors` against an explicit broker, never at
import time; this adapter only needs the queue and actor names, so publishing needs no actor objects.
"""

from collections.abc import Callable
from typing import Any, Final

import dramatiq
from dramatiq.brokers.stub import StubBroker

from siteaudit.domain.ids import AuditId, RecheckId
from siteaudit.ports.queue import DispatchError

CRAWL_QUEUE: Final = "crawl"
FINALIZE_QUEUE: Final = "finalize"
WEBHOOK_QUEUE: Final = "webhooks"
QUEUES: Final = (CRAWL_QUEUE, FINALIZE_QUEUE, WEBHOOK_QUEUE)


def build_broker(broker_url: str, *, queue_prefix: str = "") -> dramatiq.Broker:
    """RabbitMQ (with publisher confirms, so a message the broker did not take raises, and publishing
    connections that survive idle periods) for `amqp://` URLs; the in-process broker otherwise."""
    if broker_url.startswith(("amqp://", "amqps://")):
        from siteaudit.adapters.queue.rabbitmq import PublishingRabbitmqBroker

        broker: dramatiq.Broker = PublishingRabbitmqBroker(broker_url)
    else:
        broker = StubBroker()
        broker.emit_after("process_boot")
    broker.queue_prefix = queue_prefix  # type: ignore[attr-defined]
    return broker


def queue_name(broker: dramatiq.Broker, base: str) -> str:
    prefix = getattr(broker, "queue_prefix", "")
    return f"{prefix}{base}" if prefix else base


class DramatiqTaskQueue:
    """Publishes `crawl_slice`, `finalize_audit` and `deliver_webhooks` messages."""

    def __init__(self, broker: dramatiq.Broker, *, seal: Callable[[str], str] | None = None) -> None:
        self._broker = broker
        self._seal = seal

    def _send(self, base_queue: str, actor: str, *args: Any) -> None:
        message: dramatiq.Message[Any] = dramatiq.Message(
            queue_name=queue_name(self._broker, base_queue),
            actor_name=actor,
            args=args,
            kwargs={},
            options={},
        )
        try:
            self._broker.enqueue(message)
        except Exception as exc:  # every broker failure is a dispatch failure to the caller
            raise DispatchError(f"{type(exc).__name__}: {exc}"[:300]) from exc

    def crawl_slice(self, audit_id: AuditId, *, verify_token: str | None = None) -> None:
        sealed = None
        if verify_token is not None:
            if self._seal is None:
                raise DispatchError("no secret key to seal the verify token with")
            sealed = self._seal(verify_token)
        self._send(CRAWL_QUEUE, "crawl_slice", int(audit_id), sealed)

    def finalize_audit(self, audit_id: AuditId) -> None:
        self._send(FINALIZE_QUEUE, "finalize_audit", int(audit_id))

    def deliver_webhooks(self) -> None:
        self._send(WEBHOOK_QUEUE, "deliver_webhooks")

    # --- rechecks: run on the crawl queue's workers like an audit slice ---

    def recheck(self, recheck_id: RecheckId) -> None:
        self._send(CRAWL_QUEUE, "run_recheck", int(recheck_id))
