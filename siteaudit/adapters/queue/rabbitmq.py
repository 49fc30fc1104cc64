"""The RabbitMQ broker: publishing that survives idle periods and broker-side closes without an ERROR.

Publishing (the REST process starting an audit, a worker handing a slice over) goes through a pika
BlockingConnection per thread, which does I/O only while it publishes. Between requests nothing answers
the broker's heartbeats, so after a few idle minutes RabbitMQ dropped the connection; the next publish
met the reset, pika logged it at ERROR with two tracebacks, and only then did Dramatiq retry on a new
connection. Here:

- publishing connections ask for no heartbeats (TCP keepalive notices a dead peer instead), so an idle
  one stays open; consuming connections keep the broker's heartbeats, their threads serve them;
- a publishing connection lost anyway (a broker restart, an operator closing it) is replaced by
  Dramatiq's own retry, while pika's lines about it are held back: one warning line says what happened.
"""

import copy
import logging
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import dramatiq
import pika  # type: ignore[import-untyped]
from dramatiq.brokers.rabbitmq import RabbitmqBroker

log = logging.getLogger(__name__)

# TCP keepalive of a publishing connection: probes after 60 s of silence, dead after 4 more unanswered
# or when what it sent is not acknowledged within 30 s (a publish never waits on a vanished peer for long).
KEEPALIVE: Final = {"TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 15, "TCP_KEEPCNT": 4, "TCP_USER_TIMEOUT": 30_000}


class _PikaLinesHeldBack(logging.Filter):
    """Drops pika's records on a thread while it publishes: the publisher says what happened, once.

    Attached to every pika logger: a logger's filter sees only the records logged on that very logger.
    """

    def __init__(self) -> None:
        super().__init__()
        self._publishing = threading.local()

    @contextmanager
    def holding(self) -> Iterator[None]:
        self._publishing.active = True
        try:
            yield
        finally:
            self._publishing.active = False

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self._publishing, "active", False)


_HELD_BACK: Final = _PikaLinesHeldBack()


def _hold_back_pika_lines() -> None:
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if (name == "pika" or name.startswith("pika.")) and isinstance(logger, logging.Logger):
            logger.addFilter(_HELD_BACK)  # once: a logger keeps one of each filter


def _publishing_parameters(parameters: Any) -> Any:
    """`parameters` (one or a list) without heartbeats and with TCP keepalive."""
    if isinstance(parameters, list):
        return [_publishing_parameters(one) for one in parameters]
    quiet = copy.copy(parameters)
    quiet.heartbeat = 0
    quiet.tcp_options = {**KEEPALIVE, **(parameters.tcp_options or {})}
    return quiet


class PublishingRabbitmqBroker(RabbitmqBroker):
    """Dramatiq's RabbitmqBroker with publisher confirms and quiet publishing connections."""

    def __init__(self, url: str) -> None:
        super().__init__(url=url, confirm_delivery=True)
        self.publishing_parameters = _publishing_parameters(self.parameters)
        _hold_back_pika_lines()

    @property
    def connection(self) -> pika.BlockingConnection:
        """The publishing connection of the current thread (consumers open their own)."""
        connection: pika.BlockingConnection | None = getattr(self.state, "connection", None)
        if connection is None:
            connection = self.state.connection = pika.BlockingConnection(self.publishing_parameters)
            self.connections.add(connection)
        return connection

    @connection.deleter
    def connection(self) -> None:
        """Dramatiq drops a thread's connection when a publish on it failed, then retries on a new one."""
        error = sys.exc_info()[1]  # what made it drop the connection: it is handling that exception
        self.state.lost = "closed" if error is None else f"{type(error).__name__}: {error}"
        RabbitmqBroker.connection.fdel(self)  # type: ignore[attr-defined]

    def enqueue(self, message: dramatiq.Message[Any], *, delay: int | None = None) -> dramatiq.Message[Any]:
        self.state.lost = None
        with _HELD_BACK.holding():
            try:
                sent = super().enqueue(message, delay=delay)
            except Exception as error:
                log.warning("RabbitMQ did not take the message for %s: %s", message.queue_name, error)
                raise
        if self.state.lost is not None:
            log.warning(
                "the RabbitMQ connection was lost (%s); the message for %s went out on a new one",
                self.state.lost,
                message.queue_name,
            )
        return sent

    def message_counts(self, queue_names: Iterable[str]) -> dict[str, int]:
        """Messages waiting in each of `queue_names` that exists, by passive declaration (nothing is
        created), on a connection of its own closed at once: a scrape, from whatever thread, leaves the
        publishing connections alone and leaks none. A queue nobody declared yet is left out."""
        counts: dict[str, int] = {}
        with _HELD_BACK.holding():
            connection = pika.BlockingConnection(self.publishing_parameters)
            try:
                channel = connection.channel()
                for name in queue_names:
                    try:
                        declared = channel.queue_declare(queue=name, passive=True)
                    except pika.exceptions.ChannelClosedByBroker:  # 404: the broker closed the channel
                        channel = connection.channel()
                        continue
                    counts[name] = int(declared.method.message_count)
            finally:
                if connection.is_open:
                    connection.close()
        return counts
