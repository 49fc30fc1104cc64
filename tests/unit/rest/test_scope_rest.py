"""What an audit covers at the REST door (docs/audits.md): a list audit started and reserved by its
distinct URLs, every bad scope input answered 422 validation_failed naming it, and a site's saved rules
and extraction rules through PATCH /v1/sites/{id} and the site-started audit."""

from typing import Any

import pytest

from tests.unit.rest.conftest import World

SITE = "https://retro-clock.example"


def _post(world: World, path: str, body: dict[str, Any]) -> Any:
    return world.client.simulate_post(path, json=body, headers=world.auth(world.owner_key))


def test_a_list_audit_starts_with_its_distinct_urls_reserved(world: World) -> None:
    urls = [f"{SITE}/clock/{i}" for i in range(50)]
    started = _post(world, "/v1/crawls", {"urls": urls + urls[:3] + [f"{SITE}/clock/0#top"]})
    assert started.status_code == 202, started.json
    assert started.json["estimated_credits"] == 50
    detail = world.client.simulate_get(
        f"/v1/crawls/{started.json['crawl_id']}", headers=world.auth(world.owner_key)
    )
    assert (detail.json["max_pages"], detail.json["site_url"]) == (50, urls[0])


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"url": f"{SITE}/", "urls": [f"{SITE}/a"]}, {"url"}),
        ({"urls": [f"{SITE}/a", "https://elsewhere.example/b"]}, {"urls[1]"}),
        ({"urls": [f"{SITE}/a", "ftp://retro-clock.example/b"]}, {"urls[1]"}),
        ({"urls": []}, {"urls"}),
        ({"urls": "https://retro-clock.example/"}, {"urls"}),
        ({"urls": [f"{SITE}/a", 7]}, {"urls[1]"}),
        ({"urls": [f"{SITE}/{i}" for i in range(1_001)]}, {"urls"}),
        ({"urls": [f"{SITE}/{i}" for i in range(20)], "max_pages": 10}, {"urls"}),
        ({"urls": [f"{SITE}/a"], "sitemap_only": True}, {"sitemap_only"}),
        ({"urls": [f"{SITE}/a"], "include": ["/a"], "query_params": "drop"}, {"include", "query_params"}),
        ({"url": f"{SITE}/", "sitemap_only": "yes"}, {"sitemap_only"}),
        ({"url": f"{SITE}/", "include": ["blog"]}, {"include[0]"}),
        ({"url": f"{SITE}/", "exclude": ["/a b", "/ok", "*.pdf"]}, {"exclude[0]"}),
        ({"url": f"{SITE}/", "include": [f"/{i}" for i in range(21)]}, {"include"}),
        ({"url": f"{SITE}/", "query_params": "sort"}, {"query_params"}),
        ({"url": f"{SITE}/", "query_params": "keep_listed"}, {"keep_params"}),
        ({"url": f"{SITE}/", "keep_params": ["id"]}, {"keep_params"}),
        ({"url": f"{SITE}/", "query_params": "keep_listed", "keep_params": ["i d"]}, {"keep_params[0]"}),
    ],
)
def test_every_bad_scope_input_is_named(world: World, body: dict[str, Any], fields: set[str]) -> None:
    refused = _post(world, "/v1/crawls", body)
    assert refused.status_code == 422, refused.json
    assert refused.json["error"]["code"] == "validation_failed"
    assert set(refused.json["error"]["fields"]) == fields


def test_a_site_saves_its_rules_and_its_started_audit_takes_its_own(world: World) -> None:
    site = _post(world, "/v1/sites", {"url": f"{SITE}/"})
    assert site.status_code == 201, site.json
    path = f"/v1/sites/{site.json['id']}"
    rules = [{"name": "price", "expression": ".price"}]
    saved = world.client.simulate_patch(
        path,
        json={"include": ["/shop/"], "query_params": "keep_listed", "keep_params": ["id"], "extract": rules},
        headers=world.auth(world.owner_key),
    )
    assert saved.status_code == 200, saved.json
    shown = {k: saved.json[k] for k in ("include", "exclude", "query_params", "keep_params", "extract")}
    assert shown == {
        "include": ["/shop/"],
        "exclude": [],
        "query_params": "keep_listed",
        "keep_params": ["id"],
        "extract": [{"name": "price", "expression": ".price", "kind": "css", "take": "text", "all": False}],
    }
    bad = world.client.simulate_patch(
        path,
        json={"exclude": ["nope"], "extract": [{"name": "x", "expression": "//p["}]},
        headers=world.auth(world.owner_key),
    )
    assert bad.status_code == 422
    assert {"extract[0].expression"} <= set(bad.json["error"]["fields"])
    listed = _post(world, f"{path}/crawls", {"urls": [f"{SITE}/shop/1", f"{SITE}/shop/2"]})
    assert listed.status_code == 202, listed.json
    assert listed.json["estimated_credits"] == 2
    off_site = _post(world, f"{path}/crawls", {"urls": ["https://elsewhere.example/"]})
    assert (off_site.status_code, set(off_site.json["error"]["fields"])) == (422, {"urls[0]"})
    both = _post(world, f"{path}/crawls", {"urls": [f"{SITE}/a"], "sitemap_only": True})
    assert (both.status_code, set(both.json["error"]["fields"])) == (422, {"sitemap_only"})
    cleared = world.client.simulate_patch(
        path, json={"include": [], "query_params": "keep", "extract": []}, headers=world.auth(world.owner_key)
    )
    assert [cleared.json[k] for k in ("include", "query_params", "keep_params", "extract")] == [
        [],
        "keep",
        [],
        [],
    ]


def test_an_audit_shows_its_scope_and_a_whole_site_crawl_none(world: World) -> None:
    def shown(body: dict[str, Any]) -> Any:
        started = _post(world, "/v1/crawls", body)
        assert started.status_code == 202, started.json
        path = f"/v1/crawls/{started.json['crawl_id']}"
        return world.client.simulate_get(path, headers=world.auth(world.owner_key)).json

    assert "scope" not in shown({"url": f"{SITE}/"})
    assert shown({"urls": [f"{SITE}/a", f"{SITE}/b", f"{SITE}/a"]})["scope"] == {
        "urls": 2,
        "sitemap_only": False,
        "include": [],
        "exclude": [],
        "query_params": "keep",
        "keep_params": [],
    }
    ruled = shown(
        {
            "url": f"{SITE}/",
            "sitemap_only": True,
            "exclude": ["*.pdf"],
            "query_params": "keep_listed",
            "keep_params": ["id"],
        }
    )
    assert ruled["scope"] == {
        "urls": 0,
        "sitemap_only": True,
        "include": [],
        "exclude": ["*.pdf"],
        "query_params": "keep_listed",
        "keep_params": ["id"],
    }
