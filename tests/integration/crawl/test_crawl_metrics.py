"""GET /metrics after whole audits of a local test site, through the application and the REST door: the
counters hold exactly what the audit did."""

from collections.abc import Iterator, Mapping

import falcon.testing
import pytest
from attrs import define
from crawl_doubles import HOST, RESOLVER, Answer, SiteServer, html, redirect
from prometheus_client.parser import text_string_to_metric_families

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId
from siteaudit.domain.webhook import SendOutcome
from siteaudit.ports.application import AuditQuery
from siteaudit.services.audits.usecases import StartAudit
from siteaudit.settings import Settings
from tests.local_sites import unpaced

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: falcon.testing.TestClient) -> Samples:
    answer = client.simulate_get("/metrics")  # no key
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    server.routes.update(
        {
            "/robots.txt": Answer(200, "User-agent: *\nDisallow: /private\n", {"Content-Type": "text/plain"}),
            "/": html(
                "<h1>Clocks</h1>"
                '<a href="/about">About</a> <a href="/old">Old</a> <a href="/gone">Gone</a>'
                ' <a href="/private/stock">Stock</a> <a href="/flaky">Flaky</a>',
                head="<title>Retro Clock, the shop of old clocks</title>",
            ),
            "/about": html("<h1>About</h1>", head="<title>About the Retro Clock shop and its people</title>"),
            "/old": redirect("/about"),
            "/flaky": Answer(drop=True),
        }
    )
    yield server
    server.close()


class ScriptedReceiver:
    """A webhook receiver that answers each POST with the next status of its script."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses)

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendOutcome:
        return SendOutcome(self.statuses.pop(0))


@define
class Service:
    app: App
    caller: Caller
    key: str
    clock: FixedClock
    client: falcon.testing.TestClient


def service(*, receiver: ScriptedReceiver | None = None) -> Service:
    clock = FixedClock()
    app = bootstrap(
        # The test's own site, crawled unpaced (tests/local_sites.py): what is counted does not depend on pace.
        Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **unpaced(HOST)),
        clock=clock,
        queue=MemoryTaskQueue(),
        resolver=RESOLVER,
        webhook_sender=receiver or ScriptedReceiver(),
    )
    issued = app.application.ensure_local_owner(plan="scale", starting_credits=1_000)
    assert issued is not None
    caller = app.application.authenticate(issued.raw)
    return Service(app, caller, issued.raw, clock, falcon.testing.TestClient(app.rest_api()))


def audit(service: Service, url: str, *, webhook_url: str | None = None) -> AuditId:
    application = service.app.application
    started = application.handle(StartAudit(url=url, max_pages=20, webhook_url=webhook_url), service.caller)
    audit_id = AuditId(started.crawl_id)
    while application.run_crawl_slice(audit_id).next == "slice":
        pass
    done = application.finalize_audit(audit_id)
    assert done.status is AuditStatus.DONE
    return audit_id


def test_metrics_count_what_an_audit_fetched_charged_and_delivered(site: SiteServer) -> None:
    shop = service(receiver=ScriptedReceiver(503, 200))
    before = scrape(shop.client)
    assert value(before, "siteaudit_pages_fetched_total", outcome="ok") == 0
    assert value(before, "siteaudit_audits", status="done") == 0

    audit_id = audit(shop, site.url("/"), webhook_url=f"https://hooks.{HOST}/siteaudit")
    assert shop.app.application.deliver_webhooks() == 1  # 503: tried again in about a minute
    shop.clock.advance(120)
    assert shop.app.application.deliver_webhooks() == 1  # 200
    auth = {"Authorization": f"Bearer {shop.key}"}
    assert shop.client.simulate_get(f"/v1/crawls/{audit_id}", headers=auth).status_code == 200
    assert shop.client.simulate_get("/v1/crawls/999999", headers=auth).status_code == 404
    samples = scrape(shop.client)

    pages = {
        outcome: value(samples, "siteaudit_pages_fetched_total", outcome=outcome)
        for outcome in ("ok", "redirect", "broken", "fetch_error", "blocked", "not_modified", "disallowed")
    }
    # / and /about answered; /old redirected (its destination /about is recorded from the same fetch);
    # /gone 404; /flaky dropped the connection; /private/stock is robots-excluded, never fetched.
    assert pages == {
        "ok": 2,
        "redirect": 1,
        "broken": 1,
        "fetch_error": 1,
        "blocked": 0,
        "not_modified": 0,
        "disallowed": 1,
    }
    errors = {
        labels[0][1]: count
        for (name, labels), count in samples.items()
        if name == "siteaudit_fetch_errors_total" and count
    }
    assert errors == {"protocol": 1}
    (ended,) = [
        a for a in shop.app.application.list_audits(AuditQuery(), shop.caller).items if a.id == audit_id
    ]
    assert value(samples, "siteaudit_credits_charged_tenths_total") == ended.pages_fetched_in_full * 10 > 0
    assert value(samples, "siteaudit_webhook_deliveries_total", result="failed_attempt") == 1
    assert value(samples, "siteaudit_webhook_deliveries_total", result="delivered") == 1
    assert value(samples, "siteaudit_webhook_deliveries_total", result="given_up") == 0
    assert value(samples, "siteaudit_audits", status="done") == 1
    assert value(samples, "siteaudit_audits", status="running") == 0
    route = "/v1/crawls/{crawl_id}"
    assert (
        value(
            samples, "siteaudit_http_request_duration_seconds_count", route=route, method="GET", status="2xx"
        )
        == 1
    )
    assert (
        value(
            samples, "siteaudit_http_request_duration_seconds_count", route=route, method="GET", status="4xx"
        )
        == 1
    )
    # One scrape before this one; raw paths never appear as labels.
    assert (
        value(
            samples,
            "siteaudit_http_request_duration_seconds_count",
            route="/metrics",
            method="GET",
            status="2xx",
        )
        == 1
    )
    assert not [labels for (_, labels) in samples if ("route", f"/v1/crawls/{audit_id}") in labels]


def test_a_304_counts_as_not_modified(site: SiteServer) -> None:
    site.validators = True
    shop = service()
    audit(shop, site.url("/"))
    audit(shop, site.url("/"))
    samples = scrape(shop.client)

    assert value(samples, "siteaudit_pages_fetched_total", outcome="not_modified") == 2  # / and /about
    assert value(samples, "siteaudit_audits", status="done") == 2
