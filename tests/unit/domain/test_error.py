"""The error catalogue: every code of SPEC 7 with its status, and the errors' messages."""

import re
from pathlib import Path

import pytest

from siteaudit.domain.error import (
    HTTP_STATUS,
    DomainError,
    ErrorCode,
    NotFound,
    RateLimited,
    ValidationFailed,
)

# SPEC 7's table, copied into the repository so the check runs in a fresh clone.
SPEC_ERRORS = Path(__file__).with_name("spec_error_codes.md")


def spec_error_table() -> dict[str, int]:
    text = SPEC_ERRORS.read_text()
    return {code: int(status) for status, code in re.findall(r"^\| (\d{3}) \| `([a-z_]+)` \|", text, re.M)}


def test_every_spec_error_code_is_in_the_catalogue_with_its_status() -> None:
    table = spec_error_table()
    assert len(table) >= 38
    for code, status in table.items():
        assert HTTP_STATUS[ErrorCode(code)] == status, code


def test_every_code_has_a_status() -> None:
    assert set(HTTP_STATUS) == set(ErrorCode)


def test_not_found_names_what_was_not_found() -> None:
    error = NotFound("audit", 42)
    assert (error.status, error.message) == (404, "audit 42 was not found")


def test_validation_failed_carries_the_bad_fields() -> None:
    error = ValidationFailed({"max_pages": "must be between 1 and 500,000"})
    assert (error.status, error.fields) == (422, {"max_pages": "must be between 1 and 500,000"})


def test_rate_limited_carries_retry_after() -> None:
    error = RateLimited(12)
    assert (error.status, error.code, error.retry_after) == (429, ErrorCode.RATE_LIMITED, 12)


def test_an_error_that_always_says_the_same_is_raised_without_a_message() -> None:
    class Closed(DomainError):
        code = ErrorCode.ACCESS_DENIED
        default_message = "closed for the night"

    assert (Closed().message, str(Closed()), Closed("open at nine").message) == (
        "closed for the night",
        "closed for the night",
        "open at nine",
    )
    with pytest.raises(TypeError, match="DomainError is raised with a message"):
        DomainError()
