"""The fix-task and recheck endpoints over the scripted shop: answers as SPEC 2.7, 2.8, 4.5 and 4.6 show
them, their limits, and team scope (another team's key gets 404 `not_found` everywhere, sees nothing)."""

from typing import Any

import falcon.testing
import pytest

from siteaudit.bootstrap import App
from siteaudit.domain.credit import credits
from tests.unit.tasks.shop import PRODUCTS, Shop, audit, drain, shop_app, verified_site

SEVERITIES = ("error", "warning", "notice")


class Client:
    def __init__(self, app: App) -> None:
        self.app = app
        self.http = falcon.testing.TestClient(app.rest_api())
        issued = app.application.ensure_local_owner(plan="scale", starting_credits=1_000)
        assert issued is not None
        self.owner = issued.raw
        application = app.application
        application.create_user("rival@other-shop.example", plan="growth")
        application.create_team("Other Shop", owner_email="rival@other-shop.example")
        application.grant_credits("rival@other-shop.example", credits(1_000), idempotency_key="rival")
        self.rival = application.create_key("rival@other-shop.example", "Other Shop").raw

    def get(self, path: str, key: str | None = None, **params: Any) -> falcon.testing.Result:
        return self.http.simulate_get(
            path, params=params or None, headers={"Authorization": f"Bearer {key or self.owner}"}
        )

    def post(self, path: str, body: Any, key: str | None = None) -> falcon.testing.Result:
        return self.http.simulate_post(
            path, json=body, headers={"Authorization": f"Bearer {key or self.owner}"}
        )


@pytest.fixture
def client(shop: Shop) -> tuple[Client, int]:
    app = shop_app()
    client = Client(app)
    caller = app.application.authenticate(client.owner)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    return client, site.id


def test_the_site_task_list_shows_every_field_of_a_task(client: tuple[Client, int]) -> None:
    http, site_id = client
    answer = http.get(f"/v1/sites/{site_id}/tasks", limit=100).json
    assert set(answer) == {"site_id", "crawl_id", "has_traffic_data", "total", "open_total", "tasks"}
    assert answer["has_traffic_data"] is False and answer["total"] == len(answer["tasks"]) == 7
    product = next(t for t in answer["tasks"] if t["code"] == "meta_description_missing")
    assert product["template"] == "/products/[slug]" and product["pages"] == len(PRODUCTS)
    assert (product["clicks_28d"], product["impressions_28d"], product["status"]) == (None, None, "open")
    assert product["recheckable"] is True and product["title"] and product["why"] and product["fix"]
    assert product["acceptance"]["check"] == "meta_description_missing"
    assert (
        product["acceptance"]["scope"] == "page" and product["acceptance"]["template"] == "/products/[slug]"
    )
    assert product["impact"] == 3 * len(PRODUCTS)  # warning weight 3 x pages, no traffic term
    graph = next(t for t in answer["tasks"] if t["code"] == "h1_duplicate")
    assert graph["recheckable"] is False
    ranks = [(SEVERITIES.index(t["severity"]), -t["pages"]) for t in answer["tasks"]]
    assert ranks == sorted(ranks)  # severity first, then pages
    short = http.get(f"/v1/sites/{site_id}/tasks").json["tasks"]
    assert len(short) == 7  # default limit 10
    three = http.get(f"/v1/sites/{site_id}/tasks", limit=3).json["tasks"]
    assert len(three) == 3 and len({t["code"] for t in three}) == 3


@pytest.mark.parametrize(("path", "limit"), [("/v1/sites/{site}/tasks", 101), ("/v1/tasks", 21)])
def test_task_list_limits_are_refused_beyond_the_spec(
    client: tuple[Client, int], path: str, limit: int
) -> None:
    http, site_id = client
    refused = http.get(path.format(site=site_id), limit=limit)
    assert (refused.status_code, refused.json["error"]["code"]) == (422, "validation_failed")
    assert "limit" in refused.json["error"]["fields"]


def test_one_task_lists_its_urls_a_hundred_a_page(client: tuple[Client, int]) -> None:
    http, site_id = client
    tasks = http.get(f"/v1/sites/{site_id}/tasks", limit=100).json["tasks"]
    key = next(t["id"] for t in tasks if t["code"] == "meta_description_missing")
    answer = http.get(f"/v1/sites/{site_id}/tasks/{key}").json
    assert answer["task"]["id"] == key
    assert (answer["urls"]["page"], answer["urls"]["per_page"], answer["urls"]["total"]) == (
        1,
        100,
        len(PRODUCTS),
    )
    assert {tuple(sorted(row)) for row in answer["urls"]["data"]} == {
        ("clicks_28d", "details", "impressions_28d", "url")
    }
    assert http.get(f"/v1/sites/{site_id}/tasks/{key.upper()}").json["task"]["id"] == key
    assert http.get(f"/v1/sites/{site_id}/tasks/{'0' * 16}").json["error"]["code"] == "not_found"
    assert http.get(f"/v1/sites/{site_id}/tasks/nothex").status_code == 422


def test_a_recheck_answers_202_then_its_results_and_never_shows_in_the_audit_list(
    shop: Shop, client: tuple[Client, int]
) -> None:
    http, site_id = client
    tasks = http.get(f"/v1/sites/{site_id}/tasks", limit=100).json["tasks"]
    key = next(t["id"] for t in tasks if t["code"] == "meta_description_missing")
    shop.product_description = True
    started = http.post(f"/v1/sites/{site_id}/recheck", {"task_key": key})
    assert started.status_code == 202
    assert started.json["urls_total"] == started.json["estimated_credits"] == len(PRODUCTS)
    assert started.json["status"] == "queued" and started.json["sampled"] is False
    assert started.json["tasks"] == [
        {
            "task_key": key,
            "code": "meta_description_missing",
            "template": "/products/[slug]",
            "status": "verifying",
        }
    ]
    recheck_id = started.json["recheck_id"]
    waiting = http.get(f"/v1/rechecks/{recheck_id}").json
    assert (waiting["status"], waiting["urls"], waiting["tasks"]) == ("queued", [], [])
    drain(http.app)
    done = http.get(f"/v1/rechecks/{recheck_id}").json
    assert set(done) >= {
        "recheck_id",
        "site_id",
        "status",
        "parent_crawl_id",
        "urls_total",
        "pages_crawled",
        "sampled",
        "created_at",
        "finished_at",
        "time_capped",
        "duplicate_baseline",
        "urls",
        "tasks",
    }
    assert done["status"] == "done" and done["time_capped"] is False
    assert {u["result"] for u in done["urls"]} == {"fixed"}
    assert done["tasks"][0]["result"] == "fixed" and done["tasks"][0]["status"] == "fixed"
    fixed = http.get(f"/v1/sites/{site_id}/tasks/{key}").json["task"]
    assert (fixed["status"], fixed["fixed_by"]) == ("fixed", "recheck")
    listed = http.get("/v1/crawls").json["data"]
    assert all(row["crawl_id"] != recheck_id or row["site_id"] == site_id for row in listed)
    assert len(listed) == 1  # the one audit; rechecks are not audits


def test_recheck_bodies_are_checked(shop: Shop, client: tuple[Client, int]) -> None:
    http, site_id = client
    path = f"/v1/sites/{site_id}/recheck"
    assert http.post(path, {}).json["error"]["code"] == "validation_failed"
    assert http.post(path, {"task_key": "0" * 16, "urls": [shop.url("/")]}).json["error"]["code"] == (
        "validation_failed"
    )
    assert http.post(path, {"urls": []}).json["error"]["code"] == "invalid_urls"
    too_many = [shop.url(f"/p{n}") for n in range(201)]
    assert http.post(path, {"urls": too_many}).json["error"]["code"] == "invalid_urls"
    assert http.post(path, {"urls": ["https://elsewhere.example/"]}).json["error"]["code"] == "invalid_urls"
    assert http.post(path, {"task_key": "0" * 16}).status_code == 404
    tasks = http.get(f"/v1/sites/{site_id}/tasks", limit=100).json["tasks"]
    graph = next(t["id"] for t in tasks if t["code"] == "h1_duplicate")
    refused = http.post(path, {"task_key": graph})
    assert (refused.status_code, refused.json["error"]["code"]) == (422, "cannot_verify")


def test_the_31st_recheck_in_an_hour_answers_429_with_retry_after(
    shop: Shop, client: tuple[Client, int]
) -> None:
    http, site_id = client
    path = f"/v1/sites/{site_id}/recheck"
    for _ in range(30):
        assert http.post(path, {"urls": [shop.url("/")]}).status_code == 202
    limited = http.post(path, {"urls": [shop.url("/")]})
    assert (limited.status_code, limited.json["error"]["code"]) == (429, "recheck_rate_limited")
    assert int(limited.headers["Retry-After"]) >= 1


def test_another_team_sees_none_of_it(shop: Shop, client: tuple[Client, int]) -> None:
    http, site_id = client
    tasks = http.get(f"/v1/sites/{site_id}/tasks", limit=100).json["tasks"]
    key = next(t["id"] for t in tasks if t["code"] == "meta_description_missing")
    recheck_id = http.post(f"/v1/sites/{site_id}/recheck", {"task_key": key}).json["recheck_id"]
    assert http.get("/v1/tasks").json["tasks"]
    rival = http.rival
    for path in (
        f"/v1/sites/{site_id}/tasks",
        f"/v1/sites/{site_id}/tasks/{key}",
        f"/v1/rechecks/{recheck_id}",
    ):
        answer = http.get(path, rival)
        assert (answer.status_code, answer.json["error"]["code"]) == (404, "not_found"), path
    posted = http.post(f"/v1/sites/{site_id}/recheck", {"urls": [shop.url("/")]}, rival)
    assert (posted.status_code, posted.json["error"]["code"]) == (404, "not_found")
    cancelled = http.http.simulate_delete(
        f"/v1/rechecks/{recheck_id}", headers={"Authorization": f"Bearer {rival}"}
    )
    assert cancelled.status_code == 404
    assert http.get("/v1/tasks", rival).json == {"tasks": []}
