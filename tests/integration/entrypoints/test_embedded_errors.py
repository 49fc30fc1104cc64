"""The embedded server's own refusals (a request line or headers http.server will not parse) answer in
the error envelope, over a real socket against a listening `siteaudit serve` server (docs/rest-api.md
"Errors and limits")."""

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.entrypoints.embedded import listen
from siteaudit.settings import Settings
from tests.local_sites import SERVER_POLL_S


@pytest.fixture(scope="module")
def address() -> Iterator[tuple[str, int]]:
    app = bootstrap(Settings(database_url="memory://", mcp_http=False), queue=MemoryTaskQueue())
    server = listen(app, "127.0.0.1", 0)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": SERVER_POLL_S}, daemon=True
    )
    thread.start()
    try:
        yield "127.0.0.1", server.server_port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def exchange(address: tuple[str, int], request: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in header_lines)}
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (b"GET /v1/ping?q=" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
        (
            b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n",
            431,
            "headers_too_large",
        ),
        (
            b"GET /v1/ping HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n",
            431,
            "headers_too_large",
        ),
        (b"GET /v1/ping HTTP/1.1 extra\r\n\r\n", 400, "bad_request"),
        (b"GET /v1/ping HTTP/x.y\r\n\r\n", 400, "bad_request"),
        (b"GET /v1/ping HTTP/2.0\r\n\r\n", 505, "http_version_not_supported"),
    ],
    ids=[
        "request-line-too-long",
        "header-too-long",
        "too-many-headers",
        "bad-request-line",
        "bad-version",
        "http2",
    ],
)
def test_the_servers_own_refusals_are_in_the_error_envelope(
    address: tuple[str, int], request_bytes: bytes, status: int, code: str
) -> None:
    got_status, headers, body = exchange(address, request_bytes)
    assert got_status == status
    assert headers["content-type"] == "application/json"
    answer = json.loads(body)
    assert answer["error"]["code"] == code and answer["error"]["message"]
    assert set(answer) == {"error"} and set(answer["error"]) == {"code", "message"}


def test_an_ordinary_request_still_reaches_the_service(address: tuple[str, int]) -> None:
    status, _, body = exchange(address, b"GET /v1/nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 401 and json.loads(body)["error"]["code"] == "unauthenticated"
