"""The httpx2 IndexNow client against a local IndexNow endpoint: the protocol's JSON, every documented
answer, and no answer at all (a dropped connection, nobody listening) coming back, never raised."""

import socket
from collections.abc import Iterator

import pytest

from siteaudit.adapters.http.indexnow import HttpxIndexNowClient
from tests.indexnow_endpoint import LocalIndexNow

URLS = ["https://retro-clock.example/", "https://retro-clock.example/blog/first-post"]
KEY_FILE = "https://retro-clock.example/retro-clock-1.txt"


@pytest.fixture
def endpoint() -> Iterator[LocalIndexNow]:
    server = LocalIndexNow().start()
    try:
        yield server
    finally:
        server.stop()


def submit(client: HttpxIndexNowClient) -> tuple[int | None, str | None, str | None, bool]:
    result = client.submit(host="retro-clock.example", key="retro-clock-1", key_location=KEY_FILE, urls=URLS)
    assert result.urls == 2
    return result.status_code, result.error_code, result.detail, result.accepted


def test_a_batch_is_posted_as_the_protocols_json(endpoint: LocalIndexNow) -> None:
    client = HttpxIndexNowClient(endpoint.url, timeout_s=5)
    assert submit(client) == (200, None, None, True)
    (request,) = endpoint.received
    assert request.content_type == "application/json; charset=utf-8"
    assert request.body == {
        "host": "retro-clock.example",
        "key": "retro-clock-1",
        "keyLocation": KEY_FILE,
        "urlList": URLS,
    }


@pytest.mark.parametrize(
    ("status", "code", "accepted"),
    [
        (202, None, True),
        (400, "bad_request", False),
        (403, "key_not_valid", False),
        (422, "urls_not_for_key", False),
        (429, "too_many_requests", False),
        (500, "http_500", False),
    ],
)
def test_every_documented_answer_comes_back(
    endpoint: LocalIndexNow, status: int, code: str | None, accepted: bool
) -> None:
    endpoint.answer(status)
    answered, error_code, detail, ok = submit(HttpxIndexNowClient(endpoint.url, timeout_s=5))
    assert (answered, error_code, ok) == (status, code, accepted)
    assert detail == (None if accepted else f"answered {status}")


def test_a_dropped_connection_is_a_network_error(endpoint: LocalIndexNow) -> None:
    endpoint.answer(None)
    status, code, detail, accepted = submit(HttpxIndexNowClient(endpoint.url, timeout_s=5))
    assert (status, code, accepted) == (None, "network_error", False) and detail


def test_nobody_listening_is_a_network_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    status, code, _, accepted = submit(HttpxIndexNowClient(f"http://127.0.0.1:{port}/indexnow", timeout_s=2))
    assert (status, code, accepted) == (None, "network_error", False)
