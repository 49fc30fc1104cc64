"""Fixtures for the outbound-HTTP tests: a tripwire, a recording network, raw servers on 127.0.0.1."""

import socket
from collections.abc import Callable, Iterator

import pytest
from network_doubles import RawServer, RecordingBackend, Tripwire


@pytest.fixture
def tripwire() -> Iterator[Tripwire]:
    wire = Tripwire()
    yield wire
    wire.close()


@pytest.fixture
def network() -> RecordingBackend:
    return RecordingBackend()


@pytest.fixture
def raw_server() -> Iterator[Callable[[Callable[[socket.socket], None]], RawServer]]:
    servers: list[RawServer] = []

    def start(answer: Callable[[socket.socket], None]) -> RawServer:
        server = RawServer(answer)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()
