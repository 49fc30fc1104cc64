"""Firewall and bot-challenge detection, provider by provider, and the pages that are not blocked."""

import pytest

from siteaudit.domain.firewall import FirewallProvider, detect_blocker

NORMAL_PAGE = (
    b"<!doctype html><html><head><title>Retro Clock</title></head><body><h1>Clocks</h1></body></html>"
)


@pytest.mark.parametrize(
    ("status", "headers", "provider"),
    [
        (403, [("CF-Mitigated", "challenge")], FirewallProvider.CLOUDFLARE),
        (200, [("cf-mitigated", "challenge")], FirewallProvider.CLOUDFLARE),
        (429, [("x-vercel-mitigated", "challenge")], FirewallProvider.VERCEL),
        (202, [("x-amzn-waf-action", "challenge")], FirewallProvider.AWS_WAF),
        (405, [("x-amzn-waf-action", "captcha")], FirewallProvider.AWS_WAF),
        (429, [("x-kpsdk-ct", "abc")], FirewallProvider.KASADA),
        (403, [("Set-Cookie", "datadome=abc; Path=/; Secure")], FirewallProvider.DATADOME),
        (403, [("set-cookie", "_px3=1; path=/")], FirewallProvider.PERIMETERX),
        (429, [("set-cookie", "_pxhd=1; path=/")], FirewallProvider.PERIMETERX),
        (403, [("set-cookie", "_abck=1; path=/")], FirewallProvider.AKAMAI),
        (403, [("set-cookie", "ak_bmsc=1; path=/")], FirewallProvider.AKAMAI),
        (403, [("set-cookie", "reese84=1")], FirewallProvider.IMPERVA),
        (403, [("set-cookie", "___utmvc=1")], FirewallProvider.IMPERVA),
        (403, [("set-cookie", "incap_ses_123_456=x")], FirewallProvider.IMPERVA),
        (200, [("x-sucuri-block", "1")], FirewallProvider.SUCURI),
    ],
)
def test_challenge_headers_name_the_provider(
    status: int, headers: list[tuple[str, str]], provider: FirewallProvider
) -> None:
    assert detect_blocker(status, headers, NORMAL_PAGE) is provider


@pytest.mark.parametrize(
    ("status", "headers", "provider"),
    [
        (403, [("cf-ray", "8a1b-AMS")], FirewallProvider.CLOUDFLARE),
        (503, [("Server", "cloudflare")], FirewallProvider.CLOUDFLARE),
        (403, [("x-iinfo", "1-2-3")], FirewallProvider.IMPERVA),
        (403, [("server", "AkamaiGHost")], FirewallProvider.AKAMAI),
        (503, [("x-akamai-transformed", "9")], FirewallProvider.AKAMAI),
        (403, [("x-sucuri-id", "1")], FirewallProvider.SUCURI),
        (403, [("server", "ddos-guard")], FirewallProvider.DDOS_GUARD),
    ],
)
def test_a_403_or_503_from_known_infrastructure_is_a_block(
    status: int, headers: list[tuple[str, str]], provider: FirewallProvider
) -> None:
    assert detect_blocker(status, headers, b"<html><body>Forbidden</body></html>") is provider


@pytest.mark.parametrize(
    ("status", "body", "provider"),
    [
        (403, b"<html><head><title>Just a moment...</title></head></html>", FirewallProvider.CLOUDFLARE),
        (
            200,
            b'<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1"></script>',
            FirewallProvider.CLOUDFLARE,
        ),
        (503, b"<script>window._cf_chl_opt={}</script>", FirewallProvider.CLOUDFLARE),
        (403, b"<title>Attention Required! | Cloudflare</title>", FirewallProvider.CLOUDFLARE),
        (429, b"<title>Vercel Security Checkpoint</title>", FirewallProvider.VERCEL),
        (202, b"<script>window.gokuProps = {}</script>", FirewallProvider.AWS_WAF),
        (200, b"<script>AwsWafJsChallenge()</script>", FirewallProvider.AWS_WAF),
        (200, b'<iframe src="/_Incapsula_Resource?x=1"></iframe>', FirewallProvider.IMPERVA),
        (403, b"Request unsuccessful. Incapsula incident ID: 123", FirewallProvider.IMPERVA),
        (403, b'<script src="https://ct.captcha-delivery.com/c.js"></script>', FirewallProvider.DATADOME),
        (403, b'<div id="px-captcha"></div>', FirewallProvider.PERIMETERX),
        (200, b"<p>Press &amp; Hold to confirm you are a human</p>", FirewallProvider.PERIMETERX),
        (403, b"<title>Access Denied - Sucuri Website Firewall</title>", FirewallProvider.SUCURI),
        (
            202,
            b'<meta http-equiv="refresh" content="0;/.well-known/sgcaptcha/?r=%2F">',
            FirewallProvider.SITEGROUND,
        ),
        (
            200,
            b"<html><body>The requested URL was rejected. Please consult with your administrator.</body></html>",
            FirewallProvider.F5,
        ),
    ],
)
def test_challenge_markers_in_a_small_body_name_the_provider(
    status: int, body: bytes, provider: FirewallProvider
) -> None:
    assert detect_blocker(status, [], body) is provider
    assert detect_blocker(status, [], body.decode()) is provider


def test_cloudflare_serving_a_normal_page_is_not_a_block() -> None:
    headers = [("server", "cloudflare"), ("cf-ray", "8a1b-AMS"), ("cf-cache-status", "HIT")]
    assert detect_blocker(200, headers, NORMAL_PAGE) is None


def test_akamai_serving_a_not_found_page_is_not_a_block() -> None:
    assert detect_blocker(404, [("server", "AkamaiGHost")], b"<h1>Not found</h1>") is None


def test_a_plain_403_without_infrastructure_or_markers_is_not_a_block() -> None:
    assert detect_blocker(403, [("server", "nginx")], b"<h1>403 Forbidden</h1>") is None


def test_challenge_cookies_on_a_successful_response_are_not_a_block() -> None:
    assert detect_blocker(200, [("set-cookie", "datadome=abc")], NORMAL_PAGE) is None


def test_kasada_headers_count_only_on_429() -> None:
    assert detect_blocker(200, [("x-kpsdk-ct", "abc")], NORMAL_PAGE) is None


def test_markers_are_ignored_on_other_statuses() -> None:
    assert detect_blocker(404, [], b"<title>Just a moment...</title>") is None


def test_markers_are_ignored_in_large_bodies_and_beyond_the_first_64_kb() -> None:
    article = b"<p>" + b"word " * 40_000 + b"Press &amp; Hold the button</p>"
    assert detect_blocker(200, [], article) is None
    prefix = b"<p>Press &amp; Hold</p>"
    assert detect_blocker(200, [], prefix, body_size=1_000_000) is None
    late = b"x" * 70_000 + b"<title>Just a moment...</title>"
    assert detect_blocker(200, [], late, body_size=len(late)) is None


def test_header_fast_path_wins_over_body_markers() -> None:
    headers = [("x-vercel-mitigated", "challenge")]
    assert detect_blocker(403, headers, b"<title>Just a moment...</title>") is FirewallProvider.VERCEL


def test_provider_names_are_plain_strings() -> None:
    assert detect_blocker(403, [("cf-mitigated", "challenge")], b"") == "cloudflare"
