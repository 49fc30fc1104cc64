"""The client address of a request, the one rule the REST API, the tool server and the app share
(docs/security.md "Rate limits"): the peer's, unless the peer is a trusted proxy."""

import ipaddress
from collections.abc import Sequence

import falcon

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_networks(trusted_proxies: Sequence[str]) -> list[Network]:
    """The networks of `SITEAUDIT_TRUSTED_PROXIES` (CIDRs, host bits allowed)."""
    return [ipaddress.ip_network(p, strict=False) for p in trusted_proxies]


def client_address(req: falcon.Request, trusted: Sequence[Network]) -> str:
    """The peer address, or the first untrusted address of X-Forwarded-For when the peer is a trusted proxy.

    The peer first, then the header from its end (the hop the trusted proxy itself added): the first
    address not trusted is the client's. Anything that is no address, or trusted hops only, give the peer.
    """
    peer = req.remote_addr or "-"
    if not trusted:
        return peer  # no proxy is trusted: whatever the peer is (the access log asks so on every request)
    hops = [h.strip() for h in (req.get_header("X-Forwarded-For") or "").split(",")]
    for address in [peer, *reversed([h for h in hops if h])]:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return peer
        if not any(ip in net for net in trusted):
            return address
    return peer
