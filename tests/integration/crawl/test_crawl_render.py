"""Audits with `render`: each HTML page is loaded in Debian's chromium after its raw fetch, every request
of the browser goes through the crawler's guard, and the raw-against-rendered checks find what only a
browser sees (local sites on 127.0.0.1, a real browser)."""

import asyncio
import itertools
import shutil
from collections.abc import Callable, Iterator

import pytest
from attrs import evolve
from crawl_doubles import RESOLVER, Answer, Crawl, SiteServer, crawl_audit_inline, html

from siteaudit.adapters.http.fetcher import FetchLimits, HttpxFetcher
from siteaudit.adapters.memory.ratelimit import MemoryRateLimiter
from siteaudit.adapters.render.playwright import CHROMIUM, PlaywrightRenderer
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.hostlimit import HostLimits
from siteaudit.domain.network import AddressPolicy
from siteaudit.domain.render import RenderBudget, RenderEnd
from siteaudit.ports.network import Fetcher
from siteaudit.services.crawl import CrawlDeps

pytestmark = [
    pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="chromium is not installed"),
    pytest.mark.xdist_group("chromium"),
]

JS = {"Content-Type": "text/javascript"}


@pytest.fixture(scope="module")
def renderer() -> Iterator[PlaywrightRenderer]:
    pool = PlaywrightRenderer(max_tabs=2)
    yield pool
    asyncio.run(pool.aclose())


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


@pytest.fixture
def elsewhere() -> Iterator[SiteServer]:
    """Another server on 127.0.0.1: what a script must never reach."""
    server = SiteServer({"/secret": html("<p>internal</p>")})
    yield server
    server.close()


def only_loopback_one(connections: int) -> Fetcher:
    """The site's own address allowed (127.0.0.1), every other private address refused."""
    limits = FetchLimits(connect_s=2.0, read_s=5.0, deadline_s=5.0, max_connections=connections)
    return HttpxFetcher(RESOLVER, AddressPolicy.from_setting("127.0.0.1/32"), limits=limits)


def rendered_crawl(
    site: SiteServer,
    renderer: PlaywrightRenderer,
    *,
    third_party: bool = False,
    budget: RenderBudget | None = None,
    fetcher_factory: Callable[[int], Fetcher] | None = None,
    host_limiter: MemoryRateLimiter | None = None,
    host_limits: HostLimits | None = None,
    max_pages: int = 20,
) -> Crawl:
    crawl = Crawl(site.url("/"), max_pages=max_pages, render=True)
    deps: CrawlDeps = evolve(
        crawl.deps(),
        renderer=renderer,
        render_third_party=third_party,
        render_budget=budget or RenderBudget(time_s=8.0),
        host_limiter=host_limiter,
        host_limits=host_limits or HostLimits(),
    )
    if fetcher_factory is not None:
        deps = evolve(deps, fetcher_factory=fetcher_factory)
    crawl_audit_inline(crawl.audit_id, deps)
    return crawl


def page_of(crawl: Crawl, site: SiteServer, path: str) -> PageFacts:
    pages = crawl.pages()
    found = pages[site.url(path)]
    assert isinstance(found, PageFacts)
    return found


def codes_of(crawl: Crawl, site: SiteServer, path: str) -> dict[str, dict[str, object]]:
    return {
        issue.check_code: dict(issue.details)
        for _, issue in crawl.crawl.stream_issues(crawl.audit_id)
        if issue.url == site.url(path)
    }


def reaching_out(elsewhere: SiteServer) -> Answer:
    other = f"http://127.0.0.1:{elsewhere.port}/secret"
    script = (
        f"fetch('{other}').catch(() => {{}});"
        "fetch('http://169.254.169.254/latest/meta-data/').catch(() => {});"
        "const i = new Image(); i.src = 'http://10.1.2.3/pixel.png'; document.body.append(i);"
        "fetch('http://127.0.0.2:9/x').catch(() => {});"
    )
    return html(f"<h1>Hello</h1><p>A page whose script tries private addresses.</p><script>{script}</script>")


def test_a_script_reaching_private_addresses_or_another_port_is_refused_and_reported(
    site: SiteServer, elsewhere: SiteServer, renderer: PlaywrightRenderer
) -> None:
    site.routes["/"] = reaching_out(elsewhere)
    crawl = rendered_crawl(site, renderer)
    rendering = page_of(crawl, site, "/").rendering
    assert rendering is not None
    refused = {note.url: note.reason for note in rendering.refused}
    assert refused[f"http://127.0.0.1:{elsewhere.port}/secret"] == "third_party: 127.0.0.1"
    assert refused["http://169.254.169.254/latest/meta-data/"] == "third_party: 169.254.169.254"
    assert refused["http://10.1.2.3/pixel.png"] == "third_party: 10.1.2.3"
    assert elsewhere.paths() == []
    issue = codes_of(crawl, site, "/")["render_requests_refused"]
    assert issue["count"] == 4


def test_with_third_parties_allowed_the_ssrf_table_still_refuses_private_addresses(
    site: SiteServer, elsewhere: SiteServer, renderer: PlaywrightRenderer
) -> None:
    site.routes["/"] = reaching_out(elsewhere)
    crawl = rendered_crawl(site, renderer, third_party=True, fetcher_factory=only_loopback_one)
    rendering = page_of(crawl, site, "/").rendering
    assert rendering is not None
    refused = {note.url: note.reason for note in rendering.refused}
    assert refused["http://169.254.169.254/latest/meta-data/"].startswith("address: ")
    assert "169.254.0.0/16" in refused["http://169.254.169.254/latest/meta-data/"]
    assert "10.0.0.0/8" in refused["http://10.1.2.3/pixel.png"]
    assert "127.0.0.0/8" in refused["http://127.0.0.2:9/x"]


def test_subresources_of_the_audited_host_take_turns_of_the_shared_host_limit(
    site: SiteServer, renderer: PlaywrightRenderer
) -> None:
    site.routes["/"] = html("<h1>Scripts</h1>", head="<script src=/a.js></script><script src=/b.js></script>")
    site.routes["/a.js"] = Answer(200, "window.a = 1;", JS)
    site.routes["/b.js"] = Answer(200, "window.b = 1;", JS)
    # Four requests a second to the host, one at a time: the scripts, fetched by the browser's guard and
    # not paced by the audit's own max_rps, still leave a quarter of a second apart.
    crawl = rendered_crawl(
        site,
        renderer,
        host_limiter=MemoryRateLimiter(),
        host_limits=HostLimits(requests_per_s=4.0, burst=1),
        max_pages=1,
    )
    paths = site.paths()
    assert "/a.js" in paths and "/b.js" in paths
    times = [hit.at for hit in site.hits]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert min(gaps) >= 0.2, gaps
    assert page_of(crawl, site, "/").rendering is not None


def test_robots_txt_disallowing_a_script_keeps_the_browser_from_it(
    site: SiteServer, renderer: PlaywrightRenderer
) -> None:
    site.routes["/robots.txt"] = Answer(
        200, "User-agent: *\nDisallow: /private/\n", {"Content-Type": "text/plain"}
    )
    site.routes["/"] = html("<h1>Robots</h1>", head="<script src=/private/app.js></script>")
    site.routes["/private/app.js"] = Answer(200, "document.title = 'from a disallowed script';", JS)
    crawl = rendered_crawl(site, renderer)
    assert "/private/app.js" not in site.paths()
    rendering = page_of(crawl, site, "/").rendering
    assert rendering is not None
    assert [(n.url, n.reason) for n in rendering.refused] == [(site.url("/private/app.js"), "robots")]


def test_a_page_that_never_stops_loading_is_reported_and_does_not_hang(
    site: SiteServer, renderer: PlaywrightRenderer
) -> None:
    poll = "setInterval(() => fetch('/poll?' + Math.random()).catch(() => {}), 50);"
    site.routes["/slow.js"] = Answer(200, "window.slow = 1;", JS, delay_s=30)
    site.routes["/"] = html(
        "<h1>Busy</h1><p>Polling forever.</p>", head=f"<script>{poll}</script><script src=/slow.js></script>"
    )
    crawl = rendered_crawl(site, renderer, budget=RenderBudget(time_s=2.0), max_pages=1)
    rendering = page_of(crawl, site, "/").rendering
    assert rendering is not None
    assert rendering.end is RenderEnd.TIMEOUT
    assert rendering.elapsed_ms < 8_000
    assert codes_of(crawl, site, "/")["render_incomplete"]["over_budget"] == "time"
