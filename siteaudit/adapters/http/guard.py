"""The SSRF guard: resolve once, refuse if any answer is outside policy, connect to the checked address.

It sits under httpx as an httpcore network backend, so the check happens at connect time on the address
actually dialled, whatever spelling the URL used (`0x7f000001`, `127.1`, `[::ffff:127.0.0.1]`, a name
that resolves differently on every query). httpcore still negotiates TLS with the URL's host name and
httpx still sends it in the Host header: only the socket's destination is pinned.
"""

import ipaddress
import re
import select
import socket
import ssl
from collections.abc import Iterable
from functools import lru_cache
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any, Final

import anyio
import httpcore2 as httpcore
import httpx2 as httpx

from siteaudit.domain.identity import USER_AGENT
from siteaudit.domain.network import AddressPolicy, AddressRefused, IPAddress, NameNotResolved
from siteaudit.ports.network import HostResolver

SMALL_POOL: Final = httpx.Limits(max_connections=10, max_keepalive_connections=10)

SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]

# What the C library's inet_aton would read as an IPv4 address (`0x7f.1`, `017700000001`, `2130706433`).
_LEGACY_IPV4 = re.compile(r"[0-9a-fA-FxX.]+")


def literal_address(host: str) -> IPAddress | None:
    """The address a host written as a number means to the operating system, or None for a name."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    bare = bare.replace("%25", "%")  # a URL's zone id separator, percent-encoded
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    if _LEGACY_IPV4.fullmatch(bare):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(bare))
        except OSError:
            return None
    return None


class AddressGuard:
    """Turns a host into the addresses that may be connected to, or refuses."""

    def __init__(
        self, resolver: HostResolver, policy: AddressPolicy, *, resolve_timeout_s: float = 5.0
    ) -> None:
        self.resolver = resolver
        self.policy = policy
        self.resolve_timeout_s = resolve_timeout_s

    def check(self, host: str) -> tuple[IPAddress, ...]:
        """Resolve `host` once and judge every answer. Raises NameNotResolved or AddressRefused."""
        literal = literal_address(host)
        addresses = (literal,) if literal is not None else self.resolver.resolve(host)
        return self._judge(host, addresses)

    async def acheck(self, host: str, timeout: float | None = None) -> tuple[IPAddress, ...]:
        """As `check`, with resolution run off the event loop and bounded by `timeout`."""
        literal = literal_address(host)
        if literal is not None:
            return self._judge(host, (literal,))
        limit = self.resolve_timeout_s if timeout is None else min(timeout, self.resolve_timeout_s)
        try:
            with anyio.fail_after(limit):
                # Abandoned on cancel: getaddrinfo cannot be interrupted, but the caller's deadline can.
                addresses = await anyio.to_thread.run_sync(
                    self.resolver.resolve, host, abandon_on_cancel=True
                )
        except TimeoutError:
            raise NameNotResolved(host, f"no answer within {limit:g} s") from None
        return self._judge(host, addresses)

    def _judge(self, host: str, addresses: Iterable[IPAddress]) -> tuple[IPAddress, ...]:
        checked: list[IPAddress] = []
        for address in addresses:
            rule = self.policy.refusal(address)
            if rule is not None:
                raise AddressRefused(host, str(address), rule)
            # The policy judged a mapped address as IPv4, so the IPv4 host is what gets dialled.
            mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
            checked.append(mapped or address)
        if not checked:
            raise NameNotResolved(host, "no addresses")
        return tuple(checked)


def _dial_order(addresses: tuple[IPAddress, ...]) -> list[str]:
    return list(dict.fromkeys(str(address) for address in addresses))


def _is_readable(sock: socket.socket) -> bool:
    """Whether a pooled connection's socket has something to read (data, or the peer's close): such a
    connection is not reused. What httpcore asks `is_readable`; answered without anyio's attribute table."""
    if sock.fileno() < 0:
        return True  # closed: the next read would return the end
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(0))


class _SteadyInfoStream(httpcore.AsyncNetworkStream):
    """A connection whose extra info is read once: httpcore asks each pooled connection `is_readable`
    for every request it places, and anyio rebuilds a socket's whole attribute table (peer name
    included) per question. The socket, addresses and TLS object of a connection never change."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._info: dict[str, Any] = {}

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        return _SteadyInfoStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            sock = self.get_extra_info("socket")
            return self._inner.get_extra_info(info) if sock is None else _is_readable(sock)
        if info not in self._info:
            self._info[info] = self._inner.get_extra_info(info)
        return self._info[info]


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore backend that dials only addresses the guard has checked."""

    def __init__(self, guard: AddressGuard, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._guard = guard
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self._guard.acheck(host, timeout)
        failure: Exception | None = None
        for address in _dial_order(addresses):
            try:
                return _SteadyInfoStream(
                    await self._inner.connect_tcp(
                        address,
                        port,
                        timeout=timeout,
                        local_address=local_address,
                        socket_options=socket_options,
                    )
                )
            except httpcore.ConnectError as error:
                failure = error
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[SocketOption] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise AddressRefused(path, path, "unix sockets are never dialled")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedSyncBackend(httpcore.NetworkBackend):
    """The blocking twin of GuardedBackend, for a synchronous httpx client."""

    def __init__(self, guard: AddressGuard, inner: httpcore.NetworkBackend | None = None) -> None:
        self._guard = guard
        self._inner = inner if inner is not None else httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self._guard.check(host)
        failure: Exception | None = None
        for address in _dial_order(addresses):
            try:
                return self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore.ConnectError as error:
                failure = error
        assert failure is not None
        raise failure

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[SocketOption] | None = None
    ) -> httpcore.NetworkStream:
        raise AddressRefused(path, path, "unix sockets are never dialled")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _TrustedAuthorities:
    """The PEM file of certificate authorities this process trusts besides the default ones ("": none)."""

    pem_path = ""


def trust_authorities(pem_path: str) -> None:
    """Trust the certificate authorities of the PEM file `pem_path` (SITEAUDIT_CA_BUNDLE: corporate TLS
    inspection, a private CA) in addition to the default ones, in every verifying client of this
    process: crawling and webhook deliveries. "" trusts the default ones only.

    The file is read here, once: a file that cannot be read as certificates raises ValueError now, at
    startup, rather than failing every fetch later.
    """
    _verifying_context(pem_path)
    _TrustedAuthorities.pem_path = pem_path


@lru_cache(maxsize=4)
def _verifying_context(extra_authorities: str) -> ssl.SSLContext:
    """The certificate-verifying client context, built once per process: loading the CA bundle costs
    tens of milliseconds, and every crawl slice opens a fetcher. A client context is safe to share."""
    context = httpx.create_ssl_context(verify=True, trust_env=False)
    if extra_authorities:
        try:
            context.load_verify_locations(cafile=extra_authorities)
        except (OSError, ssl.SSLError) as error:
            raise ValueError(
                f"SITEAUDIT_CA_BUNDLE={extra_authorities!r}: no certificate authorities could be read "
                f"from it ({error}); give a PEM file of CA certificates, or leave the setting empty"
            ) from None
    return context


def ssl_context(verify: ssl.SSLContext | bool) -> ssl.SSLContext:
    """The context of a client: for `True`, the default authorities plus SITEAUDIT_CA_BUNDLE's."""
    if verify is True:
        return _verifying_context(_TrustedAuthorities.pem_path)
    return httpx.create_ssl_context(verify=verify, trust_env=False)


def _pool_options(limits: httpx.Limits, context: ssl.SSLContext) -> dict[str, Any]:
    return {
        "ssl_context": context,
        "max_connections": limits.max_connections,
        "max_keepalive_connections": limits.max_keepalive_connections,
        "keepalive_expiry": limits.keepalive_expiry,
        "http1": True,
        "http2": False,
    }


class GuardedAsyncTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport with its connection pool rebuilt over the guarded backend.

    httpx does not take a network backend, so the pool it built is replaced; everything else (request
    and response conversion, exception mapping) stays httpx's. Never built with a proxy.
    """

    def __init__(
        self,
        guard: AddressGuard,
        *,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = SMALL_POOL,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        context = ssl_context(verify)
        super().__init__(verify=context, trust_env=False, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            network_backend=GuardedBackend(guard, inner), **_pool_options(limits, context)
        )


class GuardedSyncTransport(httpx.HTTPTransport):
    """The blocking twin of GuardedAsyncTransport, always with the small pool (one caller's client)."""

    def __init__(
        self,
        guard: AddressGuard,
        *,
        verify: ssl.SSLContext | bool = True,
        inner: httpcore.NetworkBackend | None = None,
    ) -> None:
        context = ssl_context(verify)
        super().__init__(verify=context, trust_env=False, limits=SMALL_POOL)
        self._pool = httpcore.ConnectionPool(
            network_backend=GuardedSyncBackend(guard, inner), **_pool_options(SMALL_POOL, context)
        )


def guarded_sync_client(
    guard: AddressGuard,
    *,
    verify: ssl.SSLContext | bool = True,
    timeout: httpx.Timeout | float = 10.0,
    headers: dict[str, str] | None = None,
    inner: httpcore.NetworkBackend | None = None,
) -> httpx.Client:
    """A blocking httpx client whose every connection goes through `guard`.

    For synchronous callers that need httpx itself; HttpxBlockingFetcher adds the body cap and the
    wall-clock deadline, which httpx's per-phase timeouts do not give. The client never follows
    redirects, ignores proxy and certificate variables in the environment, and keeps no cookies.
    """
    return httpx.Client(
        transport=GuardedSyncTransport(guard, verify=verify, inner=inner),
        trust_env=False,
        follow_redirects=False,
        timeout=timeout,
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        cookies=refusing_cookies(),
    )


def refusing_cookies() -> CookieJar:
    """A cookie jar that stores nothing, so no cookie set by one site is ever sent to another.

    Handed to httpx as a bare CookieJar: httpx adopts a jar as is but copies an httpx.Cookies into a
    fresh jar with the default, accepting, policy.
    """
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
