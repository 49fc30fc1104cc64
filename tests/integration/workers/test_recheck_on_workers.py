"""Rechecks over REST, run by real worker processes on RabbitMQ and PostgreSQL against the scripted shop:
a task rechecked after its template was fixed ends `fixed`; a URL list gives a fixed page, a still-failing
page, a page with a new issue, a redirected page and a page behind a bot challenge (`cannot_verify`); the
team owner is charged 1 credit per URL, once, and the recheck never shows in GET /crawls."""

from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from worker_doubles import Workers, make_api, wait_until, worker_env

from siteaudit.domain.credit import EntryKind
from siteaudit.domain.ids import SiteId
from tests.unit.tasks.shop import POSTS, PRODUCTS, Shop

pytestmark = [pytest.mark.postgres, pytest.mark.rabbitmq]


def test_rechecks_run_on_worker_processes_and_judge_every_kind_of_page(
    database_url: str,
    rabbitmq_url: str,
    queue_prefix: str,
    secret_key: str,
    ca_file: str,
    httpserver: HTTPServer,
    tmp_path: Path,
) -> None:
    shop = Shop(httpserver)
    api = make_api(
        database_url=database_url,
        broker_url=rabbitmq_url,
        secret_key=secret_key,
        prefix=queue_prefix,
        duplicate_rate=0.5,  # half the messages the test process publishes go out twice
        publish_log=str(tmp_path / "publish.log"),
    )
    workers = Workers(
        worker_env(
            database_url=database_url,
            broker_url=rabbitmq_url,
            secret_key=secret_key,
            prefix=queue_prefix,
            ca_file=ca_file,
            slice_pages="50",
            reap_every_s="2",
        ),
        count=2,
        log_dir=tmp_path,
    )
    workers.start()
    http, auth = api.client, api.auth()

    def get(path: str, **params: Any) -> Any:
        return http.simulate_get(path, params=params or None, headers=auth).json

    try:
        site = http.simulate_post("/v1/sites", json={"url": shop.url("/"), "max_rps": 10}, headers=auth).json
        api.app.application.verify_site_by_hand(SiteId(site["id"]), "the test owns the shop")
        crawl_id = http.simulate_post(f"/v1/sites/{site['id']}/crawls", json={}, headers=auth).json[
            "crawl_id"
        ]
        assert wait_until(lambda: get(f"/v1/crawls/{crawl_id}")["status"] == "done", timeout_s=90), (
            workers.logs()
        )
        assert wait_until(lambda: get(f"/v1/sites/{site['id']}/tasks")["total"] > 0, timeout_s=10)
        tasks = get(f"/v1/sites/{site['id']}/tasks", limit=100)["tasks"]
        product = next(t for t in tasks if t["code"] == "meta_description_missing")

        # The newcomer fixes the product template, breaks one title, moves a page, and one page sits
        # behind a bot challenge.
        fixed, failing, broken, moved, challenged = (
            f"/products/{PRODUCTS[0]}",
            f"/blog/{POSTS[0]}",
            f"/products/{PRODUCTS[1]}",
            f"/products/{PRODUCTS[2]}",
            f"/products/{PRODUCTS[3]}",
        )
        shop.product_description = True
        by_task = http.simulate_post(
            f"/v1/sites/{site['id']}/recheck", json={"task_key": product["id"]}, headers=auth
        )
        assert by_task.status_code == 202, by_task.text
        task_recheck = by_task.json["recheck_id"]

        def ended(recheck_id: int) -> bool:
            return get(f"/v1/rechecks/{recheck_id}")["status"] in ("done", "failed", "cancelled")

        assert wait_until(lambda: ended(task_recheck), timeout_s=60), workers.logs()
        result = get(f"/v1/rechecks/{task_recheck}")
        assert result["status"] == "done" and result["pages_crawled"] == len(PRODUCTS)
        assert result["tasks"][0]["result"] == "fixed" and result["tasks"][0]["status"] == "fixed"
        after = get(f"/v1/sites/{site['id']}/tasks/{product['id']}")["task"]
        assert (after["status"], after["fixed_by"]) == ("fixed", "recheck")

        shop.no_title.add(broken)
        shop.moved[moved] = shop.url(f"/products/{PRODUCTS[4]}")
        shop.challenge.add(challenged)
        urls = [shop.url(p) for p in (fixed, failing, broken, moved, challenged)]
        by_urls = http.simulate_post(f"/v1/sites/{site['id']}/recheck", json={"urls": urls}, headers=auth)
        assert by_urls.status_code == 202, by_urls.text
        url_recheck = by_urls.json["recheck_id"]
        assert wait_until(lambda: ended(url_recheck), timeout_s=60), workers.logs()
        rows = {row["url"]: row for row in get(f"/v1/rechecks/{url_recheck}")["urls"]}
        assert rows[urls[0]]["result"] == "fixed"
        assert (rows[urls[1]]["result"], rows[urls[1]]["issues"]) == ("still_failing", ["h1_missing"])
        assert rows[urls[2]]["result"] == "new_issue" and "title_missing" in rows[urls[2]]["new_issues"]
        assert (rows[urls[3]]["redirected"], rows[urls[3]]["redirect_to"]) == (
            True,
            shop.url(f"/products/{PRODUCTS[4]}"),
        )
        assert rows[urls[4]]["result"] == "cannot_verify"

        # Credits: the team owner paid 1 per URL fetched, each recheck settled once.
        with api.app.uow() as uow:
            owner = uow.teams.get(uow.sites.get_any(SiteId(site["id"])).team_id).owner_id
            entries = uow.credits.entries(owner)
        for recheck_id, urls_fetched in ((task_recheck, len(PRODUCTS)), (url_recheck, len(urls))):
            mine = [e for e in entries if e.reference == f"recheck:{recheck_id}"]
            assert [e.amount for e in mine if e.kind is EntryKind.CHARGE] == [-10 * urls_fetched]
            assert len([e for e in mine if e.kind is EntryKind.RELEASE]) == 1
        listed = get("/v1/crawls")["data"]
        assert [row["crawl_id"] for row in listed] == [crawl_id]
    finally:
        workers.stop()
