"""The address policy of SECURITY.md 1, row by row: every deny range's edges, inside, and both neighbours."""

import ipaddress

import pytest

from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.network import (
    IPV4_DENIED,
    IPV6_DENIED,
    AddressPolicy,
    IPNetwork,
    denied_range,
    is_public_address,
    parse_networks,
)

# (address, allowed). Written out by hand rather than derived from the tables under test.
# Per range: lower neighbour, first, inside, last, upper neighbour.
# fmt: off
IPV4_ROWS = [
    # 0.0.0.0/8 (no lower neighbour)
    ("0.0.0.0", False), ("0.1.2.3", False), ("0.255.255.255", False), ("1.0.0.0", True),
    # 10.0.0.0/8
    ("9.255.255.255", True), ("10.0.0.0", False), ("10.20.30.40", False), ("10.255.255.255", False),
    ("11.0.0.0", True),
    # 100.64.0.0/10
    ("100.63.255.255", True), ("100.64.0.0", False), ("100.100.100.100", False), ("100.127.255.255", False),
    ("100.128.0.0", True),
    # 127.0.0.0/8
    ("126.255.255.255", True), ("127.0.0.0", False), ("127.0.0.1", False), ("127.255.255.255", False),
    ("128.0.0.0", True),
    # 169.254.0.0/16
    ("169.253.255.255", True), ("169.254.0.0", False), ("169.254.169.254", False), ("169.254.255.255", False),
    ("169.255.0.0", True),
    # 172.16.0.0/12
    ("172.15.255.255", True), ("172.16.0.0", False), ("172.20.1.1", False), ("172.31.255.255", False),
    ("172.32.0.0", True),
    # 192.0.0.0/24
    ("191.255.255.255", True), ("192.0.0.0", False), ("192.0.0.170", False), ("192.0.0.255", False),
    ("192.0.1.0", True),
    # 192.0.2.0/24
    ("192.0.1.255", True), ("192.0.2.0", False), ("192.0.2.77", False), ("192.0.2.255", False),
    ("192.0.3.0", True),
    # 192.31.196.0/24
    ("192.31.195.255", True), ("192.31.196.0", False), ("192.31.196.1", False), ("192.31.196.255", False),
    ("192.31.197.0", True),
    # 192.52.193.0/24
    ("192.52.192.255", True), ("192.52.193.0", False), ("192.52.193.9", False), ("192.52.193.255", False),
    ("192.52.194.0", True),
    # 192.88.99.0/24
    ("192.88.98.255", True), ("192.88.99.0", False), ("192.88.99.1", False), ("192.88.99.255", False),
    ("192.88.100.0", True),
    # 192.168.0.0/16
    ("192.167.255.255", True), ("192.168.0.0", False), ("192.168.1.1", False), ("192.168.255.255", False),
    ("192.169.0.0", True),
    # 192.175.48.0/24
    ("192.175.47.255", True), ("192.175.48.0", False), ("192.175.48.6", False), ("192.175.48.255", False),
    ("192.175.49.0", True),
    # 198.18.0.0/15
    ("198.17.255.255", True), ("198.18.0.0", False), ("198.19.0.1", False), ("198.19.255.255", False),
    ("198.20.0.0", True),
    # 198.51.100.0/24
    ("198.51.99.255", True), ("198.51.100.0", False), ("198.51.100.42", False), ("198.51.100.255", False),
    ("198.51.101.0", True),
    # 203.0.113.0/24
    ("203.0.112.255", True), ("203.0.113.0", False), ("203.0.113.7", False), ("203.0.113.255", False),
    ("203.0.114.0", True),
    # 224.0.0.0/4 (the upper neighbour is the first address of 240.0.0.0/4)
    ("223.255.255.255", True), ("224.0.0.0", False), ("239.1.2.3", False), ("239.255.255.255", False),
    ("240.0.0.0", False),
    # 240.0.0.0/4 (no upper neighbour)
    ("250.1.2.3", False), ("255.255.255.254", False), ("255.255.255.255", False),
    # public, for contrast
    ("8.8.8.8", True), ("1.1.1.1", True), ("93.184.215.14", True), ("185.199.108.153", True),
]

_LAST_OF_2000_3 = "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"

IPV6_ROWS = [
    # 2000::/3, the only space allowed: both neighbours and its edges
    ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("2000::", True), (_LAST_OF_2000_3, True),
    ("4000::", False),
    # ::/128 and ::1/128
    ("::", False), ("::1", False), ("::2", False),
    # ::ffff:0:0/96, mapped: judged as the IPv4 address inside
    ("::fffe:ffff:ffff", False), ("::ffff:0.0.0.0", False), ("::ffff:127.0.0.1", False),
    ("::ffff:7f00:1", False), ("::ffff:169.254.169.254", False), ("::ffff:10.0.0.1", False),
    ("::ffff:8.8.8.8", True), ("::ffff:255.255.255.255", False), ("::1:0:0:0", False),
    # ::/96, IPv4-compatible
    ("::0.0.0.3", False), ("::127.0.0.1", False), ("::8.8.8.8", False), ("::255.255.255.255", False),
    ("::1:0:0", False),
    # 64:ff9b::/96, NAT64
    ("64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", False), ("64:ff9b::", False), ("64:ff9b::8.8.8.8", False),
    ("64:ff9b::127.0.0.1", False), ("64:ff9b::ffff:ffff", False), ("64:ff9b::1:0:0", False),
    # 64:ff9b:1::/48, local-use NAT64
    ("64:ff9b:0:ffff:ffff:ffff:ffff:ffff", False), ("64:ff9b:1::", False), ("64:ff9b:1::a9fe:a9fe", False),
    ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", False), ("64:ff9b:2::", False),
    # 100::/64, discard
    ("ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("100::", False), ("100::1", False),
    ("100::ffff:ffff:ffff:ffff", False), ("100:0:0:1::", False),
    # 2001::/23 (Teredo is 2001::/32)
    ("2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", True), ("2001::", False),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False), ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", False),
    ("2001:200::", True),
    # 2001:db8::/32, documentation
    ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", True), ("2001:db8::", False),
    ("2001:db8:85a3::8a2e:370:7334", False), ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", False),
    ("2001:db9::", True),
    # 3fff::/20, documentation
    ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", True), ("3fff::", False), ("3fff:abc::1", False),
    ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("3fff:1000::", True),
    # 2002::/16, 6to4: embeds any IPv4 address
    ("2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", True), ("2002::", False), ("2002:7f00:1::", False),
    ("2002:808:808::", False), ("2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("2003::", True),
    # 2620:4f:8000::/48
    ("2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", True), ("2620:4f:8000::", False), ("2620:4f:8000::53", False),
    ("2620:4f:8000:ffff:ffff:ffff:ffff:ffff", False), ("2620:4f:8001::", True),
    # 5f00::/16
    ("5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("5f00::", False), ("5f00:1::1", False),
    ("5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("5f01::", False),
    # fc00::/7, unique local
    ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("fc00::", False), ("fd00:ec2::254", False),
    ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("fe00::", False),
    # fe80::/10, link-local, with and without zone ids
    ("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False), ("fe80::", False), ("fe80::1", False),
    ("fe80::1%eth0", False), ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False),
    # fec0::/10, site-local
    ("fec0::", False), ("fec0::1", False), ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False),
    # ff00::/8, multicast
    ("feff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", False), ("ff00::", False), ("ff02::1", False),
    ("ff05::1:3", False), ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", False),
    # public, for contrast, and a zone id on a public address
    ("2606:4700:4700::1111", True), ("2a00:1450:4001:80b::200e", True), ("2001:4860:4860::8888", True),
    ("2606:4700:4700::1111%eth0", False), ("[2606:4700:4700::1111]", True), ("[::1]", False),
]
# fmt: on


@pytest.mark.parametrize(("address", "allowed"), IPV4_ROWS + IPV6_ROWS)
def test_the_policy_allows_exactly_the_public_addresses(address: str, allowed: bool) -> None:
    assert is_public_address(address) is allowed, denied_range(address)


def test_the_table_has_the_required_number_of_rows() -> None:
    assert len(IPV4_ROWS) + len(IPV6_ROWS) >= 150
    assert len({a for a, _ in IPV4_ROWS + IPV6_ROWS}) == len(IPV4_ROWS) + len(IPV6_ROWS)


def test_every_deny_range_has_its_first_and_last_address_in_the_table() -> None:
    rows = {ipaddress.ip_address(a.strip("[]").split("%")[0]) for a, _ in IPV4_ROWS + IPV6_ROWS}
    networks: list[IPNetwork] = [*IPV4_DENIED, *IPV6_DENIED]
    for network in networks:
        assert network.network_address in rows, network
        assert network.broadcast_address in rows, network


@pytest.mark.parametrize(
    "address",
    ["100.64.0.1", "224.0.0.1", "64:ff9b::8.8.8.8", "2002:808:808::1", "::ffff:127.0.0.1", "192.0.0.9"],
)
def test_addresses_is_global_would_let_through_are_refused(address: str) -> None:
    assert not is_public_address(address)


@pytest.mark.parametrize(
    ("allow", "address", "allowed"),
    [
        ("127.0.0.0/8", "127.0.0.1", True),
        ("127.0.0.0/8", "127.8.9.10", True),
        ("127.0.0.0/8", "::ffff:127.0.0.1", True),
        ("127.0.0.0/8", "128.0.0.1", True),
        ("127.0.0.0/8", "10.0.0.1", False),
        ("127.0.0.0/8", "::1", False),
        ("127.0.0.0/8", "169.254.169.254", False),
        ("::1/128", "::1", True),
        ("::1/128", "127.0.0.1", False),
        ("10.1.0.0/16, 192.168.7.0/24", "10.1.200.3", True),
        ("10.1.0.0/16, 192.168.7.0/24", "10.2.0.1", False),
        ("10.1.0.0/16, 192.168.7.0/24", "192.168.7.7", True),
        ("fd00::/8", "fd12::1", True),
        ("fd00::/8", "fe80::1", False),
        ("", "127.0.0.1", False),
    ],
)
def test_the_allow_list_overrides_the_deny_tables_only_inside_its_networks(
    allow: str, address: str, allowed: bool
) -> None:
    assert AddressPolicy.from_setting(allow).permits(address) is allowed


def test_the_allow_setting_accepts_commas_and_spaces() -> None:
    assert parse_networks(" 127.0.0.0/8,::1/128  10.0.0.0/8 ") == (
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
        ipaddress.ip_network("10.0.0.0/8"),
    )


@pytest.mark.parametrize("setting", ["127.0.0.1/8", "localhost", "10.0.0.0/33", "fe80::/129"])
def test_a_malformed_allow_setting_is_refused_with_the_setting_named(setting: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        parse_networks(setting)
    assert "SITEAUDIT_ALLOW_NETWORKS" in raised.value.fields


def test_text_that_is_not_an_address_is_never_permitted() -> None:
    assert not AddressPolicy().permits("localhost")
    assert not AddressPolicy().permits("0x7f000001")


def test_refusals_name_the_rule_that_refused() -> None:
    assert AddressPolicy().refusal("169.254.169.254") == "169.254.0.0/16"
    assert AddressPolicy().refusal("::ffff:10.0.0.1") == "10.0.0.0/8"
    assert AddressPolicy().refusal("fe80::1") == "outside 2000::/3"
    assert AddressPolicy().refusal("2002:7f00:1::") == "2002::/16"
    assert AddressPolicy().refusal("8.8.8.8") is None
