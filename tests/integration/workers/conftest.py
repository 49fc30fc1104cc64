"""Fixtures for the worker tests: RabbitMQ at 127.0.0.1:5672 (queue names of this run only, deleted after),
a fresh migrated PostgreSQL database, the local site, the HTTPS webhook receiver, seeded accounts.

When RabbitMQ cannot be reached the tests are skipped, except on CI (CI=true), where they fail.
"""

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pika
import pytest
import trustme
from worker_doubles import SiteServer, WebhookReceiver, delete_queues

from siteaudit.adapters.secretbox import SecretBox

BROKER_URL = os.environ.get("SITEAUDIT_TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/%2F")


@pytest.fixture(scope="session")
def rabbitmq_url() -> str:
    try:
        pika.BlockingConnection(
            pika.URLParameters(BROKER_URL + "?connection_attempts=1&socket_timeout=5")
        ).close()
    except Exception as exc:  # every way of not reaching the broker
        message = f"RabbitMQ is not reachable at {BROKER_URL}: {type(exc).__name__}: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return BROKER_URL


@pytest.fixture
def queue_prefix(rabbitmq_url: str) -> Iterator[str]:
    prefix = f"siteaudit_test_{secrets.token_hex(4)}_"
    yield prefix
    delete_queues(rabbitmq_url, prefix)


@pytest.fixture
def database_url(new_postgres_database: Callable[..., str]) -> str:
    return new_postgres_database(migrated=True)


@pytest.fixture(scope="session")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="session")
def ca_file(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


@pytest.fixture
def receiver(ca: trustme.CA) -> Iterator[WebhookReceiver]:
    server = WebhookReceiver(ca)
    yield server
    server.close()


@pytest.fixture
def secret_key() -> str:
    return SecretBox.generate_key()


@pytest.fixture
def publish_log(tmp_path: Path) -> str:
    return str(tmp_path / "published.log")
