"""The staging-access body as the OpenAPI document states it (docs/security.md "Staging access"): what its
schema calls valid, the rules accept, and what it calls invalid, they refuse. Only a header or a cookie
named twice is the rules' alone (JSON Schema cannot compare parts of entries): the document says it in
prose. The schema is read as JSON Schema reads patterns (ECMA-262: `$` is the end of the string)."""

import itertools
from typing import Any, Final

import jsonschema_rs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.adapters.rest.openapi import document
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.access import MAX_HEADERS, access_of
from siteaudit.domain.error import ValidationFailed
from siteaudit.settings import Settings

ORIGIN: Final = "https://staging.retro-clock.example"
_PATHS: Final = document(bootstrap(Settings(database_url="memory://")).application.use_cases())["paths"]
SCHEMA: Final = _PATHS["/v1/sites/{site_id}/access"]["put"]["requestBody"]["content"]["application/json"][
    "schema"
]
VALID: Final = jsonschema_rs.Draft202012Validator(SCHEMA)

# Entries near the forms: a name (refused ones in any case too), a separator and a value, each with
# blanks around it (the spaces and tabs the rules trim, and the line ends and Unicode spaces they do not),
# the value with the characters the forms refuse (controls, quotes, separators, non-ASCII); and anything
# made of such pieces.
BLANKS: Final = st.sampled_from(["", " ", "\t", " \t", "\n", "\r\n", "\x85", "\u3000", "\x1c"])
NAMES: Final = st.sampled_from(
    [
        "X-Preview",
        "x",
        "Host",
        "hOsT",
        "TE",
        "Trailers",
        "X-Service-Verify",
        "gate",
        "a b",
        "é",
        "",
        "X" * 101,
    ]
)
SEPARATORS: Final = st.sampled_from([":", "=", "", "=="])
VALUE_PIECES: Final = ["7f3a", "a b", '"', ";", ",", "\\", ":", "=", "é", "\x00", "\x7f", "\r\n", "\t"]
VALUES: Final = st.lists(st.sampled_from(VALUE_PIECES), max_size=4).map("".join)
NEAR: Final = st.tuples(BLANKS, NAMES, BLANKS, SEPARATORS, BLANKS, VALUES, BLANKS).map("".join)
ENTRIES: Final = st.one_of(
    NEAR, st.lists(st.one_of(BLANKS, NAMES, SEPARATORS, VALUES), max_size=7).map("".join)
)


def _accepted(**given: Any) -> bool:
    values: dict[str, Any] = dict.fromkeys(("basic_auth_user", "basic_auth_password", "headers", "cookies"))
    values.update(given)
    try:
        access_of(ORIGIN, **values)
    except ValidationFailed:
        return False
    return True


@given(ENTRIES)
def test_a_header_is_accepted_exactly_when_the_document_says(entry: str) -> None:
    assert VALID.is_valid({"headers": [entry]}) == _accepted(headers=[entry]), repr(entry)


@given(ENTRIES)
def test_a_cookie_is_accepted_exactly_when_the_document_says(entry: str) -> None:
    assert VALID.is_valid({"cookies": [entry]}) == _accepted(cookies=[entry]), repr(entry)


@given(ENTRIES)
def test_a_basic_auth_user_and_password_are_accepted_exactly_when_the_document_says(entry: str) -> None:
    user = {"basic_auth_user": entry, "basic_auth_password": "pw"}
    password = {"basic_auth_user": "preview", "basic_auth_password": entry}
    assert VALID.is_valid(user) == _accepted(**user), repr(entry)
    assert VALID.is_valid(password) == _accepted(**password), repr(entry)


def test_the_lengths_and_counts_are_the_documents() -> None:
    for body in (
        {"basic_auth_user": "u" * 256, "basic_auth_password": "p" * 1024},
        {"basic_auth_user": "u" * 257, "basic_auth_password": "p"},
        {"basic_auth_user": "u", "basic_auth_password": "p" * 1025},
        {"headers": [f"X-{n}: v" for n in range(MAX_HEADERS)]},
        {"headers": [f"X-{n}: v" for n in range(MAX_HEADERS + 1)]},
        {"headers": ["X" * 100 + ": v"]},
        {"headers": ["X" * 101 + ": v"]},
    ):
        assert VALID.is_valid(body) == _accepted(**body), body


@pytest.mark.parametrize(
    ("user", "password", "headers", "cookies"),
    list(itertools.product((None, "preview"), (None, "pw"), (None, [], ["X-A: b"]), (None, [], ["a=b"]))),
)
def test_which_fields_go_together_and_that_one_kind_is_given_are_the_documents(
    user: str | None, password: str | None, headers: list[str] | None, cookies: list[str] | None
) -> None:
    given = {"basic_auth_user": user, "basic_auth_password": password, "headers": headers, "cookies": cookies}
    body = {name: value for name, value in given.items() if value is not None}
    assert VALID.is_valid(body) == _accepted(**given), body


def test_a_name_given_twice_is_refused_though_the_schema_cannot_say_it() -> None:
    body = {"headers": ["X-A: 1", "x-a: 2"], "cookies": ["g=1", "g=2"]}
    assert VALID.is_valid(body) and not _accepted(**body)
