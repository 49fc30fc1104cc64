"""Facts extracted from small hand-written HTML documents, field by field."""

import re

import pytest

from siteaudit.adapters.html.extract import extract_html_facts, sketch_of
from siteaudit.domain import judgement
from siteaudit.domain.facts import Hreflang, HtmlFacts, Image, JsonLdBlock, Link, LinkKind
from siteaudit.domain.judgement import (
    GENERIC_ANCHORS,
    SKETCH_BINS,
    has_not_found_phrase,
)

ORIGIN = "https://retro-clock.example"
PAGE = "https://retro-clock.example/blog/first-post"


def facts(html: str | bytes, *, url: str = PAGE, content_type: str | None = "text/html") -> HtmlFacts:
    body = html.encode() if isinstance(html, str) else html
    return extract_html_facts(body, url=url, content_type_header=content_type, origin=ORIGIN)


def links_of(f: HtmlFacts, kind: LinkKind) -> list[Link]:
    return [link for link in f.links if link.kind is kind]


def test_title_is_entity_decoded_and_whitespace_collapsed() -> None:
    f = facts(
        "<html><head><title>\n  Retro &amp; Clock&nbsp;&mdash;  Blog \t</title></head><body></body></html>"
    )
    assert f.titles == ("Retro & Clock — Blog",)
    assert f.titles_in_body == 0


def test_every_title_in_the_head_is_kept_and_body_titles_are_counted_but_not_svg_ones() -> None:
    f = facts(
        "<head><title>One</title><title>Two</title></head><body>"
        "<svg><title>tooltip</title></svg><title>Stray</title><p>x</p></body>"
    )
    assert f.titles == ("One", "Two")
    assert f.titles_in_body == 1


def test_a_title_after_body_content_counts_as_in_body_not_as_the_title() -> None:
    f = facts("<p>content first</p><title>Late</title>")
    assert f.titles == ()
    assert f.titles_in_body == 1


def test_meta_description_robots_viewport_refresh_and_charset() -> None:
    f = facts(
        """<!doctype html><html><head>
        <meta charset="UTF-8">
        <meta name="Description" content="  Clocks   from the 1970s  ">
        <meta name="ROBOTS" content="NoIndex, Follow">
        <meta name="googlebot" content="nosnippet">
        <meta name="bingbot" content="noindex">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="refresh" content="5; url=/new">
        </head><body></body></html>"""
    )
    assert f.meta_descriptions == ("Clocks from the 1970s",)
    assert f.meta_robots == ("noindex, follow", "nosnippet")
    assert f.viewport == "width=device-width, initial-scale=1"
    assert f.meta_refresh == "5; url=/new"
    assert f.meta_charset == "utf-8"
    assert f.has_doctype is True


def test_charset_from_http_equiv_content_type() -> None:
    f = facts('<head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"></head>')
    assert f.meta_charset == "iso-8859-1"


def test_missing_doctype_lang_viewport_and_charset_are_reported_as_absent() -> None:
    f = facts("<html><head><title>Bare page</title></head><body><p>hi</p></body></html>")
    assert f.has_doctype is False
    assert f.lang is None
    assert f.viewport is None
    assert f.meta_charset is None
    assert f.meta_refresh is None
    assert f.meta_descriptions == ()


def test_legacy_html4_doctype_counts_as_a_doctype() -> None:
    f = facts('<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN"><html><body>x</body></html>')
    assert f.has_doctype is True


def test_html_lang_is_read_as_declared() -> None:
    assert facts('<html lang=" en-GB "><body></body></html>').lang == "en-GB"
    assert facts('<html lang=""><body></body></html>').lang == ""


def test_description_in_the_body_is_not_a_head_description_but_counts_as_meta_in_body() -> None:
    f = facts(
        '<head><title>T</title></head><body><p>x</p><meta name="description" content="late">'
        '<meta itemprop="price" content="3"><link rel="stylesheet" href="/s.css">'
        '<link rel="canonical" href="/c"></body>'
    )
    assert f.meta_descriptions == ()
    assert f.canonicals == ()
    # the microdata meta and the body-ok stylesheet are allowed in the body; the other two are not
    assert f.metas_in_body == 2


def test_an_invalid_element_in_the_head_pushes_the_following_metas_into_the_body() -> None:
    f = facts(
        '<html><head><title>T</title><img src="/pixel.gif">'
        '<meta name="description" content="lost"><link rel="canonical" href="/c"></head><body></body></html>'
    )
    assert f.titles == ("T",)
    assert f.meta_descriptions == ()
    assert f.canonicals == ()
    assert f.metas_in_body == 2


def test_robots_meta_in_the_body_still_counts_as_a_directive() -> None:
    f = facts('<body><p>x</p><meta name="robots" content="noindex"></body>')
    assert f.meta_robots == ("noindex",)


def test_canonicals_keep_the_raw_href_and_add_resolved_canonical_links() -> None:
    f = facts(
        '<head><link rel="canonical" href="/blog/first-post?utm_source=feed">'
        '<link rel="canonical" href="https://retro-clock.example/other"><link rel="canonical" href="">'
        "</head><body></body>"
    )
    assert f.canonicals == ("/blog/first-post?utm_source=feed", "https://retro-clock.example/other", "")
    assert links_of(f, LinkKind.CANONICAL) == [
        Link(target="https://retro-clock.example/blog/first-post", kind=LinkKind.CANONICAL, internal=True),
        Link(target="https://retro-clock.example/other", kind=LinkKind.CANONICAL, internal=True),
    ]


def test_links_resolve_against_base_href_drop_fragments_and_ignored_parameters() -> None:
    f = facts(
        '<head><base href="https://retro-clock.example/archive/"></head><body>'
        '<a href="2019/clock.html#specs">Clock specs</a>'
        '<a href="/about?utm_campaign=x&amp;ref=2">About us</a>'
        '<a href="../Shop/%7ejane?gclid=abc">Jane\'s shop</a>'
        '<a href="HTTPS://Retro-Clock.EXAMPLE:443/contact">Contact</a>'
        "</body>"
    )
    assert f.base_href == "https://retro-clock.example/archive/"
    assert [link.target for link in links_of(f, LinkKind.A)] == [
        "https://retro-clock.example/archive/2019/clock.html",
        "https://retro-clock.example/about?ref=2",
        "https://retro-clock.example/Shop/~jane",
        "https://retro-clock.example/contact",
    ]


def test_relative_base_href_is_itself_resolved_against_the_page_url() -> None:
    f = facts('<head><base href="/files/"></head><body><a href="manual.pdf">The manual</a></body>')
    assert f.base_href == "/files/"
    assert links_of(f, LinkKind.A)[0].target == "https://retro-clock.example/files/manual.pdf"


def test_links_without_base_resolve_against_the_page_url() -> None:
    f = facts('<body><a href="second-post">Second post</a><a href="?page=2">Page two</a></body>')
    assert [link.target for link in links_of(f, LinkKind.A)] == [
        "https://retro-clock.example/blog/second-post",
        "https://retro-clock.example/blog/first-post?page=2",
    ]


def test_internal_means_same_host_whatever_the_scheme() -> None:
    f = facts(
        "<body>"
        '<a href="http://retro-clock.example/old">Old page</a>'
        '<a href="https://www.retro-clock.example/">WWW twin</a>'
        '<a href="//cdn.example/pic">Picture</a>'
        "</body>"
    )
    assert [(link.target, link.internal) for link in links_of(f, LinkKind.A)] == [
        ("http://retro-clock.example/old", True),
        ("https://www.retro-clock.example/", False),
        ("https://cdn.example/pic", False),
    ]


def test_nofollow_is_read_from_the_rel_token_list() -> None:
    f = facts(
        '<body><a href="/a" rel="noopener NoFollow">Sponsored clock</a><a href="/b" rel="nofollowing">Other</a>'
        '<a href="/a">Same target followed</a></body>'
    )
    assert [(link.target, link.nofollow) for link in links_of(f, LinkKind.A)] == [
        ("https://retro-clock.example/a", True),
        ("https://retro-clock.example/b", False),
        ("https://retro-clock.example/a", False),
    ]


def test_repeated_links_to_one_target_are_recorded_once() -> None:
    f = facts('<body><a href="/a">One</a><a href="/a#top">Two</a><a href="/a">Three</a></body>')
    assert len(links_of(f, LinkKind.A)) == 1
    assert f.anchor_links == 3  # but every <a href> is counted (too_many_links)


def test_only_anchors_that_are_links_count_as_links_on_the_page() -> None:
    f = facts(
        '<body><a href="#top">Top</a><a href="javascript:go()">Go</a><a>None</a><a href="/b">B</a></body>'
    )
    assert f.anchor_links == 1


def test_non_http_links_and_in_page_fragments_are_not_links() -> None:
    f = facts(
        '<body><a href="mailto:shop@retro-clock.example">Mail</a><a href="tel:+123">Call</a>'
        '<a href="#specs">Specs</a><a href="">Self</a><a href="http://exa mple.com/">Broken host</a></body>'
    )
    assert links_of(f, LinkKind.A) == []
    assert f.uncrawlable_anchors == ()
    assert f.anchor_links == 0


def test_uncrawlable_anchors_keep_their_raw_href() -> None:
    f = facts(
        '<body><a href="javascript:void(0)">Open</a><a href="#">Menu</a><a onclick="go()">Go</a>'
        '<a href=" JavaScript:go()">Go again</a><a name="top"></a><a href="/real">Real link</a></body>'
    )
    assert f.uncrawlable_anchors == ("javascript:void(0)", "#", "", " JavaScript:go()")
    assert [link.target for link in links_of(f, LinkKind.A)] == ["https://retro-clock.example/real"]


def test_generic_and_empty_anchor_texts_are_collected() -> None:
    f = facts(
        "<body>"
        '<a href="/1">Click here</a>'
        '<a href="/2">  Read   more… </a>'
        '<a href="/3">HERE</a>'
        '<a href="/4"></a>'
        '<a href="/5"><img src="/logo.png"></a>'
        '<a href="/6"><img src="/logo.png" alt="Retro Clock home"></a>'
        '<a href="/7" aria-label="Shopping cart"><svg></svg></a>'
        '<a href="/8">Learn more</a>'
        '<a href="/9">The 1974 flip clock restoration</a>'
        "</body>"
    )
    assert f.anchors_generic == ("Click here", "Read more…", "HERE", "", "", "Learn more")


def test_the_generic_anchor_words_are_the_domains() -> None:
    texts = [f"{word.upper()} »" for word in sorted(GENERIC_ANCHORS)]
    links = "".join(f'<a href="/{i}">{text}</a>' for i, text in enumerate(texts))
    f = facts(f'<body>{links}<a href="/clocks">Flip clocks</a><a href="/">Home</a></body>')
    assert f.anchors_generic == tuple(texts)


def test_images_record_alt_presence_dimensions_and_resolved_source() -> None:
    f = facts(
        '<body><img src="/a.png" alt="Flip clock" width="640" height="480">'
        '<img src="b.png" alt=""><img src="c.png"><img data-src="/lazy.png" alt="Lazy"></body>'
    )
    assert f.images == (
        Image(src="https://retro-clock.example/a.png", has_alt=True, width="640", height="480"),
        Image(src="https://retro-clock.example/blog/b.png", has_alt=True),
        Image(src="https://retro-clock.example/blog/c.png", has_alt=False),
        Image(src="https://retro-clock.example/lazy.png", has_alt=True),
    )
    assert [link.target for link in links_of(f, LinkKind.IMG)] == [
        "https://retro-clock.example/a.png",
        "https://retro-clock.example/blog/b.png",
        "https://retro-clock.example/blog/c.png",
        "https://retro-clock.example/lazy.png",
    ]


def test_scripts_stylesheets_and_icons_are_links_of_their_kind() -> None:
    f = facts(
        '<head><link rel="stylesheet" href="/s.css"><link rel="icon" href="https://cdn.example/i.ico">'
        '<link rel="preconnect" href="https://fonts.example"><script src="/app.js"></script></head>'
        '<body><script src="https://cdn.example/lib.js"></script></body>'
    )
    assert links_of(f, LinkKind.LINK) == [
        Link(target="https://retro-clock.example/s.css", kind=LinkKind.LINK, internal=True),
        Link(target="https://cdn.example/i.ico", kind=LinkKind.LINK, internal=False),
    ]
    assert links_of(f, LinkKind.SCRIPT) == [
        Link(target="https://retro-clock.example/app.js", kind=LinkKind.SCRIPT, internal=True),
        Link(target="https://cdn.example/lib.js", kind=LinkKind.SCRIPT, internal=False),
    ]


def test_hreflang_alternates_in_the_head_are_recorded_as_declared_and_resolved() -> None:
    f = facts(
        '<head><link rel="alternate" hreflang="de" href="/de/erster-beitrag">'
        '<link rel="alternate" hreflang="x-default" href="https://retro-clock.example/blog/first-post">'
        '<link rel="alternate" hreflang="en_US" href="http://exa mple.com/">'
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body></body>'
    )
    assert f.hreflangs == (
        Hreflang(
            lang="de", href="/de/erster-beitrag", target="https://retro-clock.example/de/erster-beitrag"
        ),
        Hreflang(
            lang="x-default",
            href="https://retro-clock.example/blog/first-post",
            target="https://retro-clock.example/blog/first-post",
        ),
        Hreflang(lang="en_US", href="http://exa mple.com/", target=None),
    )
    assert [link.target for link in links_of(f, LinkKind.HREFLANG)] == [
        "https://retro-clock.example/de/erster-beitrag",
        "https://retro-clock.example/blog/first-post",
    ]
    assert [link.target for link in links_of(f, LinkKind.LINK)] == ["https://retro-clock.example/feed.xml"]


def test_mixed_content_lists_http_subresources_of_an_https_page() -> None:
    f = facts(
        "<head>"
        '<link rel="stylesheet" href="http://cdn.example/s.css">'
        '<link rel="alternate" href="http://retro-clock.example/feed">'
        '<script src="http://cdn.example/a.js"></script></head><body>'
        '<img src="http://img.example/1.png" srcset="https://img.example/2.png 2x, http://img.example/3.png 3x">'
        '<picture><source srcset="http://img.example/4.webp"></picture>'
        '<iframe src="http://video.example/embed"></iframe>'
        '<video poster="http://img.example/poster.jpg"><source src="https://video.example/v.mp4"></video>'
        '<a href="http://other.example/">A plain link is not a subresource</a>'
        '<img src="/relative-stays-https.png">'
        "</body>"
    )
    assert f.mixed_content == (
        "http://cdn.example/s.css",
        "http://cdn.example/a.js",
        "http://img.example/1.png",
        "http://img.example/3.png",
        "http://img.example/4.webp",
        "http://video.example/embed",
        "http://img.example/poster.jpg",
    )


def test_an_http_page_has_no_mixed_content() -> None:
    f = facts('<body><img src="http://img.example/1.png"></body>', url="http://retro-clock.example/")
    assert f.mixed_content == ()


def test_an_http_base_href_makes_relative_subresources_insecure() -> None:
    f = facts('<head><base href="http://static.retro-clock.example/"></head><body><img src="a.png"></body>')
    assert f.mixed_content == ("http://static.retro-clock.example/a.png",)


def test_forms_posting_to_http_are_insecure() -> None:
    f = facts(
        '<body><form action="http://retro-clock.example/login"></form><form action="/search"></form>'
        '<form action="HTTP://pay.example/"></form></body>'
    )
    assert f.insecure_forms == ("http://retro-clock.example/login", "http://pay.example/")
    on_http = facts("<body><form></form></body>", url="http://retro-clock.example/contact")
    assert on_http.insecure_forms == ("http://retro-clock.example/contact",)


def test_headings_levels_in_document_order_and_h1_texts() -> None:
    f = facts("<body><h2>Intro</h2><h1> Big   <em>title</em> </h1><h4>Deep</h4><h1></h1><h3>x</h3></body>")
    assert f.heading_levels == (2, 1, 4, 1, 3)
    assert f.h1s == ("Big title", "")


def test_json_ld_blocks_are_checked_for_json_context_and_type() -> None:
    f = facts(
        "<head>"
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product"}</script>'
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": ["Article", "NewsArticle"]}'
        "</script>"
        '<script type="application/ld+json">{"name": "no context or type"}</script>'
        '<script type="Application/LD+JSON">{"@context": "https://schema.org", "@graph": '
        '[{"@type": "WebSite"}, {"@type": "Organization"}]}</script>'
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Event",}</script>'
        '<script type="application/ld+json">[{"@context": "https://schema.org", "@type": "Person"}]</script>'
        '<script type="text/javascript">var x = {"@type": "NotJsonLd"};</script>'
        "</head><body></body>"
    )
    assert f.json_ld == (
        JsonLdBlock(valid_json=True, has_context=True, has_type=True, types=("Product",)),
        JsonLdBlock(valid_json=True, has_context=True, has_type=True, types=("Article", "NewsArticle")),
        JsonLdBlock(valid_json=True, has_context=False, has_type=False, types=()),
        JsonLdBlock(valid_json=True, has_context=True, has_type=True, types=("WebSite", "Organization")),
        JsonLdBlock(valid_json=False),
        JsonLdBlock(valid_json=True, has_context=True, has_type=True, types=("Person",)),
    )


def test_microdata_and_rdfa_presence() -> None:
    neither = facts('<body><p property="og:title">x</p></body>')
    assert (neither.has_microdata, neither.has_rdfa) == (False, False)
    microdata = facts('<html itemscope itemtype="https://schema.org/WebPage"><body>x</body></html>')
    assert (microdata.has_microdata, microdata.has_rdfa) == (True, False)
    rdfa = facts('<body vocab="https://schema.org/"><div TYPEOF="Product">x</div></body>')
    assert (rdfa.has_microdata, rdfa.has_rdfa) == (False, True)
    upper = facts('<body><div ITEMSCOPE itemtype="https://schema.org/Product">x</div></body>')
    assert upper.has_microdata is True


def test_open_graph_properties_with_content_are_collected() -> None:
    f = facts(
        '<head><meta property="og:title" content="Retro Clock"><meta property="OG:Image" content="/c.png">'
        '<meta property="og:description" content="  "><meta name="og:type" content="website">'
        '<meta name="twitter:card" content="summary"></head>'
    )
    assert f.open_graph == frozenset({"og:title", "og:image", "og:type"})


def test_visible_text_excludes_script_style_noscript_template_and_head() -> None:
    f = facts(
        "<head><title>Not counted</title><style>p{}</style></head><body>"
        "<p>One two three</p><script>var hidden = 'four five';</script><style>.six{}</style>"
        "<noscript>seven eight</noscript><template><p>nine ten</p></template>"
        "<div>eleven&nbsp;twelve</div></body>"
    )
    assert f.word_count == 5
    assert f.text_chars == len("One two three eleven twelve")


def test_text_fingerprint_ignores_case_and_whitespace_and_markup() -> None:
    a = facts("<body><p>The  Flip Clock</p><p>is back</p></body>")
    b = facts("<body><div>the flip <b>clock</b>\n is   BACK</div></body>")
    c = facts("<body><p>The flip clock is gone</p></body>")
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert len(a.fingerprint) == 32
    assert facts("<body><script>x</script></body>").fingerprint == ""


def test_sketch_has_one_value_per_bin_and_is_empty_for_empty_text() -> None:
    f = facts("<body><p>" + " ".join(f"word{i}" for i in range(300)) + "</p></body>")
    assert len(f.sketch) == SKETCH_BINS
    assert facts("<body></body>").sketch == ()


def test_sketches_estimate_the_similarity_of_word_shingles() -> None:
    words = [f"w{i * 7919 % 10007}" for i in range(2000)]
    edited = list(words)
    for position in range(0, 2000, 100):  # 20 single-word edits, each breaks 5 shingles
        edited[position] = "changed"
    same = sum(x == y for x, y in zip(sketch_of(" ".join(words)), sketch_of(" ".join(edited)), strict=True))
    other = sketch_of(" ".join(f"v{i}" for i in range(2000)))
    unrelated = sum(x == y for x, y in zip(sketch_of(" ".join(words)), other, strict=True))
    # true Jaccard of the shingle sets is about 0.905
    assert 0.8 * SKETCH_BINS <= same <= SKETCH_BINS
    assert unrelated <= 0.05 * SKETCH_BINS


def test_the_sketch_has_the_domains_number_of_bins() -> None:
    assert SKETCH_BINS & (SKETCH_BINS - 1) == 0, "the top bits of a hash choose the bin"
    assert len(sketch_of("the flip clock is back")) == SKETCH_BINS


def test_sketch_is_stable_across_runs() -> None:
    assert (
        sketch_of("the quick brown fox jumps over the lazy dog")[:3]
        == sketch_of("the quick brown fox jumps over the lazy dog")[:3]
    )
    assert sketch_of("a b c d e f") != sketch_of("a b c d e g")


def test_not_found_phrase_is_detected_in_text_or_title() -> None:
    assert facts("<body><h1>Oops! Page not found</h1></body>").not_found_phrase is True
    assert facts("<head><title>404 Error</title></head><body>Back home</body>").not_found_phrase is True
    assert facts("<body><p>We found the perfect clock.</p></body>").not_found_phrase is False


def test_not_found_phrases_in_several_wordings() -> None:
    for text in (
        "the page you are looking for doesn't exist",
        "this product can't be found",
        "sorry, the requested url could not be found on this server",
        "seite nicht gefunden",
        "error 404",
        "this article no longer exists",
    ):
        assert has_not_found_phrase(text), text
    for text in ("found 404 clocks in stock", "the clock was found in an attic", "nothing to see"):
        assert not has_not_found_phrase(text), text


def test_the_soft_404_wording_is_the_domains(monkeypatch: pytest.MonkeyPatch) -> None:
    page = "<head><title>Flip clock</title></head><body><p>Diese Uhr ist leider weg.</p></body>"
    assert facts(page).not_found_phrase is False
    monkeypatch.setattr(judgement, "NOT_FOUND_PHRASES", (("weg", (re.compile(r"ist\s+leider\s+weg"),)),))
    assert facts(page).not_found_phrase is True
    assert facts("<body><h1>Page not found</h1></body>").not_found_phrase is False


def test_dom_nodes_counts_elements() -> None:
    f = facts(
        "<!doctype html><html><head><title>t</title></head><body><div><p>a</p><p>b</p></div></body></html>"
    )
    assert f.dom_nodes == 7  # html, head, title, body, div, p, p


def test_charset_declared_only_in_meta_decodes_windows_1251_text() -> None:
    html = '<html><head><meta charset="windows-1251"><title>Часы</title></head><body><p>Ретро часы</p></body></html>'
    f = facts(html.encode("windows-1251"), content_type="text/html")
    assert f.titles == ("Часы",)
    assert f.meta_charset == "windows-1251"
    assert f.word_count == 2


def test_charset_declared_only_in_meta_decodes_latin_1_text() -> None:
    html = (
        '<html><head><meta http-equiv="content-type" content="text/html; charset=iso-8859-1">'
        "<title>Horloge rétro à vendre</title></head><body>Très élégante</body></html>"
    )
    f = facts(html.encode("iso-8859-1"), content_type=None)
    assert f.titles == ("Horloge rétro à vendre",)
    assert f.word_count == 2


def test_http_charset_wins_over_meta_charset() -> None:
    html = '<html><head><meta charset="iso-8859-1"><title>Grüße</title></head></html>'
    f = facts(html.encode("utf-8"), content_type="text/html; charset=utf-8")
    assert f.titles == ("Grüße",)


def test_an_empty_document_has_empty_facts() -> None:
    f = facts(b"")
    assert f.titles == ()
    assert f.links == ()
    assert f.word_count == 0
    assert f.sketch == ()
    assert f.has_doctype is False
