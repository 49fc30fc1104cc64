"""Logs never carry keys, tokens or secrets, whatever logs them: messages, extras or tracebacks."""

import io
import json
import logging

import pytest

from siteaudit.adapters.log import JsonFormatter, RedactingFormatter, redact

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
    ],
)
def test_secrets_are_redacted(line: str) -> None:
    out = redact(line)
    for secret in (KEY, SECRET, "abcdefghijklmnopqrstu", "3f9c2d1e0b8a7f6e5d4c3b2a19080706", "xYzabcdefghij"):
        assert secret not in out


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
