"""A scripted local shop for the fix-task and recheck tests, served on 127.0.0.1 by pytest-httpserver,
and the loop that drains the in-memory queue through the application as a worker would."""

import re
import time
from collections.abc import Callable
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.ids import AuditId, RecheckId
from siteaudit.domain.site import Site
from siteaudit.services.sites.usecases import CrawlSite, RegisterSite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL

PRODUCTS = ("brass-mantel", "oak-cuckoo", "walnut-longcase", "steel-wall", "pine-carriage", "gilt-bracket")
POSTS = ("winding-tips", "history-of-clocks", "cleaning-guide", "buying-advice", "pendulum-care")
WORDS = " ".join(["A carefully restored clock keeps good time for many decades."] * 30)


DESCRIPTION = "A fine restored clock page that says what it offers, in enough words for a snippet."
JSON_LD = '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "WebPage"}</script>'


def page(
    title: str,
    canonical: str,
    *,
    description: str | None = DESCRIPTION,
    h1: str | None = "Clocks",
    links: tuple[str, ...] = (),
) -> str:
    """A clean page but for what the arguments leave out."""
    meta = f'<meta name="description" content="{description}">' if description is not None else ""
    heading = f"<h1>{h1}</h1>" if h1 else ""
    anchors = "".join(f'<a href="{href}">{href.strip("/") or "home"} page</a> ' for href in links)
    social = "".join(
        f'<meta property="og:{name}" content="{value}">'
        for name, value in (
            ("title", title),
            ("description", "Restored clocks"),
            ("image", canonical + "x.png"),
        )
    )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{title}</title>{meta}<link rel="canonical" href="{canonical}">{social}{JSON_LD}</head>'
        f"<body>{heading}<p>{title}. {WORDS}</p>{anchors}</body></html>"
    )


class Shop:
    """The site's answers, changeable between audits: `product_description` off leaves the product
    template without a meta description; `challenge` paths answer with a bot challenge; `moved` paths
    redirect."""

    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.product_description = False
        self.post_h1 = False
        self.challenge: set[str] = set()
        self.moved: dict[str, str] = {}
        self.no_title: set[str] = set()
        self.extra_links: dict[str, tuple[str, ...]] = {}  # path -> more links on that page
        self.slow: dict[str, float] = {}  # path -> seconds before answering
        self.disallow: str | None = None  # a path robots.txt disallows
        server.no_handler_status_code = 404
        server.expect_request(re.compile(".*")).respond_with_handler(self.answer)

    def url(self, path: str = "/") -> str:
        return self.server.url_for(path)

    def answer(self, request: Request) -> Response:
        path = request.path
        if path in self.slow:
            time.sleep(self.slow[path])
        html = "text/html; charset=utf-8"
        if path in self.moved:
            return Response("", status=301, headers={"Location": self.moved[path]})
        if path in self.challenge:
            body = "<html><head><title>Just a moment...</title></head><body>_cf_chl_opt</body></html>"
            return Response(
                body,
                status=403,
                headers={"cf-mitigated": "challenge", "Server": "cloudflare"},
                content_type=html,
            )
        if path == "/robots.txt":
            rule = f"Disallow: {self.disallow}" if self.disallow else "Allow: /"
            return Response(f"User-agent: *\n{rule}\n", content_type="text/plain")
        if path == "/":
            links = tuple(f"/products/{p}" for p in PRODUCTS) + tuple(f"/blog/{p}" for p in POSTS)
            links += self.extra_links.get(path, ())
            return Response(
                page("Retro Clock, restored clocks", self.url(path), links=links), content_type=html
            )
        for product in PRODUCTS:
            if path == f"/products/{product}":
                description = (
                    f"The {product} clock, restored: its history, size and price, ready to ship today."
                )
                body = page(
                    "" if path in self.no_title else f"{product} clock for sale",
                    self.url(path),
                    description=description if self.product_description else None,
                    links=("/",),
                )
                return Response(body, content_type=html)
        for post in POSTS:
            if path == f"/blog/{post}":
                body = page(
                    f"Blog: {post} for clock owners",
                    self.url(path),
                    description=f"Notes on {post} for clock owners: what to do, what to avoid, and why it matters.",
                    h1=f"Notes on {post}" if self.post_h1 else None,
                    links=("/",),
                )
                return Response(body, content_type=html)
        return Response("<html><body>Not found</body></html>", status=404, content_type=html)


def shop_app(**settings: Any) -> App:
    """The application on memory adapters with a clock that moves only when told to; the shop's audits and
    rechecks unpaced (tests/local_sites.py) unless `settings` say otherwise (`unpaced_hosts=()`)."""
    return bootstrap(
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **{**UNPACED_LOCAL, **settings}),
        queue=MemoryTaskQueue(),
        clock=FixedClock(),
    )


def drain(app: App, *, skip: Callable[[str], bool] = lambda actor: False) -> list[str]:
    """Run every queued message through the application as a worker does; the actors run, in order."""
    queue = app.queue
    assert isinstance(queue, MemoryTaskQueue)
    ran: list[str] = []
    while (message := queue.take()) is not None:
        actor, argument = message
        if skip(actor):
            continue
        ran.append(actor)
        if actor == "crawl_slice":
            app.application.run_crawl_slice(AuditId(argument or 0))
        elif actor == "finalize_audit":
            app.application.finalize_audit(AuditId(argument or 0))
        elif actor == "run_recheck":
            app.application.run_recheck(RecheckId(argument or 0))
    return ran


def verified_site(app: App, shop: Shop, caller: Caller) -> Site:
    site = app.application.handle(RegisterSite(shop.url("/"), max_rps=10), caller)
    return app.application.verify_site_by_hand(site.id, "the test owns the shop")


def audit(app: App, site: Site, caller: Caller) -> AuditId:
    started = app.application.handle(CrawlSite(site_id=site.id, max_pages=50), caller)
    drain(app)
    return AuditId(started.crawl_id)
