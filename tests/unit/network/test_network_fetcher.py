"""HttpxFetcher against servers on 127.0.0.1: caps, deadlines, TLS through the pin, error classes."""

import asyncio
import gzip
import socket
import ssl
import time
import zlib
from collections.abc import Callable, Iterator

import pytest
import trustme
from network_doubles import LOOPBACK_ALLOWED, RawServer, RecordingBackend, Tripwire
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from siteaudit.adapters.http.fetcher import FetchLimits, HttpxBlockingFetcher, HttpxFetcher
from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.domain.facts import FetchError
from siteaudit.domain.identity import USER_AGENT
from siteaudit.domain.network import AddressPolicy, FetchRequest, FetchResponse

DEFAULT_LIMITS = FetchLimits()
StartRaw = Callable[[Callable[[socket.socket], None]], RawServer]

LOOPBACK = AddressPolicy.from_setting(LOOPBACK_ALLOWED)
RESOLVER = StaticResolver(
    {
        "retro-clock.example": ["127.0.0.1"],
        "impostor.example": ["127.0.0.1"],
        "retro-clock.test": ["127.0.0.1"],
    }
)


def fetch(
    request: FetchRequest,
    *,
    limits: FetchLimits = DEFAULT_LIMITS,
    verify: ssl.SSLContext | bool = True,
    policy: AddressPolicy = LOOPBACK,
    inner: RecordingBackend | None = None,
) -> FetchResponse:
    async def run() -> FetchResponse:
        async with HttpxFetcher(
            RESOLVER, policy, limits=limits, verify=verify, inner_backend=inner
        ) as fetcher:
            return await fetcher.fetch(request)

    return asyncio.run(run())


def local(
    server: HTTPServer | RawServer, path: str = "/", host: str = "127.0.0.1", scheme: str = "http"
) -> str:
    return f"{scheme}://{host}:{server.port}{path}"


def test_a_page_is_fetched_with_its_status_headers_body_and_timings(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/blog/first-post").respond_with_data(
        "<title>Retro clocks</title>", headers={"X-Robots-Tag": "noindex", "Content-Type": "text/html"}
    )

    answer = fetch(FetchRequest(local(httpserver, "/blog/first-post", host="retro-clock.example")))

    assert answer.ok and answer.status == 200
    assert answer.body == b"<title>Retro clocks</title>"
    assert answer.header("X-Robots-Tag") == "noindex"
    assert ("content-type", "text/html") in answer.headers
    assert answer.remote_address == "127.0.0.1"
    assert answer.ttfb_ms is not None and answer.total_ms is not None and answer.ttfb_ms <= answer.total_ms
    assert not answer.truncated


def test_the_request_carries_the_host_name_our_user_agent_and_bounded_encodings(
    httpserver: HTTPServer,
) -> None:
    httpserver.expect_request("/").respond_with_data("ok")

    fetch(FetchRequest(local(httpserver, host="retro-clock.example"), headers=(("X-Service-Verify", "tok"),)))

    sent = httpserver.log[0][0]
    assert sent.headers["Host"] == f"retro-clock.example:{httpserver.port}"
    assert sent.headers["User-Agent"] == USER_AGENT
    assert sent.headers["Accept-Encoding"] == "gzip, deflate"
    assert sent.headers["X-Service-Verify"] == "tok"


def test_a_caller_can_ask_for_identity_encoding_and_send_exact_bytes(httpserver: HTTPServer) -> None:
    body = b'{"event":"audit.ended","id":7}'
    httpserver.expect_request("/hook", method="POST", data=body).respond_with_data("", status=204)

    answer = fetch(
        FetchRequest(
            local(httpserver, "/hook"),
            method="POST",
            content=body,
            headers=(("Accept-Encoding", "identity"), ("Content-Type", "application/json")),
        )
    )

    assert answer.status == 204
    assert httpserver.log[0][0].headers["Accept-Encoding"] == "identity"


def test_the_body_is_read_to_the_cap_and_flagged_truncated(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/big").respond_with_data(b"x" * (5 * 1024 * 1024))

    started = time.perf_counter()
    answer = fetch(FetchRequest(local(httpserver, "/big"), max_bytes=4096))

    assert answer.ok and answer.body == b"x" * 4096 and answer.truncated
    assert time.perf_counter() - started < 2


def test_a_body_exactly_at_the_cap_is_not_truncated(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/exact").respond_with_data(b"y" * 4096)

    answer = fetch(FetchRequest(local(httpserver, "/exact"), max_bytes=4096))

    assert answer.body == b"y" * 4096 and not answer.truncated


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send it
    ],
)
def test_compressed_bodies_are_inflated_only_up_to_the_cap(
    httpserver: HTTPServer, encoding: str, compress: Callable[[bytes], bytes]
) -> None:
    bomb = compress(b"\0" * (16 * 1024 * 1024))
    httpserver.expect_request("/bomb").respond_with_data(bomb, headers={"Content-Encoding": encoding})

    answer = fetch(FetchRequest(local(httpserver, "/bomb"), max_bytes=100_000))

    assert answer.ok and answer.truncated and answer.body == b"\0" * 100_000


def test_a_small_gzip_page_is_inflated_whole(httpserver: HTTPServer) -> None:
    page = b"<h1>Retro clock repair</h1>" * 100
    httpserver.expect_request("/").respond_with_data(
        gzip.compress(page), headers={"Content-Encoding": "gzip"}
    )

    answer = fetch(FetchRequest(local(httpserver)))

    assert answer.body == page and not answer.truncated


def test_an_encoding_that_was_not_offered_is_a_protocol_error(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(b"\x1b\x00", headers={"Content-Encoding": "br"})

    answer = fetch(FetchRequest(local(httpserver)))

    assert answer.error is FetchError.PROTOCOL and answer.status == 200
    assert "br" in (answer.error_detail or "")


def test_a_corrupt_gzip_body_is_a_protocol_error(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(b"not gzip at all", headers={"Content-Encoding": "gzip"})

    assert fetch(FetchRequest(local(httpserver))).error is FetchError.PROTOCOL


def sleepy(seconds: float) -> Callable[[socket.socket], None]:
    def answer(conn: socket.socket) -> None:
        time.sleep(seconds)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    return answer


def test_a_server_slower_than_the_read_timeout_times_out(raw_server: StartRaw) -> None:
    server = raw_server(sleepy(1.5))

    started = time.perf_counter()
    answer = fetch(FetchRequest(local(server)), limits=FetchLimits(read_s=0.2))

    assert answer.error is FetchError.TIMEOUT and answer.status is None
    assert time.perf_counter() - started < 1.4


def drip(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
    for _ in range(100):
        time.sleep(0.05)
        conn.sendall(b".")


def test_a_drip_server_is_cut_at_the_wall_clock_deadline(raw_server: StartRaw) -> None:
    server = raw_server(drip)

    answer = fetch(FetchRequest(local(server), deadline_s=0.6), limits=FetchLimits(read_s=1.0))

    assert answer.error is FetchError.TIMEOUT
    assert answer.status == 200  # what arrived before the cut is kept
    assert answer.total_ms is not None and 550 <= answer.total_ms < 1500
    assert 0 < len(answer.body) < 20


def test_a_closed_port_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    assert fetch(FetchRequest(f"http://127.0.0.1:{port}/")).error is FetchError.CONNECT


def test_an_unknown_name_is_a_dns_error() -> None:
    answer = fetch(FetchRequest("http://nowhere.retro-clock.example/"))

    assert answer.error is FetchError.DNS
    assert "nowhere.retro-clock.example" in (answer.error_detail or "")


def test_loopback_without_the_allow_list_is_refused_before_any_connection(
    httpserver: HTTPServer, network: RecordingBackend
) -> None:
    httpserver.expect_request("/").respond_with_data("secret")

    answer = fetch(FetchRequest(local(httpserver)), policy=AddressPolicy(), inner=network)

    assert answer.error is FetchError.REFUSED and answer.body == b""
    assert network.dialled == [] and httpserver.log == []


def test_a_connection_the_allow_list_permits_reaches_the_tripwire(tripwire: Tripwire) -> None:
    # The control for the hostile-URL test: the tripwire does see connections when one is made.
    fetch(FetchRequest(f"http://127.0.0.1:{tripwire.port}/", deadline_s=1))
    time.sleep(0.1)
    assert tripwire.accepted == 1


def test_garbage_instead_of_http_is_a_protocol_error(raw_server: StartRaw) -> None:
    server = raw_server(lambda conn: conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"))

    assert fetch(FetchRequest(local(server))).error is FetchError.PROTOCOL


def test_a_response_head_beyond_the_limit_is_too_large(raw_server: StartRaw) -> None:
    def huge_head(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + b"X-Filler: " + b"a" * 300_000 + b"\r\n\r\n")

    server = raw_server(huge_head)

    answer = fetch(FetchRequest(local(server)))

    assert answer.error is FetchError.TOO_LARGE


def test_cookies_set_by_one_answer_are_never_sent_with_the_next(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/a").respond_with_data("a", headers={"Set-Cookie": "session=abc; Path=/"})
    httpserver.expect_request("/b").respond_with_data("b")

    async def run() -> None:
        async with HttpxFetcher(RESOLVER, LOOPBACK) as fetcher:
            await fetcher.fetch(FetchRequest(local(httpserver, "/a")))
            await fetcher.fetch(FetchRequest(local(httpserver, "/b")))

    asyncio.run(run())

    assert "Cookie" not in httpserver.log[1][0].headers


def test_a_redirect_is_returned_not_followed(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/old").respond_with_data("", status=301, headers={"Location": "/new"})

    answer = fetch(FetchRequest(local(httpserver, "/old")))

    assert answer.status == 301 and answer.is_redirect and answer.header("location") == "/new"
    assert len(httpserver.log) == 1


def test_head_requests_read_no_body(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/", method="HEAD").respond_with_data("", headers={"ETag": '"v1"'})

    answer = fetch(FetchRequest(local(httpserver), method="HEAD"))

    assert answer.status == 200 and answer.header("etag") == '"v1"' and answer.body == b""


def test_the_blocking_fetcher_works_from_plain_and_from_event_loop_threads(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data("plain")
    blocking = HttpxBlockingFetcher(RESOLVER, LOOPBACK)

    assert blocking.fetch(FetchRequest(local(httpserver))).body == b"plain"

    async def from_a_loop() -> bytes:
        return blocking.fetch(FetchRequest(local(httpserver))).body

    assert asyncio.run(from_a_loop()) == b"plain"


def test_the_blocking_fetcher_cuts_a_drip_at_the_deadline(raw_server: StartRaw) -> None:
    server = raw_server(drip)

    answer = HttpxBlockingFetcher(RESOLVER, LOOPBACK).fetch(FetchRequest(local(server), deadline_s=0.4))

    assert answer.error is FetchError.TIMEOUT and answer.total_ms is not None and answer.total_ms < 1500


@pytest.fixture(scope="module")
def certificate_authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def tls_site(certificate_authority: trustme.CA) -> Iterator[HTTPServer]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certificate_authority.issue_cert("retro-clock.example").configure_cert(context)
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.start()

    def host_echo(request: Request) -> Response:
        return Response(request.headers.get("Host", ""))

    server.expect_request("/").respond_with_handler(host_echo)
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def tls_server(tls_site: HTTPServer) -> HTTPServer:
    tls_site.clear_log()
    return tls_site


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def test_tls_verifies_the_host_name_while_connecting_to_the_pinned_address(
    tls_server: HTTPServer, certificate_authority: trustme.CA, network: RecordingBackend
) -> None:
    url = local(tls_server, host="retro-clock.example", scheme="https")

    answer = fetch(FetchRequest(url), verify=trusting(certificate_authority), inner=network)

    assert answer.ok, answer.error_detail
    assert answer.body == f"retro-clock.example:{tls_server.port}".encode()
    assert network.dialled == [("127.0.0.1", tls_server.port)]


def test_a_certificate_for_another_name_is_a_tls_error(
    tls_server: HTTPServer, certificate_authority: trustme.CA
) -> None:
    url = local(tls_server, host="impostor.example", scheme="https")

    answer = fetch(FetchRequest(url), verify=trusting(certificate_authority))

    assert answer.error is FetchError.TLS
    assert tls_server.log == []


def test_a_certificate_from_an_unknown_authority_is_a_tls_error(tls_server: HTTPServer) -> None:
    answer = fetch(FetchRequest(local(tls_server, host="retro-clock.example", scheme="https")))

    assert answer.error is FetchError.TLS
