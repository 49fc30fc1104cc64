"""Staging access of a verified site (docs/security.md "Staging access"): basic auth, extra request headers
and cookies that let the crawler into a site kept behind them. The rules of what may be set, and the one
decision of where it is sent: only to requests whose origin (scheme, host, port) is the site's own.

The values are secrets: `SiteAccess` never shows them in its repr, they are stored only sealed
(`StoredAccess.sealed`), and nothing answers them back.
"""

import base64
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import urlsplit

from attrs import field, frozen

from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.identity import VERIFY_HEADER
from siteaudit.domain.ids import SiteId, TeamId

MAX_HEADERS: Final = 20
MAX_COOKIES: Final = 20
MAX_USER_LENGTH: Final = 256
MAX_PASSWORD_LENGTH: Final = 1024
MAX_ENTRY_LENGTH: Final = 4096  # one "Name: value" header or one "name=value" cookie
MAX_NAME_LENGTH: Final = 100

# What the operation is called when the site is not verified (409 site_not_verified).
STAGING_ACCESS: Final = "staging access"

# Header names an access may not set, and why: hop-by-hop and framing headers the HTTP client owns, the
# headers the crawler sets itself (some of which cross to other origins on a redirect), and the two that
# have their own fields.
REFUSED_HEADERS: Final[Mapping[str, str]] = {
    **{
        name: "a hop-by-hop header"
        for name in (
            "connection",
            "keep-alive",
            "proxy-authenticate",
            "proxy-authorization",
            "proxy-connection",
            "te",
            "trailer",
            "trailers",
            "transfer-encoding",
            "upgrade",
        )
    },
    "host": "set by the crawler from the URL",
    "content-length": "set by the crawler",
    "accept": "set by the crawler",
    "accept-encoding": "set by the crawler",
    "accept-language": "set by the crawler",
    "user-agent": "set by the crawler",
    "if-none-match": "set by the crawler",
    "if-modified-since": "set by the crawler",
    VERIFY_HEADER.lower(): "set by the crawler",
    "authorization": "use basic_auth_user and basic_auth_password",
    "cookie": "use cookies",
}


# The forms of the inputs, as regular expressions both Python and JSON Schema (ECMA-262) read alike: the
# domain checks them (each with its own message) and the OpenAPI document states them as patterns, so that
# what the document calls valid is accepted. Around a name and a value, only spaces and tabs are trimmed.
_TOKEN_CHARACTER: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]"  # RFC 9110 field names, RFC 6265 cookie names
_CONTROL_CHARACTER: Final = r"\x00-\x1f\x7f-\x9f"
_VISIBLE: Final = r"[\t\x20-\x7e]*"  # visible ASCII, space and tab: no CR, LF or NUL
_COOKIE_OCTETS: Final = r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"  # RFC 6265 4.1.1
_COOKIE_VALUE_FORM: Final = f'{_COOKIE_OCTETS}|"{_COOKIE_OCTETS}"'
_OWS: Final = r"[ \t]*"
_NAME: Final = f"{_TOKEN_CHARACTER}{{1,{MAX_NAME_LENGTH}}}"
USER_PATTERN: Final = f"^[^:{_CONTROL_CHARACTER}]{{1,{MAX_USER_LENGTH}}}$"
PASSWORD_PATTERN: Final = f"^[^{_CONTROL_CHARACTER}]{{0,{MAX_PASSWORD_LENGTH}}}$"
HEADER_PATTERN: Final = f"^{_OWS}{_NAME}{_OWS}:{_VISIBLE}$"
COOKIE_PATTERN: Final = f"^{_OWS}{_NAME}{_OWS}={_OWS}(?:{_COOKIE_VALUE_FORM}){_OWS}$"

_TOKEN: Final = re.compile(f"{_TOKEN_CHARACTER}+")
_HEADER_VALUE: Final = re.compile(_VISIBLE)
_COOKIE_VALUE: Final = re.compile(_COOKIE_VALUE_FORM)
_CONTROL: Final = re.compile(f"[{_CONTROL_CHARACTER}]")
_BLANK: Final = " \t"


def _caseless(name: str) -> str:
    """A header name as a pattern matching it in any case (JSON Schema's patterns take no flags)."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in name)


# A header entry naming one of REFUSED_HEADERS, in any case: the document refuses it with `not`.
REFUSED_HEADER_PATTERN: Final = f"^{_OWS}(?:{'|'.join(_caseless(n) for n in sorted(REFUSED_HEADERS))}){_OWS}:"


class Kind:
    BASIC_AUTH: Final = "basic_auth"
    HEADERS: Final = "headers"
    COOKIES: Final = "cookies"


_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def origin_key(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL, the scheme's default port filled in when none is written;
    None when it is not one. The crawl's scope and the staging access both compare origins by it."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.rstrip(".").lower(), port if port is not None else _DEFAULT_PORTS[scheme]


@frozen
class SiteAccess:
    """What is sent to the site's `origin`: basic auth, headers and cookies. No value is in its repr."""

    origin: str
    basic_user: str | None = field(default=None, repr=False)
    basic_password: str | None = field(default=None, repr=False)
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    cookies: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @property
    def kinds(self) -> tuple[str, ...]:
        kinds = []
        if self.basic_user is not None:
            kinds.append(Kind.BASIC_AUTH)
        if self.headers:
            kinds.append(Kind.HEADERS)
        if self.cookies:
            kinds.append(Kind.COOKIES)
        return tuple(kinds)

    def sends_to(self, url: str) -> bool:
        """Whether a request to `url` carries the access: only when its scheme, host and port are the
        site's own (not the other scheme, another port, a subdomain or the `www.` twin)."""
        own = origin_key(self.origin)
        return own is not None and origin_key(url) == own

    def request_headers(self) -> tuple[tuple[str, str], ...]:
        """The headers a request to the site's origin gets."""
        sent: list[tuple[str, str]] = []
        if self.basic_user is not None:
            pair = f"{self.basic_user}:{self.basic_password or ''}".encode()
            sent.append(("Authorization", "Basic " + base64.b64encode(pair).decode("ascii")))
        sent.extend(self.headers)
        if self.cookies:
            sent.append(("Cookie", "; ".join(f"{name}={value}" for name, value in self.cookies)))
        return tuple(sent)

    def for_url(self, url: str) -> tuple[tuple[str, str], ...]:
        """`request_headers` when `url` is on the site's origin, else nothing."""
        return self.request_headers() if self.sends_to(url) else ()

    def as_json(self) -> str:
        """The plaintext that is sealed (never stored as it is)."""
        return json.dumps(
            {
                "basic_user": self.basic_user,
                "basic_password": self.basic_password,
                "headers": [list(h) for h in self.headers],
                "cookies": [list(c) for c in self.cookies],
            }
        )

    @classmethod
    def from_json(cls, origin: str, text: str) -> "SiteAccess":
        data: dict[str, Any] = json.loads(text)
        return cls(
            origin=origin,
            basic_user=data["basic_user"],
            basic_password=data["basic_password"],
            headers=tuple((str(n), str(v)) for n, v in data["headers"]),
            cookies=tuple((str(n), str(v)) for n, v in data["cookies"]),
        )


@frozen
class StoredAccess:
    """A site's access as stored: the sealed values and, in the clear, only which kinds are set, how many
    headers and cookies, and when it was set."""

    site_id: SiteId
    team_id: TeamId
    sealed: str = field(repr=False)
    kinds: tuple[str, ...]
    headers: int
    cookies: int
    updated_at: datetime


@frozen
class _EntryForm:
    """How one kind of entry reads: a `Name: value` header or a `name=value` cookie, its name a token."""

    field_name: str
    kind: str
    separator: str
    form: str
    most: int
    value: re.Pattern[str]
    bad_value: str  # what a value the pattern refuses is told
    fold: Callable[[str], str]  # the form in which two names are the same name
    refused: Mapping[str, str] = MappingProxyType({})  # names (folded) that may not be set, and why


_HEADER_FORM: Final = _EntryForm(
    "headers",
    "header",
    ":",
    "Name: value",
    MAX_HEADERS,
    _HEADER_VALUE,
    "must be printable ASCII (no control characters)",
    str.lower,
    REFUSED_HEADERS,
)
_COOKIE_FORM: Final = _EntryForm(
    "cookies",
    "cookie",
    "=",
    "name=value",
    MAX_COOKIES,
    _COOKIE_VALUE,
    "holds a character a cookie may not (space, quote, comma, ; or \\)",
    str,
)


def _entry_problem(form: _EntryForm, entry: str, seen: set[str]) -> tuple[str, str] | str:
    """The name and value of one entry, its name added to `seen`; or the problem."""
    name, found, value = entry.partition(form.separator)
    name, value = name.strip(_BLANK), value.strip(_BLANK)
    if not found or not name:
        return f'each must be "{form.form}"'
    if len(name) > MAX_NAME_LENGTH or not _TOKEN.fullmatch(name):
        return f"{name[:MAX_NAME_LENGTH]!r} is not a {form.kind} name (letters, digits and !#$%&'*+.^_`|~-)"
    folded = form.fold(name)
    if folded in form.refused:
        return f"{name} may not be set: {form.refused[folded]}"
    if folded in seen:
        return f"{name} is given twice"
    if not form.value.fullmatch(value):
        return f"the value of {name} {form.bad_value}"
    seen.add(folded)
    return name, value


def _entries(
    form: _EntryForm, given: Sequence[str] | None, bad: dict[str, str]
) -> tuple[tuple[str, str], ...]:
    if given is None:
        return ()
    if len(given) > form.most:
        bad[form.field_name] = f"at most {form.most} entries"
        return ()
    seen: set[str] = set()
    read_ones: list[tuple[str, str]] = []
    for entry in given:
        if len(entry) > MAX_ENTRY_LENGTH:
            bad[form.field_name] = f"each entry must be at most {MAX_ENTRY_LENGTH:,} characters"
            return ()
        one = _entry_problem(form, entry, seen)
        if isinstance(one, str):
            bad[form.field_name] = one
            return ()
        read_ones.append(one)
    return tuple(read_ones)


def access_of(
    origin: str,
    *,
    basic_auth_user: str | None,
    basic_auth_password: str | None,
    headers: Sequence[str] | None,
    cookies: Sequence[str] | None,
) -> SiteAccess:
    """The access a PUT asks for, every input checked. Raises ValidationFailed naming each bad field."""
    bad: dict[str, str] = {}
    if (basic_auth_user is None) != (basic_auth_password is None):
        missing = "basic_auth_password" if basic_auth_password is None else "basic_auth_user"
        bad[missing] = "basic_auth_user and basic_auth_password go together"
    if basic_auth_user is not None:
        if not basic_auth_user or len(basic_auth_user) > MAX_USER_LENGTH:
            bad["basic_auth_user"] = f"must be 1-{MAX_USER_LENGTH} characters"
        elif ":" in basic_auth_user or _CONTROL.search(basic_auth_user):
            bad["basic_auth_user"] = "may not hold a colon or a control character"
    if basic_auth_password is not None:
        if len(basic_auth_password) > MAX_PASSWORD_LENGTH:
            bad["basic_auth_password"] = f"must be at most {MAX_PASSWORD_LENGTH:,} characters"
        elif _CONTROL.search(basic_auth_password):
            bad["basic_auth_password"] = "may not hold a control character"
    read_headers = _entries(_HEADER_FORM, headers, bad)
    read_cookies = _entries(_COOKIE_FORM, cookies, bad)
    if not bad and basic_auth_user is None and not read_headers and not read_cookies:
        nothing = (
            "give basic_auth_user and basic_auth_password, headers or cookies (DELETE removes the access)"
        )
        bad.update({"basic_auth_user": nothing, "headers": nothing, "cookies": nothing})
    if bad:
        raise ValidationFailed(bad)
    return SiteAccess(
        origin=origin,
        basic_user=basic_auth_user,
        basic_password=basic_auth_password,
        headers=read_headers,
        cookies=read_cookies,
    )
