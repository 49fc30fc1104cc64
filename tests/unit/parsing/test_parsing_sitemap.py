"""Sitemap parsing: urlsets, indexes, gzip, limits, and documents that are not sitemaps."""

import gzip
import io

from siteaudit.adapters.sitemap import parse_sitemap
from siteaudit.domain.facts import Hreflang

SITEMAP_URL = "https://retro-clock.example/sitemap.xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*locs: str, extra: str = "") -> bytes:
    entries = "".join(f"<url><loc>{loc}</loc><lastmod>2024-01-01</lastmod></url>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset {NS} {extra}>{entries}</urlset>'.encode()


def test_a_urlset_lists_its_page_urls() -> None:
    parsed = parse_sitemap(
        urlset(" https://retro-clock.example/ ", "https://retro-clock.example/blog/first-post"),
        url=SITEMAP_URL,
        found_via="conventional",
    )
    assert parsed.urls == ("https://retro-clock.example/", "https://retro-clock.example/blog/first-post")
    assert parsed.sitemaps == ()
    assert parsed.facts.url == SITEMAP_URL
    assert parsed.facts.found_via == "conventional"
    assert parsed.facts.is_index is False
    assert parsed.facts.url_count == 2
    assert parsed.facts.problems == ()


def test_a_sitemap_index_lists_child_sitemaps() -> None:
    body = (
        f'<?xml version="1.0"?><sitemapindex {NS}>'
        "<sitemap><loc>https://retro-clock.example/sitemap-posts.xml</loc></sitemap>"
        "<sitemap><loc>https://retro-clock.example/sitemap-pages.xml.gz</loc><lastmod>2024-02-02</lastmod></sitemap>"
        "</sitemapindex>"
    ).encode()
    parsed = parse_sitemap(body, url=SITEMAP_URL)
    assert parsed.facts.is_index is True
    assert parsed.facts.url_count == 2
    assert parsed.sitemaps == (
        "https://retro-clock.example/sitemap-posts.xml",
        "https://retro-clock.example/sitemap-pages.xml.gz",
    )
    assert parsed.urls == ()


def test_hreflang_alternates_of_listed_urls_are_read() -> None:
    body = (
        f'<?xml version="1.0"?><urlset {NS} xmlns:xhtml="http://www.w3.org/1999/xhtml">'
        "<url><loc>https://retro-clock.example/en/</loc>"
        '<xhtml:link rel="alternate" hreflang="de" href="https://retro-clock.example/de/"/>'
        '<xhtml:link rel="alternate" hreflang="x-default" href="https://retro-clock.example/"/>'
        "</url></urlset>"
    ).encode()
    parsed = parse_sitemap(body, url=SITEMAP_URL)
    assert parsed.hreflangs == (
        (
            "https://retro-clock.example/en/",
            Hreflang(
                lang="de",
                href="https://retro-clock.example/de/",
                target="https://retro-clock.example/de/",
                source="sitemap",
            ),
        ),
        (
            "https://retro-clock.example/en/",
            Hreflang(
                lang="x-default",
                href="https://retro-clock.example/",
                target="https://retro-clock.example/",
                source="sitemap",
            ),
        ),
    )


def test_gzip_is_recognised_by_its_magic_bytes() -> None:
    parsed = parse_sitemap(gzip.compress(urlset("https://retro-clock.example/a")), url=SITEMAP_URL + ".gz")
    assert parsed.urls == ("https://retro-clock.example/a",)
    assert parsed.facts.problems == ()


def test_a_stream_is_accepted_as_well_as_bytes() -> None:
    parsed = parse_sitemap(
        io.BytesIO(gzip.compress(urlset("https://retro-clock.example/a"))), url=SITEMAP_URL
    )
    assert parsed.urls == ("https://retro-clock.example/a",)


def test_broken_gzip_is_reported() -> None:
    assert parse_sitemap(b"\x1f\x8b\x08\x00garbage", url=SITEMAP_URL).facts.problems == ("bad_gzip",)


def test_truncated_gzip_is_reported_and_what_was_read_is_kept() -> None:
    whole = gzip.compress(urlset(*(f"https://retro-clock.example/p{i}" for i in range(2000))))
    parsed = parse_sitemap(whole[: len(whole) // 2], url=SITEMAP_URL)
    assert parsed.facts.problems == ("bad_gzip",)
    assert 0 < len(parsed.urls) < 2000


def test_a_document_with_another_root_is_the_wrong_root() -> None:
    parsed = parse_sitemap(b"<html><body><a href='/'>home</a></body></html>", url=SITEMAP_URL)
    assert parsed.facts.problems == ("wrong_root",)
    assert parsed.urls == ()


def test_text_that_is_not_xml_is_reported() -> None:
    assert parse_sitemap(b"Not Found", url=SITEMAP_URL).facts.problems == ("not_xml",)
    assert parse_sitemap(b"", url=SITEMAP_URL).facts.problems == ("not_xml",)


def test_malformed_xml_keeps_the_entries_before_the_error() -> None:
    body = f'<?xml version="1.0"?><urlset {NS}><url><loc>https://retro-clock.example/a</loc></url><url><loc>'.encode()
    parsed = parse_sitemap(body, url=SITEMAP_URL)
    assert parsed.facts.problems == ("not_xml",)
    assert parsed.urls == ("https://retro-clock.example/a",)


def test_a_plain_text_sitemap_lists_one_url_per_line() -> None:
    parsed = parse_sitemap(
        b"https://retro-clock.example/\n\nhttps://retro-clock.example/about\r\n",
        url="https://retro-clock.example/s.txt",
    )
    assert parsed.urls == ("https://retro-clock.example/", "https://retro-clock.example/about")
    assert parsed.facts.problems == ()


def test_more_than_the_url_limit_is_reported_and_only_the_limit_is_kept() -> None:
    parsed = parse_sitemap(
        urlset(*(f"https://retro-clock.example/p{i}" for i in range(12))), url=SITEMAP_URL, max_urls=10
    )
    assert parsed.facts.url_count == 12
    assert len(parsed.urls) == 10
    assert parsed.facts.problems == ("too_many_urls",)


def test_the_default_url_limit_is_fifty_thousand() -> None:
    parsed = parse_sitemap(
        urlset(*(f"https://retro-clock.example/p{i}" for i in range(50_001))), url=SITEMAP_URL
    )
    assert parsed.facts.url_count == 50_001
    assert len(parsed.urls) == 50_000
    assert parsed.facts.problems == ("too_many_urls",)


def test_a_body_over_the_size_limit_stops_parsing_and_is_reported() -> None:
    body = urlset(*(f"https://retro-clock.example/p{i}" for i in range(1000)))
    parsed = parse_sitemap(body, url=SITEMAP_URL, max_bytes=10_000)
    assert parsed.facts.problems == ("too_large",)
    assert 0 < len(parsed.urls) < 1000


def test_a_gzip_bomb_is_decompressed_only_up_to_the_size_limit() -> None:
    bomb = gzip.compress(urlset("https://retro-clock.example/") + b" " * 20_000_000)
    assert len(bomb) < 100_000
    parsed = parse_sitemap(bomb, url=SITEMAP_URL, max_bytes=1_000_000)
    assert parsed.facts.problems == ("too_large",)


def test_internal_entities_are_not_expanded() -> None:
    body = (
        '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY elsewhere "https://evil.example/">]>'
        f"<urlset {NS}><url><loc>&elsewhere;</loc></url><url><loc>https://retro-clock.example/ok</loc></url></urlset>"
    ).encode()
    parsed = parse_sitemap(body, url=SITEMAP_URL)
    assert parsed.urls == ("https://retro-clock.example/ok",)
    assert parsed.facts.url_count == 2


def test_a_billion_laughs_bomb_is_refused_without_expansion() -> None:
    laughs = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    body = (
        f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY lol0 "lol">{laughs}]>'
        f"<urlset {NS}><url><loc>&lol9;</loc></url></urlset>"
    ).encode()
    parsed = parse_sitemap(body, url=SITEMAP_URL)
    assert parsed.urls == ()
    assert parsed.facts.problems == ("not_xml",)


def test_external_entities_are_not_loaded() -> None:
    body = (
        '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY secret SYSTEM "file:///etc/hostname">'
        '<!ENTITY remote SYSTEM "http://127.0.0.1:9/x">]>'
        f"<urlset {NS}><url><loc>&secret;</loc></url><url><loc>&remote;</loc></url></urlset>"
    ).encode()
    parsed = parse_sitemap(body, url=SITEMAP_URL)
    assert parsed.urls == ()
    assert parsed.facts.url_count == 2
