"""Crawl slices: politeness held, resumption without loss or duplicates, cancellation, caps, secrets."""

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from crawl_doubles import Answer, Crawl, SiteServer, html, redirect

from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.crawl import CrawlLimits, StopReason
from siteaudit.ports.crawl import CrawlStore, FrontierState


def hub(site: SiteServer, count: int, *, delay_s: float = 0.0) -> list[str]:
    """A home page linking `count` leaf pages, and robots.txt allowing everything."""
    paths = [f"/clock-{n}" for n in range(count)]
    site.routes["/robots.txt"] = Answer(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})
    site.routes["/"] = html("".join(f'<a href="{p}">Clock {p}</a>' for p in paths))
    for path in paths:
        site.routes[path] = Answer(
            200, f"<html><body><h1>{path}</h1></body></html>", {"Content-Type": "text/html"}, delay_s
        )
    return ["/", *paths]


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()


class HookedStore:
    """The memory crawl store with a hook after chosen calls (a test double, not a mock)."""

    def __init__(self, inner: CrawlStore, **hooks: Callable[[int], None]) -> None:
        self._inner = inner
        self._hooks = hooks
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        hook = self._hooks.get(name)
        if hook is None:
            return method

        def hooked(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            self.calls[name] = self.calls.get(name, 0) + 1
            hook(self.calls[name])
            return result

        return hooked


def test_max_rps_and_concurrency_are_held_as_the_server_counts_them(site: SiteServer) -> None:
    hub(site, 8)
    run = Crawl(site.url("/"), max_rps=4.0, concurrency=2, paced=True)
    run.run()
    starts = sorted(hit.at for hit in site.hits)
    assert len(starts) == 13  # robots.txt, llms.txt, two conventional sitemaps, the home page, 8 leaves
    busiest = max(sum(1 for t in starts if first <= t < first + 0.95) for first in starts)
    assert busiest <= 4
    assert (len(starts) - 1) / (starts[-1] - starts[0]) <= 4.0 * 1.05
    assert site.max_in_flight <= 2


def test_no_more_than_concurrency_requests_are_in_flight(site: SiteServer) -> None:
    hub(site, 12, delay_s=0.3)
    run = Crawl(site.url("/"), max_rps=10.0, concurrency=3, paced=True)
    run.run()
    assert site.max_in_flight == 3


def test_a_slow_page_holds_one_connection_while_the_others_go_on(site: SiteServer) -> None:
    paths = hub(site, 40)
    site.routes["/clock-0"] = Answer(
        200, "<html><body><h1>Slow</h1></body></html>", {"Content-Type": "text/html"}, 6.0
    )
    run = Crawl(site.url("/"), max_rps=10.0, concurrency=2, paced=True)  # a batch would be 8 URLs
    run.run()
    slow = next(hit.at for hit in site.hits if hit.path == "/clock-0")
    during = [hit.path for hit in site.hits if slow < hit.at < slow + 5.5]
    # Every other leaf is fetched on the second connection while the slow page holds the first:
    # nothing waits for the slow page's group to finish.
    assert set(during) == {f"/clock-{n}" for n in range(1, 40)}
    assert sorted(run.pages()) == sorted(site.url(p) for p in paths)


def test_slices_interrupted_by_their_budget_resume_and_find_every_page_exactly_once(site: SiteServer) -> None:
    paths = hub(site, 10)
    run = Crawl(site.url("/"), limits=CrawlLimits(slice_pages=3))
    outcomes = run.run()
    assert [o.next for o in outcomes] == ["slice"] * 3 + ["finalize"]
    assert sorted(run.pages()) == sorted(site.url(p) for p in paths)
    assert sorted(p for p in site.paths() if p in paths) == sorted(paths)  # each fetched once
    assert run.audit().pages_crawled == 11


def test_a_slice_killed_mid_batch_is_redelivered_without_losing_or_duplicating_pages(
    site: SiteServer,
) -> None:
    paths = hub(site, 10)
    inner = Crawl(site.url("/")).crawl

    def die_on_second_batch(call: int) -> None:
        if call == 2:
            raise RuntimeError("worker killed")

    run = Crawl(site.url("/"), crawl=HookedStore(inner, replace_links=die_on_second_batch))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="worker killed"):
        run.one_slice()
    assert run.audit().pages_crawled == 1  # only the home page's batch was recorded
    run.crawl = inner  # the redelivered message runs on a healthy worker
    run.run()
    stored = [page.facts.url for page in inner.stream_pages(run.audit_id)]
    assert sorted(stored) == sorted(site.url(p) for p in paths)
    assert len(stored) == len(set(stored))
    assert inner.frontier_counts(run.audit_id) == {FrontierState.DONE: 11}
    assert run.audit().pages_crawled == 11
    issues = [issue.identity for _, issue in inner.stream_issues(run.audit_id)]
    assert len(issues) == len(set(issues))


def test_a_batch_killed_after_writing_its_links_is_redelivered_without_duplicating_them(
    site: SiteServer,
) -> None:
    hub(site, 10)
    inner = Crawl(site.url("/")).crawl

    def die(call: int) -> None:
        raise RuntimeError("worker killed")

    run = Crawl(site.url("/"), crawl=HookedStore(inner, replace_links=die))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="worker killed"):
        run.one_slice()
    assert run.audit().pages_crawled == 0
    assert len(list(inner.stream_links(run.audit_id))) == 10  # written before the worker died
    run.crawl = inner
    run.run()
    links = list(inner.stream_links(run.audit_id))
    assert len(links) == len(set(links)) == 10  # the home page's links, once each


def test_a_cancelled_audit_stops_between_batches_and_queues_nothing(site: SiteServer) -> None:
    hub(site, 20)
    holder: list[Crawl] = []

    def cancel(call: int) -> None:
        if call == 1:
            crawl = holder[0]
            with crawl.uow() as uow:
                audit, _ended = uow.audits.get_any(crawl.audit_id).cancel(now=crawl.clock.now())
                uow.audits.save(audit)
                uow.commit()

    run = Crawl(site.url("/"), crawl=HookedStore(Crawl(site.url("/")).crawl, frontier_mark=cancel))  # type: ignore[arg-type]
    holder.append(run)
    outcome = run.one_slice()
    assert outcome.stop is StopReason.CANCELLED and outcome.next == ""
    assert run.audit().status is AuditStatus.CANCELLED
    assert run.queue.pending() == []
    assert site.paths().count("/clock-0") == 0


def test_the_page_cap_stops_the_crawl_partial(site: SiteServer) -> None:
    hub(site, 10)
    run = Crawl(site.url("/"), max_pages=4)
    outcomes = run.run()
    audit = run.audit()
    assert outcomes[-1].stop is StopReason.PAGE_CAP
    assert audit.status is AuditStatus.FINALIZING and audit.partial is True and audit.pages_crawled == 4
    assert len(run.pages()) == 4
    assert run.queue.pending() == [("finalize_audit", run.audit_id)]


def test_the_time_cap_stops_the_crawl_partial(site: SiteServer) -> None:
    hub(site, 10)
    holder: list[Crawl] = []
    run = Crawl(
        site.url("/"),
        crawl=HookedStore(
            Crawl(site.url("/")).crawl, frontier_mark=lambda call: holder[0].clock.advance(7200)
        ),  # type: ignore[arg-type]
    )
    holder.append(run)
    outcomes = run.run()
    assert outcomes[-1].stop is StopReason.TIME_CAP
    assert run.audit().partial is True and run.audit().pages_crawled == 1


def test_the_verify_token_goes_to_the_audited_site_only_and_is_never_stored(site: SiteServer) -> None:
    hub(site, 2)
    run = Crawl(site.url("/"))
    run.run(verify_token="retro-clock-allow-0123456789")
    assert site.hits and all(
        hit.headers.get("x-service-verify") == "retro-clock-allow-0123456789" for hit in site.hits
    )
    stored = json.dumps(run.crawl.checkpoint(run.audit_id)) + repr(list(run.crawl.stream_pages(run.audit_id)))
    assert "retro-clock-allow" not in stored


def test_a_429_with_retry_after_pauses_the_host_then_the_page_is_fetched(site: SiteServer) -> None:
    hub(site, 0)
    site.routes["/"] = html('<a href="/busy">Busy</a>')
    answers = iter([Answer(429, "slow down", {"Retry-After": "1"})])

    def busy(path: str, headers: Mapping[str, str]) -> Answer:
        return next(answers, html("<h1>Finally</h1>"))

    site.routes["/busy"] = busy
    run = Crawl(site.url("/"), max_rps=10.0, paced=True)
    run.run()
    times = [hit.at for hit in site.hits if hit.path == "/busy"]
    assert len(times) == 2 and times[1] - times[0] >= 0.95
    assert run.pages()[site.url("/busy")].status_code == 200


def test_an_unreachable_robots_txt_disallows_the_whole_site(site: SiteServer) -> None:
    hub(site, 3)
    site.routes["/robots.txt"] = Answer(503, "down", {"Content-Type": "text/plain"})
    run = Crawl(site.url("/"))
    run.run()
    pages = run.pages()
    assert list(pages) == [site.url("/")]
    assert pages[site.url("/")].disallowed and pages[site.url("/")].status_code is None
    assert "/" not in site.paths()


def test_a_start_url_moving_to_its_www_twin_is_crawled_there(site: SiteServer) -> None:
    hub(site, 2)
    www = site.url("/", host="www.retro-clock.example")
    routes: dict[str, Any] = dict(site.routes)
    site.routes.clear()

    def by_host(path: str, headers: Mapping[str, str]) -> Answer:
        if headers.get("host", "").startswith("www."):
            route = routes.get(path)
            return route if isinstance(route, Answer) else html("<h1>Not found</h1>", status=404)
        if path == "/robots.txt":
            return routes["/robots.txt"]
        return redirect(www[:-1] + path)

    for path in ["/", "/robots.txt", "/sitemap.xml", "/sitemap_index.xml", "/clock-0", "/clock-1"]:
        site.routes[path] = by_host
    run = Crawl(site.url("/"))
    run.run()
    assert sorted(run.pages()) == sorted(
        [
            site.url("/"),
            www,
            site.url("/clock-0", host="www.retro-clock.example"),
            site.url("/clock-1", host="www.retro-clock.example"),
        ]
    )
    assert run.pages()[site.url("/")].redirects[0].status == 301


def test_after_the_move_to_the_www_twin_its_own_robots_txt_and_sitemap_are_obeyed(site: SiteServer) -> None:
    hub(site, 3)
    twin = "www.retro-clock.example"
    routes: dict[str, Any] = dict(site.routes)
    routes["/robots.txt"] = Answer(
        200,
        f"User-agent: *\nDisallow: /clock-1\n\nSitemap: {site.url('/listed.xml', host=twin)}\n",
        {"Content-Type": "text/plain"},
    )
    routes["/listed.xml"] = Answer(
        200,
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{site.url('/unlinked', host=twin)}</loc></url></urlset>",
        {"Content-Type": "application/xml"},
    )
    routes["/unlinked"] = html("<h1>Only in the sitemap</h1>")
    site.routes.clear()
    seen: list[tuple[str, str]] = []

    def by_host(path: str, headers: Mapping[str, str]) -> Answer:
        host = headers.get("host", "")
        seen.append((host.split(":")[0], path))
        if host.startswith("www."):
            route = routes.get(path)
            return route if isinstance(route, Answer) else html("<h1>Not found</h1>", status=404)
        if path == "/robots.txt":  # the apex allows everything and lists no sitemap
            return Answer(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})
        return redirect(site.url(path, host=twin))

    for path in ["/", "/robots.txt", "/sitemap.xml", "/sitemap_index.xml", "/listed.xml", "/unlinked"]:
        site.routes[path] = by_host
    for path in ["/clock-0", "/clock-1", "/clock-2"]:
        site.routes[path] = by_host
    run = Crawl(site.url("/"))
    run.run()
    pages = run.pages()
    assert (twin, "/robots.txt") in seen and (twin, "/listed.xml") in seen
    assert (twin, "/clock-1") not in seen  # disallowed by the twin's robots.txt, not the apex's
    blocked = pages[site.url("/clock-1", host=twin)]
    assert blocked.disallowed and blocked.status_code is None  # type: ignore[attr-defined]
    unlinked = pages[site.url("/unlinked", host=twin)]
    assert unlinked.in_sitemap and unlinked.status_code == 200  # type: ignore[attr-defined]
    assert pages[site.url("/", host=twin)].in_sitemap is False  # type: ignore[attr-defined]
