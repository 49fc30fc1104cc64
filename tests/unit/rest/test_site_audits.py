"""Audits of registered sites through POST /crawls: settings, payer, verification rules, team scope."""

from siteaudit.domain.account import Caller
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.domain.site import VerifyMethod
from siteaudit.services.sites.usecases import RegisterSite
from tests.unit.rest.conftest import World


def register(world: World, url: str, *, team: int = 1, owner: int = 1, verified: bool = False) -> int:
    app = world.app
    site = app.application.handle(RegisterSite(url), Caller(UserId(owner), TeamId(team)))
    if verified:
        with app.uow() as uow:
            stored = uow.sites.get(site.id, team=TeamId(team))
            verified_site, _ = stored.verify(VerifyMethod.FILE, now=world.clock.now())
            uow.sites.save(verified_site)
            uow.commit()
    return site.id


def test_a_site_audit_is_charged_to_the_team_owner_whoever_starts_it(world: World) -> None:
    site_id = register(world, "https://retro-clock.example/")
    result = world.client.simulate_post(
        "/v1/crawls", json={"site_id": site_id, "max_pages": 40}, headers=world.auth(world.member_key)
    )
    assert result.status_code == 202
    with world.app.uow() as uow:
        assert uow.credits.balance(uow.users.by_email("owner@retro-clock.example").id) == credits(4_960)
        assert uow.credits.balance(uow.users.by_email("member@retro-clock.example").id) == credits(5_000)
    detail = world.client.simulate_get(
        f"/v1/crawls/{result.json['crawl_id']}", headers=world.auth(world.owner_key)
    )
    assert detail.json["site_id"] == site_id


def test_another_teams_site_answers_404(world: World) -> None:
    site_id = register(world, "https://other-shop.example/", team=2, owner=3)
    started = world.client.simulate_post(
        "/v1/crawls", json={"site_id": site_id}, headers=world.auth(world.owner_key)
    )
    assert (started.status_code, started.json["error"]["code"]) == (404, "not_found")
    listed = world.client.simulate_get(f"/v1/crawls?site_id={site_id}", headers=world.auth(world.owner_key))
    assert (listed.status_code, listed.json["error"]["code"]) == (404, "not_found")


def test_a_url_off_the_sites_origin_answers_site_url_mismatch(world: World) -> None:
    site_id = register(world, "https://retro-clock.example/")
    result = world.client.simulate_post(
        "/v1/crawls",
        json={"site_id": site_id, "url": "https://elsewhere.example/"},
        headers=world.auth(world.owner_key),
    )
    assert (result.status_code, result.json["error"]["code"]) == (422, "site_url_mismatch")


def test_a_verified_site_for_the_origin_lifts_the_500_page_and_3_rps_caps(world: World) -> None:
    register(world, "https://retro-clock.example/", verified=True)
    result = world.client.simulate_post(
        "/v1/crawls",
        json={"url": "https://retro-clock.example/shop", "max_pages": 2_000, "max_rps": 8},
        headers=world.auth(world.owner_key),
    )
    assert result.status_code == 202
    assert result.json == {"crawl_id": 1, "estimated_credits": 2_000, "max_rps": 8.0, "warnings": []}


def test_verify_token_cannot_be_combined_with_site_id(world: World) -> None:
    site_id = register(world, "https://retro-clock.example/")
    result = world.client.simulate_post(
        "/v1/crawls", json={"site_id": site_id, "verify_token": "x" * 20}, headers=world.auth(world.owner_key)
    )
    assert (result.status_code, result.json["error"]["code"]) == (422, "validation_failed")
    assert "verify_token" in result.json["error"]["fields"]


def test_listing_by_site_shows_only_that_sites_audits(world: World) -> None:
    site_id = register(world, "https://retro-clock.example/")
    world.client.simulate_post(
        "/v1/crawls", json={"site_id": site_id, "max_pages": 5}, headers=world.auth(world.owner_key)
    )
    world.client.simulate_post(
        "/v1/crawls",
        json={"url": "https://elsewhere.example/", "max_pages": 5},
        headers=world.auth(world.owner_key),
    )
    listed = world.client.simulate_get(f"/v1/crawls?site_id={site_id}", headers=world.auth(world.owner_key))
    assert [row["site_id"] for row in listed.json["data"]] == [site_id]
