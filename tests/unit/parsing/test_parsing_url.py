"""URL normalisation, the parameter policy, origins and the public-host predicate."""

import pytest

from siteaudit.adapters.url import (
    ParameterPolicy,
    host_of,
    is_absolute,
    is_internal,
    is_localhost_link,
    is_public_hostname,
    normalise,
    origin_of,
    without_ignored_parameters,
)

BASE = "https://retro-clock.example/blog/first-post?page=1"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTPS://Retro-Clock.EXAMPLE:443/Blog/", "https://retro-clock.example/Blog/"),
        ("http://retro-clock.example:80/a", "http://retro-clock.example/a"),
        ("http://retro-clock.example:8080/a", "http://retro-clock.example:8080/a"),
        ("https://retro-clock.example/a/../b/./c", "https://retro-clock.example/b/c"),
        ("https://retro-clock.example/a#section", "https://retro-clock.example/a"),
        (
            "https://retro-clock.example/%7ejane/%2f%e2%82%ac",
            "https://retro-clock.example/~jane/%2F%E2%82%AC",
        ),
        ("https://retro-clock.example/a b", "https://retro-clock.example/a%20b"),
        ("https://münchen.example/uhr", "https://xn--mnchen-3ya.example/uhr"),
        ("https://retro-clock.example", "https://retro-clock.example/"),
    ],
)
def test_normalise_canonicalises_scheme_host_port_path_and_escapes(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


def test_normalise_drops_tracking_parameters_and_keeps_the_others_in_order() -> None:
    url = "https://retro-clock.example/s?utm_source=a&q=clock&UTM_Medium=b&gclid=1&page=2&fbclid=x&_ga=3"
    assert normalise(url) == "https://retro-clock.example/s?q=clock&page=2"
    assert normalise("https://retro-clock.example/s?utm_source=a") == "https://retro-clock.example/s"


def test_the_parameter_policy_is_configurable() -> None:
    policy = ParameterPolicy(ignored=frozenset({"sessionid"}), ignored_prefixes=("ref_",))
    url = "https://retro-clock.example/?sessionid=9&ref_x=1&utm_source=kept"
    assert normalise(url, policy=policy) == "https://retro-clock.example/?utm_source=kept"
    assert normalise(url, policy=ParameterPolicy.keep_all()) == url
    assert without_ignored_parameters(url, ["SessionId", "utm_*"]) == "https://retro-clock.example/?ref_x=1"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("second-post", "https://retro-clock.example/blog/second-post"),
        ("/about", "https://retro-clock.example/about"),
        ("../shop", "https://retro-clock.example/shop"),
        ("?page=2", "https://retro-clock.example/blog/first-post?page=2"),
        ("//cdn.example/x.js", "https://cdn.example/x.js"),
        ("  /padded  ", "https://retro-clock.example/padded"),
        ("#top", "https://retro-clock.example/blog/first-post?page=1"),
        ("/\\evil.example/x", "https://evil.example/x"),
    ],
)
def test_normalise_resolves_relative_references_against_the_base(raw: str, expected: str) -> None:
    assert normalise(raw, BASE) == expected


@pytest.mark.parametrize(
    "raw",
    ["mailto:shop@retro-clock.example", "javascript:void(0)", "tel:+1", "ftp://x.example/", "http://a b/"],
)
def test_normalise_refuses_non_http_and_unparseable_urls(raw: str) -> None:
    assert normalise(raw, BASE) is None


def test_root_relative_links_resolve_identically_from_pages_of_different_hosts() -> None:
    assert normalise("/x", "https://a.example/p") == "https://a.example/x"
    assert normalise("/x", "https://b.example/p") == "https://b.example/x"


def test_origin_host_and_internal_predicates() -> None:
    assert origin_of("https://Retro-Clock.example:443/a?b") == "https://retro-clock.example"
    assert origin_of("http://retro-clock.example:8080/") == "http://retro-clock.example:8080"
    assert origin_of("mailto:a@b.example") is None
    assert host_of("https://user:pw@retro-clock.example:8443/x") == "retro-clock.example"
    assert host_of("http://[::1]:8080/") == "[::1]"
    assert is_internal("http://retro-clock.example/x", "https://retro-clock.example")
    assert not is_internal("https://shop.retro-clock.example/", "https://retro-clock.example")


def test_absolute_references_carry_scheme_and_host() -> None:
    assert is_absolute("https://retro-clock.example/")
    assert is_absolute("HTTP://retro-clock.example/")
    assert not is_absolute("//retro-clock.example/")
    assert not is_absolute("/blog")
    assert not is_absolute("blog:post")


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "api.localhost",
        "127.0.0.1",
        "127.1.2.3",
        "10.0.0.8",
        "172.20.1.1",
        "192.168.1.10",
        "169.254.1.1",
        "0.0.0.0",
        "[::1]",
        "[fd00::1]",
        "[::ffff:192.168.0.1]",
        "printer.local",
        "build.internal",
        "intranet",
        "staging.test",
    ],
)
def test_non_public_hosts(host: str) -> None:
    assert not is_public_hostname(host)


@pytest.mark.parametrize(
    "host", ["retro-clock.example", "8.8.8.8", "[2606:4700::1111]", "shop.example.co.uk"]
)
def test_public_hosts(host: str) -> None:
    assert is_public_hostname(host)


def test_localhost_links_are_recognised_from_a_normalised_url() -> None:
    assert is_localhost_link(normalise("http://LOCALHOST:3000/admin") or "")
    assert is_localhost_link(normalise("http://0x7f.1/") or "")  # 127.0.0.1 written in hex
    assert not is_localhost_link("https://retro-clock.example/")
