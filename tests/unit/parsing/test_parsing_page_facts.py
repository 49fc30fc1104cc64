"""PageFacts assembled from a response: headers, Link and X-Robots-Tag parsing, blocking, HTML or not."""

from siteaudit.adapters.html.extract import (
    extract_page_facts,
    link_header_canonicals,
    link_header_hreflangs,
    parse_content_type,
    parse_link_header,
    x_robots_directives,
)
from siteaudit.domain.facts import Hop, Hreflang

ORIGIN = "https://retro-clock.example"
PAGE = "https://retro-clock.example/blog/first-post"
HTML = b"<!doctype html><html><head><title>First post</title></head><body><p>Hello clocks</p></body></html>"


def test_content_type_is_split_into_media_type_and_charset() -> None:
    assert parse_content_type('Text/HTML; Charset="UTF-8"') == ("text/html", "utf-8")
    assert parse_content_type("application/xhtml+xml") == ("application/xhtml+xml", None)
    assert parse_content_type(None) == (None, None)


def test_link_header_is_parsed_with_quoted_and_bare_parameters() -> None:
    links = parse_link_header(
        [
            '<https://retro-clock.example/a>; rel="canonical", </de/a>; rel=alternate; hreflang=de',
            '<https://retro-clock.example/b?x=1,2>; rel="preload"; title="a, b; c"',
        ]
    )
    assert links == [
        ("https://retro-clock.example/a", {"rel": "canonical"}),
        ("/de/a", {"rel": "alternate", "hreflang": "de"}),
        ("https://retro-clock.example/b?x=1,2", {"rel": "preload", "title": "a, b; c"}),
    ]


def test_canonicals_and_hreflangs_from_the_link_header_are_resolved() -> None:
    values = ['</blog/first-post>; rel="canonical"', '</de/>; rel="alternate"; hreflang="de"']
    assert link_header_canonicals(values, base=PAGE) == ("https://retro-clock.example/blog/first-post",)
    assert link_header_hreflangs(values, base=PAGE) == (
        Hreflang(lang="de", href="/de/", target="https://retro-clock.example/de/", source="header"),
    )


def test_x_robots_tag_keeps_values_for_everyone_and_for_googlebot() -> None:
    assert x_robots_directives(
        ["NoIndex", "googlebot: nofollow", "bingbot: noindex, nofollow", "max-snippet: 20, noarchive"]
    ) == ("noindex", "nofollow", "max-snippet: 20, noarchive")


def test_x_robots_tag_agent_prefixes_inside_one_combined_value() -> None:
    assert x_robots_directives(["noindex, otherbot: nofollow, googlebot: nosnippet"]) == (
        "noindex, nosnippet",
    )
    assert x_robots_directives(["siteaudit: noindex"], user_agents=["siteaudit"]) == ("noindex",)


def test_an_html_response_yields_page_and_html_facts() -> None:
    page = extract_page_facts(
        url="http://retro-clock.example/blog/first-post",
        final_url=PAGE,
        status=200,
        headers=[
            ("Content-Type", "text/html; charset=utf-8"),
            ("ETag", '"abc"'),
            ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT"),
            ("X-Robots-Tag", "noarchive"),
            ("Link", '</blog/first-post>; rel="canonical"'),
            ("Link", '</de/erster-beitrag>; rel="alternate"; hreflang="de"'),
            ("Set-Cookie", "session=secret"),
            ("Strict-Transport-Security", "max-age=63072000"),
        ],
        body=HTML,
        origin=ORIGIN,
        depth=2,
        redirects=(Hop(url="http://retro-clock.example/blog/first-post", status=301, location=PAGE),),
        ttfb_ms=120,
        total_ms=180,
    )
    assert page.url == "http://retro-clock.example/blog/first-post"
    assert page.final_url == PAGE
    assert page.status_code == 200
    assert page.depth == 2
    assert page.content_type == "text/html"
    assert page.charset == "utf-8"
    assert page.etag == '"abc"'
    assert page.last_modified == "Mon, 01 Jan 2024 00:00:00 GMT"
    assert page.x_robots_tag == ("noarchive",)
    assert page.link_canonicals == ("https://retro-clock.example/blog/first-post",)
    assert page.header("strict-transport-security") == "max-age=63072000"
    assert page.header("set-cookie") is None
    assert page.bytes == len(HTML)
    assert (page.ttfb_ms, page.total_ms) == (120, 180)
    assert page.blocked_by is None
    assert page.html is not None
    assert page.html.titles == ("First post",)
    assert page.html.hreflangs == (
        Hreflang(
            lang="de",
            href="/de/erster-beitrag",
            target="https://retro-clock.example/de/erster-beitrag",
            source="header",
        ),
    )


def test_a_non_html_response_has_no_html_facts() -> None:
    page = extract_page_facts(
        url="https://retro-clock.example/manual.pdf",
        status=200,
        headers=[("content-type", "application/pdf"), ("x-robots-tag", "noindex")],
        body=b"%PDF-1.7",
        origin=ORIGIN,
    )
    assert page.html is None
    assert page.content_type == "application/pdf"
    assert page.x_robots_tag == ("noindex",)


def test_a_response_without_content_type_is_sniffed() -> None:
    page = extract_page_facts(
        url=PAGE, status=200, headers=[], body=b"  <!DOCTYPE html><title>Sniffed</title>", origin=ORIGIN
    )
    assert page.html is not None
    assert page.html.titles == ("Sniffed",)
    plain = extract_page_facts(url=PAGE, status=200, headers=[], body=b"just text", origin=ORIGIN)
    assert plain.html is None


def test_a_challenged_response_is_blocked_and_not_parsed() -> None:
    page = extract_page_facts(
        url=PAGE,
        status=403,
        headers=[("content-type", "text/html"), ("server", "cloudflare"), ("cf-mitigated", "challenge")],
        body=b"<html><head><title>Just a moment...</title></head></html>",
        origin=ORIGIN,
    )
    assert page.blocked_by == "cloudflare"
    assert page.html is None


def test_an_error_page_is_still_parsed_so_its_template_can_be_recognised() -> None:
    page = extract_page_facts(
        url=PAGE,
        status=404,
        headers=[("content-type", "text/html")],
        body=b"<html><head><title>Not found | Retro Clock</title></head><body><h1>Page not found</h1></body></html>",
        origin=ORIGIN,
    )
    assert page.html is not None
    assert page.html.h1s == ("Page not found",)
    assert page.html.not_found_phrase is True


def test_a_redirect_body_is_not_parsed() -> None:
    page = extract_page_facts(
        url=PAGE,
        status=301,
        headers=[("content-type", "text/html"), ("location", "/x")],
        body=HTML,
        origin=ORIGIN,
    )
    assert page.html is None
    assert page.header("location") == "/x"
