"""robots.txt facts and the rules the crawler obeys."""

from siteaudit.adapters.robots import parse_robots, robots_from_response
from siteaudit.domain.facts import FetchError
from siteaudit.domain.judgement import AI_CRAWLERS, ROBOTS_TXT_READ_BYTES

ROBOTS_URL = "https://retro-clock.example/robots.txt"


def test_rules_answer_can_fetch_and_crawl_delay() -> None:
    robots = parse_robots(
        b"User-agent: *\nDisallow: /cart\nAllow: /cart/help\nCrawl-delay: 2\n\n"
        b"User-agent: siteaudit\nDisallow: /private\n",
        url=ROBOTS_URL,
    )
    assert not robots.can_fetch("https://retro-clock.example/cart/1", "OtherBot")
    assert robots.can_fetch("https://retro-clock.example/clocks", "OtherBot")
    assert not robots.can_fetch("https://retro-clock.example/cart", "OtherBot")
    assert robots.can_fetch("https://retro-clock.example/cart/help", "OtherBot")
    assert robots.can_fetch("https://retro-clock.example/cart", "siteaudit")
    assert not robots.can_fetch("https://retro-clock.example/private/x", "siteaudit")
    assert robots.crawl_delay("OtherBot") == 2.0
    assert robots.crawl_delay("siteaudit") is None
    assert robots.facts.disallow_all_groups == ()
    assert robots.facts.bytes == len(
        b"User-agent: *\nDisallow: /cart\nAllow: /cart/help\nCrawl-delay: 2\n\n"
        b"User-agent: siteaudit\nDisallow: /private\n"
    )


def test_disallow_all_for_star_and_googlebot_groups() -> None:
    robots = parse_robots(
        b"User-agent: *\nDisallow: /\n\nUser-agent: Googlebot/2.1\nUser-agent: bingbot\nDisallow: /\n",
        url=ROBOTS_URL,
    )
    assert robots.facts.disallow_all_groups == ("*", "googlebot")
    assert not robots.can_fetch("https://retro-clock.example/", "siteaudit")


def test_an_allow_rule_overrides_disallow_all() -> None:
    robots = parse_robots(b"User-agent: *\nDisallow: /\nAllow: /public\n", url=ROBOTS_URL)
    assert robots.facts.disallow_all_groups == ()


def test_an_empty_allow_does_not_override_disallow_all() -> None:
    robots = parse_robots(b"User-agent: *\nAllow:\nDisallow: /*\n", url=ROBOTS_URL)
    assert robots.facts.disallow_all_groups == ("*",)


def test_disallow_of_a_section_is_not_disallow_all() -> None:
    robots = parse_robots(b"User-agent: *\nDisallow: /admin\nDisallow:\n", url=ROBOTS_URL)
    assert robots.facts.disallow_all_groups == ()


def test_groups_for_one_agent_are_merged() -> None:
    robots = parse_robots(
        b"User-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n\nUser-agent: Googlebot\nAllow: /ok\n",
        url=ROBOTS_URL,
    )
    assert robots.facts.disallow_all_groups == ()


def test_unknown_directives_and_lines_without_colon_are_invalid() -> None:
    robots = parse_robots(
        b"# comment only\nUser-agent: *\nDisallow: /a\nNoindex: /b\nthis is not a rule\n"
        b"Crawl-delay: 5\nHost: retro-clock.example\nClean-param: ref /\n",
        url=ROBOTS_URL,
    )
    assert robots.facts.invalid_lines == ("Noindex: /b", "this is not a rule")


def test_rules_before_any_user_agent_are_invalid() -> None:
    robots = parse_robots(b"Disallow: /secret\nUser-agent: *\nDisallow:\n", url=ROBOTS_URL)
    assert robots.facts.invalid_lines == ("Disallow: /secret",)


def test_an_html_page_served_as_robots_txt_is_all_invalid_lines() -> None:
    robots = parse_robots(b"<html>\n<body>\n<h1>Welcome</h1>\n</body>\n</html>\n", url=ROBOTS_URL)
    assert robots.facts.invalid_lines == ("<html>", "<body>", "<h1>Welcome</h1>", "</body>", "</html>")


def test_sitemaps_are_listed_and_resolved() -> None:
    robots = parse_robots(
        b"Sitemap: https://retro-clock.example/sitemap.xml\nsitemap: /news-sitemap.xml\n"
        b"User-agent: *\nDisallow:\nSitemap: https://cdn.example/s.xml.gz\n",
        url=ROBOTS_URL,
    )
    assert robots.facts.sitemaps == (
        "https://retro-clock.example/sitemap.xml",
        "https://retro-clock.example/news-sitemap.xml",
        "https://cdn.example/s.xml.gz",
    )


def test_ai_crawlers_blocked_by_name() -> None:
    robots = parse_robots(
        b"User-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n\nUser-agent: ClaudeBot\nDisallow: /private\n\n"
        b"User-agent: *\nAllow: /\n",
        url=ROBOTS_URL,
    )
    assert robots.facts.ai_crawlers_blocked == ("GPTBot", "CCBot")


def test_disallow_all_for_everyone_blocks_the_ai_crawlers_too() -> None:
    robots = parse_robots(b"User-agent: *\nDisallow: /\n", url=ROBOTS_URL)
    assert "Google-Extended" in robots.facts.ai_crawlers_blocked
    assert "anthropic-ai" in robots.facts.ai_crawlers_blocked
    assert robots.facts.ai_crawlers_blocked == AI_CRAWLERS


def test_a_byte_order_mark_does_not_break_the_first_line() -> None:
    robots = parse_robots(b"\xef\xbb\xbfUser-agent: *\nDisallow: /\n", url=ROBOTS_URL)
    assert robots.facts.invalid_lines == ()
    assert robots.facts.disallow_all_groups == ("*",)


def test_only_the_first_500_kib_are_read_but_the_size_is_recorded() -> None:
    padding = b"# " + b"x" * ROBOTS_TXT_READ_BYTES + b"\n"
    robots = parse_robots(b"User-agent: *\nDisallow: /a\n" + padding + b"Disallow: /\n", url=ROBOTS_URL)
    assert robots.facts.bytes > ROBOTS_TXT_READ_BYTES
    assert robots.facts.disallow_all_groups == ()
    assert robots.can_fetch("https://retro-clock.example/b", "siteaudit")


def test_a_missing_robots_txt_allows_everything() -> None:
    robots = robots_from_response(url=ROBOTS_URL, status_code=404, body=b"<h1>Not found</h1>")
    assert robots.can_fetch("https://retro-clock.example/anything", "siteaudit")
    assert robots.facts.status_code == 404
    assert robots.facts.invalid_lines == ()
    assert robots.crawl_delay("siteaudit") is None


def test_an_unreachable_robots_txt_disallows_everything() -> None:
    for robots in (
        robots_from_response(url=ROBOTS_URL, status_code=503),
        robots_from_response(url=ROBOTS_URL, status_code=429),
        robots_from_response(url=ROBOTS_URL, status_code=None, fetch_error=FetchError.TIMEOUT),
    ):
        assert not robots.can_fetch("https://retro-clock.example/", "siteaudit")
    timed_out = robots_from_response(url=ROBOTS_URL, status_code=None, fetch_error=FetchError.TIMEOUT)
    assert timed_out.facts.fetch_error is FetchError.TIMEOUT


def test_a_successful_response_is_parsed() -> None:
    robots = robots_from_response(url=ROBOTS_URL, status_code=200, body=b"User-agent: *\nDisallow: /x\n")
    assert robots.facts.status_code == 200
    assert not robots.can_fetch("https://retro-clock.example/x", "siteaudit")
