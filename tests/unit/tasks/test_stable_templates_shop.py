"""The loop a site owner can trust, end to end through the real crawler on 127.0.0.1 (docs/templates.md).

A small shop of ten pages: a home page, five hand-made pages and three or four product pages cut from one
layout, each product linking a page that does not exist (`/products/gone-N`). The owner audits, removes
only the broken links, and audits again. The products are one template in both audits, exactly the
broken-link tasks are fixed, every other task keeps its key, template and status, no task is opened
twice, and the only fix-impact events are those of the real fixes.
"""

import re
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.task import FixedBy, TaskStatus
from siteaudit.services.audits.usecases import GetReport
from siteaudit.services.impact.usecases import GetSiteFixImpact
from siteaudit.services.tasks.usecases import ListSiteTasks
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL
from tests.unit.application.test_application_doors import owner
from tests.unit.tasks.shop import audit, verified_site

NAMES = ("brass-mantel", "oak-cuckoo", "walnut-longcase", "steel-wall")
HAND_MADE = ("about", "contact", "shipping", "returns", "faq")
TEXT = " ".join(["A restored clock from our workshop keeps good time for decades to come."] * 25)


class SmallShop:
    """The shop's answers; `broken` says whether the product pages still link their missing page."""

    def __init__(self, server: HTTPServer, products: int) -> None:
        self.server = server
        self.products = NAMES[:products]
        self.broken = True
        server.no_handler_status_code = 404
        server.expect_request(re.compile(".*")).respond_with_handler(self.answer)

    def url(self, path: str = "/") -> str:
        return self.server.url_for(path)

    def answer(self, request: Request) -> Response:
        path = request.path
        if path == "/robots.txt":
            return Response("User-agent: *\nAllow: /\n", content_type="text/plain")
        if path == "/":
            links = [f"/{page}" for page in HAND_MADE] + [f"/products/{name}" for name in self.products]
            return self.html(
                path, "Retro Clock", f"<main><h1>Restored clocks</h1><p>{TEXT}</p></main>", links
            )
        if path.strip("/") in HAND_MADE:
            name = path.strip("/")
            body = (
                f"<main><article><h1>{name.title()}</h1><p>{name} at Retro Clock. {TEXT}</p></article></main>"
            )
            return self.html(path, f"{name.title()} - Retro Clock", body, ["/"])
        for number, name in enumerate(self.products, 1):
            if path == f"/products/{name}":
                # The product layout has its flaws in the one template: no viewport, no canonical, the
                # same description everywhere, and little text.
                body = (
                    f"<div class=product><section><h1>{name}</h1><p>The {name} clock, restored.</p></section>"
                    "<aside><ul><li>Brass</li><li>Oak</li></ul></aside></div>"
                )
                links = ["/"] + ([f"/products/gone-{number}"] if self.broken else [])
                return self.html(path, f"{name} clock for sale", body, links, product=True)
        return Response("<html><body>Not found</body></html>", status=404, content_type="text/html")

    def html(self, path: str, title: str, main: str, links: list[str], *, product: bool = False) -> Response:
        head = f"<meta charset=utf-8><title>{title}</title>"
        if product:
            head += (
                '<meta name="description" content="Restored clocks from the Retro Clock workshop, shipped.">'
            )
        else:
            head += (
                '<meta name="viewport" content="width=device-width, initial-scale=1">'
                f'<meta name="description" content="{title}: restored clocks, what we do and how to reach us.">'
                f'<link rel="canonical" href="{self.url(path)}">'
            )
        anchors = "".join(f'<a href="{href}">{href.strip("/") or "home"} page</a> ' for href in links)
        document = (
            f"<!doctype html><html lang=en><head>{head}</head><body><header><nav>{anchors}</nav></header>"
            f"{main}<footer><p>Retro Clock workshop</p></footer></body></html>"
        )
        return Response(document, content_type="text/html; charset=utf-8")


@pytest.fixture(params=["memory", "sqlite"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> App:
    url = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"
    return bootstrap(
        Settings(
            database_url=url,
            allow_networks=("127.0.0.0/8",),
            **UNPACED_LOCAL,
            secret_key=SecretBox.generate_key(),
        ),
        queue=MemoryTaskQueue(),
        clock=FixedClock(),
    )


@pytest.mark.parametrize("products", [3, 4])
def test_removing_the_broken_links_fixes_exactly_their_tasks(
    app: App, httpserver: HTTPServer, products: int
) -> None:
    shop = SmallShop(httpserver, products)
    caller = owner(app)
    site = verified_site(app, shop, caller)  # type: ignore[arg-type]

    first_audit = audit(app, site, caller)
    first = {t.id: t for t in app.application.handle(ListSiteTasks(site.id, limit=100), caller).tasks}
    product_urls = {shop.url(f"/products/{name}") for name in shop.products}

    # One product template: the newcomer sees one task per check on it, not one per product page.
    report = app.application.handle(GetReport(first_audit), caller)
    templates = {g.template for g in report.templates}
    assert "/products/[slug]" in templates
    assert not any(t.startswith("/products/") and t != "/products/[slug]" for t in templates)
    product_tasks = {t.code for t in first.values() if t.template == "/products/[slug]"}
    assert {"broken_internal_link", "http_4xx", "viewport_missing", "canonical_missing"} <= product_tasks
    assert not any(
        t.template.startswith("/products/") and t.template != "/products/[slug]" for t in first.values()
    )
    broken = {t.id for t in first.values() if t.code in ("broken_internal_link", "http_4xx")}
    assert len(broken) == 2

    shop.broken = False
    second_audit = audit(app, site, caller)
    second = {t.id: t for t in app.application.handle(ListSiteTasks(site.id, limit=100), caller).tasks}

    report = app.application.handle(GetReport(second_audit), caller)
    assert "/products/[slug]" in {g.template for g in report.templates}
    assert not any(
        g.template.startswith("/products/") and g.template != "/products/[slug]" for g in report.templates
    )
    # No task opened twice, none lost: the same keys on the same templates.
    assert set(second) == set(first)
    assert {k: t.template for k, t in second.items()} == {k: t.template for k, t in first.items()}
    # Exactly the broken-link tasks are fixed, by the audit; nothing else moves.
    fixed = {k for k, t in second.items() if t.status is TaskStatus.FIXED}
    assert fixed == broken
    assert all(second[k].fixed_by is FixedBy.AUDIT for k in fixed)
    assert all(second[k].status is first[k].status for k in second if k not in broken)
    with app.uow() as uow:
        assert all(t.previous_template is None for t in uow.tasks.of_site(site.id))
    # Fix impact follows the real fixes only.
    events = app.application.handle(GetSiteFixImpact(site.id), caller).events
    assert {e.task_key for e in events} == broken
    assert product_urls  # the product pages were crawled both times (the tasks above say where)
