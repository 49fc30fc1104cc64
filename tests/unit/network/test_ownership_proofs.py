"""Reading ownership proofs for real: a DNS server on 127.0.0.1 (dnslib) answering TXT records, and the
site's pages through the SSRF-guarded fetcher with redirects kept on the site's host."""

import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from dnslib import QTYPE, RCODE, RR, TXT
from dnslib.server import BaseResolver, DNSServer
from network_doubles import LOOPBACK_ALLOWED
from pytest_httpserver import HTTPServer

from siteaudit.adapters.http.fetcher import HttpxBlockingFetcher
from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.proofs import GuardedProofReader, NameServer, head_metas
from siteaudit.domain.network import AddressPolicy
from siteaudit.ports.site import TxtLookupFailed
from siteaudit.services.sites.usecases import RegisterSite, VerifySite

NAME = "_siteaudit-challenge.retro-clock.example"
LOOPBACK = AddressPolicy.from_setting(LOOPBACK_ALLOWED)
RESOLVER = StaticResolver({"retro-clock.example": ["127.0.0.1"], "impostor.example": ["127.0.0.1"]})


class _Zone(BaseResolver):  # type: ignore[misc]
    """TXT records by name: each record a tuple of character strings; an unknown name is NXDOMAIN."""

    def __init__(self, records: dict[str, list[tuple[bytes, ...]]]) -> None:
        self.records = records

    def resolve(self, request: Any, handler: Any) -> Any:
        reply = request.reply()
        name = str(request.q.qname).rstrip(".")
        if name not in self.records:
            reply.header.rcode = RCODE.NXDOMAIN
            return reply
        if request.q.qtype == QTYPE.TXT:
            for strings in self.records[name]:
                reply.add_answer(RR(request.q.qname, QTYPE.TXT, rdata=TXT(list(strings)), ttl=60))
        return reply


@pytest.fixture
def dns_zone() -> Iterator[Callable[[dict[str, list[tuple[bytes, ...]]]], str]]:
    servers: list[DNSServer] = []

    def start(records: dict[str, list[tuple[bytes, ...]]]) -> str:
        server = DNSServer(_Zone(records), address="127.0.0.1", port=0)
        server.start_thread()
        servers.append(server)
        return f"127.0.0.1:{server.server.server_address[1]}"

    yield start
    for server in servers:
        server.stop()


def reader(nameserver: str = "127.0.0.1:9", *, timeout: float = 1.0) -> GuardedProofReader:
    return GuardedProofReader(HttpxBlockingFetcher(RESOLVER, LOOPBACK), [nameserver], dns_timeout_s=timeout)


# --- dns ----------------------------------------------------------------------------------------------


def test_a_present_record_is_read(dns_zone: Any) -> None:
    server = dns_zone({NAME: [(b"v=spf1 -all",), (b"siteaudit-site-verification=tok",)]})
    assert reader(server).txt_records(NAME) == ("v=spf1 -all", "siteaudit-site-verification=tok")


def test_a_record_split_across_strings_is_joined(dns_zone: Any) -> None:
    server = dns_zone({NAME: [(b"siteaudit-site-verification=", b"tok_", b"abc")]})
    assert reader(server).txt_records(NAME) == ("siteaudit-site-verification=tok_abc",)


def test_an_absent_name_or_record_is_no_values(dns_zone: Any) -> None:
    server = dns_zone({"retro-clock.example": []})
    assert reader(server).txt_records(NAME) == ()  # NXDOMAIN
    assert reader(server).txt_records("retro-clock.example") == ()  # no TXT record


def test_a_wrong_value_is_returned_for_the_domain_to_judge(dns_zone: Any) -> None:
    server = dns_zone({NAME: [(b"siteaudit-site-verification=someone-else",)]})
    assert reader(server).txt_records(NAME) == ("siteaudit-site-verification=someone-else",)


def test_a_server_that_does_not_answer_is_a_lookup_failure() -> None:
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))  # bound, never answers
    try:
        with pytest.raises(TxtLookupFailed):
            reader(f"127.0.0.1:{silent.getsockname()[1]}", timeout=0.5).txt_records(NAME)
    finally:
        silent.close()


def test_a_server_that_is_down_is_a_lookup_failure() -> None:
    closed = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    with pytest.raises(TxtLookupFailed):
        reader(f"127.0.0.1:{port}", timeout=0.5).txt_records(NAME)


@pytest.mark.parametrize(
    ("text", "server"),
    [
        ("127.0.0.1:5353", NameServer("127.0.0.1", 5353)),
        ("9.9.9.9", NameServer("9.9.9.9", 53)),
        ("[::1]:5353", NameServer("::1", 5353)),
        ("::1", NameServer("::1", 53)),
    ],
)
def test_nameserver_settings_take_an_optional_port(text: str, server: NameServer) -> None:
    assert NameServer.parse(text) == server


# --- http ---------------------------------------------------------------------------------------------


def site(server: HTTPServer, path: str = "/", host: str = "retro-clock.example") -> str:
    return f"http://{host}:{server.port}{path}"


def test_the_file_is_read_through_the_guard(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/.well-known/siteaudit-site-verification.txt").respond_with_data(
        "tok_abc\n", content_type="text/plain"
    )
    url = site(httpserver, "/.well-known/siteaudit-site-verification.txt")
    page = reader().read(url, origin=site(httpserver, ""))
    assert (page.status, page.text, page.error) == (200, "tok_abc\n", None)


def test_the_meta_tags_of_the_head_are_read(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data(
        '<html><head><META Name="siteaudit-site-verification" content="tok_abc"><title>x</title></head>'
        '<body><meta name="late" content="ignored"></body></html>',
        content_type="text/html",
    )
    page = reader().read(site(httpserver), origin=site(httpserver, ""))
    assert page.metas == (("siteaudit-site-verification", "tok_abc"),)


def test_redirects_are_followed_on_the_sites_host(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data("", status=301, headers={"Location": "/home"})
    httpserver.expect_request("/home").respond_with_data(
        '<head><meta name="siteaudit-site-verification" content="tok_abc"></head>', content_type="text/html"
    )
    page = reader().read(site(httpserver), origin=site(httpserver, ""))
    assert page.url.endswith("/home") and page.metas == (("siteaudit-site-verification", "tok_abc"),)


def test_a_redirect_off_the_site_is_not_followed(httpserver: HTTPServer) -> None:
    elsewhere = site(httpserver, "/proof", host="impostor.example")
    httpserver.expect_request("/").respond_with_data("", status=302, headers={"Location": elsewhere})
    httpserver.expect_request("/proof").respond_with_data("tok_abc")
    page = reader().read(site(httpserver), origin=site(httpserver, ""))
    assert page.error is not None and "off the site" in page.error
    assert [r.path for r, _ in httpserver.log] == ["/"]


def test_a_private_address_is_refused_by_the_guard(httpserver: HTTPServer) -> None:
    strict = GuardedProofReader(HttpxBlockingFetcher(RESOLVER, AddressPolicy.from_setting("")))
    page = strict.read(site(httpserver), origin=site(httpserver, ""))
    assert page.error is not None and page.status is None
    assert httpserver.log == []


def test_a_missing_file_answers_its_status(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/nothing").respond_with_data("gone", status=404)
    page = reader().read(site(httpserver, "/nothing"), origin=site(httpserver, ""))
    assert (page.status, page.error) == (404, None)


def test_head_metas_ignore_the_body_and_tags_without_a_name() -> None:
    html = (
        '<meta property="og:title" content="x"><meta name="a" content="1"></head><meta name="b" content="2">'
    )
    assert head_metas(html) == (("a", "1"),)


# --- end to end: POST /sites/{id}/verify's use case over the real readers ------------------------------


def test_verification_through_the_application_reads_dns_at_the_configured_server(
    dns_zone: Any, httpserver: HTTPServer
) -> None:
    from siteaudit.adapters.memory.queue import MemoryTaskQueue
    from siteaudit.bootstrap import bootstrap
    from siteaudit.domain.site import VerificationFailed, VerifyMethod
    from siteaudit.settings import Settings

    records: dict[str, list[tuple[bytes, ...]]] = {NAME: [(b"siteaudit-site-verification=wrong",)]}
    server = dns_zone(records)
    app = bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), dns_nameservers=(server,)),
        queue=MemoryTaskQueue(),
        resolver=RESOLVER,
    )
    application = app.application
    application.create_user("owner@retro-clock.example", plan="growth")
    application.create_team("Retro Clock", owner_email="owner@retro-clock.example")
    caller = application.authenticate(application.create_key("owner@retro-clock.example", "Retro Clock").raw)
    registered = application.handle(RegisterSite(site(httpserver)), caller)

    with pytest.raises(VerificationFailed) as failed:
        application.handle(VerifySite(registered.id, None), caller)
    outcomes = [(c.method, c.outcome.value) for c in failed.value.checked]
    assert outcomes == [
        (VerifyMethod.SC, "not_connected"),
        (VerifyMethod.DNS, "wrong_value"),
        (VerifyMethod.META, "not_found"),
        (VerifyMethod.FILE, "not_found"),
    ]

    records[NAME] = [(b"siteaudit-site-verification=", registered.verify_token.encode())]
    proved = application.handle(VerifySite(registered.id, VerifyMethod.DNS), caller)
    assert proved.verified and proved.verified_via is VerifyMethod.DNS

    httpserver.expect_request("/.well-known/siteaudit-site-verification.txt").respond_with_data(
        registered.verify_token
    )
    again = application.handle(VerifySite(registered.id, VerifyMethod("file")), caller)
    assert again.verified_via is VerifyMethod.FILE
