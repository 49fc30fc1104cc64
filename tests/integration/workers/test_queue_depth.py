"""Queue depth from RabbitMQ: passive declarations count the waiting messages and create nothing."""

import threading
from typing import Any

import pika
import pytest

from siteaudit.adapters.metrics import queue_depths
from siteaudit.adapters.queue.dramatiq import DramatiqTaskQueue, build_broker, queue_name
from siteaudit.domain.ids import AuditId

pytestmark = pytest.mark.rabbitmq


def declared(rabbitmq_url: str, name: str) -> bool:
    connection = pika.BlockingConnection(pika.URLParameters(rabbitmq_url))
    try:
        connection.channel().queue_declare(queue=name, passive=True)
    except pika.exceptions.ChannelClosedByBroker:
        return False
    finally:
        if connection.is_open:
            connection.close()
    return True


def test_rabbitmq_tells_the_depth_of_the_declared_queues_and_publishing_goes_on(
    rabbitmq_url: str, queue_prefix: str
) -> None:
    broker = build_broker(rabbitmq_url, queue_prefix=queue_prefix)
    try:
        queue = DramatiqTaskQueue(broker)
        queue.finalize_audit(AuditId(1))
        queue.finalize_audit(AuditId(2))
        finalize = queue_name(broker, "finalize")

        depths = queue_depths(broker)

        assert depths == {finalize: 2, f"{finalize}.DQ": 0, f"{finalize}.XQ": 0}
        assert not declared(rabbitmq_url, queue_name(broker, "crawl"))  # asked about, never created
        queue.crawl_slice(AuditId(3))  # publishing goes on as before
        assert queue_depths(broker)[queue_name(broker, "crawl")] == 1
        # Scrapes from other threads (the worker's metrics server starts one per scrape) keep no
        # connection open.
        kept = len(broker.connections)
        scrapes = [threading.Thread(target=queue_depths, args=(broker,)) for _ in range(3)]
        for scrape in scrapes:
            scrape.start()
            scrape.join()
        assert len(broker.connections) == kept
    finally:
        broker.close()


def test_no_broker_tells_nothing() -> None:
    nothing: Any = None
    assert queue_depths(nothing) == {}
