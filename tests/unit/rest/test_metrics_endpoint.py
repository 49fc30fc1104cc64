"""GET /metrics: outside /v1, no key, no rate limit, latency by route template; off, a 404 like any path."""

import falcon.testing
from conftest import World
from prometheus_client.parser import text_string_to_metric_families

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.rest.metrics import route_label
from siteaudit.bootstrap import bootstrap
from siteaudit.entrypoints.worker import declare_actors
from siteaudit.settings import Settings


def families(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def test_metrics_answer_without_a_key_and_are_never_rate_limited(world: World) -> None:
    answers = [world.client.simulate_get("/metrics") for _ in range(70)]  # more than any per-IP limit

    assert {answer.status_code for answer in answers} == {200}
    assert "RateLimit-Limit" not in answers[-1].headers
    assert answers[-1].headers["content-type"].startswith("text/plain; version=")
    seen = families(answers[-1].text)
    assert ({"route": "/metrics", "method": "GET", "status": "2xx"}, 69.0) in seen[
        "siteaudit_http_request_duration_seconds_count"
    ]


def test_latency_is_labelled_by_route_template_and_status_class(world: World) -> None:
    auth = world.auth(world.owner_key)
    for crawl_id in (101, 102, 103):
        assert world.client.simulate_get(f"/v1/crawls/{crawl_id}", headers=auth).status_code == 404
    world.client.simulate_get("/v1/crawls")  # no key: 401
    world.client.simulate_get("/wp-admin/install.php")  # no route

    counts = {
        tuple(sorted(labels.items())): count
        for labels, count in families(world.client.simulate_get("/metrics").text)[
            "siteaudit_http_request_duration_seconds_count"
        ]
    }
    assert counts == {
        (("method", "GET"), ("route", "/v1/crawls/{crawl_id}"), ("status", "4xx")): 3,
        (("method", "GET"), ("route", "/v1/crawls"), ("status", "4xx")): 1,
        (("method", "GET"), ("route", "unmatched"), ("status", "4xx")): 1,
    }


def test_route_labels_drop_the_converters() -> None:
    assert route_label("/v1/crawls/{crawl_id:int(min=1, max=9)}/issues") == "/v1/crawls/{crawl_id}/issues"
    assert route_label(None) == "unmatched"


def test_metrics_off_answer_404_not_found_in_the_error_envelope() -> None:
    app = bootstrap(Settings(database_url="memory://", metrics=False), queue=MemoryTaskQueue())
    client = falcon.testing.TestClient(app.rest_api())

    answer = client.simulate_get("/metrics")

    assert answer.status_code == 404
    assert answer.json["error"]["code"] == "not_found"
    assert app.metrics is None


def test_the_in_process_broker_tells_its_queue_depths() -> None:
    app = bootstrap(Settings(database_url="memory://"))  # the in-process broker
    declare_actors(app.broker, app.application)  # its queues, without a worker consuming them
    app.queue.finalize_audit(7)  # type: ignore[arg-type]
    app.queue.finalize_audit(8)  # type: ignore[arg-type]
    app.queue.deliver_webhooks()

    depths = {
        labels["queue"]: count
        for labels, count in families(
            falcon.testing.TestClient(app.rest_api()).simulate_get("/metrics").text
        )["siteaudit_queue_messages"]
    }
    assert depths == {
        "crawl": 0,
        "crawl.DQ": 0,
        "crawl.XQ": 0,
        "finalize": 2,
        "finalize.DQ": 0,
        "finalize.XQ": 0,
        "webhooks": 1,
        "webhooks.DQ": 0,
        "webhooks.XQ": 0,
    }


def test_audits_are_counted_by_status_from_the_database(world: World) -> None:
    auth = world.auth(world.owner_key)
    for _ in range(2):
        started = world.client.simulate_post(
            "/v1/crawls", json={"url": "https://retro-clock.example/", "max_pages": 5}, headers=auth
        )
        assert started.status_code == 202
    world.client.simulate_delete(f"/v1/crawls/{started.json['crawl_id']}", headers=auth)

    audits = {
        labels["status"]: count
        for labels, count in families(world.client.simulate_get("/metrics").text)["siteaudit_audits"]
    }
    assert audits == {
        "queued": 1,
        "running": 0,
        "finalizing": 0,
        "done": 0,
        "failed": 0,
        "cancelled": 1,
    }
