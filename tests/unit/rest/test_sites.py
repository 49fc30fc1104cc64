"""Registered sites (SPEC 2.6, 3.4, 4.4): every status and code, team scope, plan limits, ownership."""

from typing import Any, Final

import pytest

from siteaudit.adapters.rest.openapi import document
from siteaudit.bootstrap import USE_CASES
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import AuditId, TeamId
from siteaudit.ports.site import ProofPage
from tests.unit.rest.conftest import World

DOCUMENT: Final = document(USE_CASES)

HOME = "https://retro-clock.example/"
SITE_FIELDS = {
    "id",
    "team_id",
    "url",
    "host",
    "verified",
    "verified_at",
    "verified_via",
    "monitoring",
    "next_crawl_at",
    "last_dispatched_at",
    "last_skip_reason",
    "max_pages",
    "max_rps",
    "alert_email",
    "render",
    # What its audits keep, how they treat queries and what they read (docs/audits.md, docs/extraction.md).
    "include",
    "exclude",
    "query_params",
    "keep_params",
    "extract",
}


def _props(name: str) -> set[str]:
    return set(DOCUMENT["components"]["schemas"][name]["properties"])


def post(world: World, path: str, body: Any = None, *, key: str | None = None) -> Any:
    return world.client.simulate_post(f"/v1{path}", json=body, headers=world.auth(key or world.owner_key))


def get(world: World, path: str, *, key: str | None = None) -> Any:
    return world.client.simulate_get(f"/v1{path}", headers=world.auth(key or world.owner_key))


def patch(world: World, path: str, body: Any, *, key: str | None = None) -> Any:
    return world.client.simulate_patch(f"/v1{path}", json=body, headers=world.auth(key or world.owner_key))


def error(result: Any) -> tuple[int, str]:
    return result.status_code, result.json["error"]["code"]


def register(world: World, url: str = HOME, *, key: str | None = None, **more: Any) -> dict[str, Any]:
    result = post(world, "/sites", {"url": url, **more}, key=key)
    assert result.status_code == 201, result.text
    answer: dict[str, Any] = result.json
    return answer


def publish_file(world: World, site: dict[str, Any]) -> None:
    world.proofs.pages[site["verify"]["url"]] = ProofPage(
        site["verify"]["url"], status=200, text=site["verify_token"] + "\n"
    )


def verified(world: World, url: str = HOME) -> dict[str, Any]:
    site = register(world, url)
    publish_file(world, site)
    assert post(world, f"/sites/{site['id']}/verify", {"method": "file"}).status_code == 200
    return site


# --- POST /sites and GET /sites ----------------------------------------------------------------------


def test_registering_answers_201_with_the_site_its_token_and_the_file_proof(world: World) -> None:
    site = register(world, "https://Retro-Clock.example/shop?x=1")
    assert set(site) == SITE_FIELDS | {"verify_token", "verify"} == _props("RegisteredSite")
    assert site["url"] == "https://retro-clock.example/shop?x=1" and site["host"] == "retro-clock.example"
    assert (site["verified"], site["verified_at"], site["verified_via"]) == (False, None, None)
    assert (site["monitoring"], site["next_crawl_at"], site["last_skip_reason"]) == ("off", None, None)
    # Defaults: 10,000 pages (the growth plan allows 100,000), 2 requests a second, alert mail on.
    assert (site["max_pages"], site["max_rps"], site["alert_email"]) == (10_000, 2.0, True)
    assert site["team_id"] == 1
    assert set(site["verify"]) == {"path", "url", "content", "content_type", "instructions"}
    assert site["verify"]["url"] == "https://retro-clock.example/.well-known/siteaudit-site-verification.txt"
    assert site["verify"]["content"].strip() == site["verify_token"]
    assert site["verify"]["content_type"] == "text/plain"


def test_registering_keeps_the_settings_given(world: World) -> None:
    site = register(world, max_pages=2_000, max_rps=0.5, alert_email=False)
    assert (site["max_pages"], site["max_rps"], site["alert_email"]) == (2_000, 0.5, False)


def test_the_default_page_cap_is_the_plans_when_lower(world: World) -> None:
    world.app.application.set_plan("owner@retro-clock.example", "free")
    assert register(world)["max_pages"] == 500


def test_the_same_origin_twice_answers_409_site_exists(world: World) -> None:
    register(world, HOME)
    assert error(post(world, "/sites", {"url": "https://retro-clock.example/other"})) == (409, "site_exists")
    # Another team may register the same origin.
    assert post(world, "/sites", {"url": HOME}, key=world.rival_key).status_code == 201


def test_the_plans_site_count_answers_403_plan_limit_sites(world: World) -> None:
    world.app.application.set_plan("owner@retro-clock.example", "free")  # one site
    register(world)
    result = post(world, "/sites", {"url": "https://elsewhere.example/"})
    assert error(result) == (403, "plan_limit_sites")


def test_the_owners_plan_decides_whoever_registers(world: World) -> None:
    # The member is on the starter plan (10,000 pages); the owner's growth plan allows 100,000.
    site = register(world, key=world.member_key, max_pages=50_000)
    assert site["max_pages"] == 50_000


def test_max_pages_above_the_plan_answers_403_plan_limit_max_pages(world: World) -> None:
    result = post(world, "/sites", {"url": HOME, "max_pages": 200_000})
    assert error(result) == (403, "plan_limit_max_pages")


@pytest.mark.parametrize(
    "url",
    ["ftp://retro-clock.example/", "https://", "retro-clock.example", "https://user:pw@retro-clock.example/"],
)
def test_an_unacceptable_url_answers_422_invalid_url(world: World, url: str) -> None:
    assert error(post(world, "/sites", {"url": url})) == (422, "invalid_url")


@pytest.mark.parametrize("url", ["http://127.0.0.1/", "http://10.1.2.3:8080/", "https://unknown.example/"])
def test_a_host_that_is_not_public_answers_422_invalid_url(world: World, url: str) -> None:
    assert error(post(world, "/sites", {"url": url})) == (422, "invalid_url")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "url"),
        ({"url": HOME, "colour": "red"}, "colour"),
        ({"url": HOME, "max_pages": 0}, "max_pages"),
        ({"url": HOME, "max_pages": 500_001}, "max_pages"),
        ({"url": HOME, "max_rps": 0.4}, "max_rps"),
        ({"url": HOME, "max_rps": 10.5}, "max_rps"),
        ({"url": HOME, "alert_email": "yes"}, "alert_email"),
        ({"url": "https://retro-clock.example/" + "a" * 2_048}, "url"),
        ({"url": None}, "url"),
    ],
)
def test_malformed_registrations_answer_422_naming_the_field(
    world: World, body: dict[str, Any], field: str
) -> None:
    result = post(world, "/sites", body)
    assert error(result) == (422, "validation_failed")
    assert field in result.json["error"]["fields"]


def test_listing_shows_the_teams_sites_only(world: World) -> None:
    mine = register(world)
    register(world, "https://other-shop.example/", key=world.rival_key)
    listed = get(world, "/sites")
    assert listed.status_code == 200
    assert [s["id"] for s in listed.json["data"]] == [mine["id"]]
    assert set(listed.json["data"][0]) == SITE_FIELDS == _props("Site")
    assert set(listed.json) == {"data"}


# --- GET /sites/{id} ---------------------------------------------------------------------------------


def test_reading_a_site_shows_its_token_latest_audit_and_trend(world: World) -> None:
    site = register(world)
    detail = get(world, f"/sites/{site['id']}")
    assert detail.status_code == 200
    assert set(detail.json) == _props("SiteWithAudits")
    assert (detail.json["latest_crawl"], detail.json["trend"]) == (None, [])
    assert detail.json["verify_token"] == site["verify_token"]
    started = post(world, f"/sites/{site['id']}/crawls", {"max_pages": 5})
    latest = get(world, f"/sites/{site['id']}").json["latest_crawl"]
    assert latest["crawl_id"] == started.json["crawl_id"] and latest["status"] == "queued"
    assert set(latest) == _props("AuditRow")


def test_the_trend_is_the_health_of_up_to_12_finished_audits_oldest_first(world: World) -> None:
    site = register(world)
    app = world.app
    for score in range(14):
        audit_id = AuditId(post(world, f"/sites/{site['id']}/crawls", {"max_pages": 1}).json["crawl_id"])
        with app.uow() as uow:
            audit = uow.audits.get(audit_id, team=TeamId(1)).start(now=world.clock.now())
            audit = audit.stop_crawling(partial=False, now=world.clock.now())
            audit, _ = audit.publish_report(health_score=80 + score, now=world.clock.now())
            uow.audits.save(audit)
            uow.commit()
    post(world, f"/sites/{site['id']}/crawls", {"max_pages": 1})  # still queued: not in the trend
    detail = get(world, f"/sites/{site['id']}").json
    assert detail["trend"] == list(range(82, 94))
    assert detail["latest_crawl"]["status"] == "queued"


# --- team scope and authentication -------------------------------------------------------------------

SITE_PATHS = [
    ("GET", "/sites/{id}"),
    ("PATCH", "/sites/{id}"),
    ("DELETE", "/sites/{id}"),
    ("GET", "/sites/{id}/verification"),
    ("POST", "/sites/{id}/verify"),
    ("POST", "/sites/{id}/crawls"),
    ("GET", "/crawls?site_id={id}"),
]


@pytest.mark.parametrize(("method", "path"), SITE_PATHS)
def test_another_teams_site_answers_404_on_every_path(world: World, method: str, path: str) -> None:
    theirs = register(world, "https://other-shop.example/", key=world.rival_key)
    full = "/v1" + path.format(id=theirs["id"])
    route, _, query = full.partition("?")
    result = world.client.simulate_request(
        method,
        route,
        query_string=query or None,
        json={} if method in ("POST", "PATCH") else None,
        headers=world.auth(world.owner_key),
    )
    assert error(result) == (404, "not_found")
    assert get(world, f"/sites/{theirs['id']}", key=world.rival_key).status_code == 200


@pytest.mark.parametrize(("method", "path"), [*SITE_PATHS, ("GET", "/sites"), ("POST", "/sites")])
def test_every_site_path_needs_a_key(world: World, method: str, path: str) -> None:
    route, _, query = ("/v1" + path.format(id=1)).partition("?")
    result = world.client.simulate_request(method, route, query_string=query or None)
    assert error(result) == (401, "unauthenticated")


def test_an_unknown_site_answers_404(world: World) -> None:
    assert error(get(world, "/sites/999")) == (404, "not_found")


@pytest.mark.parametrize("path", ["/v1/sites/abc", "/v1/sites/0/verify", "/v1/nothing-here", "/v1/sites/1/x"])
def test_without_a_key_paths_no_route_matches_answer_401_before_404(world: World, path: str) -> None:
    assert error(world.client.simulate_get(path)) == (401, "unauthenticated")
    assert error(world.client.simulate_get(path, headers=world.auth(world.owner_key))) == (404, "not_found")


def test_open_paths_need_no_key(world: World) -> None:
    assert world.client.simulate_get("/v1/health").status_code == 200
    assert world.client.simulate_post("/v1/device/start").status_code == 200  # the device login
    assert error(world.client.simulate_post("/v1/device/elsewhere")) == (404, "not_found")
    assert error(world.client.simulate_get("/elsewhere")) == (404, "not_found")


# --- PATCH /sites/{id} --------------------------------------------------------------------------------


def test_patch_changes_the_saved_settings_and_answers_the_site(world: World) -> None:
    site = register(world)
    result = patch(world, f"/sites/{site['id']}", {"max_pages": 300, "max_rps": 4.5, "alert_email": False})
    assert result.status_code == 200
    assert set(result.json) == SITE_FIELDS | {"warnings"} == _props("UpdatedSite")
    assert (result.json["max_pages"], result.json["max_rps"], result.json["alert_email"]) == (300, 4.5, False)
    # Saved, but an unverified site's audits run at 3 requests a second at most: the answer says so.
    (warning,) = result.json["warnings"]
    assert warning["code"] == "max_rps_capped" and "verified" in warning["message"]
    assert get(world, f"/sites/{site['id']}").json["max_pages"] == 300
    # An empty body changes nothing.
    assert patch(world, f"/sites/{site['id']}", {}).json == result.json


def test_monitoring_needs_a_verified_site_409(world: World) -> None:
    site = register(world)
    assert error(patch(world, f"/sites/{site['id']}", {"monitoring": "daily"})) == (409, "site_not_verified")
    assert patch(world, f"/sites/{site['id']}", {"monitoring": "off"}).status_code == 200


def test_monitoring_needs_a_plan_with_monitoring_403(world: World) -> None:
    site = verified(world)
    world.app.application.set_plan("owner@retro-clock.example", "free")
    result = patch(world, f"/sites/{site['id']}", {"monitoring": "weekly"})
    assert error(result) == (403, "plan_limit_monitoring")


def test_monitoring_on_a_verified_site_schedules_the_next_audit(world: World) -> None:
    site = verified(world)
    result = patch(world, f"/sites/{site['id']}", {"monitoring": "weekly"})
    assert result.status_code == 200
    assert result.json["monitoring"] == "weekly" and result.json["next_crawl_at"] is not None
    off = patch(world, f"/sites/{site['id']}", {"monitoring": "off"})
    assert (off.json["monitoring"], off.json["next_crawl_at"]) == ("off", None)


def test_patch_max_pages_above_the_plan_answers_403(world: World) -> None:
    site = register(world)
    result = patch(world, f"/sites/{site['id']}", {"max_pages": 100_001})
    assert error(result) == (403, "plan_limit_max_pages")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"monitoring": "hourly"}, "monitoring"),
        ({"max_pages": 0}, "max_pages"),
        ({"max_rps": 11}, "max_rps"),
        ({"alert_email": 1}, "alert_email"),
        ({"url": HOME}, "url"),
    ],
)
def test_malformed_changes_answer_422(world: World, body: dict[str, Any], field: str) -> None:
    site = register(world)
    result = patch(world, f"/sites/{site['id']}", body)
    assert error(result) == (422, "validation_failed") and field in result.json["error"]["fields"]


# --- DELETE /sites/{id} -------------------------------------------------------------------------------


def test_delete_answers_204_and_the_sites_audits_stay(world: World) -> None:
    site = register(world)
    started = post(world, f"/sites/{site['id']}/crawls", {"max_pages": 5})
    result = world.client.simulate_delete(f"/v1/sites/{site['id']}", headers=world.auth(world.owner_key))
    assert result.status_code == 204 and result.content == b""
    assert error(get(world, f"/sites/{site['id']}")) == (404, "not_found")
    # The audit of the deleted site keeps running and stays listed with its site_id.
    audit = get(world, f"/crawls/{started.json['crawl_id']}").json
    assert (audit["status"], audit["site_id"]) == ("queued", site["id"])
    assert [row["site_id"] for row in get(world, "/crawls").json["data"]] == [site["id"]]
    # Listing by the deleted site answers 404; the origin may be registered again.
    assert error(get(world, f"/crawls?site_id={site['id']}")) == (404, "not_found")
    assert register(world)["id"] != site["id"]


# --- GET /sites/{id}/verification ---------------------------------------------------------------------


def test_the_verification_status_lists_every_method_under_both_names(world: World) -> None:
    site = register(world)
    result = get(world, f"/sites/{site['id']}/verification")
    assert result.status_code == 200
    status = result.json
    assert (
        set(status) == {"verified", "via", "checked_at", "lost_at", "methods"} == _props("SiteVerification")
    )
    assert (status["verified"], status["via"], status["checked_at"], status["lost_at"]) == (
        False,
        None,
        None,
        None,
    )
    methods = status["methods"]
    assert set(methods) == {"gsc", "sc", "dns", "meta", "file", "cloudflare", "cdn", "agent_prompt"}
    assert methods["gsc"] == methods["sc"] == {"connected": False, "property": None}
    assert methods["cloudflare"] == methods["cdn"]
    assert methods["cdn"]["connected"] is False and methods["cdn"]["token_link"].startswith("https://")
    token = site["verify_token"]
    assert methods["dns"]["name"] == "_siteaudit-challenge.retro-clock.example"
    assert token in methods["dns"]["value"] and {"cloudflare", "other"} <= set(methods["dns"]["steps"])
    assert methods["meta"] == {
        "url": HOME,
        "tag": f'<meta name="siteaudit-site-verification" content="{token}">',
    }
    assert methods["file"] == {"url": site["verify"]["url"], "body": site["verify"]["content"]}
    for wanted in (methods["meta"]["tag"], methods["file"]["url"], token):
        assert wanted in methods["agent_prompt"]


# --- POST /sites/{id}/verify --------------------------------------------------------------------------


def test_verify_tries_every_method_in_order_and_answers_the_site_and_checked(world: World) -> None:
    site = register(world)
    publish_file(world, site)
    result = post(world, f"/sites/{site['id']}/verify")
    assert result.status_code == 200, result.text
    answer = result.json
    assert set(answer) == SITE_FIELDS | {"checked"} == _props("VerifiedSite")
    assert (answer["verified"], answer["verified_via"]) == (True, "file")
    assert answer["verified_at"] is not None
    assert [(c["method"], c["result"]) for c in answer["checked"]] == [
        ("gsc", "not_connected"),
        ("dns", "not_found"),
        ("meta", "not_found"),
        ("file", "matched"),
    ]
    assert all(c["detail"] for c in answer["checked"][:3])
    status = get(world, f"/sites/{site['id']}/verification").json
    assert (status["verified"], status["via"]) == (True, "file") and status["checked_at"] is not None


def test_verify_stops_at_the_first_match(world: World) -> None:
    site = register(world)
    world.proofs.txt["_siteaudit-challenge.retro-clock.example"] = (
        "v=spf1 -all",
        f"siteaudit-site-verification={site['verify_token']}",
    )
    answer = post(world, f"/sites/{site['id']}/verify").json
    assert [c["method"] for c in answer["checked"]] == ["gsc", "dns"]
    assert answer["verified_via"] == "dns"
    assert site["verify"]["url"] not in world.proofs.asked


def test_the_meta_proof_is_read_from_the_home_page(world: World) -> None:
    site = register(world, "https://retro-clock.example/shop/")
    world.proofs.pages[HOME] = ProofPage(
        HOME, status=200, metas=(("siteaudit-site-verification", site["verify_token"]),)
    )
    answer = post(world, f"/sites/{site['id']}/verify", {"method": "meta"}).json
    assert answer["verified_via"] == "meta"
    assert [c["method"] for c in answer["checked"]] == ["meta"]


@pytest.mark.parametrize(
    ("setup", "outcome"),
    [
        (lambda w, s: None, "not_found"),
        (
            lambda w, s: w.proofs.pages.__setitem__(
                s["verify"]["url"], ProofPage(s["verify"]["url"], status=200, text="someone-else-token")
            ),
            "wrong_value",
        ),
        (
            lambda w, s: w.proofs.pages.__setitem__(
                s["verify"]["url"], ProofPage(s["verify"]["url"], error="timeout deadline passed")
            ),
            "fetch_error",
        ),
    ],
)
def test_a_failed_file_proof_says_why(world: World, setup: Any, outcome: str) -> None:
    site = register(world)
    setup(world, site)
    result = post(world, f"/sites/{site['id']}/verify", {"method": "file"})
    assert error(result) == (422, "verification_failed")
    message = result.json["error"]["message"]
    assert f"file: {outcome}" in message
    assert site["verify"]["url"] in message and "_siteaudit-challenge.retro-clock.example" in message
    assert get(world, f"/sites/{site['id']}").json["verified"] is False


@pytest.mark.parametrize(
    ("page", "outcome"),
    [
        (
            ProofPage(HOME, status=200, metas=(("Siteaudit-Site-Verification", "tok_someone_else_1234"),)),
            "wrong_value",
        ),
        (ProofPage(HOME, status=200, metas=(("description", "a shop"),)), "not_found"),
        (ProofPage(HOME, status=503), "not_found"),
        (ProofPage(HOME, error="redirected off the site to https://elsewhere.example/"), "fetch_error"),
    ],
)
def test_a_failed_meta_proof_says_why(world: World, page: ProofPage, outcome: str) -> None:
    site = register(world)
    world.proofs.pages[HOME] = page
    result = post(world, f"/sites/{site['id']}/verify", {"method": "meta"})
    assert error(result) == (422, "verification_failed")
    assert f"meta: {outcome}" in result.json["error"]["message"]


def test_a_wrong_dns_record_is_a_wrong_value(world: World) -> None:
    site = register(world)
    world.proofs.txt["_siteaudit-challenge.retro-clock.example"] = ("siteaudit-site-verification=other",)
    result = post(world, f"/sites/{site['id']}/verify", {"method": "dns"})
    assert "dns: wrong_value" in result.json["error"]["message"]


def test_a_dns_failure_is_a_dns_error(world: World) -> None:
    site = register(world)
    world.proofs.dns_down = True
    result = post(world, f"/sites/{site['id']}/verify", {"method": "dns"})
    assert error(result) == (422, "verification_failed")
    assert "dns: dns_error" in result.json["error"]["message"]


@pytest.mark.parametrize("name", ["sc", "gsc", "cdn", "cloudflare"])
def test_console_and_cdn_methods_answer_not_connected_under_either_name(world: World, name: str) -> None:
    site = register(world)
    result = post(world, f"/sites/{site['id']}/verify", {"method": name})
    assert error(result) == (422, "verification_failed")
    assert "not_connected" in result.json["error"]["message"]


def test_a_failed_verification_leaves_a_verified_site_verified(world: World) -> None:
    site = verified(world)
    world.proofs.pages.clear()
    assert error(post(world, f"/sites/{site['id']}/verify")) == (422, "verification_failed")
    assert get(world, f"/sites/{site['id']}").json["verified"] is True


@pytest.mark.parametrize("body", [{"method": "email"}, {"method": 3}, {"how": "dns"}])
def test_a_malformed_verify_body_answers_422(world: World, body: dict[str, Any]) -> None:
    site = register(world)
    assert error(post(world, f"/sites/{site['id']}/verify", body)) == (422, "validation_failed")


def test_verify_is_limited_to_10_a_minute_per_key_besides_the_shared_limit(world: World) -> None:
    site = register(world)
    statuses = [post(world, f"/sites/{site['id']}/verify").status_code for _ in range(11)]
    assert statuses == [422] * 10 + [429]
    refused = post(world, f"/sites/{site['id']}/verify")
    assert error(refused) == (429, "rate_limited") and int(refused.headers["retry-after"]) >= 1
    # Other keys and other endpoints are not touched.
    assert post(world, f"/sites/{site['id']}/verify", key=world.member_key).status_code == 422
    assert get(world, f"/sites/{site['id']}").status_code == 200


def test_patch_warns_when_the_owners_credits_cannot_cover_a_scheduled_audit(world: World) -> None:
    site = verified(world)  # max_pages 10,000 by default; the owner has 5,000 credits
    daily = patch(world, f"/sites/{site['id']}", {"monitoring": "daily"})
    assert daily.status_code == 200 and daily.json["monitoring"] == "daily"
    (warning,) = daily.json["warnings"]
    assert warning["code"] == "insufficient_credits"
    assert "10,000 credits" in warning["message"] and "5,000" in warning["message"]
    # A page cap the balance covers: nothing to warn about.
    assert patch(world, f"/sites/{site['id']}", {"max_pages": 4_000}).json["warnings"] == []
    # Monitoring off: no scheduled audit to pay for, whatever the cap.
    patch(world, f"/sites/{site['id']}", {"max_pages": 10_000})
    assert patch(world, f"/sites/{site['id']}", {"monitoring": "off"}).json["warnings"] == []


# --- POST /sites/{id}/crawls --------------------------------------------------------------------------


def test_a_site_audit_of_an_unverified_site_is_small_and_gentle(world: World) -> None:
    site = register(world, max_rps=5)
    result = post(world, f"/sites/{site['id']}/crawls")
    assert result.status_code == 202
    # 500 pages and 3 requests a second while unverified, whatever the saved settings say.
    assert {k: v for k, v in result.json.items() if k != "warnings"} == {
        "crawl_id": result.json["crawl_id"],
        "estimated_credits": 500,
        "max_rps": 3.0,
    }
    (warning,) = result.json["warnings"]  # and the answer says why it runs slower than saved
    assert warning["code"] == "max_rps_capped" and "not verified" in warning["message"]
    audit = get(world, f"/crawls/{result.json['crawl_id']}").json
    assert (audit["trigger"], audit["site_id"], audit["max_pages"]) == ("api", site["id"], 500)


def test_a_site_audit_uses_the_saved_settings_of_a_verified_site_capped_by_its_max_rps(world: World) -> None:
    site = verified(world)
    patch(world, f"/sites/{site['id']}", {"max_pages": 1_500, "max_rps": 6})
    result = post(world, f"/sites/{site['id']}/crawls", {"max_rps": 9, "trigger": "ci"})
    assert result.status_code == 202
    assert (result.json["estimated_credits"], result.json["max_rps"]) == (1_500, 6.0)
    (warning,) = result.json["warnings"]
    assert warning["code"] == "max_rps_capped" and "saved max_rps is 6" in warning["message"]
    assert get(world, f"/crawls/{result.json['crawl_id']}").json["trigger"] == "ci"


def test_a_site_audit_is_charged_to_the_team_owner_and_sends_no_webhook(world: World) -> None:
    site = register(world)
    result = post(world, f"/sites/{site['id']}/crawls", {"max_pages": 40}, key=world.member_key)
    assert result.status_code == 202
    with world.app.uow() as uow:
        assert uow.credits.balance(uow.users.by_email("owner@retro-clock.example").id) == credits(4_960)
        assert uow.credits.balance(uow.users.by_email("member@retro-clock.example").id) == credits(5_000)
        assert uow.audits.get_any(AuditId(result.json["crawl_id"])).webhook_url is None


def test_site_audit_errors(world: World) -> None:
    site = register(world)
    path = f"/sites/{site['id']}/crawls"
    assert error(post(world, path, {"max_pages": 501})) == (409, "site_not_verified")
    assert error(post(world, path, {"max_pages": 100_001})) == (403, "plan_limit_max_pages")
    assert error(post(world, path, {"trigger": "schedule"})) == (422, "validation_failed")
    assert error(post(world, path, {"webhook_url": "https://hooks.retro-clock.example/"})) == (
        422,
        "validation_failed",
    )
    assert error(post(world, path, {"max_rps": 0.1})) == (422, "validation_failed")


def test_a_site_audit_beyond_the_owners_credits_answers_402(world: World) -> None:
    site = verified(world)
    assert error(post(world, f"/sites/{site['id']}/crawls", {"max_pages": 6_000})) == (
        402,
        "insufficient_credits",
    )


# --- POST /crawls with site_id ------------------------------------------------------------------------


def test_a_site_id_audit_with_a_webhook_is_paid_by_the_owner_and_signed_for_the_starter(world: World) -> None:
    site = register(world)
    result = post(
        world,
        "/crawls",
        {"site_id": site["id"], "max_pages": 10, "webhook_url": "https://hooks.retro-clock.example/in"},
        key=world.member_key,
    )
    assert result.status_code == 202
    audit_id = AuditId(result.json["crawl_id"])
    world.client.simulate_delete(f"/v1/crawls/{audit_id}", headers=world.auth(world.member_key))
    with world.app.uow() as uow:
        member = uow.users.by_email("member@retro-clock.example").id
        owner = uow.users.by_email("owner@retro-clock.example").id
        audit = uow.audits.get_any(audit_id)
        delivery = uow.webhooks.of_audit(audit_id)
    assert (audit.payer_id, audit.user_id) == (owner, member)
    assert delivery is not None and delivery.user_id == member  # signed with the starter's secret


def test_a_site_id_audit_uses_the_sites_settings(world: World) -> None:
    site = verified(world)
    patch(world, f"/sites/{site['id']}", {"max_pages": 800, "max_rps": 5})
    result = post(world, "/crawls", {"site_id": site["id"]})
    assert (result.json["estimated_credits"], result.json["max_rps"]) == (800, 5.0)


def test_post_crawls_by_origin_of_an_unverified_site_keeps_the_caps(world: World) -> None:
    register(world)
    assert error(post(world, "/crawls", {"url": HOME, "max_pages": 501})) == (409, "site_not_verified")
    assert error(post(world, "/crawls", {"url": HOME, "max_rps": 3.5})) == (
        422,
        "max_rps_requires_verified_site",
    )
    verified_site = verified(world, "https://elsewhere.example/")
    assert verified_site["id"]
    ok = post(world, "/crawls", {"url": "https://elsewhere.example/a", "max_pages": 501, "max_rps": 3.5})
    assert ok.status_code == 202
