"""The search-console endpoints (SPEC 4.8) through REST on the embedded default's memory adapters, where
the demo provider stands in for a console: every status and code, both path names, team scope, the
inspection budget and the extra per-key limit on inspect."""

from datetime import timedelta
from typing import Any, Final

import falcon.testing
import pytest
from attrs import evolve

from siteaudit.adapters.rest import create_api
from siteaudit.adapters.rest.openapi import document
from siteaudit.bootstrap import USE_CASES
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.console import ConsoleTerms
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.services import audit as audits
from siteaudit.services import finalize
from tests.unit.rest.conftest import World
from tests.unit.rest.test_sites import error, get, post, register, verified
from tests.unit.services.test_archive import a_page

DOCUMENT: Final = document(USE_CASES)

SITE = "https://retro-clock.example"
PATHS = ("", "/not-indexed", f"/url?url={SITE}/", "/opportunities")
SEGMENTS = ("gsc", "sengine")


def site_pages() -> list[PageFacts]:
    pages = [a_page(SITE, "/", title="Home", links=())]
    pages += [a_page(SITE, f"/clocks/{n}", title=f"Clock {n}") for n in range(40)]
    pages += [a_page(SITE, f"/search?q={n}", title="Search") for n in range(15)]
    pages += [a_page(SITE, "/gone", title="", status=404)]
    return [evolve(p, in_sitemap="/clocks/" in p.url) for p in pages]


def audited(world: World) -> dict[str, Any]:
    """A verified site with one finished audit of its pages."""
    site = verified(world)
    started = post(world, f"/sites/{site['id']}/crawls", {"max_pages": 100})
    assert started.status_code == 202, started.text
    audit_id = AuditId(started.json["crawl_id"])
    app = world.app
    audits.begin_audit(audit_id, uow=app.uow(), clock=world.clock)
    pages = site_pages()
    app.crawl.write_pages(audit_id, pages)
    audits.record_progress(
        audit_id, pages_crawled=len(pages), pages_not_modified=0, uow=app.uow(), clock=world.clock
    )
    audits.stop_crawling(audit_id, partial=False, uow=app.uow(), clock=world.clock)
    assert (
        finalize.finalize_audit(audit_id, uow=app.uow(), crawl=app.crawl, clock=world.clock).status
        is AuditStatus.DONE
    )
    return site


def ok(world: World, path: str, *, key: str | None = None) -> dict[str, Any]:
    answer = get(world, path, key=key)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json
    return result


def test_another_teams_key_gets_404_on_every_console_path(world: World) -> None:
    site = audited(world)
    for segment in SEGMENTS:
        base = f"/sites/{site['id']}/{segment}"
        for path in PATHS:
            assert error(get(world, base + path, key=world.rival_key)) == (404, "not_found")
        inspected = post(world, f"{base}/inspect", {"urls": [SITE + "/"]}, key=world.rival_key)
        assert error(inspected) == (404, "not_found")
        assert world.client.simulate_get(f"/v1{base}").status_code == 401


def test_an_unverified_site_gets_409_on_every_console_path(world: World) -> None:
    site = register(world)
    for segment in SEGMENTS:
        base = f"/sites/{site['id']}/{segment}"
        for path in PATHS:
            assert error(get(world, base + path)) == (409, "site_not_verified")
        assert error(post(world, f"{base}/inspect", {"urls": [SITE + "/"]})) == (409, "site_not_verified")


def test_the_summary_is_demo_data_of_the_sites_own_pages(world: World) -> None:
    site = audited(world)
    summary = ok(world, f"/sites/{site['id']}/gsc")
    assert summary["demo"] is True and summary["connected"] is True
    assert summary["property"] == SITE + "/"
    funnel = summary["funnel"]
    assert funnel["found"] == 56  # the pages answering 200
    assert funnel["in_sitemap"] == 40
    assert 0 < funnel["indexed"] <= funnel["inspected"] <= funnel["found"]
    assert funnel["with_clicks"] <= funnel["with_impressions"] <= funnel["indexed"]
    assert funnel["indexed_outside_sitemap"] <= funnel["indexed"]
    headline = summary["headline"]
    assert headline["indexed"] + headline["not_indexed"] == funnel["inspected"]
    assert len(summary["trend"]) == 28
    assert sum(day["clicks"] for day in summary["trend"]) == headline["clicks_28d"]
    assert sum(day["impressions"] for day in summary["trend"]) == headline["impressions_28d"] > 0
    assert sum(t["pages"] for t in summary["templates"]) == funnel["found"]
    assert summary["sync"]["status"] == "ok"
    assert set(summary) == set(DOCUMENT["components"]["schemas"]["ConsoleSummary"]["properties"])
    assert ok(world, f"/sites/{site['id']}/sengine") == summary  # SPEC's name answers the same


def test_not_indexed_groups_and_one_groups_urls(world: World) -> None:
    site = audited(world)
    base = f"/sites/{site['id']}/gsc/not-indexed"
    answer = ok(world, base)
    assert answer["demo"] is True and answer["urls"] is None
    groups = answer["groups"]
    assert groups and answer["total"] == len(groups)
    summary = ok(world, f"/sites/{site['id']}/gsc")
    assert sum(g["pages"] for g in groups) == summary["headline"]["not_indexed"]
    first = groups[0]
    assert {"reason", "template", "pages", "diagnosis", "fix", "sample_urls"} <= set(first)
    narrowed = ok(world, base + "?" + _query(reason=first["reason"]))
    assert {g["reason"] for g in narrowed["groups"]} == {first["reason"]}
    urls = ok(world, base + "?" + _query(reason=first["reason"], template=first["template"]))
    assert urls["groups"] == [] and urls["total"] == first["pages"]
    assert {u["reason"] for u in urls["urls"]} == {first["reason"]}
    assert set(first["sample_urls"]) <= {u["url"] for u in urls["urls"]}
    assert ok(world, base.replace("gsc", "sengine")) == answer
    # An empty template is a template (inspected URLs outside the latest audit); an empty reason is not.
    outside = ok(world, base + "?" + _query(reason=first["reason"], template=""))
    assert outside["groups"] == [] and outside["urls"] is not None
    assert error(get(world, base + "?reason=")) == (422, "validation_failed")


def _query(**params: str) -> str:
    from urllib.parse import urlencode

    return urlencode(params)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("reason=" + "x" * 501, "reason"),
        ("template=" + "y" * 501, "template"),
        ("page=0", "page"),
        ("page=100001", "page"),
        ("sort=1", "sort"),
    ],
)
def test_not_indexed_filters_are_validated(world: World, query: str, field: str) -> None:
    site = audited(world)
    answer = get(world, f"/sites/{site['id']}/gsc/not-indexed?{query}")
    assert error(answer) == (422, "validation_failed")
    assert field in answer.json["error"]["fields"]


def test_one_urls_status_carries_both_console_keys(world: World) -> None:
    site = audited(world)
    summary = ok(world, f"/sites/{site['id']}/gsc")
    assert summary["funnel"]["inspected"] > 0
    url = SITE + "/clocks/1"
    answer = ok(world, f"/sites/{site['id']}/gsc/url?" + _query(url=url))
    assert answer["url"] == url and answer["demo"] is True
    assert answer["crawl"]["status_code"] == 200 and answer["crawl"]["in_sitemap"] is True
    assert answer["gsc"] == answer["sengine"] and answer["gsc"] is not None
    assert answer["gsc"]["coverage_state"]
    assert answer["search"]["impressions_28d"] >= answer["search"]["clicks_28d"] >= 0
    unknown = ok(world, f"/sites/{site['id']}/sengine/url?" + _query(url=SITE + "/never-crawled"))
    assert unknown["crawl"] is None and unknown["gsc"] is None
    assert set(answer) == set(DOCUMENT["components"]["schemas"]["ConsoleUrlAnswer"]["properties"])


def test_a_url_of_another_host_or_none_at_all_is_refused(world: World) -> None:
    site = audited(world)
    base = f"/sites/{site['id']}/gsc/url"
    assert error(get(world, base + "?" + _query(url="https://elsewhere.example/"))) == (
        422,
        "url_not_in_site",
    )
    assert error(get(world, base + "?" + _query(url="ftp://retro-clock.example/"))) == (
        422,
        "url_not_in_site",
    )
    assert error(get(world, base)) == (422, "validation_failed")
    assert error(get(world, base + "?" + _query(url=SITE + "/" + "a" * 2_048))) == (422, "validation_failed")


def test_opportunities_come_with_their_rules_and_counts(world: World) -> None:
    site = audited(world)
    answer = ok(world, f"/sites/{site['id']}/gsc/opportunities")
    assert answer["demo"] is True
    for name in ("low_ctr", "striking_distance", "canonical_mismatch"):
        assert answer["counts"][name] == len(answer[name])
        assert answer["rules"][name]
    for row in answer["striking_distance"]:
        assert 8 <= row["position"] <= 20 and row["impressions_28d"] >= 50
    for row in answer["low_ctr"]:
        assert row["position"] <= 10 and row["impressions_28d"] >= 100
    for row in answer["canonical_mismatch"]:
        assert row["user_canonical"] != row["google_canonical"]
    assert ok(world, f"/sites/{site['id']}/sengine/opportunities") == answer


def test_inspect_spends_the_shared_budget(world: World) -> None:
    site = audited(world)
    before = ok(world, f"/sites/{site['id']}/gsc")["sync"]["inspected"]  # the sync's own inspections
    urls = [SITE + "/clocks/1", SITE + "/clocks/2", SITE + "/clocks/1"]
    answer = post(world, f"/sites/{site['id']}/gsc/inspect", {"urls": urls})
    assert answer.status_code == 200, answer.text
    body = answer.json
    assert body["demo"] is True
    assert [r["url"] for r in body["results"]] == urls[:2]  # each URL once
    assert all(r["error"] is None and r["coverage_state"] for r in body["results"])
    assert body["budget"]["used"] == before + 2 and body["budget"]["limit"] == 2_000
    assert body["budget"]["resets_at"].endswith("T00:00:00Z")
    assert "budget" in body["note"]
    again = post(world, f"/sites/{site['id']}/sengine/inspect", {"urls": urls[:1]})
    assert again.json["budget"]["used"] == before + 3


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"urls": []},
        {"urls": [SITE + "/"] * 21},
        {"urls": "x"},
        {"urls": [1]},
        {"urls": [SITE + "/"], "x": 1},
    ],
)
def test_inspect_bodies_are_validated(world: World, body: dict[str, Any]) -> None:
    site = audited(world)
    assert error(post(world, f"/sites/{site['id']}/gsc/inspect", body)) == (422, "validation_failed")


def test_inspect_refuses_urls_of_another_host(world: World) -> None:
    site = audited(world)
    answer = post(
        world, f"/sites/{site['id']}/gsc/inspect", {"urls": [SITE + "/", "https://elsewhere.example/"]}
    )
    assert error(answer) == (422, "url_not_in_site")


def test_a_spent_budget_answers_429_with_resets_at(world: World) -> None:
    site = audited(world)
    ok(world, f"/sites/{site['id']}/gsc")  # the demo's first sync
    terms = ConsoleTerms(demo=True, daily_budget=70, sync_inspections=50)
    application = evolve(world.app.application, console_terms=terms)
    client = falcon.testing.TestClient(create_api(application, clock=world.clock, limiter=world.app.limiter))
    headers = world.auth(world.owner_key)
    path = f"/v1/sites/{site['id']}/gsc/inspect"
    urls = [f"{SITE}/clocks/{n}" for n in range(20)]
    assert client.simulate_post(path, json={"urls": urls}, headers=headers).json["budget"]["used"] == 70
    spent = client.simulate_post(path, json={"urls": urls[:1]}, headers=headers)
    assert spent.status_code == 429
    assert spent.json["error"]["code"] == "budget_exhausted"
    tomorrow = (world.clock.now() + timedelta(days=1)).date().isoformat()
    assert spent.json["error"]["resets_at"] == f"{tomorrow}T00:00:00Z"


def test_inspect_without_a_connection_is_sc_not_connected(world: World) -> None:
    site = audited(world)
    application = evolve(world.app.application, console_terms=ConsoleTerms(demo=False))
    client = falcon.testing.TestClient(create_api(application, clock=world.clock, limiter=world.app.limiter))
    headers = world.auth(world.owner_key)
    answer = client.simulate_post(
        f"/v1/sites/{site['id']}/gsc/inspect", json={"urls": [SITE + "/"]}, headers=headers
    )
    assert answer.status_code == 409 and answer.json["error"]["code"] == "sc_not_connected"
    summary = client.simulate_get(f"/v1/sites/{site['id']}/sengine", headers=headers).json
    assert summary["connected"] is False and summary["demo"] is False
    assert summary["sync"]["status"] == "not_connected"


def test_inspect_has_its_own_limit_of_ten_a_minute_per_key(world: World) -> None:
    site = audited(world)
    path = f"/sites/{site['id']}/gsc/inspect"
    codes = [post(world, path, {"urls": [SITE + "/"]}).status_code for _ in range(11)]
    assert codes[:10] == [200] * 10
    assert codes[10] == 429
    assert get(world, f"/sites/{site['id']}/gsc").status_code == 200  # the other paths are not limited by it


def test_every_console_path_is_in_the_openapi_document(world: World) -> None:
    paths = DOCUMENT["paths"]
    for segment in SEGMENTS:
        base = f"/v1/sites/{{site_id}}/{segment}"
        for suffix in ("", "/not-indexed", "/url", "/opportunities"):
            assert "get" in paths[base + suffix]
        inspect = paths[base + "/inspect"]["post"]
        assert {"409", "422", "429"} <= set(inspect["responses"])


def test_index_triage_groups_the_demos_not_indexed_pages(world: World) -> None:
    site = audited(world)
    assert error(get(world, f"/sites/{site['id']}/index-triage", key=world.rival_key)) == (404, "not_found")
    assert error(get(world, f"/sites/{register(world, SITE + ':8443/')['id']}/index-triage")) == (
        409,
        "site_not_verified",
    )
    triage = ok(world, f"/sites/{site['id']}/index-triage")
    assert triage["demo"] is True
    summary = triage["summary"]
    not_indexed = ok(world, f"/sites/{site['id']}/gsc")["headline"]["not_indexed"]
    assert summary["not_indexed"] == not_indexed == sum(summary["by_class"].values()) > 0
    assert triage["total_groups"] == len(triage["groups"])
    assert sum(g["count"] for g in triage["groups"]) == not_indexed
    for group in triage["groups"]:
        assert group["value_class"] in summary["by_class"]
        assert group["count"] <= group["pattern_pages"]
        assert sum(group["coverage_states"].values()) == group["count"]
        assert group["action"]["task_code"] is None and group["action"]["task_id"] is None
        assert group["action"]["steps"] and group["why"]
    assert "/v1/sites/{site_id}/index-triage" in DOCUMENT["paths"]
    assert error(get(world, f"/sites/{site['id']}/index-triage?x=1")) == (422, "validation_failed")
