"""A whole crawl of a scripted site on 127.0.0.1 through the SSRF guard: every recorded fact, exactly."""

from collections.abc import Iterator

import pytest
from crawl_doubles import Answer, Crawl, SiteServer, gzipped, html, redirect, sitemap_urls

from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.crawl import UNLINKED_DEPTH, CrawlLimits, CrawlState, Phase, StopReason
from siteaudit.domain.facts import FetchError, LinkKind, PageFacts

CHALLENGE = (
    "<!DOCTYPE html><html><head><title>Just a moment...</title></head>"
    "<body><script src='/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1'></script></body></html>"
)
WORDS = " ".join(["Clocks that tick", "and chime"] * 60)


def retro_clock_site(site: SiteServer) -> None:
    u = site.url
    home_links = "".join(
        f'<a href="{href}">{text}</a>'
        for href, text in [
            ("/about", "About the workshop"),
            ("/old", "Our old catalogue"),
            ("/loop-a", "A looping page"),
            ("/missing", "A missing page"),
            ("/broken", "A broken page"),
            ("/private/secret", "Secret plans"),
            ("/canon?ref=home", "Canonical variant"),
            ("/en", "English edition"),
            ("/noindex-meta", "Hidden by meta"),
            ("/noindex-header", "Hidden by header"),
            ("/challenge", "Behind a firewall"),
            ("/slow", "A slow page"),
            ("/big", "A big page"),
            ("http://elsewhere.example/", "Another site"),
        ]
    )
    home_links += (
        '<a href="/nofollow-target" rel="nofollow">Not followed</a><img src="/img/clock.png" alt="A clock">'
    )
    site.routes.update(
        {
            "/robots.txt": Answer(
                200,
                f"User-agent: *\nDisallow: /private/\n\nSitemap: {u('/sitemap_index.xml')}\n",
                {"Content-Type": "text/plain"},
            ),
            "/sitemap_index.xml": Answer(
                200,
                '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<sitemap><loc>{u('/sitemaps/pages.xml.gz')}</loc></sitemap></sitemapindex>",
                {"Content-Type": "application/xml"},
            ),
            "/sitemaps/pages.xml.gz": Answer(
                200,
                gzipped(
                    '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                    + "".join(
                        f"<url><loc>{u(path)}</loc></url>"
                        for path in ("/", "/about", "/orphan", "/private/secret", "/gone")
                    )
                    + "</urlset>"
                ),
                {"Content-Type": "application/gzip"},
            ),
            "/": html(f"<h1>Retro clocks</h1>{home_links}", head="<title>Retro clock workshop</title>"),
            "/about": html('<h1>About</h1><a href="/about/team">The team</a><a href="/">Home</a>'),
            "/about/team": html(f"<h1>Team</h1><p>{WORDS}</p>"),
            "/old": redirect("/older", 301),
            "/older": redirect("/new", 302),
            "/new": html(
                '<h1>New catalogue</h1><a href="/new/item">An item</a>', head="<title>Catalogue</title>"
            ),
            "/new/item": html("<h1>Item</h1>"),
            "/loop-a": redirect("/loop-b"),
            "/loop-b": redirect("/loop-a"),
            "/broken": html("<h1>Oops</h1>", status=500),
            "/private/secret": html("<h1>Secret</h1>"),
            "/canon?ref=home": html("<h1>Canon</h1>", head=f'<link rel="canonical" href="{u("/canon")}">'),
            "/canon": html("<h1>Canon</h1>", head=f'<link rel="canonical" href="{u("/canon")}">'),
            "/en": html(
                "<h1>English</h1>",
                head=f'<link rel="alternate" hreflang="en" href="{u("/en")}">'
                f'<link rel="alternate" hreflang="de" href="{u("/de")}">',
            ),
            "/de": html(
                "<h1>Deutsch</h1>",
                head=f'<link rel="alternate" hreflang="en" href="{u("/en")}">'
                f'<link rel="alternate" hreflang="de" href="{u("/de")}">',
            ),
            "/noindex-meta": html("<h1>Hidden</h1>", head='<meta name="robots" content="noindex">'),
            "/noindex-header": html("<h1>Hidden</h1>", headers={"X-Robots-Tag": "noindex"}),
            "/challenge": Answer(403, CHALLENGE, {"Content-Type": "text/html", "cf-mitigated": "challenge"}),
            "/slow": html("<h1>Slow</h1>").__class__(
                200, "<h1>Slow</h1>", {"Content-Type": "text/html"}, 1.5
            ),
            "/big": html(f"<h1>Big</h1><p>{'tick tock ' * 5000}</p>"),
            "/nofollow-target": html("<h1>Never fetched</h1>"),
            "/img/clock.png": Answer(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 2000, {"Content-Type": "image/png"}),
            "/orphan": html('<h1>Orphan</h1><a href="/orphan/child">Child</a>'),
            "/orphan/child": html("<h1>Child of the orphan</h1>"),
            "/gone": html("<h1>Gone</h1>", status=410),
        }
    )


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    retro_clock_site(server)
    yield server
    server.close()


LIMITS = CrawlLimits(request_deadline_s=1.0, page_bytes=20_000)


def summary(page: PageFacts) -> tuple[object, ...]:
    return (
        page.status_code,
        page.depth,
        page.in_sitemap,
        page.disallowed,
        page.blocked_by,
        page.fetch_error,
        tuple((hop.url, hop.status) for hop in page.redirects),
    )


def test_the_retro_clock_site_is_recorded_exactly(site: SiteServer) -> None:
    run = Crawl(site.url("/"), limits=LIMITS)
    outcomes = run.run()
    u = site.url
    pages = run.pages()
    assert {url: summary(page) for url, page in pages.items()} == {
        u("/"): (200, 0, True, False, None, None, ()),
        u("/about"): (200, 1, True, False, None, None, ()),
        u("/old"): (200, 1, False, False, None, None, ((u("/old"), 301), (u("/older"), 302))),
        u("/new"): (200, 1, False, False, None, None, ()),
        u("/loop-a"): (
            None,
            1,
            False,
            False,
            None,
            FetchError.REDIRECT_LOOP,
            ((u("/loop-a"), 301), (u("/loop-b"), 301)),
        ),
        u("/missing"): (404, 1, False, False, None, None, ()),
        u("/broken"): (500, 1, False, False, None, None, ()),
        u("/private/secret"): (None, 1, True, True, None, None, ()),
        u("/canon?ref=home"): (200, 1, False, False, None, None, ()),
        u("/en"): (200, 1, False, False, None, None, ()),
        u("/noindex-meta"): (200, 1, False, False, None, None, ()),
        u("/noindex-header"): (200, 1, False, False, None, None, ()),
        u("/challenge"): (403, 1, False, False, "cloudflare", None, ()),
        u("/slow"): (None, 1, False, False, None, FetchError.TIMEOUT, ()),
        u("/big"): (200, 1, False, False, None, None, ()),
        u("/img/clock.png"): (200, 1, False, False, None, None, ()),
        u("/about/team"): (200, 2, False, False, None, None, ()),
        u("/new/item"): (200, 2, False, False, None, None, ()),
        u("/canon"): (200, 2, False, False, None, None, ()),
        u("/de"): (200, 2, False, False, None, None, ()),
        u("/orphan"): (200, UNLINKED_DEPTH, True, False, None, None, ()),
        u("/orphan/child"): (200, UNLINKED_DEPTH, False, False, None, None, ()),
        u("/gone"): (410, UNLINKED_DEPTH, True, False, None, None, ()),
    }
    # Never fetched: disallowed, nofollow, external.
    fetched = site.paths()
    assert "/private/secret" not in fetched and "/nofollow-target" not in fetched
    assert fetched.count("/") == 1 and fetched.count("/robots.txt") == 1
    # The redirect's content is recorded under its destination only.
    assert pages[u("/old")].html is None and pages[u("/old")].final_url == u("/new")
    assert pages[u("/new")].html is not None and pages[u("/new")].html.titles == ("Catalogue",)
    assert pages[u("/big")].truncated and pages[u("/big")].bytes == 20_000
    assert pages[u("/noindex-meta")].html.meta_robots == ("noindex",)
    assert pages[u("/noindex-header")].x_robots_tag == ("noindex",)
    assert pages[u("/challenge")].html is None
    assert pages[u("/img/clock.png")].html is None and pages[u("/img/clock.png")].content_type == "image/png"
    # The audit: every URL fetched counted, crawl stopped complete, finalisation queued.
    audit = run.audit()
    assert audit.status is AuditStatus.FINALIZING and audit.partial is False
    # Every page above but the disallowed one and the image (a resource: `docs/scoring.md`).
    assert audit.pages_crawled == 21
    assert outcomes[-1].stop is StopReason.FRONTIER_EMPTY
    assert run.queue.pending() == [("finalize_audit", run.audit_id)]
    state = CrawlState.from_json(run.crawl.checkpoint(run.audit_id) or {})
    assert state.phase is Phase.DONE
    assert state.robots is not None and state.robots.sitemaps == (u("/sitemap_index.xml"),)
    assert [(s.url, s.found_via, s.status_code, s.is_index, s.url_count) for s in state.sitemaps] == [
        (u("/sitemap_index.xml"), "robots", 200, True, 1),
        (u("/sitemaps/pages.xml.gz"), "index", 200, False, 5),
    ]
    assert sorted(sitemap_urls(run.crawl, run.audit_id)) == sorted(
        u(p) for p in ("/", "/about", "/orphan", "/private/secret", "/gone")
    )


def test_links_are_stored_once_per_reference_with_their_kind(site: SiteServer) -> None:
    run = Crawl(site.url("/"), limits=LIMITS)
    run.run()
    urls = dict(run.crawl.stream_urls(run.audit_id))
    links = {
        (urls[row.source], urls[row.target], row.kind, row.nofollow, row.internal)
        for row in run.crawl.stream_links(run.audit_id)
    }
    u = site.url
    assert (u("/"), u("/about"), LinkKind.A, False, True) in links
    assert (u("/"), u("/nofollow-target"), LinkKind.A, True, True) in links
    assert (u("/"), "http://elsewhere.example/", LinkKind.A, False, False) in links
    assert (u("/"), u("/img/clock.png"), LinkKind.IMG, False, True) in links
    assert (u("/en"), u("/de"), LinkKind.HREFLANG, False, True) in links
    assert (u("/canon?ref=home"), u("/canon"), LinkKind.CANONICAL, False, True) in links
    # The redirect's links are the destination's, not the redirect's own.
    assert not any(source == u("/old") for source, *_ in links)
    assert (u("/new"), u("/new/item"), LinkKind.A, False, True) in links
    rows = list(run.crawl.stream_links(run.audit_id))
    assert len(rows) == len(set(rows)) == 26


def test_page_checks_run_at_crawl_time_and_a_challenge_is_not_audited(site: SiteServer) -> None:
    run = Crawl(site.url("/"), limits=LIMITS)
    run.run()
    found = {(issue.check_code, issue.url) for _, issue in run.crawl.stream_issues(run.audit_id)}
    u = site.url
    assert {
        ("http_5xx", u("/broken")),
        ("bot_challenge", u("/challenge")),
        ("fetch_failed", u("/slow")),
    } <= found
    assert {
        ("redirect_loop", u("/loop-a")),
        ("redirect_chain", u("/old")),
        ("noindex", u("/noindex-meta")),
    } <= found
    assert {code for code, url in found if url == u("/challenge")} == {"bot_challenge"}
