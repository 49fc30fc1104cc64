"""Fix impact (issue 15, SPEC 2.9, 4.7) over the scripted shop, in the embedded default (memory store, no
broker: the demo console provider is on) with a clock moved on by the test.

The expected figures are summed here from the demo provider's own daily figures for the task's URLs, not
from the store the service reads, so a wrong window, a missing day or a wrong URL set fails the test."""

from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from siteaudit.adapters.console.demo import DemoSearchConsole
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.ids import TaskKey
from siteaudit.domain.recheck import sample_task_urls
from siteaudit.domain.site import Site
from siteaudit.domain.task import FixedBy, TaskStatus
from siteaudit.entrypoints.scheduler import scheduler_pass
from siteaudit.ports.searchconsole import SiteContext
from siteaudit.services.application import LocalApplication
from siteaudit.services.tasks.task import task_urls
from siteaudit.services.tasks.usecases import GetTask, ListSiteTasks, RequestRecheck
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL
from tests.unit.tasks.shop import PRODUCTS, Shop, audit, drain, shop_app, verified_site
from tests.unit.tasks.test_task_endpoints import Client

CODE = "meta_description_missing"  # the product template's task, fixed in the shop's files


def demo_figures(site: Site, urls: Sequence[str], start: date, end: date) -> tuple[int, int]:
    """(clicks, impressions) of `urls` from `start` to `end` as the demo provider makes them."""
    demo = DemoSearchConsole(SiteContext(site_id=site.id, origin=site.origin, urls=tuple(urls)))
    days = demo.page_days(site.origin.rstrip("/") + "/", start=start, end=end)
    return sum(d.clicks for d in days), sum(d.impressions for d in days)


def clock(app: App) -> FixedClock:
    assert isinstance(app.clock, FixedClock)
    return app.clock


def scheduler(app: App) -> None:
    """One pass of the scheduler as `siteaudit serve` runs it: console sync, then fix-impact measuring."""
    scheduler_pass(app.application, app.clock.now)()


def events(http: Client, site_id: int, **params: Any) -> dict[str, Any]:
    answer = http.get(f"/v1/sites/{site_id}/fix-impact", **params)
    assert answer.status_code == 200, answer.json
    document: dict[str, Any] = answer.json
    return document


def sqlite_app(path: Path) -> App:
    """The embedded default as `siteaudit serve` runs it: a SQLite file, no broker."""
    return bootstrap(
        Settings(
            database_url=f"sqlite:///{path / 'siteaudit.sqlite3'}",
            allow_networks=("127.0.0.0/8",),
            **UNPACED_LOCAL,
        ),
        queue=MemoryTaskQueue(),
        clock=FixedClock(),
    )


@pytest.fixture(params=["memory", "sqlite"])
def shop_site(shop: Shop, request: pytest.FixtureRequest, tmp_path: Path) -> tuple[App, Client, Caller, Site]:
    app = shop_app() if request.param == "memory" else sqlite_app(tmp_path)
    http = Client(app)
    caller = app.application.authenticate(http.owner)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    return app, http, caller, site


def test_done_when_top_tasks_fix_a_template_recheck_fixed_and_fix_impact_measured_with_the_demo_console(
    shop: Shop, shop_site: tuple[App, Client, Caller, Site]
) -> None:
    app, http, caller, site = shop_site
    assert app.settings.embedded_default and app.settings.console.demo  # the demo console, by default
    day0 = clock(app).now().date()

    # The daily sync stores the demo figures; the tasks then carry the traffic of their URLs.
    scheduler(app)
    tasks = http.get(f"/v1/sites/{site.id}/tasks", limit=100).json
    assert tasks["has_traffic_data"] is True
    product = next(t for t in tasks["tasks"] if t["code"] == CODE)
    detail = app.application.handle(GetTask(site.id, product["id"]), caller)
    urls = [row.url for row in detail.urls.data]
    assert len(urls) == len(PRODUCTS)
    last28 = demo_figures(site, urls, day0 - timedelta(days=28), day0 - timedelta(days=1))
    assert (product["clicks_28d"], product["impressions_28d"]) == last28
    assert last28[1] > 0, "the demo gives the product pages impressions: the figures below are not all 0"
    # Task URL rows carry each URL's figures (null for a URL the console has none for).
    assert any(row.impressions_28d is not None for row in detail.urls.data)
    assert sum(row.clicks_28d or 0 for row in detail.urls.data) == last28[0]
    # The impact ranks by traffic: severity weight x (pages + 10 x clicks).
    assert product["impact"] == 3 * (len(PRODUCTS) + 10 * last28[0])
    # The team's top tasks read the same figures.
    top = http.get("/v1/tasks", limit=20).json["tasks"]
    assert next(t for t in top if t["id"] == product["id"])["clicks_28d"] == last28[0]

    # The newcomer fixes the template in the site's files and rechecks the task: it is fixed.
    shop.product_description = True
    started = http.post(f"/v1/sites/{site.id}/recheck", {"task_key": product["id"]})
    assert started.status_code == 202, started.json
    drain(app)
    recheck = http.get(f"/v1/rechecks/{started.json['recheck_id']}").json
    assert recheck["status"] == "done" and recheck["tasks"][0]["status"] == "fixed"
    fixed = app.application.handle(GetTask(site.id, product["id"]), caller).task
    assert (fixed.status, fixed.fixed_by) == (TaskStatus.FIXED, FixedBy.RECHECK)

    # The event opens at once, measuring; the scheduler's pass reads its URLs and the baseline.
    (opened,) = events(http, site.id)["events"]
    assert (opened["status"], opened["task_key"], opened["recheck_id"]) == (
        "measuring",
        product["id"],
        started.json["recheck_id"],
    )
    assert opened["baseline_clicks_28d"] is None and opened["urls_count"] is None
    scheduler(app)
    (first,) = events(http, site.id)["events"]
    assert (first["baseline_clicks_28d"], first["baseline_impressions_28d"]) == last28
    assert first["urls_count"] == len(PRODUCTS) and first["sampled"] is False
    assert (first["d7"], first["d14"], first["d28"], first["status"]) == (None, None, None, "measuring")

    # A week and a day on: the sync stored days 1-7 after the fix, so d7 is recorded; nothing more.
    clock(app).advance(days=8)
    scheduler(app)
    (week,) = events(http, site.id)["events"]
    assert week["d7"] == demo_figures(site, urls, day0 + timedelta(days=1), day0 + timedelta(days=7))[0]
    assert week["d7_at"] is not None and (week["d14"], week["status"]) == (None, "measuring")

    clock(app).advance(days=7)
    scheduler(app)
    (fortnight,) = events(http, site.id)["events"]
    assert fortnight["d7"] == week["d7"] and fortnight["d7_at"] == week["d7_at"]  # recorded once
    assert (
        fortnight["d14"] == demo_figures(site, urls, day0 + timedelta(days=1), day0 + timedelta(days=14))[0]
    )
    assert (fortnight["d28"], fortnight["status"]) == (None, "measuring")

    clock(app).advance(days=14)
    scheduler(app)
    answer = events(http, site.id)
    (measured,) = answer["events"]
    after = demo_figures(site, urls, day0 + timedelta(days=1), day0 + timedelta(days=28))
    assert (measured["d28"], measured["d28_impressions"]) == after and after[1] > 0
    assert measured["delta_28d"] == after[0] - last28[0]
    assert measured["status"] == "measured" and measured["measured_at"] == measured["d28_at"]
    assert measured["demo"] is True and answer["demo"] is True
    assert (answer["total_delta_28d"], answer["measured_events"]) == (after[0] - last28[0], 1)
    assert "estimate" in answer["note"] and "season" in answer["note"]
    assert "28 days before day 0" in answer["methodology"]

    # Measured is final: later passes change nothing.
    clock(app).advance(days=2)
    scheduler(app)
    assert events(http, site.id)["events"] == [measured]

    team = http.get("/v1/fix-impact").json
    assert (team["total_delta_28d"], team["measured_events"], team["demo"]) == (after[0] - last28[0], 1, True)
    (shown,) = team["events"]
    assert shown == {**measured, "site_host": site.host}


def test_without_console_data_the_event_says_no_data(shop: Shop) -> None:
    app = shop_app(console_demo=False)
    http = Client(app)
    caller = app.application.authenticate(http.owner)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    scheduler(app)
    assert http.get(f"/v1/sites/{site.id}/tasks").json["has_traffic_data"] is False
    product = next(
        t for t in app.application.handle(ListSiteTasks(site.id, limit=100), caller).tasks if t.code == CODE
    )
    shop.product_description = True
    app.application.handle(RequestRecheck(site.id, task_key=product.id), caller)
    drain(app)
    scheduler(app)
    (event,) = events(http, site.id)["events"]
    assert event["status"] == "no_data" and event["demo"] is False
    assert event["baseline_clicks_28d"] is None and event["delta_28d"] is None
    clock(app).advance(days=40)
    scheduler(app)
    answer = events(http, site.id)
    assert answer["events"][0]["status"] == "no_data"
    # Past its window and a week's grace it is no longer measured, but waits behind newer events.
    with app.uow() as uow:
        (stored,) = uow.fix_impacts.latest([site.id], limit=10)
        assert stored.checked_at == clock(app).now()
        assert uow.fix_impacts.due(clock(app).now(), limit=10) == [stored]
    assert (answer["total_delta_28d"], answer["measured_events"], answer["demo"]) == (0, 0, False)


def test_a_task_fixed_by_a_complete_audit_opens_an_event_measured_from_the_audit_that_found_it(
    shop: Shop, shop_site: tuple[App, Client, Caller, Site]
) -> None:
    app, http, caller, site = shop_site
    scheduler(app)
    product = next(
        t for t in app.application.handle(ListSiteTasks(site.id, limit=100), caller).tasks if t.code == CODE
    )
    urls = [row.url for row in app.application.handle(GetTask(site.id, product.id), caller).urls.data]
    shop.product_description = True
    audit(app, site, caller)
    assert app.application.handle(GetTask(site.id, product.id), caller).task.fixed_by is FixedBy.AUDIT
    scheduler(app)
    # Only the product task's event: on a busy machine a timing check (a slow answer) may come and go
    # between the two audits, and its task's event is not this test's.
    (event,) = [e for e in events(http, site.id, limit=200)["events"] if e["task_key"] == str(product.id)]
    day0 = clock(app).now().date()
    assert event["recheck_id"] is None and event["urls_count"] == len(urls)
    assert (event["baseline_clicks_28d"], event["baseline_impressions_28d"]) == demo_figures(
        site, urls, day0 - timedelta(days=28), day0 - timedelta(days=1)
    )


def test_fix_impact_limits_and_team_scope(shop_site: tuple[App, Client, Caller, Site], shop: Shop) -> None:
    app, http, caller, site = shop_site
    shop.product_description = True
    product = next(
        t for t in app.application.handle(ListSiteTasks(site.id, limit=100), caller).tasks if t.code == CODE
    )
    app.application.handle(RequestRecheck(site.id, task_key=product.id), caller)
    drain(app)
    assert len(events(http, site.id)["events"]) == 1
    assert events(http, site.id, limit=1)["events"] and events(http, site.id, limit=200)["events"]
    for bad in ("0", "201", "x", "1.5"):
        answer = http.get(f"/v1/sites/{site.id}/fix-impact", limit=bad)
        assert (answer.status_code, answer.json["error"]["code"]) == (422, "validation_failed")
        assert "limit" in answer.json["error"]["fields"]
    assert http.get("/v1/fix-impact", limit=50).status_code == 200
    for bad in ("0", "51"):
        answer = http.get("/v1/fix-impact", limit=bad)
        assert (answer.status_code, answer.json["error"]["code"]) == (422, "validation_failed")
    assert http.get("/v1/fix-impact", other="1").status_code == 422
    # Another team's key: 404 on the site's path, nothing in its own team's list.
    foreign = http.get(f"/v1/sites/{site.id}/fix-impact", key=http.rival)
    assert (foreign.status_code, foreign.json["error"]["code"]) == (404, "not_found")
    theirs = http.get("/v1/fix-impact", key=http.rival).json
    assert (theirs["events"], theirs["total_delta_28d"], theirs["measured_events"]) == ([], 0, 0)
    assert http.get("/v1/sites/999999/fix-impact").status_code == 404
    assert http.get("/v1/fix-impact").json["events"][0]["site_host"] == site.host
    # Without a key: 401.
    assert http.http.simulate_get("/v1/fix-impact").status_code == 401


def test_recheck_sampling_reads_the_console_clicks_of_each_task_url(
    shop_site: tuple[App, Client, Caller, Site],
) -> None:
    app, _, caller, site = shop_site
    scheduler(app)
    product = next(
        t for t in app.application.handle(ListSiteTasks(site.id, limit=100), caller).tasks if t.code == CODE
    )
    assert isinstance(app.application, LocalApplication)
    with app.uow() as uow:
        record = uow.tasks.get(site.id, TaskKey(product.id))
    found = task_urls(record, uow=app.uow(), crawl=app.crawl, traffic=app.application.traffic)
    day0 = clock(app).now().date()
    for url in found:
        clicks, impressions = demo_figures(
            site, [url.url], day0 - timedelta(days=28), day0 - timedelta(days=1)
        )
        assert (url.clicks_28d or 0, url.impressions_28d or 0) == (clicks, impressions)
    chosen, sampled = sample_task_urls(found, limit=2)
    ranked = sorted(found, key=lambda u: (-(u.clicks_28d or 0), -(u.impressions_28d or 0), u.url))
    assert sampled and chosen == tuple(u.url for u in ranked[:2])
    assert any(u.impressions_28d for u in ranked[:2])  # the sample follows the figures, not URL order
