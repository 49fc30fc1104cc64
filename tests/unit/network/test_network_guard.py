"""The SSRF guard against hostile URLs, DNS rebinding, redirects into the metadata service and proxies."""

import asyncio
import ipaddress
import socket
import time

import pytest
from network_doubles import LOOPBACK_ALLOWED, RecordingBackend, Tripwire
from pytest_httpserver import HTTPServer

from siteaudit.adapters.http.fetcher import HttpxBlockingFetcher, HttpxFetcher, follow_redirects
from siteaudit.adapters.http.guard import AddressGuard, _is_readable, guarded_sync_client, literal_address
from siteaudit.adapters.http.resolver import StaticResolver, SystemResolver
from siteaudit.domain.facts import FetchError, Hop
from siteaudit.domain.network import (
    AddressPolicy,
    AddressRefused,
    FetchRequest,
    FollowedFetch,
    IPAddress,
    NameNotResolved,
)

# Names a hostile site could publish in its own DNS zone.
HOSTILE_NAMES = {
    "rebind.retro-clock.example": ["127.0.0.1"],
    "metadata.retro-clock.example": ["169.254.169.254"],
    "169.254.169.254.nip.io": ["169.254.169.254"],
    "localtest.me": ["127.0.0.1"],
    "mixed.retro-clock.example": ["93.184.215.14", "127.0.0.1"],
    "mixed6.retro-clock.example": ["2606:4700:4700::1111", "::1"],
    "mapped.retro-clock.example": ["::ffff:127.0.0.1"],
    "internal.retro-clock.example": ["10.1.2.3"],
    "zoned.retro-clock.example": ["fe80::1%1"],
    "nat64.retro-clock.example": ["64:ff9b::7f00:1"],
    "sixtofour.retro-clock.example": ["2002:7f00:1::1"],
    "cgnat.retro-clock.example": ["100.64.1.1"],
    "multicast.retro-clock.example": ["224.0.0.251"],
    "unspecified.retro-clock.example": ["0.0.0.0"],
    "ula.retro-clock.example": ["fd00:ec2::254"],
}


def hostile_urls(port: int) -> list[str]:
    p = port
    return [
        # 127.0.0.1 spelt every way the C library reads it
        f"http://127.0.0.1:{p}/",
        f"http://127.1:{p}/",
        f"http://127.0.1:{p}/",
        f"http://0x7f000001:{p}/",
        f"http://0X7F000001:{p}/",
        f"http://0x7f.0x0.0x0.0x1:{p}/",
        f"http://0x7f.1:{p}/",
        f"http://2130706433:{p}/",
        f"http://017700000001:{p}/",
        f"http://0177.0.0.1:{p}/",
        f"http://0177.1:{p}/",
        f"http://127.000.000.001:{p}/",
        f"http://0:{p}/",
        f"http://0.0.0.0:{p}/",
        f"http://127.0.0.2:{p}/",
        f"http://127.255.255.254:{p}/",
        f"https://127.0.0.1:{p}/",
        f"http://localhost:{p}/",
        f"http://LOCALHOST:{p}/admin",
        # IPv6 literals and the IPv4 forms hidden inside IPv6
        f"http://[::1]:{p}/",
        f"http://[::]:{p}/",
        f"http://[0:0:0:0:0:0:0:1]:{p}/",
        f"http://[::ffff:127.0.0.1]:{p}/",
        f"http://[::ffff:7f00:1]:{p}/",
        f"http://[0:0:0:0:0:ffff:127.0.0.1]:{p}/",
        f"http://[::127.0.0.1]:{p}/",
        f"http://[64:ff9b::127.0.0.1]:{p}/",
        f"http://[2002:7f00:1::]:{p}/",
        f"http://[fe80::1]:{p}/",
        f"http://[fe80::1%25lo]:{p}/",
        "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[2002:a9fe:a9fe::]/",
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://[fc00::1]/",
        "http://[fec0::1]/",
        "http://[ff02::1]/",
        "http://[100::1]/",
        "http://[2001:db8::1]/",
        "http://[3fff::1]/",
        "http://[5f00::1]/",
        # the cloud metadata service and private IPv4 space
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://0xa9fea9fe/",
        "http://2852039166/",
        "http://0251.0376.0251.0376/",
        "http://169.254.169.254:80/computeMetadata/v1/",
        "http://10.0.0.1/",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://192.0.0.170/",
        "http://198.18.0.1/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "http://192.0.2.1/",
        # names resolving into denied space (one bad answer among good ones is enough)
        f"http://rebind.retro-clock.example:{p}/",
        "http://metadata.retro-clock.example/latest/meta-data/",
        "http://169.254.169.254.nip.io/",
        f"http://localtest.me:{p}/",
        f"http://mixed.retro-clock.example:{p}/",
        f"http://mixed6.retro-clock.example:{p}/",
        f"http://mapped.retro-clock.example:{p}/",
        "http://internal.retro-clock.example/",
        "http://zoned.retro-clock.example/",
        f"http://nat64.retro-clock.example:{p}/",
        f"http://sixtofour.retro-clock.example:{p}/",
        "http://cgnat.retro-clock.example/",
        "http://multicast.retro-clock.example/",
        f"http://unspecified.retro-clock.example:{p}/",
        "http://ula.retro-clock.example/",
        f"http://REBIND.Retro-Clock.Example.:{p}/",
        # userinfo and parser tricks
        f"http://retro-clock.example@127.0.0.1:{p}/",
        f"http://user:secret@127.0.0.1:{p}/",
        f"http://127.0.0.1:{p}#@retro-clock.example/",
        f"http://127.0.0.1:{p}?@retro-clock.example/",
        f"http://retro-clock.example%40127.0.0.1:{p}/",
        f"http://%31%32%37.0.0.1:{p}/",
        f"http://127.0.0.1%2f.retro-clock.example:{p}/",
        # schemes that are never fetched
        "file:///etc/passwd",
        f"gopher://127.0.0.1:{p}/_GET%20/",
        f"ftp://127.0.0.1:{p}/",
        f"dict://127.0.0.1:{p}/info",
        f"ws://127.0.0.1:{p}/",
        "javascript:alert(1)",
    ]


def test_sixty_hostile_urls_are_refused_and_the_tripwire_sees_no_connection(
    tripwire: Tripwire, network: RecordingBackend
) -> None:
    urls = hostile_urls(tripwire.port)
    resolver = StaticResolver(HOSTILE_NAMES, fallback=SystemResolver())

    async def run() -> list[tuple[str, FetchError | None, str | None]]:
        async with HttpxFetcher(resolver, AddressPolicy(), inner_backend=network) as fetcher:
            answers = [await fetcher.fetch(FetchRequest(url)) for url in urls]
        return [(a.url, a.error, a.error_detail) for a in answers]

    outcomes = asyncio.run(run())

    assert len(urls) >= 60
    assert [o for o in outcomes if o[1] is not FetchError.REFUSED] == []
    assert network.dialled == []
    assert tripwire.accepted == 0


class AlternatingResolver:
    """A rebinding DNS server: a public answer, then loopback, then public again, on every other query."""

    def __init__(self) -> None:
        self.queries = 0

    def resolve(self, host: str) -> tuple[IPAddress, ...]:
        self.queries += 1
        if self.queries % 2:
            return (ipaddress.ip_address("93.184.215.14"),)
        return (ipaddress.ip_address("127.0.0.1"),)


def test_a_rebinding_resolver_never_gets_a_loopback_connection_in_a_thousand_fetches(
    tripwire: Tripwire, network: RecordingBackend
) -> None:
    resolver = AlternatingResolver()
    url = f"http://rebind.retro-clock.example:{tripwire.port}/"

    async def run() -> list[FetchError | None]:
        async with HttpxFetcher(resolver, AddressPolicy(), inner_backend=network) as fetcher:
            return [(await fetcher.fetch(FetchRequest(url))).error for _ in range(1000)]

    errors = asyncio.run(run())

    assert resolver.queries == 1000
    assert errors.count(FetchError.REFUSED) == 500
    assert errors.count(FetchError.CONNECT) == 500  # the public answer, dialled on the offline network
    assert network.dialled == [("93.184.215.14", tripwire.port)] * 500
    assert tripwire.accepted == 0


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://0xa9fea9fe/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/latest/meta-data/",
        "http://metadata.retro-clock.example/latest/meta-data/",
    ],
)
def test_a_redirect_into_the_metadata_service_is_refused(
    httpserver: HTTPServer, network: RecordingBackend, target: str
) -> None:
    httpserver.expect_request("/start").respond_with_data("", status=302, headers={"Location": target})
    start = f"http://127.0.0.1:{httpserver.port}/start"
    policy = AddressPolicy.from_setting(LOOPBACK_ALLOWED)
    resolver = StaticResolver(HOSTILE_NAMES)

    async def run() -> FollowedFetch:
        async with HttpxFetcher(resolver, policy, inner_backend=network) as fetcher:
            return await follow_redirects(fetcher, FetchRequest(start))

    followed = asyncio.run(run())

    assert followed.response.error is FetchError.REFUSED
    assert followed.hops == (Hop(url=start, status=302, location=target),)
    assert network.dialled == [("127.0.0.1", httpserver.port)]


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture
def hostile_proxy(tripwire: Tripwire, monkeypatch: pytest.MonkeyPatch) -> Tripwire:
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, f"http://127.0.0.1:{tripwire.port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    return tripwire


def test_a_proxy_in_the_environment_sees_nothing_of_the_fetchers_traffic(
    hostile_proxy: Tripwire, httpserver: HTTPServer
) -> None:
    httpserver.expect_request("/").respond_with_data("direct")
    url = f"http://retro-clock.example:{httpserver.port}/"
    resolver = StaticResolver({"retro-clock.example": ["127.0.0.1"]})
    policy = AddressPolicy.from_setting(LOOPBACK_ALLOWED)

    async def run() -> bytes:
        async with HttpxFetcher(resolver, policy) as fetcher:
            return (await fetcher.fetch(FetchRequest(url))).body

    assert asyncio.run(run()) == b"direct"
    assert HttpxBlockingFetcher(resolver, policy).fetch(FetchRequest(url)).body == b"direct"
    with guarded_sync_client(AddressGuard(resolver, policy)) as client:
        assert client.get(url).content == b"direct"
    assert hostile_proxy.accepted == 0


def test_the_blocking_client_refuses_loopback_without_the_allow_list(tripwire: Tripwire) -> None:
    guard = AddressGuard(SystemResolver(), AddressPolicy())
    with guarded_sync_client(guard) as client, pytest.raises(AddressRefused):
        client.get(f"http://0x7f000001:{tripwire.port}/")
    assert tripwire.accepted == 0


def test_the_blocking_client_does_not_follow_redirects(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data("", status=301, headers={"Location": "/elsewhere"})
    guard = AddressGuard(SystemResolver(), AddressPolicy.from_setting(LOOPBACK_ALLOWED))
    with guarded_sync_client(guard) as client:
        answer = client.get(f"http://127.0.0.1:{httpserver.port}/")
    assert answer.status_code == 301
    assert len(httpserver.log) == 1


def test_the_guard_resolves_once_and_dials_only_checked_addresses() -> None:
    resolver = AlternatingResolver()
    guard = AddressGuard(resolver, AddressPolicy())
    assert guard.check("rebind.retro-clock.example") == (ipaddress.ip_address("93.184.215.14"),)
    with pytest.raises(AddressRefused) as refused:
        guard.check("rebind.retro-clock.example")
    assert refused.value.address == "127.0.0.1"
    assert resolver.queries == 2


def test_a_mapped_answer_is_dialled_as_the_ipv4_address_it_was_judged_as() -> None:
    guard = AddressGuard(
        StaticResolver({"m.example": ["::ffff:127.0.0.1"]}), AddressPolicy.from_setting("127.0.0.0/8")
    )
    assert guard.check("m.example") == (ipaddress.ip_address("127.0.0.1"),)


def test_a_name_without_addresses_is_a_resolution_failure() -> None:
    guard = AddressGuard(StaticResolver({}), AddressPolicy())
    with pytest.raises(NameNotResolved):
        guard.check("nowhere.retro-clock.example")


class SlowResolver:
    def resolve(self, host: str) -> tuple[IPAddress, ...]:
        time.sleep(1.0)
        return (ipaddress.ip_address("93.184.215.14"),)


def test_a_resolver_that_hangs_is_abandoned_at_the_resolution_timeout() -> None:
    guard = AddressGuard(SlowResolver(), AddressPolicy(), resolve_timeout_s=0.1)

    async def run() -> None:
        await guard.acheck("slow.retro-clock.example")

    with pytest.raises(NameNotResolved, match=r"no answer within 0\.1 s"):
        asyncio.run(run())


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("0x7f000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("[::]", "::"),
        ("::ffff:127.0.0.1", "::ffff:127.0.0.1"),
        ("fe80::1%25eth0", "fe80::1%eth0"),
    ],
)
def test_numeric_hosts_are_read_as_the_operating_system_reads_them(host: str, address: str) -> None:
    assert literal_address(host) == ipaddress.ip_address(address)


@pytest.mark.parametrize("host", ["retro-clock.example", "cafe", "deadbeef.example", "1.2.3.4.5"])
def test_names_are_not_mistaken_for_numbers(host: str) -> None:
    assert literal_address(host) is None


def test_a_pooled_connection_is_readable_only_with_data_or_the_peers_close() -> None:
    ours, peer = socket.socketpair()
    try:
        assert not _is_readable(ours)  # idle keep-alive connection: fit for reuse
        peer.sendall(b"x")
        assert _is_readable(ours)  # unexpected bytes: not reused
        ours.recv(1)
        peer.close()
        assert _is_readable(ours)  # the server closed it: not reused
    finally:
        ours.close()
    assert _is_readable(ours)  # closed on our side
