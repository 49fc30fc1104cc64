"""The embedded server (`siteaudit serve`) never writes a header that splits the answer or does not encode
(docs/security.md, `next`): the sign-in's `next` cannot inject one, and a header that would is refused with
a clean 500 instead of being written or crashing the server."""

import http.client
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode
from wsgiref.simple_server import WSGIServer, make_server

import pytest

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.entrypoints.embedded import (
    _QuietHandler,
    _ThreadingServer,
    checked_headers,
    listen,
)
from siteaudit.settings import Settings
from tests.local_sites import SERVER_POLL_S

PASSWORD = "correct horse battery staple"
OWNER = "owner@retro-clock.example"


@contextmanager
def serving(server: WSGIServer) -> Iterator[int]:
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": SERVER_POLL_S}, daemon=True
    )
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def port() -> Iterator[int]:
    app = bootstrap(Settings(database_url="memory://"), clock=FixedClock(), queue=MemoryTaskQueue())
    app.application.create_user(OWNER, plan="growth")
    app.application.create_team("Retro Clock", owner_email=OWNER)
    app.application.set_password(OWNER, PASSWORD)
    with serving(listen(app, "127.0.0.1", 0)) as bound:
        yield bound


def request(port: int, method: str, path: str, body: str = "", **headers: str) -> http.client.HTTPResponse:
    """The answer, its body already read into `answer.text`."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body=body or None, headers=headers)
    answer = connection.getresponse()
    answer.text = answer.read().decode()  # type: ignore[attr-defined]
    connection.close()
    return answer


@pytest.mark.parametrize(
    "target",
    [
        "/app/keys\r\nSet-Cookie: siteaudit_session=planted",
        "/app/keys\u2028X-Injected: 1",
        "/app/keys\u0085X-Injected: 1",
    ],
)
def test_a_next_page_cannot_write_a_header_of_its_own(port: int, target: str) -> None:
    page = request(port, "GET", "/app/sign-in")
    cookie = page.getheader("Set-Cookie", "").split(";")[0]
    token = re.search(r"siteaudit_csrf=([0-9a-f]+)", cookie)
    assert token, cookie
    form = urlencode({"csrf": token.group(1), "email": OWNER, "password": PASSWORD, "next": target})
    signed = request(
        port,
        "POST",
        "/app/sign-in",
        form,
        **{"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
    )
    # CR and LF are form text (a textarea holds them): the sign-in goes on, `next` is not followed. A C1
    # control such as U+0085 is refused with the form (docs/security.md, "Strict JSON bodies").
    refused_form = "\u0085" in target
    assert signed.status == (400 if refused_form else 303)
    assert signed.getheader("Location") == (None if refused_form else "/app/account")
    assert signed.getheader("X-Injected") is None
    assert "planted" not in " ".join(signed.headers.get_all("Set-Cookie") or [])


def splitting(value: str) -> Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
    def service(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        start_response("303 See Other", [("Location", value), ("Content-Length", "0")])
        return [b""]

    return service


@pytest.mark.parametrize("value", ["/app\r\nSet-Cookie: planted=1", "/app\u2028", "/app\x00"])
def test_a_header_that_would_split_or_not_encode_is_answered_with_a_clean_500(value: str) -> None:
    server = make_server(
        "127.0.0.1",
        0,
        checked_headers(splitting(value)),
        server_class=_ThreadingServer,
        handler_class=_QuietHandler,
    )
    with serving(server) as port:
        answer = request(port, "GET", "/app")
        assert answer.status == 500
        assert answer.getheader("Content-Type") == "application/json"
        assert json.loads(answer.text)["error"]["code"] == "internal_error"  # type: ignore[attr-defined]
        assert answer.getheader("Location") is None and answer.getheader("Set-Cookie") is None
        assert request(port, "GET", "/app").status == 500  # and the server keeps serving
