"""The client address rule every door shares (docs/security.md "Rate limits")."""

import pytest
from falcon import testing

from siteaudit.adapters.client_address import Network, client_address, trusted_networks

PROXIES = trusted_networks(["10.0.0.0/8", "192.168.1.7/24"])


@pytest.mark.parametrize(
    ("peer", "forwarded", "trusted", "client"),
    [
        ("203.0.113.5", "198.51.100.1", PROXIES, "203.0.113.5"),  # an untrusted peer's header is ignored
        ("10.0.0.2", None, PROXIES, "10.0.0.2"),  # a proxy that says nothing
        ("10.0.0.2", "198.51.100.1", PROXIES, "198.51.100.1"),
        ("10.0.0.2", "198.51.100.1, 10.1.2.3", PROXIES, "198.51.100.1"),  # trusted hops are walked past
        (
            "10.0.0.2",
            "6.6.6.6, 198.51.100.1, 192.168.1.9",
            PROXIES,
            "198.51.100.1",
        ),  # not what the client wrote
        ("10.0.0.2", " , 198.51.100.1 ,", PROXIES, "198.51.100.1"),  # empty hops are skipped
        ("10.0.0.2", "198.51.100.1, junk", PROXIES, "10.0.0.2"),  # a hop that is no address: the peer
        ("10.0.0.2", "10.3.3.3, 10.4.4.4", PROXIES, "10.0.0.2"),  # trusted hops only: the peer
        ("10.0.0.2", "198.51.100.1", [], "10.0.0.2"),  # no proxy trusted
        ("2001:db8::1", "198.51.100.1", trusted_networks(["2001:db8::/32"]), "198.51.100.1"),
    ],
)
def test_the_client_is_the_first_untrusted_address_from_the_peer_back(
    peer: str, forwarded: str | None, trusted: list[Network], client: str
) -> None:
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    req = testing.create_req(remote_addr=peer, headers=headers)
    assert client_address(req, trusted) == client


def test_a_peer_that_is_no_address_is_the_client_as_it_is() -> None:
    req = testing.create_req(remote_addr="unix-socket", headers={"X-Forwarded-For": "198.51.100.1"})
    assert client_address(req, trusted_networks(["0.0.0.0/0"])) == "unix-socket"
