"""A recheck costs what it checks, counted as requests against the scripted shop on 127.0.0.1: robots.txt
once, each URL once, and for a link check only the link targets its task is about; its progress counts
each URL as soon as it is judged."""

import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from pytest_httpserver import HTTPServer

from siteaudit.bootstrap import App
from siteaudit.domain.account import Caller
from siteaudit.domain.ids import RecheckId
from siteaudit.domain.recheck import RecheckStatus, UrlResult
from siteaudit.domain.site import Site
from siteaudit.domain.task import TaskResult
from siteaudit.services.tasks.answers import FixTask
from siteaudit.services.tasks.usecases import GetRecheck, ListSiteTasks, RequestRecheck
from tests.unit.application.test_application_doors import owner
from tests.unit.tasks.shop import POSTS, PRODUCTS, Shop, audit, drain, shop_app, verified_site


def task(app: App, site: Site, caller: Caller, code: str) -> FixTask:
    return next(
        t for t in app.application.handle(ListSiteTasks(site.id, limit=100), caller).tasks if t.code == code
    )


def hits(shop: Shop) -> Counter[str]:
    """Requests the shop answered since its log was last cleared, per path."""
    return Counter(request.path for request, _ in shop.server.log)


def test_a_page_check_recheck_of_n_urls_makes_n_page_requests_and_reads_robots_txt_once(shop: Shop) -> None:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    product = task(app, site, caller, "meta_description_missing")
    shop.product_description = True
    shop.server.clear_log()

    started = time.monotonic()
    accepted = app.application.handle(RequestRecheck(site.id, task_key=product.id), caller)
    drain(app)
    elapsed = time.monotonic() - started

    done = app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller)
    assert done.status is RecheckStatus.DONE and (done.tasks)[0].result is TaskResult.FIXED
    assert hits(shop) == Counter({"/robots.txt": 1} | {f"/products/{p}": 1 for p in PRODUCTS})
    assert elapsed < 10  # 7 requests at the site's 10 a second


def test_a_url_list_recheck_reads_robots_txt_once_whatever_its_length(shop: Shop) -> None:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    paths = [f"/products/{p}" for p in PRODUCTS] + [f"/blog/{p}" for p in POSTS[:3]]  # nine URLs
    shop.server.clear_log()
    accepted = app.application.handle(RequestRecheck(site.id, urls=tuple(shop.url(p) for p in paths)), caller)
    drain(app)
    assert app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller).pages_crawled == 9
    assert hits(shop) == Counter({"/robots.txt": 1} | dict.fromkeys(paths, 1))


def test_a_broken_link_recheck_fetches_only_the_targets_its_task_is_about(shop: Shop) -> None:
    app = shop_app()
    caller = owner(app)
    shop.extra_links["/"] = ("/products/gone-clock",)  # the home page links to 11 pages and this one
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    broken = task(app, site, caller, "broken_internal_link")
    shop.server.clear_log()

    still = app.application.handle(RequestRecheck(site.id, task_key=broken.id), caller)
    drain(app)
    assert (app.application.handle(GetRecheck(RecheckId(still.recheck_id)), caller).tasks)[0].result is (
        TaskResult.STILL_FAILING
    )
    assert hits(shop) == Counter({"/robots.txt": 1, "/": 1, "/products/gone-clock": 1})

    shop.extra_links["/"] = ("/products/oak-cuckoo",)  # the link now points at a page that exists
    shop.server.clear_log()
    fixed = app.application.handle(RequestRecheck(site.id, task_key=broken.id), caller)
    drain(app)
    assert (app.application.handle(GetRecheck(RecheckId(fixed.recheck_id)), caller).tasks)[0].result is (
        TaskResult.FIXED
    )
    assert hits(shop) == Counter({"/robots.txt": 1, "/": 1})  # the broken target is linked no more


def test_a_url_robots_txt_disallows_is_judged_unfetched_and_not_charged(shop: Shop) -> None:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    shop.disallow = f"/products/{PRODUCTS[0]}"
    shop.server.clear_log()
    urls = (shop.url(f"/products/{PRODUCTS[0]}"), shop.url(f"/products/{PRODUCTS[1]}"))
    accepted = app.application.handle(RequestRecheck(site.id, urls=urls), caller)
    drain(app)
    done = app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller)
    by_url = {u.url: u for u in done.urls}
    assert by_url[urls[0]].result is UrlResult.NOT_CHECKED and "robots.txt" in (by_url[urls[0]].reason or "")
    with app.uow() as uow:
        charged = uow.rechecks.get_any(RecheckId(accepted.recheck_id)).credits_used
    assert (done.pages_crawled, charged) == (2, 1)
    assert hits(shop) == Counter({"/robots.txt": 1, f"/products/{PRODUCTS[1]}": 1})


@pytest.fixture
def threaded_shop() -> Iterator[Shop]:
    """The shop answering each request in its own thread: a slow page holds back no other."""
    server = HTTPServer(host="127.0.0.1", threaded=True)
    server.start()
    try:
        yield Shop(server)
    finally:
        server.clear()
        server.stop()


def test_progress_counts_each_url_as_soon_as_it_is_judged(threaded_shop: Shop) -> None:
    """A slow page holds back no other URL's progress (the recheck fetches four at a time)."""
    shop = threaded_shop
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    product = task(app, site, caller, "meta_description_missing")
    shop.slow = {f"/products/{min(PRODUCTS)}": 3.0}  # the first URL of the recheck's order
    accepted = app.application.handle(RequestRecheck(site.id, task_key=product.id), caller)
    worker = threading.Thread(target=drain, args=(app,))
    worker.start()
    try:
        seen: list[int] = []
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            seen.append(
                app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller).pages_crawled
            )
            if seen[-1] == len(PRODUCTS) - 1:
                break
            time.sleep(0.05)
        assert seen[-1] == len(PRODUCTS) - 1, seen  # every URL but the slow one, while it is fetched
    finally:
        worker.join()
    assert app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller).pages_crawled == len(
        PRODUCTS
    )
