"""/llms.txt: read once per origin with the host files, judged by `llms_txt_found`, and handed to the site
checks at finalisation, so `llms_txt_missing` fires when the site says there is no such file, and only
then (issue 12)."""

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from crawl_doubles import Answer, Crawl, SiteServer, html, redirect

from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.crawl import CrawlState, Scope, llms_txt_found
from siteaudit.domain.facts import FetchError
from siteaudit.domain.ids import UserId
from siteaudit.domain.network import FetchResponse
from siteaudit.services.finalize import finalize_audit

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
TWIN = "www.retro-clock.example"
LLMS_TXT = Answer(
    200,
    "# Retro clocks\n\n> Restored mechanical clocks.\n\n## Pages\n\n- [About](/about): the workshop\n",
    {"Content-Type": "text/plain; charset=utf-8"},
)
ROBOTS = Answer(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    server.routes["/robots.txt"] = ROBOTS
    server.routes["/"] = html('<h1>Retro clocks</h1><a href="/about">About</a>', head="<title>Clocks</title>")
    server.routes["/about"] = html('<h1>About</h1><a href="/">Home</a>')
    yield server
    server.close()


def audited(start_url: str) -> Crawl:
    """The audit crawled and finalised (credits granted and reserved as the service would)."""
    crawl = Crawl(start_url)
    with crawl.uow() as uow:
        uow.credits.grant(UserId(1), 100_000, key="llms", at=NOW)
        uow.credits.reserve(UserId(1), crawl.max_pages * 10, reference=f"audit:{crawl.audit_id}", at=NOW)
        uow.commit()
    crawl.run()
    finalize_audit(crawl.audit_id, uow=crawl.uow(), crawl=crawl.crawl, clock=crawl.clock)
    assert crawl.audit().status is AuditStatus.DONE
    return crawl


def llms_findings(crawl: Crawl) -> list[str]:
    """The URLs `llms_txt_missing` was reported on."""
    return [
        issue.url
        for _, issue in crawl.crawl.stream_issues(crawl.audit_id)
        if issue.check_code == "llms_txt_missing"
    ]


def state_of(crawl: Crawl) -> CrawlState:
    saved = crawl.crawl.checkpoint(crawl.audit_id)
    assert saved
    return CrawlState.from_json(saved)


def test_a_site_publishing_llms_txt_gets_no_finding_and_the_file_is_no_page(site: SiteServer) -> None:
    site.routes["/llms.txt"] = LLMS_TXT
    crawl = audited(site.url("/"))
    assert llms_findings(crawl) == []
    assert state_of(crawl).llms_txt_found is True
    assert site.paths().count("/llms.txt") == 1
    # A host file: not a page of the audit, not counted in pages_crawled (so never billed).
    assert site.url("/llms.txt") not in crawl.pages()
    assert crawl.audit().pages_crawled == 2


def test_a_site_answering_404_gets_exactly_one_finding_on_its_origin_llms_txt(site: SiteServer) -> None:
    crawl = audited(site.url("/"))
    assert llms_findings(crawl) == [site.url("/llms.txt")]
    assert state_of(crawl).llms_txt_found is False
    assert site.paths().count("/llms.txt") == 1


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(Answer(500, "<h1>Internal error</h1>", {"Content-Type": "text/html"}), id="500"),
        pytest.param(Answer(drop=True), id="connection-dropped"),
    ],
)
def test_a_server_failure_claims_nothing(site: SiteServer, answer: Answer) -> None:
    site.routes["/llms.txt"] = answer
    crawl = audited(site.url("/"))
    assert llms_findings(crawl) == []
    assert state_of(crawl).llms_txt_found is None
    assert "/llms.txt" in site.paths()


def test_a_page_served_for_every_path_is_no_llms_txt(site: SiteServer) -> None:
    site.routes["/llms.txt"] = html("<div id=app></div>")  # a single-page app's fallback, answered 200
    crawl = audited(site.url("/"))
    assert llms_findings(crawl) == [site.url("/llms.txt")]


def test_a_redirect_within_the_site_is_followed(site: SiteServer) -> None:
    site.routes["/llms.txt"] = redirect("/docs/llms.txt")
    site.routes["/docs/llms.txt"] = LLMS_TXT
    crawl = audited(site.url("/"))
    assert llms_findings(crawl) == []
    assert state_of(crawl).llms_txt_found is True


def test_a_redirect_leaving_the_site_is_not_followed_and_claims_nothing(site: SiteServer) -> None:
    seen: list[str] = []

    def by_host(path: str, headers: Mapping[str, str]) -> Answer:
        seen.append(headers.get("host", "").split(":")[0])
        return LLMS_TXT if headers.get("host", "").startswith("www.") else redirect(site.url(path, host=TWIN))

    site.routes["/llms.txt"] = by_host
    crawl = audited(site.url("/"))
    assert seen == ["retro-clock.example"]  # the twin is another site while the start URL stays put
    assert llms_findings(crawl) == []
    assert state_of(crawl).llms_txt_found is None


def test_llms_txt_disallowed_by_robots_txt_is_not_asked(site: SiteServer) -> None:
    site.routes["/robots.txt"] = Answer(
        200, "User-agent: *\nDisallow: /llms.txt\n", {"Content-Type": "text/plain"}
    )
    crawl = audited(site.url("/"))
    assert "/llms.txt" not in site.paths()
    assert llms_findings(crawl) == []
    assert state_of(crawl).llms_txt_found is None


def moved_to_twin(site: SiteServer, *, apex: Answer | None, twin: Answer | None) -> list[tuple[str, str]]:
    """The start URL redirects to its `www.` twin; each origin answers /llms.txt as given (None: 404)."""
    routes: dict[str, Any] = dict(site.routes)
    site.routes.clear()
    seen: list[tuple[str, str]] = []

    def by_host(path: str, headers: Mapping[str, str]) -> Answer:
        host = headers.get("host", "").split(":")[0]
        seen.append((host, path))
        if path == "/llms.txt":
            answer = twin if host == TWIN else apex
            return answer or html("<h1>Not found</h1>", status=404)
        if host == TWIN or path == "/robots.txt":
            route = routes.get(path)
            return route if isinstance(route, Answer) else html("<h1>Not found</h1>", status=404)
        return redirect(site.url(path, host=TWIN))

    for path in ["/", "/about", "/robots.txt", "/llms.txt", "/sitemap.xml", "/sitemap_index.xml"]:
        site.routes[path] = by_host
    return seen


def test_after_the_move_to_the_www_twin_its_own_llms_txt_is_read(site: SiteServer) -> None:
    seen = moved_to_twin(site, apex=None, twin=LLMS_TXT)
    crawl = audited(site.url("/"))
    assert seen.count(("retro-clock.example", "/llms.txt")) == 1
    assert seen.count((TWIN, "/llms.txt")) == 1
    assert llms_findings(crawl) == []  # the apex's 404 is replaced by the twin's file
    assert state_of(crawl).llms_txt_found is True


def test_after_the_move_to_the_www_twin_its_missing_llms_txt_is_reported_there(site: SiteServer) -> None:
    seen = moved_to_twin(site, apex=LLMS_TXT, twin=None)
    crawl = audited(site.url("/"))
    assert seen.count((TWIN, "/llms.txt")) == 1
    assert state_of(crawl).llms_txt_found is False  # the apex's file is replaced by the twin's 404
    # One finding. Its URL is on the start URL's origin, as for every host file finding (robots.txt,
    # sitemap.xml): the site checks name host files after `AuditFacts.start_url`.
    assert len(llms_findings(crawl)) == 1


# The decision over one answer, status by status.
URL = "https://retro-clock.example/llms.txt"
TEXT = (("content-type", "text/plain"),)
HTML = (("content-type", "text/html; charset=utf-8"),)


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        (FetchResponse(URL, 200, TEXT, b"# Clocks\n"), True),
        (FetchResponse(URL, 200, (("content-type", "text/markdown"),), b"# Clocks\n"), True),
        (FetchResponse(URL, 200, TEXT, b"# Clocks\n" * 9000, truncated=True), True),
        (FetchResponse(URL, 200, (), b"# Clocks\n"), True),
        (FetchResponse(URL, 404, HTML, b"<h1>Not found</h1>"), False),
        (FetchResponse(URL, 410), False),
        (FetchResponse(URL, 200, HTML, b"<div id=app></div>"), False),
        (FetchResponse(URL, 200, (), b"  <!DOCTYPE html><html><body></body></html>"), False),
        (FetchResponse(URL, 500, HTML, b"<h1>Oops</h1>"), None),
        (FetchResponse(URL, 503), None),
        (FetchResponse(URL, 403), None),
        (FetchResponse(URL, 401), None),
        (FetchResponse(URL, 429), None),
        (FetchResponse(URL, 301, (("location", "https://elsewhere.example/llms.txt"),)), None),
        (FetchResponse(URL, error=FetchError.TIMEOUT), None),
        (FetchResponse(URL, 200, TEXT, b"# Cut", error=FetchError.TIMEOUT), None),
        (
            FetchResponse(
                URL, 200, (("content-type", "text/html"),), b"<title>Just a moment...</title>_cf_chl_opt"
            ),
            None,
        ),
    ],
)
def test_llms_txt_found_says_missing_only_when_the_site_says_so(
    answer: FetchResponse, found: bool | None
) -> None:
    assert llms_txt_found(answer) is found


@pytest.mark.parametrize("found", [True, False, None])
def test_the_checkpoint_keeps_the_llms_txt_verdict(found: bool | None) -> None:
    state = CrawlState(scope=Scope.of("https://retro-clock.example/"), llms_txt_found=found)
    assert CrawlState.from_json(state.as_json()).llms_txt_found is found


def test_a_checkpoint_written_before_the_field_reads_as_not_asked() -> None:
    saved = CrawlState(scope=Scope.of("https://retro-clock.example/")).as_json()
    del saved["llms_txt_found"]
    assert CrawlState.from_json(saved).llms_txt_found is None
