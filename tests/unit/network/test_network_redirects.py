"""Following redirects: at most ten hops, loops caught, ports kept to the crawl, secrets left behind."""

import asyncio
from collections.abc import Mapping

import pytest
from network_doubles import LOOPBACK_ALLOWED, RecordingBackend
from pytest_httpserver import HTTPServer

from siteaudit.adapters.http.fetcher import HttpxBlockingFetcher, HttpxFetcher, follow_redirects
from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.system import FixedClock
from siteaudit.domain.crawl import CrawlLimits, Scope
from siteaudit.domain.facts import FetchError, Hop
from siteaudit.domain.network import (
    AddressPolicy,
    FetchRequest,
    FetchResponse,
    FollowedFetch,
    next_request,
    redirect_refusal,
    redirect_target,
)
from siteaudit.services.crawl.politeness import Pacer, Politely

SITE = "https://retro-clock.example"


class ScriptedSite:
    """A Fetcher whose site is a table of URL -> (status, location); it records every request."""

    def __init__(self, pages: Mapping[str, tuple[int, str | None]]) -> None:
        self.pages = pages
        self.requests: list[FetchRequest] = []

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        self.requests.append(request)
        status, location = self.pages.get(request.url, (404, None))
        headers = (("location", location),) if location is not None else ()
        return FetchResponse(url=request.url, status=status, headers=headers)

    async def aclose(self) -> None:
        return None


def follow(site: ScriptedSite, request: FetchRequest, **options: object) -> FollowedFetch:
    return asyncio.run(follow_redirects(site, request, **options))  # type: ignore[arg-type]


def test_a_chain_of_redirects_ends_at_the_final_page_with_every_hop_recorded() -> None:
    site = ScriptedSite(
        {
            f"{SITE}/old": (301, "/older"),
            f"{SITE}/older": (302, "https://www.retro-clock.example/new#top"),
            "https://www.retro-clock.example/new": (200, None),
        }
    )

    followed = follow(site, FetchRequest(f"{SITE}/old"))

    assert followed.final_url == "https://www.retro-clock.example/new"
    assert followed.response.status == 200
    assert followed.hops == (
        Hop(url=f"{SITE}/old", status=301, location=f"{SITE}/older"),
        Hop(url=f"{SITE}/older", status=302, location="https://www.retro-clock.example/new"),
    )


def test_ten_redirects_are_followed_and_the_eleventh_is_not() -> None:
    ten = {f"{SITE}/{i}": (301, f"/{i + 1}") for i in range(10)} | {f"{SITE}/10": (200, None)}
    eleven = {f"{SITE}/{i}": (301, f"/{i + 1}") for i in range(11)} | {f"{SITE}/11": (200, None)}

    assert follow(ScriptedSite(ten), FetchRequest(f"{SITE}/0")).response.status == 200
    too_many = follow(ScriptedSite(eleven), FetchRequest(f"{SITE}/0"))
    assert too_many.response.error is FetchError.TOO_MANY_REDIRECTS
    assert len(too_many.hops) == 11


def test_a_redirect_back_to_a_visited_url_is_a_loop() -> None:
    site = ScriptedSite({f"{SITE}/a": (302, "/b"), f"{SITE}/b": (302, "/a")})

    followed = follow(site, FetchRequest(f"{SITE}/a"))

    assert followed.response.error is FetchError.REDIRECT_LOOP
    assert len(site.requests) == 2


def test_a_redirect_to_a_port_outside_the_crawl_is_refused_without_a_request() -> None:
    site = ScriptedSite({f"{SITE}/": (302, "http://retro-clock.example:6379/")})

    followed = follow(site, FetchRequest(f"{SITE}/"))

    assert followed.response.error is FetchError.REFUSED
    assert len(site.requests) == 1


def test_the_first_urls_own_port_stays_allowed_along_the_chain() -> None:
    site = ScriptedSite(
        {
            "http://retro-clock.example:8080/": (301, "/home"),
            "http://retro-clock.example:8080/home": (200, None),
        }
    )

    assert follow(site, FetchRequest("http://retro-clock.example:8080/")).response.status == 200


CHAINS: Mapping[str, tuple[str, Mapping[str, tuple[int, str | None]]]] = {
    "two hops to another host": (
        f"{SITE}/old",
        {f"{SITE}/old": (301, "/older"), f"{SITE}/older": (302, "https://www.retro-clock.example/new#top")},
    ),
    "eleven hops": (f"{SITE}/0", {f"{SITE}/{i}": (301, f"/{i + 1}") for i in range(11)}),
    "a loop": (f"{SITE}/a", {f"{SITE}/a": (302, "/b"), f"{SITE}/b": (302, "/a")}),
    "a port outside the crawl": (f"{SITE}/", {f"{SITE}/": (302, "http://retro-clock.example:6379/")}),
    "the first URL's own port": (
        "http://retro-clock.example:8080/",
        {
            "http://retro-clock.example:8080/": (301, "/home"),
            "http://retro-clock.example:8080/home": (200, None),
        },
    ),
}


@pytest.mark.parametrize("chain", CHAINS.values(), ids=CHAINS.keys())
def test_the_crawler_follows_redirects_exactly_as_the_fetcher_does(
    chain: tuple[str, Mapping[str, tuple[int, str | None]]],
) -> None:
    start, pages = chain
    by_fetcher, by_crawler = ScriptedSite(pages), ScriptedSite(pages)
    limits = CrawlLimits(unlimited_rate=True)
    scope = Scope.of(start)

    async def crawler_follows() -> FollowedFetch:
        politely = Politely(by_crawler, Pacer(limits, scope.host, None), limits, FixedClock(), scope, ())
        return await politely.follow(FetchRequest(start, headers=(("Accept", "text/html"),)))

    expected = follow(by_fetcher, FetchRequest(start, headers=(("Accept", "text/html"),)))
    assert asyncio.run(crawler_follows()) == expected
    assert by_crawler.requests == by_fetcher.requests


def test_a_redirect_without_a_location_is_the_final_answer() -> None:
    site = ScriptedSite({f"{SITE}/": (302, None)})

    followed = follow(site, FetchRequest(f"{SITE}/"))

    assert followed.response.status == 302 and followed.hops == ()


@pytest.mark.parametrize(
    ("method", "status", "expected"),
    [
        ("POST", 301, "GET"),
        ("POST", 302, "GET"),
        ("POST", 303, "GET"),
        ("GET", 303, "GET"),
        ("HEAD", 303, "HEAD"),
        ("HEAD", 301, "HEAD"),
        ("POST", 307, "POST"),
        ("POST", 308, "POST"),
    ],
)
def test_redirects_change_the_method_as_browsers_do(method: str, status: int, expected: str) -> None:
    request = FetchRequest(f"{SITE}/form", method=method, content=b"a=1" if method == "POST" else None)

    following = next_request(request, f"{SITE}/done", status)

    assert following.method == expected
    assert (following.content is not None) == (expected == "POST")


def test_secrets_and_validators_stay_behind_on_another_origin() -> None:
    request = FetchRequest(
        f"{SITE}/verify.txt",
        headers=(
            ("X-Service-Verify", "token-123"),
            ("Authorization", "Bearer x"),
            ("If-None-Match", '"v1"'),
            ("Accept-Language", "en"),
        ),
    )

    same = next_request(request, f"{SITE}/other", 301)
    other = next_request(request, "https://cdn.retro-clock.example/verify.txt", 301)

    assert same.header("x-service-verify") == "token-123" and same.header("if-none-match") is None
    assert other.headers == (("accept-language", "en"),)


def test_the_target_is_resolved_against_the_current_url_and_loses_its_fragment() -> None:
    request = FetchRequest(f"{SITE}/blog/first-post")
    answer = FetchResponse(url=request.url, status=301, headers=(("location", "../about#team"),))

    assert redirect_target(request, answer) == f"{SITE}/about"
    assert redirect_target(request, FetchResponse(url=request.url, status=200)) is None


def test_a_redirect_to_another_scheme_is_refused() -> None:
    refusal = redirect_refusal("ftp://retro-clock.example/", visited=(), hops=1, ports=frozenset({80, 443}))
    assert refusal is not None and refusal[0] is FetchError.REFUSED


def test_redirects_are_followed_through_the_guard_on_a_real_server(
    httpserver: HTTPServer, network: RecordingBackend
) -> None:
    base = f"http://127.0.0.1:{httpserver.port}"
    httpserver.expect_request("/a").respond_with_data("", status=301, headers={"Location": "/b"})
    httpserver.expect_request("/b").respond_with_data("", status=302, headers={"Location": f"{base}/c"})
    httpserver.expect_request("/c").respond_with_data("arrived")
    policy = AddressPolicy.from_setting(LOOPBACK_ALLOWED)

    async def run() -> FollowedFetch:
        async with HttpxFetcher(StaticResolver({}), policy, inner_backend=network) as fetcher:
            return await follow_redirects(fetcher, FetchRequest(f"{base}/a"))

    followed = asyncio.run(run())
    blocking = HttpxBlockingFetcher(StaticResolver({}), policy).fetch_following(FetchRequest(f"{base}/a"))

    assert followed.response.body == b"arrived" and blocking.response.body == b"arrived"
    assert [hop.status for hop in followed.hops] == [301, 302]
    assert blocking.hops == followed.hops
