# Over 400 lines: the outbound address table (every special range and its mapped forms) is one security rule.
"""Outbound HTTP as values: which addresses may be connected to, and what one fetch asked and got.

The address policy (docs/security.md "Outbound requests: the SSRF guard"), written out as tables rather than
delegated to `ipaddress.is_global`, whose answers differ between Python patch releases and call multicast,
100.64.0.0/10, NAT64, 6to4 and `::ffff:127.0.0.1` safe.
"""

import ipaddress
from collections.abc import Iterable
from typing import Final, Self
from urllib.parse import urldefrag, urljoin, urlsplit

from attrs import evolve, field, frozen

from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.facts import FetchError, Hop, PageFacts

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

IPV4_DENIED: Final[tuple[ipaddress.IPv4Network, ...]] = tuple(
    ipaddress.IPv4Network(cidr)
    for cidr in (
        "0.0.0.0/8",  # "this network"; 0.0.0.0 reaches the local host on Linux
        "10.0.0.0/8",
        "100.64.0.0/10",  # carrier-grade NAT
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local, home of cloud metadata services
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.31.196.0/24",
        "192.52.193.0/24",
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",
        "192.175.48.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, includes the broadcast address
    )
)

IPV6_UNICAST_SPACE: Final = ipaddress.IPv6Network("2000::/3")

IPV6_DENIED: Final[tuple[ipaddress.IPv6Network, ...]] = tuple(
    ipaddress.IPv6Network(cidr)
    for cidr in (
        "::/128",
        "::1/128",
        "::ffff:0:0/96",  # IPv4-mapped: unwrapped and judged as IPv4 before this table is consulted
        "::/96",  # IPv4-compatible
        "64:ff9b::/96",  # NAT64
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard
        "2001::/23",  # IETF protocol assignments, Teredo included
        "2001:db8::/32",
        "3fff::/20",
        "2002::/16",  # 6to4: embeds any IPv4 address
        "2620:4f:8000::/48",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)

_MAPPED: Final = ipaddress.IPv6Network("::ffff:0:0/96")


def parse_address(text: str) -> IPAddress:
    """Parse an address as the policy sees it: brackets dropped, an IPv6 zone id kept.

    Raises ValueError when the text is not an IPv4 or IPv6 address in standard notation.
    """
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return ipaddress.ip_address(text)


def denied_range(address: IPAddress | str) -> str | None:
    """The deny rule `address` falls under (for messages), or None when the address is public.

    The allow-list is not consulted here; see AddressPolicy.
    """
    ip = parse_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv4Address):
        return next((str(network) for network in IPV4_DENIED if ip in network), None)
    if ip.scope_id is not None:
        # A zone id only means something on a link-local interface: nothing public carries one.
        return "zone id"
    unscoped = ipaddress.IPv6Address(int(ip))
    if unscoped in _MAPPED:
        mapped = unscoped.ipv4_mapped
        assert mapped is not None
        return denied_range(mapped)
    if unscoped not in IPV6_UNICAST_SPACE:
        return "outside 2000::/3"
    return next((str(network) for network in IPV6_DENIED if unscoped in network), None)


def is_public_address(address: IPAddress | str, allow: Iterable[IPNetwork] = ()) -> bool:
    """True when the guard may connect to `address`: public by the policy's tables, or inside `allow`."""
    return AddressPolicy(allow=tuple(allow)).permits(address)


def parse_networks(text: str) -> tuple[IPNetwork, ...]:
    """Parse `SITEAUDIT_ALLOW_NETWORKS`: CIDRs separated by commas or white space, empty allowed.

    Raises ValidationFailed naming the setting when an entry is not a network (host bits set count as
    a mistake: `127.0.0.1/8` is refused rather than silently widened).
    """
    networks: list[IPNetwork] = []
    for entry in text.replace(",", " ").split():
        try:
            network: IPNetwork = ipaddress.ip_network(entry, strict=True)
        except ValueError as error:
            reason = f"{entry!r} is not a network: {error}"
            raise ValidationFailed({"SITEAUDIT_ALLOW_NETWORKS": reason}) from None
        networks.append(network)
    return tuple(networks)


@frozen
class AddressPolicy:
    """Deny by default; `allow` (the `SITEAUDIT_ALLOW_NETWORKS` setting) overrides the deny tables."""

    allow: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_setting(cls, text: str) -> Self:
        return cls(allow=parse_networks(text))

    def refusal(self, address: IPAddress | str) -> str | None:
        """Why `address` is refused (the deny rule it falls under), or None when it may be connected to.

        Raises ValueError when `address` is text that is not an IP address.
        """
        ip = parse_address(address) if isinstance(address, str) else address
        if self._allowed(ip):
            return None
        mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id is None else None
        if mapped is not None and self._allowed(mapped):
            # The connection would go to the IPv4 host, so the IPv4 allow-list entries apply too.
            return None
        return denied_range(ip)

    def permits(self, address: IPAddress | str) -> bool:
        """True when `address` may be connected to; False for text that is not an address."""
        try:
            return self.refusal(address) is None
        except ValueError:
            return False

    def _allowed(self, ip: IPAddress) -> bool:
        if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id is not None:
            ip = ipaddress.IPv6Address(int(ip))
        return any(ip.version == network.version and ip in network for network in self.allow)


class NetworkFailure(Exception):
    """An outbound request could not be made; `kind` is how the fetch records it."""

    kind: FetchError = FetchError.CONNECT

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NameNotResolved(NetworkFailure):
    """The host name has no address (or the resolver failed or took too long)."""

    kind = FetchError.DNS

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"{host} did not resolve: {reason}")
        self.host = host
        self.reason = reason


class AddressRefused(NetworkFailure):
    """The SSRF guard refused to connect: the host resolved to (or is) an address outside policy."""

    kind = FetchError.REFUSED

    def __init__(self, host: str, address: str, rule: str) -> None:
        shown = host if host == address else f"{host} ({address})"
        super().__init__(f"refused to connect to {shown}: {rule}")
        self.host = host
        self.address = address
        self.rule = rule


class UrlRefused(NetworkFailure):
    """The URL itself is not fetched: wrong scheme, credentials in it, a port outside the crawl, ..."""

    kind = FetchError.REFUSED

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"refused to fetch {url}: {reason}")
        self.url = url
        self.reason = reason


Headers = tuple[tuple[str, str], ...]


def _lower_names(headers: Iterable[tuple[str, str]]) -> Headers:
    return tuple((name.lower(), value) for name, value in headers)


@frozen
class FetchRequest:
    """One HTTP request, sent once, never redirected by the client.

    `max_bytes` and `deadline_s` override the fetcher's defaults when set: the webhook sender reads at
    most 4 KB within 10 s, the crawler uses the audit's limits.
    """

    url: str
    method: str = "GET"
    headers: Headers = field(default=(), converter=_lower_names)
    content: bytes | None = None
    max_bytes: int | None = None
    deadline_s: float | None = None

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)


@frozen
class FetchResponse:
    """What one request produced. `error` set means no usable answer; the fields before it may still
    hold what arrived (a status and headers before the deadline cut the body, for instance)."""

    url: str
    status: int | None = None
    headers: Headers = ()  # names lower-cased, in the order received, repeats kept
    body: bytes = b""  # decoded body, at most the cap
    truncated: bool = False  # the cap was reached and the rest discarded
    ttfb_ms: int | None = None
    total_ms: int | None = None
    error: FetchError | None = None
    error_detail: str | None = None
    remote_address: str | None = None  # the checked address actually connected to

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None

    @property
    def is_redirect(self) -> bool:
        return self.ok and self.status in REDIRECT_STATUSES and self.header("location") is not None

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)

    def header_values(self, name: str) -> tuple[str, ...]:
        wanted = name.lower()
        return tuple(value for key, value in self.headers if key == wanted)


REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})


MAX_REDIRECTS: Final = 10
CRAWL_PORTS: Final = frozenset({80, 443})

# What may travel to another origin: nothing that could carry a credential, a token or a validator.
_PORTABLE_HEADERS: Final = frozenset({"accept", "accept-language", "accept-encoding", "user-agent"})
_VALIDATORS: Final = frozenset({"if-none-match", "if-modified-since"})


@frozen
class FollowedFetch:
    """Where a chain of redirects ended: the last answer, and each redirect on the way."""

    response: FetchResponse
    hops: tuple[Hop, ...] = ()

    @property
    def final_url(self) -> str:
        return self.response.url

    def unanswered_page(self, url: str, *, depth: int = 0, in_sitemap: bool = False) -> PageFacts:
        """The page at `url` of a fetch that got no answer (an error, or no status)."""
        response, hops = self.response, self.hops
        return PageFacts(
            url=url,
            depth=depth,
            status_code=response.status,
            final_url=response.url if hops else None,
            redirects=hops,
            fetch_error=response.error,
            fetch_error_detail=response.error_detail,
            ttfb_ms=response.ttfb_ms,
            total_ms=response.total_ms,
            in_sitemap=in_sitemap,
        )


def url_port(url: str) -> int | None:
    """The port a URL connects to (the scheme's default when none is written); None when invalid."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    if port is not None:
        return port
    return {"http": 80, "https": 443}.get(parts.scheme.lower())


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").rstrip("."), url_port(url)


def redirect_target(request: FetchRequest, response: FetchResponse) -> str | None:
    """The absolute URL a redirect answer points at (fragment dropped), None when it is not a redirect."""
    location = response.header("location") if response.is_redirect else None
    if location is None:
        return None
    target, _fragment = urldefrag(urljoin(request.url, location.strip()))
    return target


def next_request(request: FetchRequest, target: str, status: int) -> FetchRequest:
    """The request a redirect asks for, as browsers make it.

    303 (and 301/302 after anything but GET or HEAD) becomes a GET without a body; 307 and 308 repeat
    the request. Validators never follow (they were for the first URL), and only headers that carry no
    credential cross to another origin.
    """
    method, content = request.method, request.content
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method not in ("GET", "HEAD")):
        method, content = "GET", None
    same_origin = _origin(target) == _origin(request.url)
    headers = tuple(
        (name, value)
        for name, value in request.headers
        if name not in _VALIDATORS and (same_origin or name in _PORTABLE_HEADERS)
    )
    return evolve(request, url=target, method=method, content=content, headers=headers)


def redirect_refusal(
    target: str, *, visited: Iterable[str], hops: int, ports: frozenset[int], max_hops: int = MAX_REDIRECTS
) -> tuple[FetchError, str] | None:
    """Why the redirect to `target` is not followed (the error and a detail), or None to follow it.

    `hops` counts the redirects already received, this one included; `ports` are the ports the chain
    may use (80, 443 and the first URL's explicit port). Addresses are judged later, by the guard.
    """
    if hops > max_hops:
        return FetchError.TOO_MANY_REDIRECTS, f"more than {max_hops} redirects"
    if target in visited:
        return FetchError.REDIRECT_LOOP, f"redirected back to {target}"
    port = url_port(target)
    if port is None:
        return FetchError.REFUSED, f"{target} is not an http(s) URL with a valid port"
    if port not in ports:
        return FetchError.REFUSED, f"port {port} is outside the crawl (allowed: {sorted(ports)})"
    return None


@frozen
class RedirectChain:
    """The one redirect follower, as values: send `request`, hand its answer to `answered`, and go on
    with the chain it returns until it returns where the chain ended. Each hop is a new fetch (through
    the SSRF guard, and for the crawler after its host's turn), so the sending stays with the caller:

        chain = RedirectChain.start(request)
        while isinstance(chain, RedirectChain):
            chain = chain.answered(await fetch(chain.request))
    """

    request: FetchRequest
    ports: frozenset[int]
    max_hops: int = MAX_REDIRECTS
    visited: tuple[str, ...] = ()
    hops: tuple[Hop, ...] = ()

    @classmethod
    def start(
        cls, request: FetchRequest, *, max_hops: int = MAX_REDIRECTS, ports: frozenset[int] | None = None
    ) -> "RedirectChain":
        """`ports` defaults to 80, 443 and the first URL's own port."""
        allowed = ports if ports is not None else CRAWL_PORTS | {url_port(request.url) or 80}
        return cls(request, allowed, max_hops, visited=(request.url,))

    def answered(self, response: FetchResponse) -> "RedirectChain | FollowedFetch":
        """The chain one hop on, or where it ended: an answer that is not a redirect, or the refusal of
        the next hop (loop, too many, a port outside the crawl) as an error answer."""
        target = redirect_target(self.request, response)
        if target is None or response.status is None:
            return FollowedFetch(response=response, hops=self.hops)
        hops = (*self.hops, Hop(url=self.request.url, status=response.status, location=target))
        refusal = redirect_refusal(
            target, visited=self.visited, hops=len(hops), ports=self.ports, max_hops=self.max_hops
        )
        if refusal is not None:
            error, detail = refusal
            return FollowedFetch(
                response=FetchResponse(url=target, error=error, error_detail=detail), hops=hops
            )
        return evolve(
            self,
            request=next_request(self.request, target, response.status),
            visited=(*self.visited, target),
            hops=hops,
        )
