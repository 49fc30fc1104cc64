"""Recognising a firewall or bot challenge in a response, so a challenged page is not audited as broken."""

import enum
from collections.abc import Iterable
from typing import Final


class FirewallProvider(enum.StrEnum):
    CLOUDFLARE = "cloudflare"
    VERCEL = "vercel"
    AWS_WAF = "aws_waf"
    KASADA = "kasada"
    DATADOME = "datadome"
    PERIMETERX = "perimeterx"
    AKAMAI = "akamai"
    IMPERVA = "imperva"
    SUCURI = "sucuri"
    DDOS_GUARD = "ddos_guard"
    SITEGROUND = "siteground"
    F5 = "f5"


P = FirewallProvider

# Only the start of the body is examined, and only when the whole body is small: challenge pages are
# a few kilobytes, while a long article that merely quotes a marker ("Press & Hold") is a real page.
BODY_PREFIX_BYTES: Final = 64 * 1024
SMALL_BODY_BYTES: Final = 128 * 1024

_CHALLENGE_HEADERS: Final[tuple[tuple[str, frozenset[str], FirewallProvider], ...]] = (
    ("cf-mitigated", frozenset({"challenge"}), P.CLOUDFLARE),
    ("x-vercel-mitigated", frozenset({"challenge"}), P.VERCEL),
    ("x-amzn-waf-action", frozenset({"challenge", "captcha"}), P.AWS_WAF),
)
# Cookie names (exact, or prefix when ending in "*") set by a challenge on 403/429.
_CHALLENGE_COOKIES: Final[tuple[tuple[str, FirewallProvider], ...]] = (
    ("datadome", P.DATADOME),
    ("_px3", P.PERIMETERX),
    ("_pxhd", P.PERIMETERX),
    ("_abck", P.AKAMAI),
    ("ak_bmsc", P.AKAMAI),
    ("reese84", P.IMPERVA),
    ("___utmvc", P.IMPERVA),
    ("incap_ses_*", P.IMPERVA),
)
_BODY_MARKERS: Final[tuple[tuple[bytes, FirewallProvider], ...]] = (
    (b"<title>just a moment...</title>", P.CLOUDFLARE),
    (b"/cdn-cgi/challenge-platform/", P.CLOUDFLARE),
    (b"_cf_chl_opt", P.CLOUDFLARE),
    (b"attention required! | cloudflare", P.CLOUDFLARE),
    (b"vercel security checkpoint", P.VERCEL),
    (b"gokuprops", P.AWS_WAF),
    (b"awswafjschallenge", P.AWS_WAF),
    (b"/_incapsula_resource", P.IMPERVA),
    (b"incapsula incident id", P.IMPERVA),
    (b"captcha-delivery.com", P.DATADOME),
    (b"px-captcha", P.PERIMETERX),
    (b"press &amp; hold", P.PERIMETERX),
    (b"press & hold", P.PERIMETERX),
    (b"access denied - sucuri website firewall", P.SUCURI),
    (b"/.well-known/sgcaptcha/", P.SITEGROUND),
    (b"the requested url was rejected. please consult with your administrator.", P.F5),
)
_BODY_MARKER_STATUSES: Final = frozenset({200, 202, 403, 429, 503})


def _cookie_names(headers: Iterable[tuple[str, str]]) -> list[str]:
    names = []
    for name, value in headers:
        if name.lower() == "set-cookie":
            names.append(value.split("=", 1)[0].strip().lower())
    return names


def _cookie_provider(cookie_names: list[str]) -> FirewallProvider | None:
    for cookie in cookie_names:
        for pattern, provider in _CHALLENGE_COOKIES:
            if pattern.endswith("*"):
                if cookie.startswith(pattern[:-1]):
                    return provider
            elif cookie == pattern:
                return provider
    return None


def _infrastructure(fields: dict[str, list[str]]) -> FirewallProvider | None:
    servers = [value.strip().lower() for value in fields.get("server", [])]
    if "cf-ray" in fields or "cloudflare" in servers:
        return P.CLOUDFLARE
    if "x-iinfo" in fields:
        return P.IMPERVA
    if any(s.startswith("akamaighost") for s in servers) or any(n.startswith("x-akamai-") for n in fields):
        return P.AKAMAI
    if "x-sucuri-id" in fields:
        return P.SUCURI
    if "ddos-guard" in servers:
        return P.DDOS_GUARD
    return None


def _body_provider(body_prefix: bytes | str) -> FirewallProvider | None:
    prefix = body_prefix[:BODY_PREFIX_BYTES]
    raw = prefix.encode("utf-8", "replace") if isinstance(prefix, str) else prefix
    lowered = raw.lower()
    for marker, provider in _BODY_MARKERS:
        if marker in lowered:
            return provider
    return None


def detect_blocker(
    status: int,
    headers: Iterable[tuple[str, str]],
    body_prefix: bytes | str,
    *,
    body_size: int | None = None,
) -> FirewallProvider | None:
    """The provider whose firewall or bot challenge answered instead of the page, or None.

    Follows the order of docs/checks.md "Conventions": challenge headers, then a 403/503 from known
    infrastructure, then challenge markers in the first 64 KB of a small body. Infrastructure serving a normal
    page is not a block. `body_size` is the full body length when `body_prefix` holds only its start.
    """
    pairs = list(headers)
    fields: dict[str, list[str]] = {}
    for name, value in pairs:
        fields.setdefault(name.lower(), []).append(value)

    for name, values, provider in _CHALLENGE_HEADERS:
        if any(value.strip().lower() in values for value in fields.get(name, [])):
            return provider
    if status == 429 and any(name.startswith("x-kpsdk-") for name in fields):
        return P.KASADA
    if status in (403, 429):
        cookie_provider = _cookie_provider(_cookie_names(pairs))
        if cookie_provider is not None:
            return cookie_provider
    if "x-sucuri-block" in fields:
        return P.SUCURI

    if status in (403, 503):
        infrastructure = _infrastructure(fields)
        if infrastructure is not None:
            return infrastructure

    size = len(body_prefix) if body_size is None else body_size
    if status in _BODY_MARKER_STATUSES and size <= SMALL_BODY_BYTES:
        return _body_provider(body_prefix)
    return None
