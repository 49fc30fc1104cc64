"""The small readers the checks rely on: URL comparison form, non-public hosts, language tags, directives."""

import pytest
from check_cases import page
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.domain.checks import language, url
from siteaudit.domain.checks.page import directives


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        (
            "HTTPS://Retro-Clock.EXAMPLE:443/clocks/Wall?b=2#top",
            "https://retro-clock.example/clocks/Wall?b=2",
        ),
        ("http://retro-clock.example", "http://retro-clock.example/"),
        ("http://retro-clock.example:8080/", "http://retro-clock.example:8080/"),
        ("http://[::1", "http://[::1"),
    ],
)
def test_urls_compare_in_their_normal_form(raw: str, normalised: str) -> None:
    assert url.normalise(raw) == normalised


# URLs near the fast path's edges: schemes and hosts in any case, ports, userinfo, fragments, empty
# queries, spaces and control characters, non-ASCII.
_PIECES = st.sampled_from(
    [
        "http://",
        "https://",
        "HTTP://",
        "ftp://",
        "a.b",
        "A.b",
        "x-1.example",
        ":80",
        ":443",
        ":8080",
        ":080",
        "u@",
        "/",
        "//",
        "?",
        "#",
        "#f",
        "?q=1",
        "&",
        " ",
        "\t",
        "\n",
        "é",
        "%20",
        "\\",
        ";p",
        "[::1]",
        ".",
        "",
    ]
)


@given(st.lists(_PIECES, max_size=8).map("".join))
def test_the_fast_paths_of_normalise_and_host_agree_with_parsing(raw: str) -> None:
    assert url.normalise(raw) == url.parsed_normal_form(raw)
    assert url.host(raw) == url._parsed_host(raw)
    assert url.resolve(raw, "https://retro-clock.example/clocks/") == url.parsed_resolution(
        raw.strip(), "https://retro-clock.example/clocks/"
    )


@given(st.sampled_from(["http://", "https://"]), st.sampled_from(["retro-clock.example", "a.b"]), st.text())
def test_normalise_agrees_with_parsing_on_any_path(scheme: str, host: str, rest: str) -> None:
    raw = f"{scheme}{host}/{rest}"
    assert url.normalise(raw) == url.parsed_normal_form(raw)
    assert url.host(raw) == url._parsed_host(raw)
    assert url.resolve(raw, "https://retro-clock.example/clocks/") == url.parsed_resolution(
        raw.strip(), "https://retro-clock.example/clocks/"
    )


@pytest.mark.parametrize(
    ("href", "resolved"),
    [
        ("wall", "https://retro-clock.example/clocks/wall"),
        ("//cdn.example/a", "https://cdn.example/a"),
        ("mailto:shop@retro-clock.example", None),
        ("", None),
        ("javascript:void(0)", None),
    ],
)
def test_references_resolve_against_their_base(href: str, resolved: str | None) -> None:
    assert url.resolve(href, "https://retro-clock.example/clocks/") == resolved


@pytest.mark.parametrize(
    ("target", "non_public"),
    [
        ("http://localhost:3000/", True),
        ("http://app.localhost/", True),
        ("http://127.0.0.1/", True),
        ("http://10.1.2.3/", True),
        ("http://[::1]/", True),
        ("http://printer.local/", True),
        ("http://intranet/", True),
        ("https://clock-parts.example/", False),
        ("https://93.184.215.14/", False),
    ],
)
def test_non_public_hosts_are_recognised(target: str, non_public: bool) -> None:
    assert url.is_non_public_host(target) is non_public


@pytest.mark.parametrize(
    ("tag", "valid"),
    [("en", True), ("en-GB", True), ("pt-BR", True), ("zh-Hant-TW", True), ("es-419", True),
     ("de-CH-1996", True), ("en_US", False), ("en-UK", False), ("english", True), ("e", False), ("", False)],
)  # fmt: skip
def test_html_lang_is_judged_as_bcp_47(tag: str, valid: bool) -> None:
    assert language.is_valid_bcp47(tag) is valid


@pytest.mark.parametrize(
    ("value", "valid"),
    [("x-default", True), ("en", True), ("en-gb", True), ("EN-GB", True), ("zh-Hant", True),
     ("en-UK", False), ("en_US", False), ("eng", False), ("es-419", False), ("xx", False)],
)  # fmt: skip
def test_hreflang_values_are_iso_639_1_with_an_optional_iso_3166_region(value: str, valid: bool) -> None:
    assert language.is_valid_hreflang(value) is valid


def test_x_robots_tag_values_for_other_crawlers_are_ignored_but_valued_directives_are_not() -> None:
    found = directives(
        page(
            x_robots_tag=(
                "bingbot: noindex",
                "googlebot: nofollow",
                "unavailable_after: 25 Jun 2030 15:00:00 PST",
                "max-snippet: 0, NOARCHIVE",
            )
        )
    )
    assert found.tokens == frozenset(
        {"nofollow", "unavailable_after: 25 jun 2030 15:00:00 pst", "max-snippet: 0", "noarchive"}
    )
    assert not found.noindex
    assert found.nofollow


def test_none_means_noindex_and_nofollow() -> None:
    found = directives(page(html_changes={"meta_robots": ("none",)}))
    assert found.noindex
    assert found.nofollow
