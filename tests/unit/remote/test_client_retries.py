"""The client's transport against a stand-in service on 127.0.0.1: Retry-After honoured on 429 and 503,
bounded, and error answers raised as the codes they carry."""

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from siteaudit.adapters.client import RemoteError, Transport, Unreachable
from siteaudit.domain.error import ErrorCode, RateLimited, ValidationFailed


def envelope(code: str, message: str, **extra: object) -> dict[str, object]:
    return {"error": {"code": code, "message": message, **extra}}


class Script:
    """Answers in order, then the last one again; counts the requests."""

    def __init__(self, *answers: Response) -> None:
        self.answers = list(answers)
        self.seen = 0

    def __call__(self, request: Request) -> Response:
        self.seen += 1
        return self.answers[min(self.seen, len(self.answers)) - 1]


def json_response(status: int, body: object, **headers: str) -> Response:
    import json

    return Response(json.dumps(body), status=status, headers=headers, content_type="application/json")


@pytest.fixture
def waits() -> list[float]:
    return []


def transport(httpserver: HTTPServer, waits: list[float], **kw: object) -> Transport:
    return Transport(httpserver.url_for("/v1"), sleep=waits.append, **kw)  # type: ignore[arg-type]


def test_a_429_with_retry_after_is_asked_again_after_that_wait(
    httpserver: HTTPServer, waits: list[float]
) -> None:
    script = Script(
        json_response(
            429, envelope("rate_limited", "too many requests; retry in 2 s"), **{"Retry-After": "2"}
        ),
        json_response(200, {"user_id": 7}),
    )
    httpserver.expect_request("/v1/ping").respond_with_handler(script)
    assert transport(httpserver, waits).call("GET", "/ping", key="sk_x") == {"user_id": 7}
    assert waits == [2] and script.seen == 2


def test_a_503_with_retry_after_is_asked_again_and_gives_up_after_the_attempts(
    httpserver: HTTPServer, waits: list[float]
) -> None:
    failed = json_response(503, envelope("dispatch_failed", "the queue is down"), **{"Retry-After": "1"})
    script = Script(failed)
    httpserver.expect_request("/v1/crawls", method="POST").respond_with_handler(script)
    with pytest.raises(RemoteError) as raised:
        transport(httpserver, waits, attempts=3).call("POST", "/crawls", key="sk_x", body={"url": "x"})
    assert raised.value.code is ErrorCode.DISPATCH_FAILED and raised.value.message == "the queue is down"
    assert waits == [1, 1] and script.seen == 3


def test_a_wait_longer_than_allowed_is_not_waited_but_raised_with_it(
    httpserver: HTTPServer, waits: list[float]
) -> None:
    script = Script(
        json_response(429, envelope("recheck_rate_limited", "30 rechecks an hour"), **{"Retry-After": "1200"})
    )
    httpserver.expect_request("/v1/ping").respond_with_handler(script)
    with pytest.raises(RateLimited) as raised:
        transport(httpserver, waits, max_wait_s=60).call("GET", "/ping", key="sk_x")
    assert raised.value.code is ErrorCode.RECHECK_RATE_LIMITED and raised.value.retry_after == 1200
    assert waits == [] and script.seen == 1


def test_other_errors_are_not_retried_and_keep_their_code_fields_and_extras(
    httpserver: HTTPServer, waits: list[float]
) -> None:
    httpserver.expect_request("/v1/sites").respond_with_json(
        envelope("validation_failed", "invalid parameters: url", fields={"url": "required"}), status=422
    )
    httpserver.expect_request("/v1/inspect").respond_with_json(
        envelope("budget_exhausted", "spent", resets_at="2030-01-01T00:00:00Z"), status=429
    )
    httpserver.expect_request("/v1/teapot").respond_with_data("<html>oops</html>", status=500)
    client = transport(httpserver, waits)
    with pytest.raises(ValidationFailed) as invalid:
        client.call("POST", "/sites", key="sk_x", body={})
    assert invalid.value.fields == {"url": "required"}
    with pytest.raises(RemoteError) as budget:
        client.call("GET", "/inspect", key="sk_x")
    assert budget.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert budget.value.extra == {"resets_at": "2030-01-01T00:00:00Z"}
    with pytest.raises(RemoteError) as broken:
        client.call("GET", "/teapot", key="sk_x")
    assert broken.value.code is ErrorCode.INTERNAL_ERROR and "HTTP 500" in broken.value.message
    assert waits == []


def test_a_code_this_client_does_not_know_is_kept_as_text(httpserver: HTTPServer, waits: list[float]) -> None:
    httpserver.expect_request("/v1/x").respond_with_json(envelope("brand_new_code", "later"), status=409)
    with pytest.raises(RemoteError) as raised:
        transport(httpserver, waits).call("GET", "/x", key="sk_x")
    assert raised.value.code_text == "brand_new_code" and raised.value.message == "later"


def test_a_service_that_does_not_answer_is_unreachable(waits: list[float]) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(Unreachable) as raised:
        Transport(f"http://127.0.0.1:{port}/v1", sleep=waits.append).call("GET", "/ping", key="sk_x")
    assert f"127.0.0.1:{port}" in raised.value.message
