"""IndexNow endpoints (SPEC 2.10, 4.9, 7, 8) against a local IndexNow endpoint on 127.0.0.1, through the
real httpx2 client: every status and code, batching, the daily allowance counted once per URL, key
checks and detection within 10 requests, team scope and the extra rate limit."""

import re
from collections.abc import Iterator
from typing import Any, Final

import pytest

from siteaudit.adapters.rest.openapi import document
from siteaudit.bootstrap import USE_CASES
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.site import Site, VerifyMethod
from siteaudit.ports.site import ProofPage
from siteaudit.settings import Settings
from tests.indexnow_endpoint import LocalIndexNow
from tests.unit.rest.conftest import World, make_world
from tests.unit.rest.test_sites import HOME, error, get, patch, post, register, verified

DOCUMENT: Final = document(USE_CASES)

STATUS_FIELDS = {
    "key",
    "key_source",
    "key_location",
    "key_file_url",
    "key_file_content",
    "key_verified",
    "key_verified_at",
    "auto",
    "last_submit_at",
    "today",
    "recent",
    "agent_prompt",
    "detection",
    "engines",
    "google_supported",
    "sengine_supported",
    "note",
}
SUBMIT_FIELDS = {
    "submitted",
    "requests",
    "status",
    "status_code",
    "error_code",
    "skipped",
    "capped",
    "batches",
    "reason",
    "today",
}


@pytest.fixture
def endpoint() -> Iterator[LocalIndexNow]:
    server = LocalIndexNow().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def inw(endpoint: LocalIndexNow) -> World:
    """The REST world with its IndexNow client pointed at the local endpoint, 3 URLs per request."""
    return make_world(
        Settings(database_url="memory://", indexnow_endpoint=endpoint.url, indexnow_batch_urls=3)
    )


def _props(name: str) -> set[str]:
    return set(DOCUMENT["components"]["schemas"][name]["properties"])


def put(world: World, path: str, body: Any, *, key: str | None = None) -> Any:
    return world.client.simulate_put(f"/v1{path}", json=body, headers=world.auth(key or world.owner_key))


def publish_key(world: World, url: str, key: str) -> None:
    world.proofs.pages[url] = ProofPage(url, status=200, text=key + "\n")


def ready(world: World) -> tuple[int, dict[str, Any]]:
    """A verified site whose generated key file is served and checked."""
    site = verified(world)
    status = get(world, f"/sites/{site['id']}/indexnow").json
    publish_key(world, status["key_file_url"], status["key"])
    checked = post(world, f"/sites/{site['id']}/indexnow/check-key")
    assert checked.status_code == 200 and checked.json["result"] == "verified", checked.text
    return site["id"], checked.json


def page(n: int) -> str:
    return f"https://retro-clock.example/blog/post-{n}"


# --- status, auto, team scope ------------------------------------------------------------------------


def test_the_status_shows_a_generated_key_its_file_and_that_the_largest_engine_is_not_notified(
    inw: World,
) -> None:
    site = register(inw)  # unverified: status works on any site of the team
    status = get(inw, f"/sites/{site['id']}/indexnow")
    assert status.status_code == 200
    answer = status.json
    assert set(answer) == STATUS_FIELDS == _props("IndexNowStatus")
    assert re.fullmatch(r"[0-9a-f]{32}", answer["key"])
    assert answer["key_source"] == "generated" and answer["key_location"] is None
    assert answer["key_file_url"] == f"https://retro-clock.example/{answer['key']}.txt"
    assert answer["key_file_content"] == answer["key"]
    assert (answer["key_verified"], answer["auto"], answer["detection"]) == (False, False, None)
    assert answer["today"] == {"used": 0, "limit": 10_000} and answer["recent"] == []
    assert answer["google_supported"] is False and answer["sengine_supported"] is False
    assert "Bing" in answer["engines"] and "not notified" in answer["note"]
    assert answer["key_file_url"] in answer["agent_prompt"] and answer["key"] in answer["agent_prompt"]
    # The key is kept from its first showing on.
    assert get(inw, f"/sites/{site['id']}/indexnow").json["key"] == answer["key"]
    # Another site has another key.
    other = register(inw, "https://elsewhere.example/")
    assert get(inw, f"/sites/{other['id']}/indexnow").json["key"] != answer["key"]


def test_the_openapi_document_carries_both_names_of_the_flag() -> None:
    schema = DOCUMENT["components"]["schemas"]["IndexNowStatus"]
    assert {"google_supported", "sengine_supported"} <= set(schema["required"])
    paths = DOCUMENT["paths"]
    assert set(paths["/v1/sites/{site_id}/indexnow"]) == {"parameters", "get", "patch", "post"}
    assert "put" in paths["/v1/sites/{site_id}/indexnow/key"]
    for code in ("indexnow_cap", "indexnow_rejected", "indexnow_key_unverified", "url_not_in_site"):
        assert any(
            code in response["description"]
            for response in paths["/v1/sites/{site_id}/indexnow"]["post"]["responses"].values()
        )


def test_patch_turns_auto_submit_on_and_off(inw: World) -> None:
    site = register(inw)
    on = patch(inw, f"/sites/{site['id']}/indexnow", {"auto": True})
    assert on.status_code == 200 and on.json["auto"] is True
    assert get(inw, f"/sites/{site['id']}/indexnow").json["auto"] is True
    assert patch(inw, f"/sites/{site['id']}/indexnow", {"auto": False}).json["auto"] is False


@pytest.mark.parametrize("body", [{}, {"auto": "maybe"}, {"auto": None}, {"auto": True, "other": 1}])
def test_patch_without_a_boolean_auto_answers_422_validation_failed(inw: World, body: Any) -> None:
    site = register(inw)
    result = patch(inw, f"/sites/{site['id']}/indexnow", body)
    assert error(result) == (422, "validation_failed") and result.json["error"]["fields"]


INDEXNOW_PATHS = [
    ("GET", "/sites/{id}/indexnow", None),
    ("PATCH", "/sites/{id}/indexnow", {"auto": True}),
    ("POST", "/sites/{id}/indexnow", {"urls": [HOME]}),
    ("POST", "/sites/{id}/indexnow/check-key", None),
    ("POST", "/sites/{id}/indexnow/detect-key", None),
    ("PUT", "/sites/{id}/indexnow/key", {"key": "retro-clock-key-1"}),
]


@pytest.mark.parametrize(("method", "path", "body"), INDEXNOW_PATHS)
def test_another_teams_site_answers_404_on_every_indexnow_path(
    inw: World, endpoint: LocalIndexNow, method: str, path: str, body: Any
) -> None:
    site_id, _ = ready(inw)
    unknown = inw.client.simulate_request(
        method, "/v1" + path.format(id=999), json=body, headers=inw.auth(inw.rival_key)
    )
    theirs = inw.client.simulate_request(
        method, "/v1" + path.format(id=site_id), json=body, headers=inw.auth(inw.rival_key)
    )
    assert error(theirs) == (404, "not_found")
    # Byte for byte what an unknown id answers, but for the id itself.
    assert theirs.json["error"]["message"] == unknown.json["error"]["message"].replace("999", str(site_id))
    assert endpoint.received == []


@pytest.mark.parametrize(("method", "path", "body"), INDEXNOW_PATHS)
def test_every_indexnow_path_answers_401_without_a_key(inw: World, method: str, path: str, body: Any) -> None:
    result = inw.client.simulate_request(method, "/v1" + path.format(id=1), json=body)
    assert error(result) == (401, "unauthenticated")


# --- the key ------------------------------------------------------------------------------------------


def test_check_key_verifies_a_served_key_on_any_site_of_the_team(inw: World) -> None:
    site = register(inw)  # not verified
    status = get(inw, f"/sites/{site['id']}/indexnow").json
    missing = post(inw, f"/sites/{site['id']}/indexnow/check-key")
    assert missing.status_code == 200
    assert set(missing.json) == STATUS_FIELDS | {"result", "reason", "detail"} == _props("IndexNowKeyCheck")
    assert (missing.json["result"], missing.json["reason"], missing.json["key_verified"]) == (
        "failed",
        "not_found",
        False,
    )
    inw.proofs.pages[status["key_file_url"]] = ProofPage(
        status["key_file_url"], status=200, text="someone else"
    )
    assert post(inw, f"/sites/{site['id']}/indexnow/check-key").json["reason"] == "wrong_content"
    inw.proofs.pages[status["key_file_url"]] = ProofPage(
        status["key_file_url"], error="connect_error refused"
    )
    failed = post(inw, f"/sites/{site['id']}/indexnow/check-key").json
    assert (failed["reason"], failed["detail"]) == ("fetch_error", "connect_error refused")
    publish_key(inw, status["key_file_url"], status["key"])
    good = post(inw, f"/sites/{site['id']}/indexnow/check-key").json
    assert (good["result"], good["reason"], good["key_verified"]) == ("verified", None, True)
    assert good["key_verified_at"] is not None
    # The file gone again: a later check unverifies the key.
    del inw.proofs.pages[status["key_file_url"]]
    assert post(inw, f"/sites/{site['id']}/indexnow/check-key").json["key_verified"] is False


def test_put_key_needs_a_verified_site(inw: World) -> None:
    site = register(inw)
    result = put(inw, f"/sites/{site['id']}/indexnow/key", {"key": "retro-clock-key-1"})
    assert error(result) == (409, "site_not_verified")


@pytest.mark.parametrize("key", ["short", "x" * 129, "has space1", "under_score", "ünïcode-key", ""])
def test_a_malformed_key_answers_422_invalid_indexnow_key(inw: World, key: str) -> None:
    site = verified(inw)
    assert error(put(inw, f"/sites/{site['id']}/indexnow/key", {"key": key})) == (422, "invalid_indexnow_key")


@pytest.mark.parametrize(
    "location",
    [
        "http://retro-clock.example/keys/k.txt",  # not https (the site is https)
        "https://elsewhere.example/retro-clock-key-1.txt",  # another host
        "https://retro-clock.example/keys/k.html",  # not .txt
        "https://retro-clock.example/k.txt?x=1",
        "not a url",
        "",
    ],
)
def test_a_bad_key_location_answers_422_invalid_indexnow_key_location(inw: World, location: str) -> None:
    site = verified(inw)
    result = put(
        inw, f"/sites/{site['id']}/indexnow/key", {"key": "retro-clock-key-1", "key_location": location}
    )
    assert error(result) == (422, "invalid_indexnow_key_location")


@pytest.mark.parametrize(
    "location",
    [
        "https://retro-clock.example:8443/retro-clock-key-1.txt",
        "https://retro-clock.example:22/keys/k.txt",
        "https://retro-clock.example:6379/k.txt",
    ],
)
def test_a_key_location_on_another_port_of_the_host_is_refused_naming_key_location(
    inw: World, location: str
) -> None:
    site = verified(inw)
    result = put(
        inw, f"/sites/{site['id']}/indexnow/key", {"key": "retro-clock-key-1", "key_location": location}
    )
    assert error(result) == (422, "invalid_indexnow_key_location")
    assert set(result.json["error"]["fields"]) == {"key_location"}
    assert "port" in result.json["error"]["fields"]["key_location"]
    status = get(inw, f"/sites/{site['id']}/indexnow").json
    assert status["key_location"] is None and status["key_source"] == "generated"  # nothing was set


@pytest.mark.parametrize("body", [{}, {"key": 12345678}, {"key": "retro-clock-key-1", "extra": True}])
def test_put_key_with_a_bad_body_answers_422_validation_failed(inw: World, body: Any) -> None:
    site = verified(inw)
    assert error(put(inw, f"/sites/{site['id']}/indexnow/key", body)) == (422, "validation_failed")


def test_put_key_uses_an_existing_key_and_checks_it_at_once(inw: World) -> None:
    site = verified(inw)
    location = "https://retro-clock.example/keys/indexnow.txt"
    publish_key(inw, location, "retro-clock-key-1")
    result = put(
        inw, f"/sites/{site['id']}/indexnow/key", {"key": "retro-clock-key-1", "key_location": location}
    )
    assert result.status_code == 200
    answer = result.json
    assert (answer["key"], answer["key_source"], answer["key_location"]) == (
        "retro-clock-key-1",
        "existing",
        location,
    )
    assert (answer["key_file_url"], answer["result"], answer["key_verified"]) == (location, "verified", True)
    # Another existing key at the default place, not served: set, not verified.
    other = put(inw, f"/sites/{site['id']}/indexnow/key", {"key": "retro-clock-key-2"}).json
    assert (other["key_location"], other["result"], other["reason"], other["key_verified"]) == (
        None,
        "failed",
        "not_found",
        False,
    )
    assert other["key_file_url"] == "https://retro-clock.example/retro-clock-key-2.txt"


# --- detection ----------------------------------------------------------------------------------------


def test_detection_finds_the_sites_own_served_key(inw: World) -> None:
    site = register(inw)
    status = get(inw, f"/sites/{site['id']}/indexnow").json
    publish_key(inw, status["key_file_url"], status["key"])
    found = post(inw, f"/sites/{site['id']}/indexnow/detect-key")
    assert found.status_code == 200 and set(found.json) == STATUS_FIELDS
    detection = found.json["detection"]
    assert (detection["status"], detection["key"], detection["source"]) == ("found", status["key"], "site")
    assert detection["key_file_url"] == status["key_file_url"] and detection["checked_at"]


def test_detection_suggests_a_key_verified_on_another_site_of_the_team(inw: World) -> None:
    shop, _ = ready(inw)  # retro-clock.example, key verified
    shop_key = get(inw, f"/sites/{shop}/indexnow").json["key"]
    blog = verified(inw, "https://elsewhere.example/")
    publish_key(inw, f"https://elsewhere.example/{shop_key}.txt", shop_key)
    answer = post(inw, f"/sites/{blog['id']}/indexnow/detect-key").json
    assert (answer["detection"]["status"], answer["detection"]["key"]) == ("found", shop_key)
    assert answer["detection"]["source"] == "team"
    assert answer["key"] != shop_key and answer["key_source"] == "generated"  # only a suggestion


def test_detection_confirms_root_key_files_seen_in_the_latest_audit(inw: World) -> None:
    site = register(inw)
    audit_id = AuditId(post(inw, f"/sites/{site['id']}/crawls", {"max_pages": 1}).json["crawl_id"])
    with inw.app.uow() as uow:
        audit = uow.audits.get(audit_id, team=TeamId(1)).start(now=inw.clock.now())
        audit = audit.stop_crawling(partial=False, now=inw.clock.now())
        audit, _ = audit.publish_report(health_score=90, now=inw.clock.now())
        uow.audits.save(audit)
        uow.commit()
    seen = [
        HOME,
        "https://retro-clock.example/robots.txt",
        "https://retro-clock.example/0f1e2d3c4b5a6978.txt",
    ]
    inw.app.crawl.intern(audit_id, seen)
    publish_key(inw, "https://retro-clock.example/0f1e2d3c4b5a6978.txt", "0f1e2d3c4b5a6978")
    detection = post(inw, f"/sites/{site['id']}/indexnow/detect-key").json["detection"]
    assert (detection["status"], detection["key"], detection["source"]) == (
        "found",
        "0f1e2d3c4b5a6978",
        "audit",
    )


def test_detection_makes_at_most_10_requests_and_says_none(inw: World) -> None:
    for n in range(12):  # twelve other verified sites with verified keys, none served on this one
        inw.clock.advance(seconds=6)  # within check-key's 10 requests a minute
        site = register_public(inw, f"shop-{n}.example")
        status = get(inw, f"/sites/{site}/indexnow").json
        publish_key(inw, status["key_file_url"], status["key"])
        assert post(inw, f"/sites/{site}/indexnow/check-key").json["key_verified"]
    target = register(inw)
    inw.proofs.asked.clear()
    answer = post(inw, f"/sites/{target['id']}/indexnow/detect-key").json
    assert answer["detection"]["status"] == "none" and answer["detection"]["key"] is None
    assert len(inw.proofs.asked) == 10
    assert inw.proofs.asked[0] == HOME  # the home page first, for the platform
    fetched = inw.proofs.asked[1:]
    assert all(url.startswith("https://retro-clock.example/") and url.endswith(".txt") for url in fetched)
    assert fetched[0] == answer["key_file_url"]  # the site's own key first
    assert answer["detection"]["platform"] is None


def register_public(world: World, host: str) -> int:
    """A verified site of the owner's team on a host the test resolver does not know, stored directly
    (registering through REST would refuse a host that does not resolve)."""
    caller = world.app.application.authenticate(world.owner_key)
    with world.app.uow() as uow:
        site = Site.register(
            site_id=SiteId(0),
            team_id=caller.team_id,
            url=f"https://{host}/",
            verify_token="retro-clock-token-" + host.replace(".", "-"),
            crawler_secret_ref="ref",
            plan_page_limit=100_000,
            now=world.clock.now(),
        )
        site = uow.sites.add(site)
        site, _ = site.verify(VerifyMethod.FILE, now=world.clock.now())
        uow.sites.save(site)
        uow.commit()
    return int(site.id)


# --- submitting ---------------------------------------------------------------------------------------


def test_submitting_needs_a_verified_site_then_a_verified_key(inw: World, endpoint: LocalIndexNow) -> None:
    site = register(inw)
    assert error(post(inw, f"/sites/{site['id']}/indexnow", {"urls": [HOME]})) == (409, "site_not_verified")
    publish = verified(inw, "https://elsewhere.example/")
    result = post(inw, f"/sites/{publish['id']}/indexnow", {"urls": ["https://elsewhere.example/a"]})
    assert error(result) == (409, "indexnow_key_unverified")
    assert "check-key" in result.json["error"]["message"]
    assert endpoint.received == []


def test_a_refused_submission_makes_no_key(inw: World, endpoint: LocalIndexNow) -> None:
    """A site whose IndexNow status was never read has no key: a submission is refused and makes none
    (a refused request writes nothing); the status read then makes the key the refusal pointed to."""
    site = verified(inw, "https://elsewhere.example/")
    result = post(inw, f"/sites/{site['id']}/indexnow", {"urls": ["https://elsewhere.example/a"]})
    assert error(result) == (409, "indexnow_key_unverified")
    assert "no IndexNow key yet" in result.json["error"]["message"]
    with inw.app.uow() as uow:
        assert uow.indexnow.get(SiteId(site["id"])) is None
    status = get(inw, f"/sites/{site['id']}/indexnow").json
    assert status["key_verified"] is False and status["key"]
    again = post(inw, f"/sites/{site['id']}/indexnow", {"urls": ["https://elsewhere.example/a"]})
    assert status["key_file_url"] in again.json["error"]["message"]
    assert endpoint.received == []


def test_urls_on_other_hosts_only_answer_422_url_not_in_site(inw: World, endpoint: LocalIndexNow) -> None:
    site_id, _ = ready(inw)
    urls = ["https://elsewhere.example/a", "https://www.retro-clock.example/", "ftp://retro-clock.example/x"]
    assert error(post(inw, f"/sites/{site_id}/indexnow", {"urls": urls})) == (422, "url_not_in_site")
    assert endpoint.received == []


@pytest.mark.parametrize(
    "body",
    [{}, {"urls": []}, {"urls": "https://retro-clock.example/"}, {"urls": [1]}, {"urls": [HOME] * 10_001}],
)
def test_a_bad_url_list_answers_422_validation_failed(inw: World, body: Any) -> None:
    site_id, _ = ready(inw)
    assert error(post(inw, f"/sites/{site_id}/indexnow", body)) == (422, "validation_failed")


def test_a_submission_posts_the_protocols_json_and_answers_ok(inw: World, endpoint: LocalIndexNow) -> None:
    site_id, status = ready(inw)
    urls = [page(1), "https://elsewhere.example/skip-me", page(2), page(1)]
    result = post(inw, f"/sites/{site_id}/indexnow", {"urls": urls})
    assert result.status_code == 200, result.text
    answer = result.json
    assert set(answer) == SUBMIT_FIELDS == _props("IndexNowSubmitResult")
    assert (
        answer["status"],
        answer["submitted"],
        answer["requests"],
        answer["skipped"],
        answer["capped"],
    ) == (
        "ok",
        2,
        1,
        1,
        0,
    )
    assert (answer["status_code"], answer["error_code"], answer["reason"]) == (200, None, None)
    assert answer["batches"] == [{"urls": 2, "status_code": 200, "error_code": None, "accepted": True}]
    assert answer["today"] == {"used": 2, "limit": 10_000}
    (sent,) = endpoint.received
    assert sent.path == "/indexnow" and sent.content_type.startswith("application/json")
    assert sent.body == {
        "host": "retro-clock.example",
        "key": status["key"],
        "keyLocation": status["key_file_url"],
        "urlList": [page(1), page(2)],
    }
    after = get(inw, f"/sites/{site_id}/indexnow").json
    assert after["last_submit_at"] is not None and after["today"]["used"] == 2
    assert after["recent"][0] | {"at": None} == {
        "at": None,
        "trigger": "api",
        "urls": 2,
        "submitted": 2,
        "requests": 1,
        "status": "ok",
        "status_code": 200,
        "crawl_id": None,
    }


def test_urls_go_in_batches_and_202_answers_accepted(inw: World, endpoint: LocalIndexNow) -> None:
    site_id, _ = ready(inw)  # 3 URLs per request in this world
    endpoint.answer(200, 202, 200)
    answer = post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(n) for n in range(7)]}).json
    assert (answer["status"], answer["requests"], answer["submitted"]) == ("accepted", 3, 7)
    assert [b["urls"] for b in answer["batches"]] == [3, 3, 1]
    assert [len(r.body["urlList"]) for r in endpoint.received] == [3, 3, 1]
    assert endpoint.urls_sent() == [page(n) for n in range(7)]


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, "bad_request"), (403, "key_not_valid"), (422, "urls_not_for_key"), (429, "too_many_requests")],
)
def test_a_failed_request_among_others_answers_partial(
    inw: World, endpoint: LocalIndexNow, status: int, code: str
) -> None:
    site_id, _ = ready(inw)
    endpoint.answer(200, status)
    answer = post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(n) for n in range(5)]}).json
    assert (answer["status"], answer["submitted"], answer["status_code"], answer["error_code"]) == (
        "partial",
        3,
        status,
        code,
    )
    assert [b["accepted"] for b in answer["batches"]] == [True, False]
    assert "answered" in answer["reason"]


@pytest.mark.parametrize("status", [400, 403, 422, 429, 500, None])
def test_none_accepted_answers_502_indexnow_rejected(
    inw: World, endpoint: LocalIndexNow, status: int | None
) -> None:
    site_id, _ = ready(inw)
    endpoint.answer(status)
    result = post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(1)]})
    assert error(result) == (502, "indexnow_rejected")
    recent = get(inw, f"/sites/{site_id}/indexnow").json["recent"][0]
    assert (recent["status"], recent["submitted"], recent["status_code"]) == ("rejected", 0, status)


def test_the_daily_allowance_counts_each_url_once_however_often_it_is_sent(
    inw: World, endpoint: LocalIndexNow
) -> None:
    site_id, _ = ready(inw)
    endpoint.default = 200
    first = [page(n) for n in range(9_998)]
    answer = post(inw, f"/sites/{site_id}/indexnow", {"urls": first}).json
    assert answer["today"]["used"] == 9_998 and answer["status"] == "ok"
    sent_before = len(endpoint.urls_sent())
    # The same request again (a retry after a lost answer): nothing counted, nothing sent again.
    again = post(inw, f"/sites/{site_id}/indexnow", {"urls": first}).json
    assert (again["status"], again["submitted"], again["requests"], again["today"]["used"]) == (
        "ok",
        9_998,
        0,
        9_998,
    )
    assert "accepted earlier today" in again["reason"]
    assert len(endpoint.urls_sent()) == sent_before
    # Four new URLs: two fit, two are capped.
    more = post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(n) for n in range(9_998, 10_002)]}).json
    assert (more["submitted"], more["capped"], more["today"]["used"]) == (2, 2, 10_000)
    assert endpoint.urls_sent()[-2:] == [page(9_998), page(9_999)]
    # Nothing left: 429 indexnow_cap, nothing sent.
    capped = post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(20_000)]})
    assert error(capped) == (429, "indexnow_cap")
    # A URL already accepted today still answers (and is not sent again).
    assert post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(5)]}).json["submitted"] == 1
    # The next UTC day starts again.
    inw.clock.advance(days=1)
    fresh = post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(20_000)]}).json
    assert (fresh["submitted"], fresh["today"]["used"]) == (1, 1)


def test_a_retry_after_a_rejection_sends_again_without_counting_again(
    inw: World, endpoint: LocalIndexNow
) -> None:
    site_id, _ = ready(inw)
    endpoint.answer(429)
    urls = [page(1), page(2)]
    assert error(post(inw, f"/sites/{site_id}/indexnow", {"urls": urls})) == (502, "indexnow_rejected")
    assert get(inw, f"/sites/{site_id}/indexnow").json["today"]["used"] == 2
    retried = post(inw, f"/sites/{site_id}/indexnow", {"urls": urls}).json
    assert (retried["status"], retried["submitted"], retried["requests"], retried["today"]["used"]) == (
        "ok",
        2,
        1,
        2,
    )
    assert endpoint.urls_sent() == urls + urls


def test_the_four_outgoing_calls_share_10_requests_a_minute_per_key(
    inw: World, endpoint: LocalIndexNow
) -> None:
    site_id, _ = ready(inw)  # one check-key spent
    calls = [
        lambda: post(inw, f"/sites/{site_id}/indexnow/check-key"),
        lambda: post(inw, f"/sites/{site_id}/indexnow/detect-key"),
        lambda: put(inw, f"/sites/{site_id}/indexnow/key", {"key": "retro-clock-key-1"}),
        lambda: post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(1)]}),
    ]
    answers = [calls[n % 4]().status_code for n in range(10)]
    assert 429 not in answers[:9] and answers[9] == 429
    assert error(post(inw, f"/sites/{site_id}/indexnow", {"urls": [page(2)]})) == (429, "rate_limited")
    # Reading the status is not one of them; another key has its own bucket.
    assert get(inw, f"/sites/{site_id}/indexnow").status_code == 200
    assert post(inw, f"/sites/{site_id}/indexnow/check-key", key=inw.member_key).status_code == 200
    inw.clock.advance(minutes=1)
    assert post(inw, f"/sites/{site_id}/indexnow/check-key").status_code == 200


def test_a_submission_body_that_is_not_json_answers_415(inw: World) -> None:
    site_id, _ = ready(inw)
    result = inw.client.simulate_post(
        f"/v1/sites/{site_id}/indexnow",
        body="urls=https://retro-clock.example/",
        headers={**inw.auth(inw.owner_key), "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert error(result) == (415, "unsupported_media_type")


def test_a_submission_body_larger_than_10000_long_urls_answers_413(inw: World) -> None:
    site_id, _ = ready(inw)
    result = inw.client.simulate_post(
        f"/v1/sites/{site_id}/indexnow",
        body=b"{" + b" " * 25_000_000 + b"}",
        headers={**inw.auth(inw.owner_key), "Content-Type": "application/json"},
    )
    assert error(result) == (413, "payload_too_large")


def test_a_submission_of_10000_urls_of_the_longest_length_is_read_not_refused_as_too_large(
    inw: World,
) -> None:
    site_id, _ = ready(inw)
    prefix = "https://elsewhere.example/"
    urls = [f"{prefix}{n:05d}".ljust(2_048, "a") for n in range(10_000)]  # 20 MB, within the allowance
    result = post(inw, f"/sites/{site_id}/indexnow", {"urls": urls})
    assert error(result) == (422, "url_not_in_site")


@pytest.mark.parametrize("path", ["/sites/{id}/indexnow/check-key", "/sites/{id}/indexnow/detect-key"])
def test_a_call_without_inputs_refuses_a_body_with_a_field(inw: World, path: str) -> None:
    site_id, _ = ready(inw)
    result = post(inw, path.format(id=site_id), {"force": True})
    assert error(result) == (422, "validation_failed") and result.json["error"]["fields"] == {
        "force": "unknown field"
    }
