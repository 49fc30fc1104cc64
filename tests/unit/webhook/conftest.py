"""Fixtures for the webhook tests: a certificate authority and HTTPS receivers on 127.0.0.1."""

from collections.abc import Iterator

import pytest
import trustme
from webhook_doubles import Answer, HttpsReceiver, StartReceiver

from siteaudit.ports.clock import Clock


@pytest.fixture(scope="session")
def certificate_authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def receiver(certificate_authority: trustme.CA) -> Iterator[StartReceiver]:
    started: list[HttpsReceiver] = []

    def start(answer: Answer, *, clock: Clock | None = None, plain: bool = False) -> HttpsReceiver:
        server = HttpsReceiver(certificate_authority, answer, clock=clock, plain=plain)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()
