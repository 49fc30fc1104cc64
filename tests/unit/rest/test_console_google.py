"""A team's OAuth connection to the Google provider, against the local stand-in of Google's endpoints:
the `gsc` ownership proof (owner or full rights only, `sc` as its other name), the verification answer,
the refresh token stored sealed, the daily sync into stored figures, a revoked grant, disconnection."""

from datetime import timedelta
from typing import Any

import falcon.testing
import pytest
from attrs import evolve
from pytest_httpserver import HTTPServer

from siteaudit.adapters.console.providers import ConsoleClients
from siteaudit.adapters.rest import create_api
from siteaudit.domain.console import ConsoleTerms, PageTotals
from siteaudit.domain.ids import SiteId
from tests.unit.console.fake_google import FakeGoogle
from tests.unit.rest.conftest import World
from tests.unit.rest.test_console_endpoints import SITE, audited
from tests.unit.rest.test_sites import register


class Connected:
    def __init__(self, world: World, google: FakeGoogle) -> None:
        self.world = world
        self.google = google
        providers = ConsoleClients(
            google.endpoints, client_id="cid", client_secret="cs", row_limit=10, timeout_s=5
        )
        self.application = evolve(
            world.app.application,
            console_providers=providers,
            console_terms=ConsoleTerms(demo=False, sync_inspections=5),
        )
        self.client = falcon.testing.TestClient(
            create_api(self.application, clock=world.clock, limiter=world.app.limiter)
        )
        self.caller = world.app.application.authenticate(world.owner_key)

    def get(self, path: str) -> Any:
        return self.client.simulate_get(f"/v1{path}", headers=self.world.auth(self.world.owner_key))

    def post(self, path: str, body: Any = None) -> Any:
        return self.client.simulate_post(
            f"/v1{path}", json=body, headers=self.world.auth(self.world.owner_key)
        )

    def connect(self, token: str = "rt-good") -> None:
        self.application.connect_search_console("Retro Clock", token, account="owner@retro-clock.example")


@pytest.fixture
def connected(world: World, httpserver: HTTPServer) -> Connected:
    return Connected(world, FakeGoogle(httpserver))


@pytest.mark.parametrize("name", ["gsc", "sc"])
def test_a_property_owned_through_the_connection_verifies_the_site(connected: Connected, name: str) -> None:
    site = register(connected.world)
    connected.connect()
    methods = connected.get(f"/sites/{site['id']}/verification").json["methods"]
    assert methods["gsc"] == methods["sc"] == {"connected": True, "property": SITE + "/"}
    answer = connected.post(f"/sites/{site['id']}/verify", {"method": name})
    assert answer.status_code == 200, answer.text
    assert answer.json["verified"] is True and answer.json["verified_via"] == "gsc"
    assert answer.json["checked"] == [{"method": "gsc", "result": "matched", "detail": None}]


@pytest.mark.parametrize(("level", "verifies"), [("siteFullUser", True), ("siteRestrictedUser", False)])
def test_only_owner_or_full_rights_prove_ownership(connected: Connected, level: str, verifies: bool) -> None:
    connected.google.sites[0]["permissionLevel"] = level
    site = register(connected.world)
    connected.connect()
    answer = connected.post(f"/sites/{site['id']}/verify", {"method": "gsc"})
    if verifies:
        assert answer.status_code == 200
    else:
        assert answer.status_code == 422 and answer.json["error"]["code"] == "verification_failed"
        assert "wrong_value" in answer.json["error"]["message"]


def test_without_a_connection_the_method_is_not_connected_and_the_demo_never_proves(
    connected: Connected,
) -> None:
    site = register(connected.world)
    demo = evolve(connected.application, console_terms=ConsoleTerms(demo=True))
    client = falcon.testing.TestClient(
        create_api(demo, clock=connected.world.clock, limiter=connected.world.app.limiter)
    )
    answer = client.simulate_post(
        f"/v1/sites/{site['id']}/verify",
        json={"method": "gsc"},
        headers=connected.world.auth(connected.world.owner_key),
    )
    assert answer.status_code == 422
    assert "not_connected" in answer.json["error"]["message"]
    methods = connected.get(f"/sites/{site['id']}/verification").json["methods"]
    assert methods["gsc"] == {"connected": False, "property": None}
    assert connected.google.count("sites") == 0


def test_the_refresh_token_is_stored_sealed_and_revoked_on_disconnect(connected: Connected) -> None:
    connected.connect()
    with connected.world.app.uow() as uow:
        stored = uow.console.connection(connected.caller.team_id)
    assert stored is not None and "rt-good" not in stored.sealed_refresh_token
    assert connected.application.sealing.unseal(stored.sealed_refresh_token) == "rt-good"
    connected.google.refresh_tokens.add("rt-second")
    connected.connect("rt-second")  # replaces the first grant, which is revoked
    assert connected.google.revoked == ["rt-good"]
    assert connected.application.disconnect_search_console("Retro Clock") is True
    assert connected.google.revoked == ["rt-good", "rt-second"]
    assert connected.application.disconnect_search_console("Retro Clock") is False


def test_the_daily_sync_stores_28_days_and_inspects_within_the_budget(connected: Connected) -> None:
    site = audited(connected.world)
    connected.connect()
    now = connected.world.clock.now()
    end = now.date() - timedelta(days=1)
    connected.google.rows = [
        {
            "keys": [f"{SITE}/clocks/{n}", (end - timedelta(days=d)).isoformat()],
            "clicks": 1,
            "impressions": 10,
            "position": 12.0,
        }
        for n in range(3)
        for d in range(28)
    ]
    assert connected.application.sync_search_consoles(now) == 1
    assert connected.google.count("query") == 9  # 84 rows, 10 a page
    assert connected.google.count("inspect") == 5
    with connected.world.app.uow() as uow:
        totals = uow.console.page_totals(SiteId(site["id"]), None, end - timedelta(days=27), end)
        assert uow.console.budget_used(SITE + "/", f"day:{now.date().isoformat()}") == 5
    assert {url: (t.clicks, t.impressions) for url, t in totals.items()} == {
        f"{SITE}/clocks/{n}": (28, 280) for n in range(3)
    }
    assert connected.application.console_page_totals(
        SiteId(site["id"]), connected.caller, [f"{SITE}/clocks/0"], end, end
    ) == {f"{SITE}/clocks/0": PageTotals(f"{SITE}/clocks/0", 1, 10, 12.0)}
    assert connected.application.sync_search_consoles(now + timedelta(hours=2)) == 0  # synced today
    assert connected.application.sync_search_consoles(now + timedelta(days=1, seconds=1)) == 1
    summary = connected.get(f"/sites/{site['id']}/gsc").json
    assert summary["demo"] is False and summary["sync"]["status"] == "ok"
    assert summary["funnel"]["with_impressions"] == 3
    opportunities = connected.get(f"/sites/{site['id']}/gsc/opportunities").json
    assert opportunities["counts"]["striking_distance"] == 3  # position 12 with 280 impressions


def test_a_revoked_grant_fails_the_sync_and_inspect_says_not_connected(connected: Connected) -> None:
    site = audited(connected.world)
    connected.connect()
    connected.google.refresh_tokens.clear()  # revoked at Google's side
    connected.application.sync_search_consoles(connected.world.clock.now())
    status = connected.get(f"/sites/{site['id']}/gsc").json["sync"]
    assert status["status"] == "failed" and "ConsoleTokenInvalid" in status["error"]
    answer = connected.post(f"/sites/{site['id']}/gsc/inspect", {"urls": [SITE + "/"]})
    assert answer.status_code == 409 and answer.json["error"]["code"] == "sc_not_connected"


def test_google_quota_during_inspect_is_reported_per_url(connected: Connected) -> None:
    site = audited(connected.world)
    connected.connect()
    connected.google.fail["inspect"] = [(429, "RESOURCE_EXHAUSTED")]
    answer = connected.post(f"/sites/{site['id']}/gsc/inspect", {"urls": [SITE + "/", SITE + "/clocks/1"]})
    assert answer.status_code == 200
    assert [bool(r["error"]) for r in answer.json["results"]] == [True, True]
    assert "ConsoleQuotaExceeded" in answer.json["results"][0]["error"]


def test_demo_figures_never_mix_with_a_real_consoles(connected: Connected) -> None:
    site = audited(connected.world)
    demo = connected.world.client.simulate_get(
        f"/v1/sites/{site['id']}/gsc", headers=connected.world.auth(connected.world.owner_key)
    ).json  # the world's own application has the demo on
    assert demo["demo"] is True and demo["headline"]["impressions_28d"] > 0
    connected.connect()
    before = connected.get(f"/sites/{site['id']}/gsc").json
    assert before["demo"] is False and before["headline"]["impressions_28d"] == 0
    assert before["funnel"]["inspected"] == 0  # the demo's inspections are not shown as real ones
    connected.application.sync_search_consoles(connected.world.clock.now() + timedelta(days=2))
    after = connected.get(f"/sites/{site['id']}/gsc").json
    assert after["sync"]["status"] == "ok" and after["funnel"]["inspected"] == 5
    with connected.world.app.uow() as uow:
        assert not any(i.demo for i in uow.console.inspections(SiteId(site["id"])))
