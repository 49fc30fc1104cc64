"""Hand-built facts for the check tests: a healthy page and site, and one positive and one negative case
per check code (the coverage test reads these tables)."""

from collections.abc import Callable
from typing import Any

import pytest
from attrs import evolve

from siteaudit.domain.checks import AuditFacts, PageContext
from siteaudit.domain.facts import (
    FetchError,
    Hop,
    Hreflang,
    HtmlFacts,
    Image,
    JsonLdBlock,
    Link,
    LinkKind,
    PageFacts,
    RobotsFacts,
    SitemapFacts,
)
from siteaudit.domain.render import Rendered, RenderEnd, RenderFacts, RequestNote
from siteaudit.services.crawl.render import raw_of

ORIGIN = "https://retro-clock.example"
START = f"{ORIGIN}/"
WALL = f"{ORIGIN}/clocks/wall"
CUCKOO = f"{ORIGIN}/clocks/cuckoo"
CONTEXT = PageContext(start_url=START)
REFERENCED = PageContext(start_url=START, referenced=True)
HSTS = (("strict-transport-security", "max-age=31536000"),)


def html(at: str = WALL, **changes: Any) -> HtmlFacts:
    """The HTML facts of a page with nothing to report."""
    healthy = HtmlFacts(
        titles=("Wall clocks restored by hand in Lisbon",),
        meta_descriptions=(
            "Mechanical wall clocks from the 1950s to the 1980s, restored in our Lisbon workshop and "
            "shipped with a two-year warranty.",
        ),
        canonicals=(at,),
        h1s=("Wall clocks",),
        heading_levels=(1, 2, 3, 2),
        lang="en",
        viewport="width=device-width, initial-scale=1",
        meta_charset="utf-8",
        open_graph=frozenset({"og:title", "og:description", "og:image"}),
        json_ld=(JsonLdBlock(valid_json=True, has_context=True, has_type=True, types=("Product",)),),
        links=(Link(target=START), Link(target=f"{ORIGIN}/about")),
        images=(Image(src=f"{ORIGIN}/img/wall.jpg", width="640", height="480"),),
        word_count=420,
        text_chars=2600,
        fingerprint=f"fp:{at}",
        dom_nodes=420,
    )
    return evolve(healthy, **changes)


def page(at: str = WALL, *, html_changes: dict[str, Any] | None = None, **changes: Any) -> PageFacts:
    """A page with nothing to report, changed where a case needs it."""
    healthy = PageFacts(
        url=at,
        depth=1,
        status_code=200,
        final_url=at,
        content_type="text/html",
        charset="utf-8",
        headers=HSTS,
        bytes=32_000,
        ttfb_ms=120,
        html=html(at, **(html_changes or {})),
    )
    redirects = changes.get("redirects")
    if isinstance(redirects, tuple) and redirects and "final_url" not in changes:
        changes["final_url"] = redirects[-1].location  # where the last hop pointed
    return evolve(healthy, **changes)


def hops(*steps: tuple[str, int, str]) -> tuple[Hop, ...]:
    return tuple(Hop(url=u, status=s, location=loc) for u, s, loc in steps)


def hreflangs(*pairs: tuple[str, str]) -> tuple[Hreflang, ...]:
    return tuple(Hreflang(lang=lang, href=href, target=href) for lang, href in pairs)


def sketch(seed: int, *, differ_from: int | None = None, positions: int = 0) -> tuple[int, ...]:
    """A 128-value MinHash-like sketch; `differ_from` copies another seed's sketch and changes
    `positions` values, so the estimated similarity is (128 - positions) / 128."""
    if differ_from is None:
        return tuple((seed * 1_000_003 + i * 7_919) % 4_294_967_291 for i in range(128))
    base = list(sketch(differ_from))
    for i in range(positions):
        base[i * 3 % 128] = 4_294_967_296 + seed * 1000 + i
    return tuple(base)


# --- page check cases: (code, facts, context) ----------------------------------------------------------

_LOOP = hops((WALL, 301, CUCKOO), (CUCKOO, 301, WALL))
_LONG = hops(*((f"{ORIGIN}/hop/{i}", 301, f"{ORIGIN}/hop/{i + 1}") for i in range(11)))

PAGE_POSITIVE = [
    pytest.param("http_4xx", page(status_code=404, html=None), REFERENCED, id="http_4xx"),
    pytest.param("http_4xx", page(status_code=410, html=None), REFERENCED, id="http_4xx-gone"),
    pytest.param("http_5xx", page(status_code=500, html=None), CONTEXT, id="http_5xx"),
    pytest.param(
        "fetch_failed",
        page(status_code=None, final_url=None, html=None, fetch_error=FetchError.DNS),
        CONTEXT,
        id="fetch_failed",
    ),
    pytest.param(
        "bot_challenge", page(status_code=403, blocked_by="cloudflare"), CONTEXT, id="bot_challenge"
    ),
    pytest.param("rate_limited", page(status_code=429, html=None), CONTEXT, id="rate_limited"),
    pytest.param(
        "rate_limited",
        page(status_code=503, html=None, headers=(("retry-after", "120"),)),
        CONTEXT,
        id="rate_limited-503",
    ),
    pytest.param(
        "redirect_chain",
        page(
            f"{ORIGIN}/old",
            redirects=hops((f"{ORIGIN}/old", 301, f"{ORIGIN}/older"), (f"{ORIGIN}/older", 301, WALL)),
        ),
        CONTEXT,
        id="redirect_chain",
    ),
    pytest.param(
        "redirect_loop",
        page(
            redirects=_LOOP, status_code=None, final_url=None, html=None, fetch_error=FetchError.REDIRECT_LOOP
        ),
        CONTEXT,
        id="redirect_loop",
    ),
    pytest.param(
        "redirect_loop", page(f"{ORIGIN}/hop/0", redirects=_LONG), CONTEXT, id="redirect_loop-too-many"
    ),
    pytest.param(
        "redirect_to_error",
        page(f"{ORIGIN}/old", redirects=hops((f"{ORIGIN}/old", 301, WALL)), status_code=404, html=None),
        CONTEXT,
        id="redirect_to_error",
    ),
    pytest.param(
        "redirect_to_error",
        page(
            f"{ORIGIN}/old",
            redirects=hops((f"{ORIGIN}/old", 301, "https://gone.example/")),
            status_code=None,
            html=None,
            fetch_error=FetchError.DNS,
        ),
        CONTEXT,
        id="redirect_to_error-fetch-failure",
    ),
    pytest.param(
        "redirect_temporary",
        page(f"{ORIGIN}/sale", redirects=hops((f"{ORIGIN}/sale", 302, WALL))),
        REFERENCED,
        id="redirect_temporary",
    ),
    pytest.param(
        "meta_refresh_redirect",
        page(html_changes={"meta_refresh": "0; url=/clocks/new"}),
        CONTEXT,
        id="meta_refresh",
    ),
    pytest.param(
        "meta_refresh_redirect",
        page(headers=(*HSTS, ("refresh", "5;url=https://retro-clock.example/"))),
        CONTEXT,
        id="meta_refresh-header",
    ),
    pytest.param(
        "http_not_redirected_to_https",
        page("http://retro-clock.example/clocks/wall", headers=()),
        CONTEXT,
        id="http_not_redirected_to_https",
    ),
    pytest.param("slow_response", page(ttfb_ms=1_500), CONTEXT, id="slow_response"),
    pytest.param("html_too_large", page(bytes=3 * 1024 * 1024), CONTEXT, id="html_too_large"),
    pytest.param(
        "soft_404",
        page(html_changes={"not_found_phrase": True, "text_chars": 300}),
        CONTEXT,
        id="soft_404-phrase",
    ),
    pytest.param(
        "soft_404",
        page(html_changes={"titles": ("Oops!  Page not found",)}),
        PageContext(start_url=START, not_found_titles=frozenset({"oops! page not found"})),
        id="soft_404-template",
    ),
    pytest.param("noindex", page(html_changes={"meta_robots": ("noindex, follow",)}), CONTEXT, id="noindex"),
    pytest.param("noindex", page(x_robots_tag=("googlebot: none",)), CONTEXT, id="noindex-header-none"),
    pytest.param(
        "nofollow_page", page(html_changes={"meta_robots": ("index, nofollow",)}), CONTEXT, id="nofollow"
    ),
    pytest.param(
        "robots_directive_conflict",
        page(html_changes={"meta_robots": ("index, follow",)}, x_robots_tag=("noindex",)),
        CONTEXT,
        id="robots_directive_conflict",
    ),
    pytest.param(
        "robots_directive_conflict",
        page(html_changes={"meta_robots": ("nofollow", "follow")}),
        CONTEXT,
        id="robots_directive_conflict-metas",
    ),
    pytest.param(
        "nosnippet_or_noimageindex",
        page(html_changes={"meta_robots": ("max-snippet:0",)}),
        CONTEXT,
        id="nosnippet_or_noimageindex",
    ),
    pytest.param(
        "nosnippet_or_noimageindex", page(x_robots_tag=("noimageindex",)), CONTEXT, id="noimageindex-header"
    ),
    pytest.param("canonical_missing", page(html_changes={"canonicals": ()}), CONTEXT, id="canonical_missing"),
    pytest.param(
        "canonical_multiple",
        page(html_changes={"canonicals": (WALL, CUCKOO)}),
        CONTEXT,
        id="canonical_multiple",
    ),
    pytest.param(
        "canonical_relative",
        page(html_changes={"canonicals": ("/clocks/wall",)}),
        CONTEXT,
        id="canonical_relative",
    ),
    pytest.param(
        "canonical_invalid", page(html_changes={"canonicals": ("  ",)}), CONTEXT, id="canonical_invalid"
    ),
    pytest.param(
        "canonical_invalid",
        page(html_changes={"canonicals": ("http://[::1/clocks",)}),
        CONTEXT,
        id="canonical_invalid-unparseable",
    ),
    pytest.param(
        "canonical_header_mismatch",
        page(link_canonicals=(CUCKOO,)),
        CONTEXT,
        id="canonical_header_mismatch",
    ),
    pytest.param(
        "canonical_not_self", page(html_changes={"canonicals": (CUCKOO,)}), CONTEXT, id="canonical_not_self"
    ),
    pytest.param(
        "canonical_not_self",
        page(html_changes={"canonicals": ()}, link_canonicals=(CUCKOO,)),
        CONTEXT,
        id="header",
    ),
    pytest.param(
        "canonical_to_root", page(html_changes={"canonicals": (START,)}), CONTEXT, id="canonical_to_root"
    ),
    pytest.param("title_missing", page(html_changes={"titles": ()}), CONTEXT, id="title_missing"),
    pytest.param("title_missing", page(html_changes={"titles": ("   ",)}), CONTEXT, id="title_missing-blank"),
    pytest.param(
        "title_multiple",
        page(html_changes={"titles": ("Wall clocks restored", "Retro Clock")}),
        CONTEXT,
        id="title_multiple",
    ),
    pytest.param("title_too_long", page(html_changes={"titles": ("W" * 61,)}), CONTEXT, id="title_too_long"),
    pytest.param(
        "title_too_short", page(html_changes={"titles": ("Clocks",)}), CONTEXT, id="title_too_short"
    ),
    pytest.param(
        "meta_description_missing",
        page(html_changes={"meta_descriptions": ()}),
        CONTEXT,
        id="meta_description_missing",
    ),
    pytest.param(
        "meta_description_too_long",
        page(html_changes={"meta_descriptions": ("d" * 161,)}),
        CONTEXT,
        id="meta_description_too_long",
    ),
    pytest.param(
        "meta_description_too_short",
        page(html_changes={"meta_descriptions": ("Wall clocks.",)}),
        CONTEXT,
        id="meta_description_too_short",
    ),
    pytest.param(
        "meta_description_multiple",
        page(html_changes={"meta_descriptions": ("d" * 100, "e" * 100)}),
        CONTEXT,
        id="meta_description_multiple",
    ),
    pytest.param("h1_missing", page(html_changes={"h1s": (" ",)}), CONTEXT, id="h1_missing"),
    pytest.param(
        "h1_multiple", page(html_changes={"h1s": ("Wall clocks", "Cuckoo clocks")}), CONTEXT, id="h1_multiple"
    ),
    pytest.param(
        "heading_order_skip", page(html_changes={"heading_levels": (1, 2, 4)}), CONTEXT, id="heading_skip"
    ),
    pytest.param("thin_content", page(html_changes={"word_count": 149}), CONTEXT, id="thin_content"),
    pytest.param("html_lang_missing", page(html_changes={"lang": None}), CONTEXT, id="html_lang_missing"),
    pytest.param("html_lang_invalid", page(html_changes={"lang": "en_US"}), CONTEXT, id="html_lang_invalid"),
    pytest.param(
        "html_lang_invalid", page(html_changes={"lang": "en-UK"}), CONTEXT, id="html_lang_invalid-region"
    ),
    pytest.param(
        "viewport_missing", page(html_changes={"viewport": "initial-scale=1"}), CONTEXT, id="viewport_missing"
    ),
    pytest.param(
        "charset_or_doctype_missing",
        page(html_changes={"has_doctype": False}),
        CONTEXT,
        id="doctype_missing",
    ),
    pytest.param(
        "charset_or_doctype_missing",
        page(charset=None, html_changes={"meta_charset": None}),
        CONTEXT,
        id="charset_missing",
    ),
    pytest.param(
        "internal_nofollow_link",
        page(html_changes={"links": (Link(target=CUCKOO, nofollow=True),)}),
        CONTEXT,
        id="internal_nofollow_link",
    ),
    pytest.param(
        "dead_end_page",
        page(html_changes={"links": (Link(target=f"{ORIGIN}/style.css", kind=LinkKind.LINK),)}),
        CONTEXT,
        id="dead_end_page",
    ),
    pytest.param(
        "links_to_http",
        page(html_changes={"links": (Link(target="http://clock-parts.example/", internal=False),)}),
        CONTEXT,
        id="links_to_http",
    ),
    pytest.param(
        "non_descriptive_anchor",
        page(html_changes={"anchors_generic": ("click here",)}),
        CONTEXT,
        id="non_descriptive_anchor",
    ),
    pytest.param(
        "uncrawlable_link",
        page(html_changes={"uncrawlable_anchors": ("javascript:void(0)",)}),
        CONTEXT,
        id="uncrawlable_link",
    ),
    pytest.param(
        "localhost_link",
        page(html_changes={"links": (Link(target="http://localhost:8000/preview", internal=False),)}),
        CONTEXT,
        id="localhost_link",
    ),
    pytest.param(
        "localhost_link",
        page(
            html_changes={
                "links": (Link(target="https://192.168.1.20/x.png", kind=LinkKind.IMG, internal=False),)
            }
        ),
        CONTEXT,
        id="localhost_link-private-address",
    ),
    pytest.param(
        "mixed_content",
        page(html_changes={"mixed_content": ("http://cdn.retro-clock.example/app.js",)}),
        CONTEXT,
        id="mixed_content",
    ),
    pytest.param(
        "hreflang_invalid_code",
        page(html_changes={"hreflangs": hreflangs(("en-UK", WALL), ("x-default", WALL))}),
        CONTEXT,
        id="hreflang_invalid_code",
    ),
    pytest.param(
        "hreflang_missing_self",
        page(html_changes={"hreflangs": hreflangs(("pt", f"{ORIGIN}/pt/clocks/wall"), ("x-default", START))}),
        CONTEXT,
        id="hreflang_missing_self",
    ),
    pytest.param(
        "hreflang_missing_x_default",
        page(html_changes={"hreflangs": hreflangs(("en", WALL), ("pt", f"{ORIGIN}/pt/clocks/wall"))}),
        CONTEXT,
        id="hreflang_missing_x_default",
    ),
    pytest.param(
        "img_alt_missing",
        page(
            html_changes={"images": (Image(src=f"{ORIGIN}/img/a.jpg", has_alt=False, width="1", height="1"),)}
        ),
        CONTEXT,
        id="img_alt_missing",
    ),
    pytest.param(
        "structured_data_invalid",
        page(html_changes={"json_ld": (JsonLdBlock(valid_json=False),)}),
        CONTEXT,
        id="structured_data_invalid",
    ),
    pytest.param(
        "structured_data_invalid",
        page(html_changes={"json_ld": (JsonLdBlock(valid_json=True, has_context=True),)}),
        CONTEXT,
        id="structured_data_invalid-no-type",
    ),
    pytest.param(
        "structured_data_missing", page(html_changes={"json_ld": ()}), CONTEXT, id="structured_data_missing"
    ),
    pytest.param(
        "open_graph_missing",
        page(html_changes={"open_graph": frozenset({"og:title", "og:description"})}),
        CONTEXT,
        id="open_graph_missing",
    ),
    pytest.param("url_uppercase", page(f"{ORIGIN}/Clocks/Wall"), CONTEXT, id="url_uppercase"),
    pytest.param("url_underscores", page(f"{ORIGIN}/wall_clocks"), CONTEXT, id="url_underscores"),
    pytest.param("url_whitespace", page(f"{ORIGIN}/wall%20clocks"), CONTEXT, id="url_whitespace"),
    pytest.param("url_double_slash", page(f"{ORIGIN}/clocks//wall"), CONTEXT, id="url_double_slash"),
    pytest.param("url_non_ascii", page(f"{ORIGIN}/rel%C3%B3gios"), CONTEXT, id="url_non_ascii"),
    pytest.param("url_non_ascii", page(f"{ORIGIN}/relógios"), CONTEXT, id="url_non_ascii-raw"),
    pytest.param(
        "url_repeated_segment", page(f"{ORIGIN}/clocks/clocks/wall"), CONTEXT, id="url_repeated_segment"
    ),
    pytest.param(
        "too_many_links",
        page(html_changes={"links": tuple(Link(target=f"{ORIGIN}/p/{i}") for i in range(101))}),
        CONTEXT,
        id="too_many_links",
    ),
    pytest.param(
        "too_many_links",
        page(
            html_changes={
                "links": tuple(Link(target=f"{ORIGIN}/p/{i}") for i in range(40)),
                "anchor_links": 13_000,  # every <a href> counts: 13,000 links to 40 targets
            }
        ),
        CONTEXT,
        id="too_many_links-repeated-targets",
    ),
    pytest.param(
        "img_missing_dimensions",
        page(html_changes={"images": (Image(src=f"{ORIGIN}/img/a.jpg", width="640"),)}),
        CONTEXT,
        id="img_missing_dimensions",
    ),
    pytest.param("hsts_missing", page(headers=()), CONTEXT, id="hsts_missing"),
    pytest.param(
        "insecure_form",
        page(html_changes={"insecure_forms": ("http://retro-clock.example/subscribe",)}),
        CONTEXT,
        id="insecure_form",
    ),
    pytest.param(
        "hreflang_relative_url",
        page(
            html_changes={
                "hreflangs": (
                    Hreflang(lang="en", href="/clocks/wall", target=WALL),
                    Hreflang(lang="x-default", href=WALL, target=WALL),
                )
            }
        ),
        CONTEXT,
        id="hreflang_relative_url",
    ),
    pytest.param(
        "hreflang_lang_mismatch",
        page(html_changes={"lang": "en", "hreflangs": hreflangs(("pt-PT", WALL), ("x-default", WALL))}),
        CONTEXT,
        id="hreflang_lang_mismatch",
    ),
    pytest.param("metas_in_body", page(html_changes={"metas_in_body": 2}), CONTEXT, id="metas_in_body"),
    pytest.param(
        "metas_in_body", page(html_changes={"titles_in_body": 1}), CONTEXT, id="metas_in_body-title"
    ),
    pytest.param("dom_too_large", page(html_changes={"dom_nodes": 1_501}), CONTEXT, id="dom_too_large"),
]

PAGE_NEGATIVE = [
    pytest.param("http_4xx", page(status_code=404, html=None), CONTEXT, id="http_4xx-not-known-to-be-linked"),
    pytest.param(
        "http_4xx", page(status_code=429, html=None), REFERENCED, id="http_4xx-429-is-rate-limiting"
    ),
    pytest.param(
        "http_5xx", page(status_code=503, html=None, headers=(("retry-after", "5"),)), CONTEXT, id="5xx"
    ),
    pytest.param("fetch_failed", page(), CONTEXT, id="fetch_failed"),
    pytest.param(
        "fetch_failed",
        page(redirects=_LOOP, status_code=None, html=None, fetch_error=FetchError.REDIRECT_LOOP),
        CONTEXT,
        id="fetch_failed-loop-is-its-own-check",
    ),
    pytest.param("bot_challenge", page(status_code=403, html=None), CONTEXT, id="bot_challenge-plain-403"),
    pytest.param(
        "rate_limited", page(status_code=503, html=None), CONTEXT, id="rate_limited-503-without-retry"
    ),
    pytest.param(
        "redirect_chain",
        page(f"{ORIGIN}/old", redirects=hops((f"{ORIGIN}/old", 301, WALL))),
        CONTEXT,
        id="redirect_chain-one-hop",
    ),
    pytest.param(
        "redirect_loop",
        page(f"{ORIGIN}/hop/0", redirects=_LONG[:10]),
        CONTEXT,
        id="redirect_loop-ten-hops",
    ),
    pytest.param(
        "redirect_to_error",
        page(f"{ORIGIN}/old", redirects=hops((f"{ORIGIN}/old", 301, WALL))),
        CONTEXT,
        id="redirect_to_error",
    ),
    pytest.param(
        "redirect_temporary",
        page(f"{ORIGIN}/sale", redirects=hops((f"{ORIGIN}/sale", 301, WALL))),
        REFERENCED,
        id="redirect_temporary-permanent",
    ),
    pytest.param(
        "redirect_temporary",
        page(f"{ORIGIN}/sale", redirects=hops((f"{ORIGIN}/sale", 307, WALL))),
        CONTEXT,
        id="redirect_temporary-not-known-linked",
    ),
    pytest.param(
        "meta_refresh_redirect", page(html_changes={"meta_refresh": "30"}), CONTEXT, id="meta_refresh-reload"
    ),
    pytest.param(
        "http_not_redirected_to_https",
        page(
            "http://retro-clock.example/clocks/wall",
            redirects=hops(("http://retro-clock.example/clocks/wall", 301, WALL)),
            final_url=WALL,
        ),
        CONTEXT,
        id="http_not_redirected_to_https",
    ),
    pytest.param(
        "http_not_redirected_to_https",
        page("http://retro-clock.example/clocks/wall", headers=()),
        PageContext(start_url="http://retro-clock.example/"),
        id="http_not_redirected_to_https-http-site",
    ),
    pytest.param("slow_response", page(ttfb_ms=800), CONTEXT, id="slow_response"),
    pytest.param("html_too_large", page(bytes=2 * 1024 * 1024), CONTEXT, id="html_too_large"),
    pytest.param(
        "soft_404",
        page(html_changes={"not_found_phrase": True, "text_chars": 5_000}),
        CONTEXT,
        id="soft_404-long-text",
    ),
    pytest.param(
        "soft_404",
        page(status_code=404, html_changes={"not_found_phrase": True, "text_chars": 300}),
        CONTEXT,
        id="soft_404-real-404",
    ),
    pytest.param("noindex", page(html_changes={"meta_robots": ("index, follow",)}), CONTEXT, id="noindex"),
    pytest.param("noindex", page(x_robots_tag=("otherbot: noindex",)), CONTEXT, id="noindex-other-crawler"),
    pytest.param("nofollow_page", page(html_changes={"meta_robots": ("noindex",)}), CONTEXT, id="nofollow"),
    pytest.param(
        "robots_directive_conflict",
        page(html_changes={"meta_robots": ("noindex",)}, x_robots_tag=("noindex, nofollow",)),
        CONTEXT,
        id="robots_directive_conflict",
    ),
    pytest.param(
        "nosnippet_or_noimageindex",
        page(html_changes={"meta_robots": ("max-snippet:50",)}),
        CONTEXT,
        id="nosnippet_or_noimageindex",
    ),
    pytest.param(
        "canonical_missing",
        page(html_changes={"canonicals": ()}, link_canonicals=(WALL,)),
        CONTEXT,
        id="canonical_missing-header",
    ),
    pytest.param(
        "canonical_missing",
        page(html_changes={"canonicals": (), "meta_robots": ("noindex",)}),
        CONTEXT,
        id="canonical_missing-not-indexable",
    ),
    pytest.param(
        "canonical_multiple",
        page(html_changes={"canonicals": (WALL, "/clocks/wall")}),
        CONTEXT,
        id="canonical_multiple-same-url",
    ),
    pytest.param("canonical_relative", page(), CONTEXT, id="canonical_relative"),
    pytest.param("canonical_invalid", page(), CONTEXT, id="canonical_invalid"),
    pytest.param(
        "canonical_header_mismatch",
        page(link_canonicals=("https://RETRO-CLOCK.example:443/clocks/wall",)),
        CONTEXT,
        id="canonical_header_mismatch-normalised",
    ),
    pytest.param("canonical_not_self", page(), CONTEXT, id="canonical_not_self"),
    pytest.param(
        "canonical_to_root",
        page(START, html_changes={"canonicals": (START,)}),
        CONTEXT,
        id="canonical_to_root",
    ),
    pytest.param("title_missing", page(), CONTEXT, id="title_missing"),
    pytest.param("title_multiple", page(), CONTEXT, id="title_multiple"),
    pytest.param("title_too_long", page(html_changes={"titles": ("W" * 60,)}), CONTEXT, id="title_too_long"),
    pytest.param(
        "title_too_short", page(html_changes={"titles": ("Wall clock",)}), CONTEXT, id="title_too_short"
    ),
    pytest.param(
        "meta_description_missing",
        page(html_changes={"meta_descriptions": (), "meta_robots": ("noindex",)}),
        CONTEXT,
        id="meta_description_missing-not-indexable",
    ),
    pytest.param(
        "meta_description_too_long",
        page(html_changes={"meta_descriptions": ("d" * 160,)}),
        CONTEXT,
        id="meta_description_too_long",
    ),
    pytest.param(
        "meta_description_too_short",
        page(html_changes={"meta_descriptions": ("d" * 70,)}),
        CONTEXT,
        id="meta_description_too_short",
    ),
    pytest.param("meta_description_multiple", page(), CONTEXT, id="meta_description_multiple"),
    pytest.param(
        "h1_missing",
        page(html_changes={"h1s": (), "canonicals": (CUCKOO,)}),
        CONTEXT,
        id="h1_missing-canonicalised-away",
    ),
    pytest.param("h1_multiple", page(), CONTEXT, id="h1_multiple"),
    pytest.param(
        "heading_order_skip",
        page(html_changes={"heading_levels": (1, 2, 3, 2, 3, 1)}),
        CONTEXT,
        id="heading_skip",
    ),
    pytest.param("thin_content", page(html_changes={"word_count": 150}), CONTEXT, id="thin_content"),
    pytest.param(
        "thin_content",
        page(html_changes={"word_count": 10}, disallowed=True),
        CONTEXT,
        id="thin_content-disallowed",
    ),
    pytest.param("html_lang_missing", page(), CONTEXT, id="html_lang_missing"),
    pytest.param("html_lang_invalid", page(html_changes={"lang": "pt-BR"}), CONTEXT, id="html_lang_invalid"),
    pytest.param("viewport_missing", page(), CONTEXT, id="viewport_missing"),
    pytest.param(
        "charset_or_doctype_missing",
        page(html_changes={"meta_charset": None}),
        CONTEXT,
        id="charset-from-header",
    ),
    pytest.param(
        "internal_nofollow_link",
        page(html_changes={"links": (Link(target="https://ads.example/", internal=False, nofollow=True),)}),
        CONTEXT,
        id="internal_nofollow_link-external",
    ),
    pytest.param("dead_end_page", page(), CONTEXT, id="dead_end_page"),
    pytest.param(
        "links_to_http",
        page(
            "http://retro-clock.example/clocks/wall",
            html_changes={"links": (Link(target="http://clock-parts.example/", internal=False),)},
        ),
        PageContext(start_url="http://retro-clock.example/"),
        id="links_to_http-http-page",
    ),
    pytest.param("non_descriptive_anchor", page(), CONTEXT, id="non_descriptive_anchor"),
    pytest.param("uncrawlable_link", page(), CONTEXT, id="uncrawlable_link"),
    pytest.param(
        "localhost_link",
        page(html_changes={"links": (Link(target="https://clock-parts.example/", internal=False),)}),
        CONTEXT,
        id="localhost_link-public",
    ),
    pytest.param(
        "localhost_link",
        page("http://127.0.0.1:8080/", html_changes={"links": (Link(target="http://127.0.0.1:8080/a"),)}),
        PageContext(start_url="http://127.0.0.1:8080/"),
        id="localhost_link-audited-host-itself",
    ),
    pytest.param(
        "mixed_content",
        page(
            "http://retro-clock.example/clocks/wall",
            html_changes={"mixed_content": ("http://cdn.retro-clock.example/app.js",)},
        ),
        PageContext(start_url="http://retro-clock.example/"),
        id="mixed_content-http-page",
    ),
    pytest.param(
        "hreflang_invalid_code",
        page(
            html_changes={
                "hreflangs": hreflangs(("en-GB", WALL), ("zh-Hant-TW", CUCKOO), ("x-default", WALL))
            }
        ),
        CONTEXT,
        id="hreflang_invalid_code",
    ),
    pytest.param(
        "hreflang_missing_self",
        page(html_changes={"hreflangs": hreflangs(("en", WALL), ("x-default", START))}),
        CONTEXT,
        id="hreflang_missing_self",
    ),
    pytest.param(
        "hreflang_missing_x_default",
        page(html_changes={"hreflangs": hreflangs(("en", WALL), ("x-default", START))}),
        CONTEXT,
        id="hreflang_missing_x_default",
    ),
    pytest.param(
        "img_alt_missing",
        page(
            html_changes={"images": (Image(src=f"{ORIGIN}/img/a.jpg", has_alt=True, width="1", height="1"),)}
        ),
        CONTEXT,
        id="img_alt_missing",
    ),
    pytest.param("structured_data_invalid", page(), CONTEXT, id="structured_data_invalid"),
    pytest.param(
        "structured_data_missing",
        page(html_changes={"json_ld": (), "has_microdata": True}),
        CONTEXT,
        id="structured_data_missing-microdata",
    ),
    pytest.param("open_graph_missing", page(), CONTEXT, id="open_graph_missing"),
    pytest.param("url_uppercase", page(f"{ORIGIN}/rel%C3%B3gios"), CONTEXT, id="url_uppercase-escapes"),
    pytest.param(
        "url_uppercase",
        page(
            f"{ORIGIN}/Clocks",
            redirects=hops((f"{ORIGIN}/Clocks", 301, f"{ORIGIN}/clocks")),
            final_url=f"{ORIGIN}/clocks",
        ),
        CONTEXT,
        id="url_uppercase-redirected",
    ),
    pytest.param(
        "url_underscores", page(f"{ORIGIN}/wall-clocks?sort=price_asc"), CONTEXT, id="url_underscores"
    ),
    pytest.param("url_whitespace", page(f"{ORIGIN}/wall-clocks"), CONTEXT, id="url_whitespace"),
    pytest.param("url_double_slash", page(f"{ORIGIN}/clocks/wall"), CONTEXT, id="url_double_slash"),
    pytest.param("url_non_ascii", page(f"{ORIGIN}/wall%2Dclocks"), CONTEXT, id="url_non_ascii"),
    pytest.param(
        "url_repeated_segment", page(f"{ORIGIN}/2024/01/01/post"), CONTEXT, id="url_repeated_segment"
    ),
    pytest.param(
        "too_many_links",
        page(html_changes={"links": tuple(Link(target=f"{ORIGIN}/p/{i}") for i in range(100))}),
        CONTEXT,
        id="too_many_links",
    ),
    pytest.param(
        "too_many_links",
        page(
            html_changes={
                "links": tuple(Link(target=f"{ORIGIN}/p/{i}") for i in range(40)),
                "anchor_links": 100,  # 100 links to 40 targets: at the limit, not over it
            }
        ),
        CONTEXT,
        id="too_many_links-repeated-targets",
    ),
    pytest.param("img_missing_dimensions", page(), CONTEXT, id="img_missing_dimensions"),
    pytest.param(
        "hsts_missing",
        page("http://retro-clock.example/clocks/wall", headers=()),
        PageContext(start_url="http://retro-clock.example/"),
        id="hsts_missing-http-page",
    ),
    pytest.param("insecure_form", page(), CONTEXT, id="insecure_form"),
    pytest.param(
        "hreflang_relative_url",
        page(html_changes={"hreflangs": hreflangs(("en", WALL), ("x-default", WALL))}),
        CONTEXT,
        id="hreflang_relative_url",
    ),
    pytest.param(
        "hreflang_lang_mismatch",
        page(html_changes={"lang": "en-GB", "hreflangs": hreflangs(("en", WALL), ("x-default", WALL))}),
        CONTEXT,
        id="hreflang_lang_mismatch",
    ),
    pytest.param("metas_in_body", page(), CONTEXT, id="metas_in_body"),
    pytest.param("dom_too_large", page(html_changes={"dom_nodes": 1_500}), CONTEXT, id="dom_too_large"),
]


# --- site check cases: (code, builder of AuditFacts) ----------------------------------------------------

FactsBuilder = Callable[[], AuditFacts]


def home(*links: Link) -> PageFacts:
    return page(
        START,
        depth=0,
        html_changes={
            "links": links,
            "fingerprint": "fp:home",
            "titles": ("Retro Clock home",),
            "h1s": ("Retro Clock",),
        },
    )


def site(*pages: PageFacts, **changes: object) -> AuditFacts:
    """A site whose robots.txt, sitemap and llms.txt are in order, with the given pages."""
    defaults: dict[str, object] = {
        "robots": RobotsFacts(status_code=200, bytes=120, sitemaps=(f"{ORIGIN}/sitemap.xml",)),
        "sitemaps": (SitemapFacts(url=f"{ORIGIN}/sitemap.xml", status_code=200, url_count=len(pages)),),
        "llms_txt_found": True,
    }
    defaults.update(changes)
    return AuditFacts.from_pages(START, list(pages), **defaults)  # type: ignore[arg-type]


def linked(*targets: str, kind: LinkKind = LinkKind.A, internal: bool = True) -> tuple[Link, ...]:
    return tuple(Link(target=t, kind=kind, internal=internal) for t in targets)


GONE = f"{ORIGIN}/clocks/gone"
OLD = f"{ORIGIN}/clocks/old"
PT = f"{ORIGIN}/pt/clocks/wall"
IMG = f"{ORIGIN}/img/wall.jpg"
PARTS = "https://clock-parts.example/springs"


def _distinct(at: str, **html_changes: Any) -> PageFacts:
    """A healthy page whose title, description and H1 are its own (no duplicate findings)."""
    name = at.rsplit("/", 1)[-1]
    own: dict[str, Any] = {
        "titles": (f"{name} clocks restored by hand",),
        "meta_descriptions": (f"{name}: " + "restored mechanical clocks with a two-year warranty. " * 2,),
        "h1s": (f"{name} clocks",),
    }
    own.update(html_changes)
    return page(at, html_changes=own)


def _redirect(at: str, status: int, to: str) -> PageFacts:
    return page(at, redirects=hops((at, status, to)), final_url=to, html=None)


def _with_alternates(at: str, *pairs: tuple[str, str]) -> PageFacts:
    return _distinct(at, hreflangs=hreflangs(*pairs), lang=pairs[0][0] if at == WALL else "pt")


SITE_POSITIVE = [
    pytest.param(
        "http_4xx", lambda: site(home(*linked(GONE)), page(GONE, status_code=404, html=None)), id="http_4xx"
    ),
    pytest.param(
        "http_4xx",
        lambda: site(home(), page(GONE, status_code=410, html=None, in_sitemap=True)),
        id="http_4xx-listed",
    ),
    pytest.param(
        "redirect_temporary",
        lambda: site(home(*linked(OLD)), _redirect(OLD, 307, WALL), _distinct(WALL)),
        id="redirect_temporary",
    ),
    pytest.param(
        "noindex",
        lambda: site(home(*linked(WALL)), _distinct(WALL, meta_robots=("noindex",))),
        id="noindex-linked",
    ),
    pytest.param(
        "blocked_by_robots_txt",
        lambda: site(home(*linked(WALL)), page(WALL, disallowed=True, html=None, status_code=None)),
        id="blocked_by_robots_txt",
    ),
    pytest.param(
        "robots_txt_unreachable",
        lambda: site(home(), robots=RobotsFacts(status_code=503)),
        id="robots_txt_unreachable",
    ),
    pytest.param(
        "robots_txt_unreachable",
        lambda: site(home(), robots=RobotsFacts(fetch_error=FetchError.TIMEOUT)),
        id="robots_txt_unreachable-timeout",
    ),
    pytest.param(
        "robots_txt_missing", lambda: site(home(), robots=RobotsFacts(status_code=404)), id="robots_missing"
    ),
    pytest.param(
        "robots_txt_disallow_all",
        lambda: site(home(), robots=RobotsFacts(status_code=200, disallow_all_groups=("*",))),
        id="robots_txt_disallow_all",
    ),
    pytest.param(
        "robots_txt_invalid",
        lambda: site(home(), robots=RobotsFacts(status_code=200, invalid_lines=("Dissalow: /cart",))),
        id="robots_txt_invalid",
    ),
    pytest.param(
        "robots_txt_invalid",
        lambda: site(home(), robots=RobotsFacts(status_code=200, bytes=600 * 1024)),
        id="robots_txt_invalid-too-large",
    ),
    pytest.param(
        "canonical_target_error",
        lambda: site(home(), _distinct(WALL, canonicals=(GONE,)), page(GONE, status_code=404, html=None)),
        id="canonical_target_error",
    ),
    pytest.param(
        "canonical_target_redirect",
        lambda: site(
            home(), _distinct(WALL, canonicals=(OLD,)), _redirect(OLD, 301, CUCKOO), _distinct(CUCKOO)
        ),
        id="canonical_target_redirect",
    ),
    pytest.param(
        "canonical_target_noindex",
        lambda: site(
            home(), _distinct(WALL, canonicals=(CUCKOO,)), _distinct(CUCKOO, meta_robots=("noindex",))
        ),
        id="canonical_target_noindex",
    ),
    pytest.param(
        "canonical_chain",
        lambda: site(
            home(),
            _distinct(WALL, canonicals=(CUCKOO,)),
            _distinct(CUCKOO, canonicals=(f"{ORIGIN}/clocks/mantel",)),
            _distinct(f"{ORIGIN}/clocks/mantel"),
        ),
        id="canonical_chain",
    ),
    pytest.param(
        "title_duplicate",
        lambda: site(
            home(),
            _distinct(WALL, titles=("Clocks restored by hand",)),
            _distinct(CUCKOO, titles=("Clocks  restored by HAND",)),
        ),
        id="title_duplicate",
    ),
    pytest.param(
        "meta_description_duplicate",
        lambda: site(
            home(),
            _distinct(WALL, meta_descriptions=("d" * 100,)),
            _distinct(CUCKOO, meta_descriptions=("d" * 100,)),
        ),
        id="meta_description_duplicate",
    ),
    pytest.param(
        "h1_duplicate",
        lambda: site(home(), _distinct(WALL, h1s=("Clocks",)), _distinct(CUCKOO, h1s=("Clocks",))),
        id="h1_duplicate",
    ),
    pytest.param(
        "duplicate_content_exact",
        lambda: site(home(), _distinct(WALL, fingerprint="same"), _distinct(CUCKOO, fingerprint="same")),
        id="duplicate_content_exact",
    ),
    pytest.param(
        "duplicate_content_near",
        lambda: site(
            home(),
            _distinct(WALL, sketch=sketch(1)),
            _distinct(CUCKOO, sketch=sketch(2, differ_from=1, positions=6)),
        ),
        id="duplicate_content_near",
    ),
    pytest.param(
        "broken_internal_link",
        lambda: site(home(*linked(GONE)), page(GONE, status_code=404, html=None)),
        id="broken_internal_link",
    ),
    pytest.param(
        "broken_internal_link",
        lambda: site(
            home(*linked(OLD)),
            page(OLD, redirects=hops((OLD, 301, GONE)), final_url=GONE, status_code=404, html=None),
        ),
        id="broken_internal_link-redirect-to-error",
    ),
    pytest.param(
        "internal_link_to_redirect",
        lambda: site(home(*linked(OLD)), _redirect(OLD, 301, WALL), _distinct(WALL)),
        id="internal_link_to_redirect",
    ),
    pytest.param(
        "internal_link_to_redirect",
        lambda: site(
            home(*linked(OLD)),
            page(OLD, redirects=hops((OLD, 301, GONE)), final_url=GONE, status_code=404, html=None),
        ),
        id="internal_link_to_redirect-ending-broken",
    ),
    pytest.param(
        "broken_external_link",
        lambda: site(home(*linked(PARTS, internal=False)), page(PARTS, status_code=500, html=None)),
        id="broken_external_link",
    ),
    pytest.param(
        "orphan_page",
        lambda: site(home(), _distinct(WALL), sitemap_urls={WALL}),
        id="orphan_page",
    ),
    pytest.param(
        "deep_page",
        lambda: site(home(*linked(WALL)), evolve(_distinct(WALL), depth=5)),
        id="deep_page",
    ),
    pytest.param(
        "sitemap_url_noindex",
        lambda: site(home(*linked(WALL)), _distinct(WALL, meta_robots=("noindex",)), sitemap_urls={WALL}),
        id="sitemap_url_noindex",
    ),
    pytest.param(
        "sitemap_url_non_200",
        lambda: site(home(*linked(WALL)), _redirect(OLD, 301, WALL), _distinct(WALL), sitemap_urls={OLD}),
        id="sitemap_url_non_200-redirect",
    ),
    pytest.param(
        "sitemap_url_non_200",
        lambda: site(home(), page(GONE, status_code=404, html=None, in_sitemap=True)),
        id="sitemap_url_non_200-404",
    ),
    pytest.param(
        "sitemap_url_non_canonical",
        lambda: site(
            home(*linked(WALL, CUCKOO)),
            _distinct(WALL, canonicals=(CUCKOO,)),
            _distinct(CUCKOO),
            sitemap_urls={WALL},
        ),
        id="sitemap_url_non_canonical",
    ),
    pytest.param(
        "sitemap_url_blocked",
        lambda: site(home(), page(WALL, disallowed=True, html=None, status_code=None), sitemap_urls={WALL}),
        id="sitemap_url_blocked",
    ),
    pytest.param(
        "sitemap_missing",
        lambda: site(
            home(),
            robots=RobotsFacts(status_code=200),
            sitemaps=(SitemapFacts(url=f"{ORIGIN}/sitemap.xml", found_via="conventional", status_code=404),),
        ),
        id="sitemap_missing",
    ),
    pytest.param(
        "sitemap_invalid",
        lambda: site(
            home(),
            sitemaps=(SitemapFacts(url=f"{ORIGIN}/sitemap.xml", status_code=200, problems=("not_xml",)),),
        ),
        id="sitemap_invalid",
    ),
    pytest.param(
        "sitemap_invalid",
        lambda: site(
            home(), sitemaps=(SitemapFacts(url=f"{ORIGIN}/sitemap.xml", found_via="robots", status_code=404),)
        ),
        id="sitemap_invalid-declared-but-404",
    ),
    pytest.param(
        "hreflang_missing_return",
        lambda: site(
            home(),
            _with_alternates(WALL, ("en", WALL), ("pt", PT), ("x-default", WALL)),
            _with_alternates(PT, ("pt", PT), ("x-default", PT)),
        ),
        id="hreflang_missing_return",
    ),
    pytest.param(
        "hreflang_target_invalid",
        lambda: site(
            home(),
            _with_alternates(WALL, ("en", WALL), ("pt", PT), ("x-default", WALL)),
            _redirect(PT, 301, f"{ORIGIN}/pt/"),
        ),
        id="hreflang_target_invalid",
    ),
    pytest.param(
        "img_broken",
        lambda: site(
            home(*linked(IMG, kind=LinkKind.IMG)),
            page(IMG, status_code=404, html=None, content_type="text/html"),
        ),
        id="img_broken",
    ),
    pytest.param(
        "img_too_large",
        lambda: site(
            home(*linked(IMG, kind=LinkKind.IMG)),
            page(
                IMG,
                html=None,
                content_type="image/jpeg",
                bytes=0,
                headers=(("content-length", str(600 * 1024)),),
            ),
        ),
        id="img_too_large",
    ),
    pytest.param(
        "ai_crawler_blocked",
        lambda: site(
            home(),
            robots=RobotsFacts(
                status_code=200, sitemaps=(f"{ORIGIN}/sitemap.xml",), ai_crawlers_blocked=("GPTBot",)
            ),
        ),
        id="ai_crawler_blocked",
    ),
    pytest.param("llms_txt_missing", lambda: site(home(), llms_txt_found=False), id="llms_txt_missing"),
]

SITE_NEGATIVE = [
    pytest.param(
        "http_4xx", lambda: site(home(), page(GONE, status_code=404, html=None)), id="http_4xx-unreferenced"
    ),
    pytest.param(
        "redirect_temporary",
        lambda: site(home(*linked(OLD)), _redirect(OLD, 301, WALL), _distinct(WALL)),
        id="redirect_temporary-permanent",
    ),
    pytest.param(
        "noindex",
        lambda: site(home(), _distinct(WALL, meta_robots=("noindex",))),
        id="noindex-unlinked-stays-a-page-notice",
    ),
    pytest.param(
        "blocked_by_robots_txt",
        lambda: site(home(), page(WALL, disallowed=True, html=None, status_code=None)),
        id="blocked_by_robots_txt-unreferenced",
    ),
    pytest.param("robots_txt_unreachable", lambda: site(home()), id="robots_txt_unreachable"),
    pytest.param(
        "robots_txt_unreachable",
        lambda: site(home(), robots=None),
        id="robots_txt_unreachable-not-fetched",
    ),
    pytest.param("robots_txt_missing", lambda: site(home()), id="robots_txt_missing"),
    pytest.param("robots_txt_disallow_all", lambda: site(home()), id="robots_txt_disallow_all"),
    pytest.param(
        "robots_txt_invalid",
        lambda: site(home(), robots=RobotsFacts(status_code=200, bytes=500 * 1024)),
        id="robots_txt_invalid-at-the-limit",
    ),
    pytest.param(
        "canonical_target_error",
        lambda: site(home(), _distinct(WALL, canonicals=(CUCKOO,)), _distinct(CUCKOO)),
        id="canonical_target_error",
    ),
    pytest.param(
        "canonical_target_redirect",
        lambda: site(home(), _distinct(WALL, canonicals=(CUCKOO,)), _distinct(CUCKOO)),
        id="canonical_target_redirect",
    ),
    pytest.param(
        "canonical_target_noindex",
        lambda: site(home(), _distinct(WALL, canonicals=(CUCKOO,)), _distinct(CUCKOO)),
        id="canonical_target_noindex",
    ),
    pytest.param(
        "canonical_chain",
        lambda: site(home(), _distinct(WALL, canonicals=(CUCKOO,)), _distinct(CUCKOO)),
        id="canonical_chain",
    ),
    pytest.param(
        "title_duplicate",
        lambda: site(
            home(),
            _distinct(WALL, titles=("Clocks restored by hand",)),
            _distinct(CUCKOO, titles=("Clocks restored by hand",), meta_robots=("noindex",)),
        ),
        id="title_duplicate-one-not-indexable",
    ),
    pytest.param(
        "meta_description_duplicate",
        lambda: site(home(), _distinct(WALL), _distinct(CUCKOO)),
        id="meta_description_duplicate",
    ),
    pytest.param("h1_duplicate", lambda: site(home(), _distinct(WALL), _distinct(CUCKOO)), id="h1_duplicate"),
    pytest.param(
        "duplicate_content_exact",
        lambda: site(home(), _distinct(WALL), _distinct(CUCKOO)),
        id="duplicate_content_exact",
    ),
    pytest.param(
        "duplicate_content_near",
        lambda: site(
            home(),
            _distinct(WALL, sketch=sketch(1)),
            _distinct(CUCKOO, sketch=sketch(2, differ_from=1, positions=30)),
        ),
        id="duplicate_content_near-below-threshold",
    ),
    pytest.param(
        "duplicate_content_near",
        lambda: site(
            home(),
            _distinct(WALL, fingerprint="same", sketch=sketch(1)),
            _distinct(CUCKOO, fingerprint="same", sketch=sketch(1)),
        ),
        id="duplicate_content_near-exact-duplicates-excluded",
    ),
    pytest.param(
        "broken_internal_link",
        lambda: site(home(*linked(WALL)), _distinct(WALL)),
        id="broken_internal_link",
    ),
    pytest.param(
        "broken_internal_link",
        lambda: site(home(*linked(WALL)), page(WALL, status_code=403, blocked_by="cloudflare")),
        id="broken_internal_link-challenged-target",
    ),
    pytest.param(
        "internal_link_to_redirect",
        lambda: site(home(*linked(WALL)), _distinct(WALL)),
        id="internal_link_to_redirect",
    ),
    pytest.param(
        "broken_external_link",
        lambda: site(home(*linked(PARTS, internal=False)), page(PARTS, html=None)),
        id="broken_external_link",
    ),
    pytest.param(
        "orphan_page",
        lambda: site(home(*linked(WALL)), _distinct(WALL), sitemap_urls={WALL}),
        id="orphan_page-linked",
    ),
    pytest.param(
        "orphan_page",
        lambda: site(home(*linked(OLD)), _redirect(OLD, 301, WALL), _distinct(WALL), sitemap_urls={WALL}),
        id="orphan_page-linked-through-a-redirect",
    ),
    pytest.param(
        "deep_page", lambda: site(home(*linked(WALL)), evolve(_distinct(WALL), depth=4)), id="deep_page"
    ),
    pytest.param(
        "sitemap_url_noindex",
        lambda: site(home(*linked(WALL)), _distinct(WALL), sitemap_urls={WALL}),
        id="sitemap_url_noindex",
    ),
    pytest.param(
        "sitemap_url_non_200",
        lambda: site(home(*linked(WALL)), _distinct(WALL), sitemap_urls={WALL}),
        id="sitemap_url_non_200",
    ),
    pytest.param(
        "sitemap_url_non_canonical",
        lambda: site(home(*linked(WALL)), _distinct(WALL), sitemap_urls={WALL}),
        id="sitemap_url_non_canonical",
    ),
    pytest.param(
        "sitemap_url_blocked",
        lambda: site(home(*linked(WALL)), _distinct(WALL), sitemap_urls={WALL}),
        id="sitemap_url_blocked",
    ),
    pytest.param(
        "sitemap_missing",
        lambda: site(
            home(),
            robots=RobotsFacts(status_code=200),
            sitemaps=(SitemapFacts(url=f"{ORIGIN}/sitemap.xml", found_via="conventional", status_code=200),),
        ),
        id="sitemap_missing-conventional-path",
    ),
    pytest.param("sitemap_invalid", lambda: site(home()), id="sitemap_invalid"),
    pytest.param(
        "sitemap_invalid",
        lambda: site(
            home(),
            sitemaps=(
                SitemapFacts(url=f"{ORIGIN}/sitemap_index.xml", found_via="conventional", status_code=404),
            ),
        ),
        id="sitemap_invalid-conventional-probe-404",
    ),
    pytest.param(
        "hreflang_missing_return",
        lambda: site(
            home(),
            _with_alternates(WALL, ("en", WALL), ("pt", PT), ("x-default", WALL)),
            _with_alternates(PT, ("pt", PT), ("en", WALL), ("x-default", WALL)),
        ),
        id="hreflang_missing_return",
    ),
    pytest.param(
        "hreflang_target_invalid",
        lambda: site(
            home(),
            _with_alternates(WALL, ("en", WALL), ("pt", PT), ("x-default", WALL)),
            _with_alternates(PT, ("pt", PT), ("en", WALL), ("x-default", WALL)),
        ),
        id="hreflang_target_invalid",
    ),
    pytest.param(
        "img_broken",
        lambda: site(home(*linked(IMG, kind=LinkKind.IMG)), page(IMG, html=None, content_type="image/jpeg")),
        id="img_broken",
    ),
    pytest.param(
        "img_too_large",
        lambda: site(
            home(*linked(IMG, kind=LinkKind.IMG)),
            page(IMG, html=None, content_type="image/jpeg", bytes=100 * 1024),
        ),
        id="img_too_large",
    ),
    pytest.param("ai_crawler_blocked", lambda: site(home()), id="ai_crawler_blocked"),
    pytest.param("llms_txt_missing", lambda: site(home()), id="llms_txt_missing-found"),
    pytest.param(
        "llms_txt_missing", lambda: site(home(), llms_txt_found=None), id="llms_txt_missing-not-asked"
    ),
]


# --- rendering (raw against rendered): the raw page is the healthy one unless a case changes it --------


def rendered(
    *,
    raw: dict[str, Any] | None = None,
    dom: dict[str, Any] | None = None,
    **outcome: Any,
) -> PageFacts:
    """A rendered page: `dom` changes the rendered DOM's facts, `raw` what the raw page declared,
    `outcome` the rendering's end and problems."""
    raw_html = html(WALL, **(raw or {}))
    facts = RenderFacts.of(Rendered(outcome.pop("end", RenderEnd.DONE), **outcome), raw_of(raw_html))
    return page(html_changes=dom, rendering=facts)


_ALSO = Link(target=f"{ORIGIN}/clocks/only-in-the-dom")
_NOTE = RequestNote(f"{ORIGIN}/app.js", "404")
_THIRD = RequestNote("https://cdn.elsewhere.example/lib.js", "third_party: cdn.elsewhere.example")
_GONE = {"titles": ()}

PAGE_POSITIVE += [
    pytest.param("js_changed_title", rendered(raw=_GONE), CONTEXT, id="js_changed_title-added"),
    pytest.param(
        "js_changed_meta_description",
        rendered(dom={"meta_descriptions": ("Other",)}),
        CONTEXT,
        id="js_changed_meta_description",
    ),
    pytest.param(
        "js_changed_canonical", rendered(dom={"canonicals": (CUCKOO,)}), CONTEXT, id="js_changed_canonical"
    ),
    pytest.param(
        "js_changed_robots", rendered(dom={"meta_robots": ("noindex",)}), CONTEXT, id="js_changed_robots"
    ),
    pytest.param(
        "js_changed_hreflang",
        rendered(dom={"hreflangs": hreflangs(("de", f"{ORIGIN}/de/"))}),
        CONTEXT,
        id="js_changed_hreflang",
    ),
    pytest.param("js_changed_h1", rendered(raw={"h1s": ()}), CONTEXT, id="js_changed_h1"),
    pytest.param(
        "links_only_after_render",
        rendered(dom={"links": (Link(target=START), Link(target=f"{ORIGIN}/about"), _ALSO)}),
        CONTEXT,
        id="links_only_after_render",
    ),
    pytest.param(
        "content_only_after_render", rendered(raw={"word_count": 12}), CONTEXT, id="content_only_after_render"
    ),
    pytest.param(
        "render_failed",
        rendered(end=RenderEnd.CRASHED, detail="the page crashed"),
        CONTEXT,
        id="render_failed",
    ),
    pytest.param(
        "render_incomplete",
        rendered(end=RenderEnd.TIMEOUT, over_budget="time"),
        CONTEXT,
        id="render_incomplete",
    ),
    pytest.param(
        "render_incomplete", rendered(over_budget="requests"), CONTEXT, id="render_incomplete-requests"
    ),
    pytest.param(
        "render_console_errors",
        rendered(console_errors=("ReferenceError: app is not defined",)),
        CONTEXT,
        id="render_console_errors",
    ),
    pytest.param("render_failed_requests", rendered(failed=(_NOTE,)), CONTEXT, id="render_failed_requests"),
    pytest.param(
        "render_requests_refused", rendered(refused=(_THIRD,)), CONTEXT, id="render_requests_refused"
    ),
]

_SAME = rendered()
_NOT_RENDERED = page()
_CRASHED = rendered(end=RenderEnd.CRASHED, raw=_GONE)  # no DOM: nothing to compare
PAGE_NEGATIVE += [
    *(
        pytest.param(code, facts, CONTEXT, id=f"{code}-{name}")
        for code in (
            "js_changed_title",
            "js_changed_meta_description",
            "js_changed_canonical",
            "js_changed_robots",
            "js_changed_hreflang",
            "js_changed_h1",
            "links_only_after_render",
            "content_only_after_render",
            "render_failed",
            "render_incomplete",
            "render_console_errors",
            "render_failed_requests",
            "render_requests_refused",
        )
        for name, facts in (("unchanged", _SAME), ("not-rendered", _NOT_RENDERED))
    ),
    pytest.param("js_changed_title", _CRASHED, CONTEXT, id="js_changed_title-no-dom"),
    pytest.param(
        "js_changed_title",
        rendered(dom={"titles": ("  wall CLOCKS restored by hand in Lisbon ",)}),
        CONTEXT,
        id="js_changed_title-same-words",
    ),
    pytest.param(
        "js_changed_robots",
        rendered(raw={"meta_robots": ("noindex, nofollow",)}, dom={"meta_robots": ("nofollow,noindex",)}),
        CONTEXT,
        id="js_changed_robots-same-tokens",
    ),
    pytest.param(
        "content_only_after_render",
        rendered(raw={"word_count": 300}),
        CONTEXT,
        id="content_only_after_render-most-words-raw",
    ),
]
