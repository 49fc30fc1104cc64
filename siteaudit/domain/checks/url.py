"""URL reading for the checks: comparison form, origin, internal-ness and non-public hosts (stdlib only)."""

import ipaddress
import re
from functools import lru_cache
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".intranet")


# A site's pages link the same URLs over and over (navigation, footers): their readings are cached.
# urllib's hostname and port properties re-read the authority on every access, which dominated the
# checks' URL work. Bounded: URL_CACHE entries per function (a few MB).
URL_CACHE = 16_384


@lru_cache(maxsize=URL_CACHE)
def split(url: str) -> SplitResult | None:
    """`urlsplit` that answers None for what it cannot parse (a bad IPv6 literal, a bad port)."""
    try:
        parts = urlsplit(url.strip())
        _ = parts.port  # raises ValueError on a non-numeric or out-of-range port
    except ValueError:
        return None
    return parts


def is_absolute(href: str) -> bool:
    """True when the reference names its own scheme and host (`https://host/...`)."""
    parts = split(href)
    return parts is not None and bool(parts.scheme) and bool(parts.netloc)


# A URL already in comparison form: lower-case scheme and plain host, no port or userinfo, a path, no
# fragment, printable ASCII without spaces, not ending in an empty query. Stored URLs (the crawler's
# normaliser wrote them) nearly all are: `normalise` gives them back unchanged without parsing them.
_NORMAL = re.compile(r"https?://[a-z0-9.-]+/[!-\"$-~]*")


def normalise(url: str) -> str:
    """Comparison form (docs/checks.md "Conventions"): scheme and host lower-cased, default port and fragment
    dropped, empty path as "/". The query string is kept. Unparseable input comes back stripped."""
    if _NORMAL.fullmatch(url) and not url.endswith("?"):
        return url
    return parsed_normal_form(url)


def parsed_normal_form(url: str) -> str:
    """`normalise` by parsing, whatever the URL (the fast path of `normalise` must agree with it)."""
    parts = split(url)
    if parts is None or not parts.scheme or not parts.netloc:
        return url.strip()
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if parts.username or parts.password:
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" + netloc
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def resolve(href: str, base: str) -> str | None:
    """Resolve a reference against a base URL; None when the result is not an http(s) URL with a host."""
    stripped = href.strip()
    if _NORMAL.fullmatch(stripped) and not stripped.endswith("?"):
        return stripped  # absolute and in comparison form already (see `normalise`)
    return parsed_resolution(stripped, base)


def parsed_resolution(stripped: str, base: str) -> str | None:
    """`resolve` by joining and parsing, whatever the reference (its fast path must agree with it)."""
    if not stripped:
        return None
    if stripped.startswith(("https://", "http://")):
        joined = stripped  # already absolute: skip the join, which dominates the cost at scale
    else:
        try:
            joined = urljoin(base, stripped)
        except ValueError:
            return None
    parts = split(joined)
    if parts is None or parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return normalise(joined)


def host(url: str) -> str:
    """Lower-cased host with a non-default port, the unit of internal-ness; "" when there is none."""
    if _NORMAL.fullmatch(url):  # what lies between "://" and the path's "/"
        start = url.find("://") + 3
        return url[start : url.find("/", start)]
    return _parsed_host(url)


@lru_cache(maxsize=URL_CACHE)
def _parsed_host(url: str) -> str:
    parts = split(url)
    if parts is None or not parts.hostname:
        return ""
    name = parts.hostname.lower()
    port = parts.port
    scheme = parts.scheme.lower()
    return name if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{name}:{port}"


@lru_cache(maxsize=URL_CACHE)
def scheme(url: str) -> str:
    parts = split(url)
    return parts.scheme.lower() if parts is not None else ""


def origin(url: str) -> str:
    """`scheme://host[:port]` of a URL."""
    return f"{scheme(url)}://{host(url)}"


def path(url: str) -> str:
    parts = split(url)
    return (parts.path or "/") if parts is not None else "/"


def query(url: str) -> str:
    parts = split(url)
    return parts.query if parts is not None else ""


def is_non_public_host(url: str) -> bool:
    """True for localhost, loopback, private, link-local and unspecified addresses, and names that only
    resolve inside a private network (`.local`, `.internal`, single-label names...)."""
    parts = split(url)
    if parts is None or not parts.hostname:
        return False
    return is_non_public_name(parts.hostname.lower())


@lru_cache(maxsize=URL_CACHE)
def is_non_public_name(hostname: str) -> bool:
    """`is_non_public_host` of a URL whose host, as `urlsplit` reads it lower-cased, is `hostname`.
    Kept per name: the pages of a site link the same few foreign hosts over and over."""
    name = hostname.rstrip(".")
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return name == "localhost" or name.endswith(_LOCAL_SUFFIXES) or "." not in name
    return address.is_private or address.is_loopback or address.is_link_local or address.is_unspecified


_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def without_escapes(text: str) -> str:
    """The text with percent escapes removed, so their hex digits are not mistaken for path letters."""
    return _PERCENT_ESCAPE.sub("", text)


def high_escapes(text: str) -> bool:
    """True when the text percent-encodes bytes >= 0x80 (encoded non-ASCII characters)."""
    return any(int(escape[1:], 16) >= 0x80 for escape in _PERCENT_ESCAPE.findall(text))
