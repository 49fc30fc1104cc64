"""Reading ownership proofs: the site's pages through the SSRF-guarded fetcher (redirects followed only
on the site's own host), and TXT records through dnspython, at nameservers a setting may choose."""

from collections.abc import Sequence
from html.parser import HTMLParser
from typing import Final
from urllib.parse import urlsplit

import dns.exception
import dns.resolver
from attrs import frozen

from siteaudit.domain.network import FetchRequest, FollowedFetch, RedirectChain
from siteaudit.ports.network import BlockingFetcher
from siteaudit.ports.site import ProofPage, TxtLookupFailed

PROOF_MAX_BYTES: Final = 256 * 1024  # a home page's <head> or a one-line file: enough, and no more
PROOF_DEADLINE_S: Final = 10.0
PROOF_MAX_HOPS: Final = 5
DNS_TIMEOUT_S: Final = 5.0


class _HeadMetas(HTMLParser):
    """The (name, content) pairs of <meta> tags before <body> (or the end of <head>)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.metas: list[tuple[str, str]] = []
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        if tag == "body":
            self.done = True
        elif tag == "meta":
            values = {key.lower(): value or "" for key, value in attrs}
            if "name" in values:
                self.metas.append((values["name"], values.get("content", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.done = True


def head_metas(html: str) -> tuple[tuple[str, str], ...]:
    parser = _HeadMetas()
    parser.feed(html)
    parser.close()
    return tuple(parser.metas)


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").rstrip(".").lower()


@frozen
class NameServer:
    """One DNS server: an address and a port (53 unless written `address:port`, `[v6]:port`)."""

    address: str
    port: int = 53

    @classmethod
    def parse(cls, text: str) -> "NameServer":
        text = text.strip()
        if text.startswith("["):
            address, _, rest = text[1:].partition("]")
            return cls(address, int(rest.lstrip(":") or 53))
        if text.count(":") == 1:
            address, port = text.split(":")
            return cls(address, int(port))
        return cls(text)


class GuardedProofReader:
    """The ProofReader port: HTTP through `fetcher` (the SSRF guard), DNS through dnspython."""

    def __init__(
        self,
        fetcher: BlockingFetcher,
        nameservers: Sequence[str] = (),
        *,
        dns_timeout_s: float = DNS_TIMEOUT_S,
    ) -> None:
        self._fetcher = fetcher
        self._nameservers = tuple(NameServer.parse(n) for n in nameservers)
        self._dns_timeout_s = dns_timeout_s

    def read(self, url: str, *, origin: str) -> ProofPage:
        site_host = _host(origin)
        chain: RedirectChain | FollowedFetch = RedirectChain.start(
            FetchRequest(url, max_bytes=PROOF_MAX_BYTES, deadline_s=PROOF_DEADLINE_S), max_hops=PROOF_MAX_HOPS
        )
        while isinstance(chain, RedirectChain):
            if _host(chain.request.url) != site_host:
                return ProofPage(url, error=f"redirected off the site to {chain.request.url[:200]}")
            chain = chain.answered(self._fetcher.fetch(chain.request))
        answer = chain.response
        if answer.error is not None:
            detail = answer.error_detail or ""
            return ProofPage(answer.url, status=answer.status, error=f"{answer.error.value} {detail}".strip())
        text = answer.body.decode("utf-8", errors="replace")
        is_html = "html" in (answer.header("content-type") or "").lower() or "<meta" in text.lower()
        return ProofPage(
            answer.url,
            status=answer.status,
            text=text,
            metas=head_metas(text) if is_html else (),
            headers=answer.headers,
        )

    def _resolver(self) -> dns.resolver.Resolver:
        if not self._nameservers:
            resolver = dns.resolver.Resolver()
        else:
            resolver = dns.resolver.Resolver(configure=False)
            resolver.nameservers = [n.address for n in self._nameservers]
            resolver.nameserver_ports = {n.address: n.port for n in self._nameservers}
        resolver.lifetime = self._dns_timeout_s
        resolver.timeout = self._dns_timeout_s / 2
        return resolver

    def txt_records(self, name: str) -> tuple[str, ...]:
        try:
            answer = self._resolver().resolve(name, "TXT", search=False)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return ()
        except (dns.exception.DNSException, OSError) as exc:
            raise TxtLookupFailed(f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        return tuple(b"".join(rdata.strings).decode("utf-8", errors="replace") for rdata in answer)
