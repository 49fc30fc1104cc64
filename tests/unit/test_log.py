"""Logs never carry keys, tokens or secrets, whatever logs them: messages, extras or tracebacks; and they
are lines people can read: the HTTP library's line per fetched URL only at the debug level."""

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
from pytest_httpserver import HTTPServer

from siteaudit.adapters.http.fetcher import HttpxBlockingFetcher
from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.log import (
    PER_REQUEST_LOGGERS,
    JsonFormatter,
    RedactingFormatter,
    configure_logging,
    redact,
)
from siteaudit.domain.network import AddressPolicy, FetchRequest

KEY = "sk_" + "Ab1" * 13 + "Z"
SECRET = "whsec_" + "q" * 40


@pytest.mark.parametrize(
    "line",
    [
        f"authenticating {KEY}",
        f"Authorization: Bearer {KEY}",
        f"webhook secret {SECRET}",
        "POST /v1/crawls verify_token=abcdefghijklmnopqrstu",
        '{"device_code": "3f9c2d1e0b8a7f6e5d4c3b2a19080706"}',
        "sealed gAAAAABnZ1z3xYzabcdefghijklmnopqrstuvwxyz0123456789",
        "sent ('authorization', 'Basic cHJldmlldzpzdGFnaW5nLXB3')",  # a staging access's basic auth
        "Authorization: basic cHJldmlldzpzdGFnaW5nLXB3",
        "Authorization: Basic cHJldmlldzpzdGFnaW5nLXB3==",
    ],
)
def test_secrets_are_redacted(line: str) -> None:
    out = redact(line)
    secrets = (KEY, SECRET, "abcdefghijklmnopqrstu", "3f9c2d1e0b8a7f6e5d4c3b2a19080706", "xYzabcdefghij")
    for secret in (*secrets, "cHJldmlldzpzdGFnaW5nLXB3"):
        assert secret not in out


def test_basic_alone_is_a_word_not_a_secret() -> None:
    assert redact("basic information about the audit") == "basic information about the audit"


def test_a_key_keeps_only_its_prefix() -> None:
    assert redact(KEY) == KEY[:12] + "…[redacted]"


def capture(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    logger = logging.getLogger(f"test.redaction.{id(formatter)}")
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger, stream


def test_exceptions_are_redacted_too() -> None:
    logger, stream = capture(RedactingFormatter("%(message)s"))
    try:
        raise ValueError(f"bad key {KEY}")
    except ValueError:
        logger.exception("failed for %s", KEY)
    assert KEY not in stream.getvalue()
    assert "ValueError" in stream.getvalue()


def test_json_lines_carry_the_access_fields() -> None:
    logger, stream = capture(JsonFormatter())
    logger.info("GET /v1/ping 200", extra={"request_id": "r1", "status": 200, "key_prefix": KEY[:12]})
    entry = json.loads(stream.getvalue())
    assert (entry["request_id"], entry["status"], entry["key_prefix"]) == ("r1", 200, KEY[:12])


# --- what an operator reads --------------------------------------------------------------------------


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """configure_logging replaces the root handlers and sets library levels: put them back after."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    named = ("alembic", "pika", *PER_REQUEST_LOGGERS)
    levels = {name: logging.getLogger(name).level for name in named}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, saved in levels.items():
        logging.getLogger(name).setLevel(saved)


def cuckoo(httpserver: HTTPServer) -> str:
    return f"http://127.0.0.1:{httpserver.port}/clocks/cuckoo"


def fetched_once(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/clocks/cuckoo").respond_with_data("<p>cuckoo</p>")
    fetcher = HttpxBlockingFetcher(StaticResolver({}), AddressPolicy.from_setting("127.0.0.0/8"))
    answer = fetcher.fetch(FetchRequest(cuckoo(httpserver)))
    assert answer.status == 200


@pytest.mark.usefixtures("restored_logging")
def test_at_info_a_fetched_url_is_not_a_log_line(
    httpserver: HTTPServer, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(level="info")

    fetched_once(httpserver)
    logging.getLogger("siteaudit.test").info("audit 7 started")

    said = [line.split(" ", 2)[2] for line in capsys.readouterr().err.splitlines()]
    ours = [line for line in said if not line.startswith("INFO werkzeug ")]  # the test server's own
    assert ours == ["INFO siteaudit.test audit 7 started"]


@pytest.mark.usefixtures("restored_logging")
def test_at_debug_each_fetched_url_is_a_line(
    httpserver: HTTPServer, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(level="debug")

    fetched_once(httpserver)

    err = capsys.readouterr().err
    # HTTP/1.0 or 1.1: a threaded werkzeug server made earlier in the process switches every later one
    # (werkzeug sets `protocol_version` on its shared request handler class).
    assert re.search(
        rf'INFO httpx2 HTTP Request: GET {re.escape(cuckoo(httpserver))} "HTTP/1\.[01] 200 OK"', err
    )
    assert "DEBUG httpcore2." in err


@pytest.mark.usefixtures("restored_logging")
def test_the_http_librarys_warnings_still_show_at_info(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(level="info")

    for name in PER_REQUEST_LOGGERS:
        logging.getLogger(f"{name}.anything").warning("something is off")

    assert capsys.readouterr().err.count("something is off") == len(PER_REQUEST_LOGGERS)
