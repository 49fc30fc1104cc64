"""The link checks read hosts and schemes through shortcuts that must answer as a full URL parse does."""

import pytest
from check_cases import ORIGIN, page

from siteaudit.domain.checks import PageContext, check_page, url
from siteaudit.domain.facts import Link, LinkKind

TARGETS = [
    f"{ORIGIN}/about",
    "https://retro-clock.example",
    "https://retro-clock.example?x=1",
    "http://localhost/preview",
    "http://localhost:8000/preview",
    "http://LOCALHOST/upper",
    "http://user@localhost/login",
    "http://user@public.example/login",
    "https://192.168.1.20/x.png",
    "https://10.0.0.1#top",
    "https://[::1]/ipv6",
    "https://clock-parts.example/",
    "https://clock-parts.local/",
    "https://intranet/",
    "https://retro-clock.example.local/",
    "https://retro-clock.example:8443/",
    "https://retro-clock.example@localhost/",
    "http://local\thost/",
    "HTTP://example.org/",
]


def expected_local(targets: list[str], site_host: str) -> list[str]:
    """`localhost_link` as CHECKS.md defines it: another host than the site's, and not a public one."""
    found = [t for t in targets if url.host(t) != site_host and url.is_non_public_host(t)]
    return list(dict.fromkeys(found))


@pytest.mark.parametrize(
    "start_url",
    ["https://retro-clock.example/", "http://localhost:8000/", "http://localhost/", "https://10.0.0.1/"],
)
def test_localhost_links_are_those_a_full_parse_of_each_target_finds(start_url: str) -> None:
    links = tuple(Link(target=target, kind=LinkKind.A, internal=False) for target in TARGETS * 2)
    context = PageContext(start_url=start_url)
    issues = check_page(page(html_changes={"links": links}), context=context)
    reported = [i.details["targets"] for i in issues if i.check_code == "localhost_link"]
    expected = expected_local(TARGETS, context.host)
    assert reported == ([expected[:10]] if expected else [])


def test_links_to_http_are_read_by_scheme_whatever_its_case() -> None:
    targets = [
        "https://retro-clock.example/a",
        "HTTP://retro-clock.example/b",
        "http://retro-clock.example/c",
    ]
    links = tuple(Link(target=target, kind=LinkKind.A) for target in targets)
    issues = check_page(page(html_changes={"links": links}), context=PageContext(start_url=f"{ORIGIN}/"))
    found = [i.details["targets"] for i in issues if i.check_code == "links_to_http"]
    assert found == [["HTTP://retro-clock.example/b", "http://retro-clock.example/c"]]
