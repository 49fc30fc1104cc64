"""The RabbitMQ publisher after its connection went away: closed by the broker, or dropped while idle.

Against the local RabbitMQ: a message is published, the broker closes the connection (`rabbitmqctl
close_connection`, found by the connection name this test gives it) or drops it for missed heartbeats,
and the next message must still arrive, with nothing logged at ERROR and no traceback. Each scenario is
run on Dramatiq's own RabbitmqBroker too, where those assertions fail: the symptom a REST process showed
(an ERROR and two tracebacks on the first request after an idle spell, although it answered 202).
"""

import json
import logging
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator

import dramatiq
import pika
import pytest
from dramatiq.brokers.rabbitmq import RabbitmqBroker

from siteaudit.adapters.queue.dramatiq import DramatiqTaskQueue, build_broker, queue_name
from siteaudit.adapters.queue.rabbitmq import PublishingRabbitmqBroker
from siteaudit.domain.ids import AuditId

pytestmark = pytest.mark.rabbitmq

IDLE_S = 5.0  # several heartbeat periods of 1 s: the broker has dropped a connection that sent none


def _with(url: str, **query: str) -> str:
    return url + ("&" if "?" in url else "?") + "&".join(f"{name}={value}" for name, value in query.items())


def _broker_url(rabbitmq_url: str, name: str, **query: str) -> str:
    return _with(rabbitmq_url, client_properties=f"{{'connection_name':'{name}'}}", **query)


def _close_from_the_broker(name: str) -> None:
    listed = subprocess.run(
        ["rabbitmqctl", "-q", "list_connections", "pid", "client_properties"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    pids = [line.split("\t", 1)[0] for line in listed.splitlines() if f'"{name}"' in line]
    assert len(pids) == 1, listed
    subprocess.run(
        ["rabbitmqctl", "-q", "close_connection", pids[0], "closed by the test"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    time.sleep(0.5)  # the close frame is on its way to the idle client


def _heartbeat_timeouts(name: str) -> list[str]:
    listed = subprocess.run(
        ["rabbitmqctl", "-q", "list_connections", "client_properties", "timeout"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return [line.rsplit("\t", 1)[-1] for line in listed.splitlines() if f'"{name}"' in line]


def _received(rabbitmq_url: str, queue: str) -> list[int]:
    """The audit ids of the messages waiting on `queue`, taken off it."""
    connection = pika.BlockingConnection(pika.URLParameters(rabbitmq_url))
    try:
        channel = connection.channel()
        ids: list[int] = []
        while True:
            method, _, body = channel.basic_get(queue, auto_ack=True)
            if method is None:
                return ids
            ids.append(json.loads(body)["args"][0])
    finally:
        connection.close()


@pytest.fixture
def name(rabbitmq_url: str) -> str:
    """The connection name of this test's publisher, by which `rabbitmqctl` finds it."""
    if shutil.which("rabbitmqctl") is None:
        message = "rabbitmqctl is not on PATH: the broker cannot be told to close a connection"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return f"siteaudit-test-publisher-{secrets.token_hex(4)}"


@pytest.fixture
def brokers() -> Iterator[list[dramatiq.Broker]]:
    made: list[dramatiq.Broker] = []
    yield made
    for broker in made:
        broker.close()


Publish = Callable[[int], None]


def _publisher(broker: dramatiq.Broker, brokers: list[dramatiq.Broker], prefix: str) -> Publish:
    broker.queue_prefix = prefix  # type: ignore[attr-defined]
    brokers.append(broker)
    queue = DramatiqTaskQueue(broker)
    return lambda audit_id: queue.finalize_audit(AuditId(audit_id))


def _errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info is not None]


def _recoveries(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "siteaudit.adapters.queue.rabbitmq"]


def test_a_connection_the_broker_closed_is_replaced_with_one_warning_and_the_message_arrives(
    rabbitmq_url: str,
    queue_prefix: str,
    name: str,
    brokers: list[dramatiq.Broker],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    broker = build_broker(_broker_url(rabbitmq_url, name), queue_prefix=queue_prefix)
    assert isinstance(broker, PublishingRabbitmqBroker)
    publish = _publisher(broker, brokers, queue_prefix)

    publish(1)
    _close_from_the_broker(name)
    publish(2)

    assert _received(rabbitmq_url, queue_name(broker, "finalize")) == [1, 2]
    assert _errors(caplog) == []
    # The recovery path was taken: the close happened, and it is told in one warning line.
    (recovered,) = _recoveries(caplog)
    assert recovered.levelno == logging.WARNING
    assert "CONNECTION_FORCED" in recovered.getMessage()
    assert "went out on a new one" in recovered.getMessage()


def test_dramatiqs_own_broker_logs_an_error_for_the_same_close(
    rabbitmq_url: str,
    queue_prefix: str,
    name: str,
    brokers: list[dramatiq.Broker],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The negative control of the test above: its assertions catch the old behaviour."""
    caplog.set_level(logging.INFO)
    PublishingRabbitmqBroker(rabbitmq_url).close()  # pika's loggers carry its filter: it must not hide these
    broker = RabbitmqBroker(url=_broker_url(rabbitmq_url, name), confirm_delivery=True)
    publish = _publisher(broker, brokers, queue_prefix)

    publish(1)
    _close_from_the_broker(name)
    publish(2)

    assert _received(rabbitmq_url, queue_name(broker, "finalize")) == [1, 2]
    assert [r.name for r in _errors(caplog)] == ["pika.adapters.blocking_connection"]


def test_an_idle_publishing_connection_is_kept_open_by_the_broker(
    rabbitmq_url: str,
    queue_prefix: str,
    name: str,
    brokers: list[dramatiq.Broker],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Even when the URL asks for 1 s heartbeats, which a publishing thread cannot send between publishes,
    the publishing connection negotiates none: the broker never drops it for being idle."""
    caplog.set_level(logging.INFO)
    broker = build_broker(_broker_url(rabbitmq_url, name, heartbeat="1"), queue_prefix=queue_prefix)
    publish = _publisher(broker, brokers, queue_prefix)

    publish(1)
    assert _heartbeat_timeouts(name) == ["0"]
    time.sleep(IDLE_S)
    publish(2)

    assert _received(rabbitmq_url, queue_name(broker, "finalize")) == [1, 2]
    assert _errors(caplog) == []
    assert _recoveries(caplog) == []  # the same connection served both


def test_dramatiqs_own_broker_logs_the_reset_with_tracebacks_after_an_idle_spell(
    rabbitmq_url: str,
    queue_prefix: str,
    name: str,
    brokers: list[dramatiq.Broker],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The negative control of the test above, and the symptom as reported."""
    caplog.set_level(logging.INFO)
    broker = RabbitmqBroker(url=_broker_url(rabbitmq_url, name, heartbeat="1"), confirm_delivery=True)
    publish = _publisher(broker, brokers, queue_prefix)

    publish(1)
    # Read on the client (the value both sides agreed in Tune-Ok): `rabbitmqctl` can take longer to start
    # on a busy machine than a 1-second heartbeat takes to drop the idle connection it would list.
    assert broker.connection._impl.params.heartbeat == 1
    time.sleep(IDLE_S)
    publish(2)

    assert _received(rabbitmq_url, queue_name(broker, "finalize")) == [1, 2]
    errors = _errors(caplog)
    assert errors and all(r.levelno == logging.ERROR for r in errors)
    assert any(r.exc_info is not None for r in errors)
