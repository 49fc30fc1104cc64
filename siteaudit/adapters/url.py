"""URL normalisation (WHATWG parsing by ada-url) with the audit's query-parameter policy."""

import ipaddress
import re
from collections.abc import Iterable
from functools import lru_cache

import ada_url
from attrs import frozen

DEFAULT_IGNORED_PARAMETERS: frozenset[str] = frozenset(
    {
        "gclid",
        "gbraid",
        "wbraid",
        "dclid",
        "fbclid",
        "msclkid",
        "yclid",
        "twclid",
        "ttclid",
        "li_fat_id",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "rb_clickid",
        "s_cid",
        "srsltid",
    }
)
DEFAULT_IGNORED_PREFIXES: tuple[str, ...] = ("utm_",)

_HTTP_SCHEMES = ("http:", "https:")
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Names that only resolve inside a private network, so a public page linking them leaks a dev setup.
_PRIVATE_SUFFIXES = (
    ".localhost",
    ".local",
    ".localdomain",
    ".internal",
    ".intranet",
    ".lan",
    ".home",
    ".corp",
    ".home.arpa",
    ".test",
    ".invalid",
)


@frozen(cache_hash=True)
class ParameterPolicy:
    """Query parameters dropped from every URL before it is compared or stored (case-insensitive names)."""

    ignored: frozenset[str] = DEFAULT_IGNORED_PARAMETERS
    ignored_prefixes: tuple[str, ...] = DEFAULT_IGNORED_PREFIXES

    def ignores(self, name: str) -> bool:
        lowered = name.lower()
        return lowered in self.ignored or lowered.startswith(self.ignored_prefixes)

    @classmethod
    def keep_all(cls) -> "ParameterPolicy":
        return cls(ignored=frozenset(), ignored_prefixes=())


DEFAULT_POLICY = ParameterPolicy()


def _percent_normalised(match: re.Match[str]) -> str:
    code = int(match.group(0)[1:], 16)
    if code in _UNRESERVED:
        return chr(code)
    return match.group(0).upper()


def _filtered_query(query: str, policy: ParameterPolicy) -> str:
    kept = [pair for pair in query.split("&") if pair and not policy.ignores(pair.split("=", 1)[0])]
    return "&".join(kept)


def _finish(href: str, policy: ParameterPolicy) -> str | None:
    """Apply our policy on top of a WHATWG-serialised URL: http(s) only, no fragment, clean query."""
    if not href.startswith(_HTTP_SCHEMES):
        return None
    hash_at = href.find("#")
    if hash_at >= 0:
        href = href[:hash_at]
    if "%" in href:
        href = _PERCENT.sub(_percent_normalised, href)
    query_at = href.find("?")
    if query_at >= 0:
        query = _filtered_query(href[query_at + 1 :], policy)
        href = href[:query_at] + ("?" + query if query else "")
    return href


@lru_cache(maxsize=65536)
def _normalise_absolute(url: str, policy: ParameterPolicy) -> str | None:
    try:
        href = ada_url.normalize_url(url)
    except ValueError:
        return None
    return _finish(href, policy)


@lru_cache(maxsize=65536)
def _normalise_joined(base: str, url: str, policy: ParameterPolicy) -> str | None:
    try:
        href = ada_url.join_url(base, url)
    except ValueError:
        return None
    return _finish(href, policy)


def _has_scheme(url: str) -> bool:
    colon = url.find(":")
    if colon <= 0:
        return False
    head = url[:colon]
    return head[0].isalpha() and all(c.isalnum() or c in "+-." for c in head)


def normalise(url: str, base: str | None = None, *, policy: ParameterPolicy = DEFAULT_POLICY) -> str | None:
    """The canonical form of an http(s) URL, resolved against `base`; None when unparseable or not http(s).

    Scheme and host lower-cased (IDNA to punycode), default port removed, dot segments resolved, percent
    escapes upper-cased with unreserved characters decoded, fragment dropped, ignored query parameters
    removed (order of the others kept).
    """
    url = url.strip()
    if base is None or url[:8].lower().startswith(("http://", "https://")):
        return _normalise_absolute(url, policy)
    if url[:1] == "/" and url[1:2] not in ("/", "\\") and url.isprintable():
        # Root-relative links depend only on the base's origin: key the cache on it so that the
        # navigation links shared by every page of a site are resolved once per site, not per page.
        # (isprintable: the parser deletes tabs and newlines, which could turn "/\t/x" into "//x".)
        return _normalise_joined(origin_of(base) or base, url, policy)
    return _normalise_joined(base, url, policy)


@lru_cache(maxsize=4096)
def _directory_of(base: str) -> str | None:
    """The base URL serialised and cut after its path's last "/": what path-relative references use of it.

    WHATWG resolution of a reference like `x.html` or `../y/` reads only the base's scheme, authority and
    path minus its last segment, so every page of one directory resolves such references alike: keying
    the join cache on the directory instead of the page shares it between those pages.
    """
    try:
        href = ada_url.normalize_url(base)
    except ValueError:
        return None
    if not href.startswith(_HTTP_SCHEMES):
        return None
    # A serialised http(s) URL has its path after the authority, and "?" and "#" only as delimiters.
    end = len(href)
    for delimiter in "?#":
        at = href.find(delimiter)
        if 0 <= at < end:
            end = at
    return href[: href.rfind("/", 0, end) + 1]


def _without_fragment(url: str) -> str:
    """`url` without its fragment, unless that would leave space or a control character at its end,
    which the parser would strip and so read differently ("a #x" is "a%20", "a" is "a")."""
    head = url.partition("#")[0]
    return head if head[-1:] > " " else url


# Answers shared between the Resolvers of one site (absolute and root-relative references, which depend
# on the origin only) and of one directory (path-relative ones, see `_directory_of`), by reference as
# written: after a site's first page, its navigation costs a dictionary look-up per link. Bounded:
# SHARED_SCOPES scopes of at most SHARED_ANSWERS answers each (a full one starts over).
SHARED_SCOPES = 64
SHARED_ANSWERS = 4096


_UNKNOWN = object()


@lru_cache(maxsize=SHARED_SCOPES)
def _shared_answers(kind: str, scope: str, policy: ParameterPolicy) -> dict[str, str | None]:
    return {}


class ReferenceResolver:
    """`normalise` against one fixed base, for the many references of one page.

    The fragment of a reference is cut before joining: it never changes the rest of the URL, and
    `normalise` drops it, so `page.html#a` and `page.html#b` share one cache entry.
    """

    __slots__ = ("_base", "_directory", "_in_directory", "_in_origin", "_origin", "_policy", "_seen")

    def __init__(self, base: str, policy: ParameterPolicy = DEFAULT_POLICY) -> None:
        self._base = base
        self._origin = origin_of(base) or base
        self._directory = _directory_of(base)
        self._policy = policy
        self._seen: dict[str, str | None] = {}  # answers that depend on the whole base
        self._in_origin = _shared_answers("origin", self._origin, policy)
        self._in_directory = (
            self._seen if self._directory is None else _shared_answers("directory", self._directory, policy)
        )

    def __call__(self, raw: str) -> str | None:
        head, hash_sign, _fragment = raw.partition("#")
        # Answers are keyed without the fragment when cutting it cannot change the reading (see
        # `_without_fragment`; a control character anywhere, fragment included, takes another path).
        key = head if hash_sign and head[-1:] > " " and raw.isprintable() else raw
        # `get` with a default: a KeyError per missed scope would cost more than the look-ups.
        found = self._in_origin.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            found = self._in_directory.get(key, _UNKNOWN)
            if found is _UNKNOWN:
                found = self._seen.get(key, _UNKNOWN)
        if found is not _UNKNOWN:
            return found  # type: ignore[return-value]
        url = key.strip()
        first = url[:1]
        if url[:8].lower().startswith(("http://", "https://")):
            target = _normalise_absolute(_without_fragment(url), self._policy)
            answers = self._in_origin
        elif first == "/" and url[1:2] not in ("/", "\\") and url.isprintable():
            target = _normalise_joined(self._origin, _without_fragment(url), self._policy)
            answers = self._in_origin
        elif (
            first
            and first not in "/\\?#"
            and self._directory is not None
            and url.isprintable()  # the parser deletes tabs and newlines anywhere, changing the reading
            and ":" not in url.partition("/")[0]  # a scheme would make it absolute
        ):
            target = _normalise_joined(self._directory, _without_fragment(url), self._policy)
            answers = self._in_directory
        else:
            target = _normalise_joined(self._base, url, self._policy)
            answers = self._seen
        if len(answers) >= SHARED_ANSWERS and answers is not self._seen:
            answers.clear()
        answers[key] = target
        return target


@lru_cache(maxsize=65536)
def _split(url: str) -> tuple[str, str, str] | None:
    """(scheme, hostname, port) of a URL already normalised by `normalise`; port "" when default."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        return None
    scheme = url[:scheme_end]
    rest = url[scheme_end + 3 :]
    end = len(rest)
    for stop in "/?#":
        at = rest.find(stop)
        if 0 <= at < end:
            end = at
    authority = rest[:end]
    authority = authority[authority.rfind("@") + 1 :]
    if authority.startswith("["):
        close = authority.find("]")
        host, port = authority[: close + 1], authority[close + 2 :]
    else:
        host, _, port = authority.partition(":")
    if _DEFAULT_PORTS.get(scheme) == port:
        port = ""
    return scheme, host.lower(), port


def host_of(url: str) -> str | None:
    """Lower-cased hostname (IPv6 in brackets) of a normalised URL."""
    parts = _split(url)
    return parts[1] if parts else None


def scheme_of(url: str) -> str | None:
    parts = _split(url)
    return parts[0] if parts else None


@lru_cache(maxsize=4096)
def origin_of(url: str) -> str | None:
    """scheme://host[:port] of an absolute http(s) URL, default port dropped; None when unparseable."""
    if not url.startswith(_HTTP_SCHEMES):
        normalised = normalise(url)
        if normalised is None:
            return None
        url = normalised
    parts = _split(url)
    if parts is None:
        return None
    scheme, host, port = parts
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


def is_internal(url: str, origin: str) -> bool:
    """Same host as the audited origin (scheme and port may differ: http->https twins stay internal)."""
    target, own = host_of(url), host_of(origin)
    return target is not None and target == own


def is_absolute(url: str) -> bool:
    """Whether a raw reference carries its own scheme and host (protocol-relative `//host/` does not)."""
    stripped = url.strip()
    colon = stripped.find(":")
    return _has_scheme(stripped) and stripped[colon + 1 : colon + 3] == "//"


def is_public_hostname(host: str) -> bool:
    """False for localhost, loopback/private/link-local/reserved IP literals and private-network names."""
    name = host.strip().lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if not name:
        return False
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        pass
    else:
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            return address.ipv4_mapped.is_global
        return address.is_global
    if name == "localhost" or name.endswith(_PRIVATE_SUFFIXES):
        return False
    return "." in name


def is_localhost_link(url: str) -> bool:
    """A link whose host cannot be reached from the public internet (see `is_public_hostname`)."""
    host = host_of(url)
    return host is not None and not is_public_hostname(host)


def without_ignored_parameters(url: str, ignored: Iterable[str]) -> str | None:
    """Normalise with an ad-hoc list of ignored parameter names (prefixes end with `*`, e.g. `utm_*`)."""
    names = [name.lower() for name in ignored]
    exact: frozenset[str] = frozenset([n for n in names if not n.endswith("*")])
    prefixes: tuple[str, ...] = tuple([n[:-1] for n in names if n.endswith("*")])
    policy = ParameterPolicy(ignored=exact, ignored_prefixes=prefixes)
    return normalise(url, policy=policy)
