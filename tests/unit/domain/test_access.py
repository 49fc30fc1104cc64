"""Staging access rules (docs/security.md "Staging access"): what may be set, and where it is sent."""

import base64

import pytest

from siteaudit.domain.access import MAX_COOKIES, MAX_HEADERS, SiteAccess, access_of
from siteaudit.domain.error import ValidationFailed

ORIGIN = "https://staging.retro-clock.example"


def _access(**given: object) -> SiteAccess:
    values: dict[str, object] = {
        "basic_auth_user": None,
        "basic_auth_password": None,
        "headers": None,
        "cookies": None,
    }
    values.update(given)
    return access_of(ORIGIN, **values)  # type: ignore[arg-type]


def _refused(**given: object) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as raised:
        _access(**given)
    return raised.value.fields


def test_the_headers_sent_carry_basic_auth_the_headers_and_one_cookie_header() -> None:
    access = _access(
        basic_auth_user="preview",
        basic_auth_password="pässword",
        headers=["X-Preview-Token:  7f3a ", "X-Env: staging"],
        cookies=["gate=open", "lang=en"],
    )
    expected = "Basic " + base64.b64encode("preview:pässword".encode()).decode()
    assert access.request_headers() == (
        ("Authorization", expected),
        ("X-Preview-Token", "7f3a"),
        ("X-Env", "staging"),
        ("Cookie", "gate=open; lang=en"),
    )
    assert access.kinds == ("basic_auth", "headers", "cookies")
    assert SiteAccess.from_json(ORIGIN, access.as_json()) == access


def test_it_is_sent_only_to_the_sites_own_scheme_host_and_port() -> None:
    access = _access(cookies=["gate=open"])
    assert access.for_url("https://staging.retro-clock.example/clocks/1") != ()
    assert access.sends_to("https://STAGING.retro-clock.example:443/robots.txt")
    for elsewhere in (
        "http://staging.retro-clock.example/",  # the other scheme
        "https://staging.retro-clock.example:8443/",  # another port
        "https://staging.retro-clock.example:0/",  # port 0 is written, not the default one
        "https://www.staging.retro-clock.example/",  # the www. twin the crawl may adopt
        "https://retro-clock.example/",
        "https://staging.retro-clock.example.evil.example/",
        "https://evil.example/?https://staging.retro-clock.example/",
        "ftp://staging.retro-clock.example/",
        "not a url",
    ):
        assert not access.sends_to(elsewhere), elsewhere
        assert access.for_url(elsewhere) == ()


def test_no_value_is_in_its_repr() -> None:
    access = _access(
        basic_auth_user="u-1", basic_auth_password="pw-2", headers=["X-A: h-3"], cookies=["c=c-4"]
    )
    shown = repr(access)
    assert ORIGIN in shown
    assert not any(value in shown for value in ("u-1", "pw-2", "h-3", "c-4"))


@pytest.mark.parametrize(
    ("given", "field", "says"),
    [
        ({}, "headers", "give basic_auth_user"),
        ({"basic_auth_user": "preview"}, "basic_auth_password", "go together"),
        ({"basic_auth_password": "pw"}, "basic_auth_user", "go together"),
        ({"basic_auth_user": "a:b", "basic_auth_password": "pw"}, "basic_auth_user", "colon"),
        ({"basic_auth_user": "", "basic_auth_password": "pw"}, "basic_auth_user", "1-256"),
        ({"basic_auth_user": "u", "basic_auth_password": "p\nw"}, "basic_auth_password", "control"),
        ({"headers": ["X-A"]}, "headers", "Name: value"),
        ({"headers": ["X A: b"]}, "headers", "not a header name"),
        ({"headers": ["X-A: b\r\nHost: evil"]}, "headers", "printable ASCII"),
        ({"headers": ["X-A: é"]}, "headers", "printable ASCII"),
        ({"headers": ["X-A: 1", "x-a: 2"]}, "headers", "twice"),
        ({"headers": ["Host: evil.example"]}, "headers", "may not be set"),
        ({"headers": ["Content-Length: 5"]}, "headers", "may not be set"),
        ({"headers": ["Transfer-Encoding: chunked"]}, "headers", "hop-by-hop"),
        ({"headers": ["Connection: close"]}, "headers", "hop-by-hop"),
        ({"headers": ["User-Agent: x"]}, "headers", "set by the crawler"),
        ({"headers": ["Accept-Language: fr"]}, "headers", "set by the crawler"),
        ({"headers": ["X-Service-Verify: x"]}, "headers", "set by the crawler"),
        ({"headers": ["Authorization: Bearer x"]}, "headers", "basic_auth_user"),
        ({"headers": ["Cookie: a=b"]}, "headers", "use cookies"),
        ({"headers": [f"X-{n}: v" for n in range(MAX_HEADERS + 1)]}, "headers", "at most 20"),
        ({"cookies": ["gate"]}, "cookies", "name=value"),
        ({"cookies": ["gate=a b"]}, "cookies", "may not"),
        ({"cookies": ["gate=a;b=c"]}, "cookies", "may not"),
        ({"cookies": ["g=1", "g=2"]}, "cookies", "twice"),
        ({"cookies": [f"c{n}=v" for n in range(MAX_COOKIES + 1)]}, "cookies", "at most 20"),
        ({"cookies": ["c=" + "v" * 5000]}, "cookies", "at most 4,096"),
    ],
)
def test_bad_input_names_its_field(given: dict[str, object], field: str, says: str) -> None:
    fields = _refused(**given)
    assert field in fields and says in fields[field], fields
