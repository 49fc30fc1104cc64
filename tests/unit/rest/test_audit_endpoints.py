"""The audit endpoints of SPEC 4.2 and 4.3 through Falcon's test client, with every status they answer."""

import pytest

from siteaudit.adapters.rest.scope import LIST_BODY_BYTES
from siteaudit.domain.credit import credits
from siteaudit.services import key as keys
from tests.unit.rest.conftest import World

SITE = "https://retro-clock.example/"


def start(world: World, key: str, **body: object):  # type: ignore[no-untyped-def]
    body.setdefault("url", SITE)
    return world.client.simulate_post("/v1/crawls", json=body, headers=world.auth(key))


def test_health_answers_ok_without_a_key(world: World) -> None:
    result = world.client.simulate_get("/v1/health")
    assert (result.status_code, result.json) == (200, {"ok": True})


def test_ping_names_the_keys_holder(world: World) -> None:
    result = world.client.simulate_get("/v1/ping", headers=world.auth(world.owner_key))
    assert result.status_code == 200
    assert result.json["user_id"] == 1
    assert result.headers["Cache-Control"] == "no-store"
    assert result.headers["RateLimit-Limit"] == "60"


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer",
        "Bearer sk_tooshort",
        "Basic c2tfYWJj",
        "Bearer sk_" + "A" * 40,  # well formed, unknown
        "Bearer sk_" + "A" * 39 + "!",
    ],
)
def test_missing_malformed_and_unknown_keys_answer_the_same_401(world: World, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    result = world.client.simulate_get("/v1/ping", headers=headers)
    assert result.status_code == 401
    assert result.json == {
        "error": {
            "code": "unauthenticated",
            "message": "a valid API key is required: Authorization: Bearer sk_...",
        }
    }


def test_a_revoked_key_answers_401_like_an_unknown_one(world: World) -> None:
    prefix = world.member_key[:12]
    keys.revoke_key("member@retro-clock.example", prefix, uow=world.app.uow(), clock=world.clock)
    revoked = world.client.simulate_get("/v1/ping", headers=world.auth(world.member_key))
    unknown = world.client.simulate_get("/v1/ping", headers=world.auth("sk_" + "B" * 40))
    assert revoked.status_code == unknown.status_code == 401
    assert revoked.content == unknown.content


def test_a_holder_removed_from_the_team_answers_team_access_revoked(world: World) -> None:
    from siteaudit.services import account as accounts

    accounts.remove_member("Retro Clock", "member@retro-clock.example", uow=world.app.uow())
    result = world.client.simulate_get("/v1/ping", headers=world.auth(world.member_key))
    assert (result.status_code, result.json["error"]["code"]) == (403, "team_access_revoked")


def test_account_shows_own_and_team_owner_balances(world: World) -> None:
    start(world, world.member_key, max_pages=10)
    result = world.client.simulate_get("/v1/account", headers=world.auth(world.member_key))
    assert result.status_code == 200
    assert result.json == {
        "balance": 4990,
        "team_id": 1,
        "team_credits": 5000,
        "crawls_total": 1,
        "credits_spent_30d": 0,
        "team_credits_spent_30d": 0,
        "api_key_prefix": world.member_key[:12],
    }


def test_starting_an_audit_answers_202_with_the_reservation(world: World) -> None:
    result = start(world, world.owner_key)
    assert result.status_code == 202
    assert result.json == {"crawl_id": 1, "estimated_credits": 500, "max_rps": 2.0, "warnings": []}
    detail = world.client.simulate_get("/v1/crawls/1", headers=world.auth(world.owner_key)).json
    assert detail["status"] == "queued"
    assert detail["credits_reserved"] == 500
    assert detail["verify_token_set"] is False
    assert detail["site_url"] == SITE
    assert (detail["last_progress_at"], detail["stalled"]) == (None, False)  # no slice has claimed it yet


def test_a_plain_url_audit_is_charged_to_the_holder_not_the_owner(world: World) -> None:
    start(world, world.member_key, max_pages=100)
    with world.app.uow() as uow:
        assert uow.credits.balance(uow.users.by_email("member@retro-clock.example").id) == credits(4_900)
        assert uow.credits.balance(uow.users.by_email("owner@retro-clock.example").id) == credits(5_000)


def test_insufficient_credits_answers_402_and_creates_nothing(world: World) -> None:
    result = start(world, world.poor_key, max_pages=10)
    assert (result.status_code, result.json["error"]["code"]) == (402, "insufficient_credits")
    listing = world.client.simulate_get("/v1/crawls", headers=world.auth(world.owner_key)).json
    assert listing["meta"]["total"] == 0


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"max_pages": 100_001}, 403, "plan_limit_max_pages"),
        ({"max_pages": 501}, 409, "site_not_verified"),
        ({"max_rps": 4}, 422, "max_rps_requires_verified_site"),
        ({"url": "ftp://retro-clock.example/"}, 422, "invalid_url"),
        ({"url": "https://user:pw@retro-clock.example/"}, 422, "invalid_url"),
    ],
)
def test_refused_audit_requests_answer_the_spec_codes(
    world: World, body: dict, status: int, code: str
) -> None:
    result = start(world, world.owner_key, **body)
    assert (result.status_code, result.json["error"]["code"]) == (status, code)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"max_pages": 0}, "max_pages"),
        ({"max_pages": "ten"}, "max_pages"),
        ({"max_pages": True}, "max_pages"),
        ({"concurrency": 21}, "concurrency"),
        ({"max_rps": 0.1}, "max_rps"),
        ({"max_rps": "fast"}, "max_rps"),
        ({"verify_token": "short"}, "verify_token"),
        ({"url": 5}, "url"),
        ({"url": None}, "url"),
        ({"colour": "blue"}, "colour"),
        ({"webhook_url": "not a url"}, "webhook_url"),
    ],
)
def test_invalid_fields_answer_validation_failed_naming_them(world: World, body: dict, field: str) -> None:
    result = start(world, world.owner_key, **body)
    assert result.status_code == 422
    assert result.json["error"]["code"] == "validation_failed"
    assert field in result.json["error"]["fields"]


def test_malformed_json_answers_422_with_fields(world: World) -> None:
    result = world.client.simulate_post(
        "/v1/crawls",
        body=b'{"url": ',
        headers={**world.auth(world.owner_key), "Content-Type": "application/json"},
    )
    assert (result.status_code, result.json["error"]["code"]) == (422, "validation_failed")
    assert "body" in result.json["error"]["fields"]


def test_a_non_json_body_answers_415(world: World) -> None:
    result = world.client.simulate_post(
        "/v1/crawls", body=b"url=x", headers={**world.auth(world.owner_key), "Content-Type": "text/plain"}
    )
    assert (result.status_code, result.json["error"]["code"]) == (415, "unsupported_media_type")


def test_a_body_over_the_room_of_a_full_url_list_answers_413(world: World) -> None:
    # A new audit's body has room for a list audit's 1,000 longest URLs (docs/audits.md), no more.
    result = world.client.simulate_post(
        "/v1/crawls",
        body=b'{"url": "' + b"x" * (LIST_BODY_BYTES + 10) + b'"}',
        headers={**world.auth(world.owner_key), "Content-Type": "application/json"},
    )
    assert (result.status_code, result.json["error"]["code"]) == (413, "payload_too_large")


def test_unknown_paths_and_methods_answer_the_envelope(world: World) -> None:
    missing = world.client.simulate_get("/v1/nothing-here", headers=world.auth(world.owner_key))
    assert (missing.status_code, missing.json["error"]["code"]) == (404, "not_found")
    wrong = world.client.simulate_put("/v1/crawls", headers=world.auth(world.owner_key))
    assert (wrong.status_code, wrong.json["error"]["code"]) == (405, "method_not_allowed")
    assert "text/html" not in wrong.headers.get("Content-Type", "")


def test_listing_pages_newest_first(world: World) -> None:
    for _ in range(3):
        start(world, world.owner_key, max_pages=5)
        world.clock.advance(1)
    result = world.client.simulate_get("/v1/crawls?per_page=2&page=1", headers=world.auth(world.owner_key))
    assert [row["crawl_id"] for row in result.json["data"]] == [3, 2]
    assert result.json["meta"] == {"current_page": 1, "per_page": 2, "total": 3, "last_page": 2}
    assert set(result.json["data"][0]) == {
        "crawl_id",
        "site_id",
        "site_url",
        "status",
        "trigger",
        "health_score",
        "pages_crawled",
        "max_pages",
        "created_at",
        "finished_at",
        "archived_at",
    }


@pytest.mark.parametrize("query", ["per_page=0", "per_page=101", "page=0", "page=x", "color=red"])
def test_bad_pagination_answers_validation_failed(world: World, query: str) -> None:
    result = world.client.simulate_get(f"/v1/crawls?{query}", headers=world.auth(world.owner_key))
    assert (result.status_code, result.json["error"]["code"]) == (422, "validation_failed")


@pytest.mark.parametrize("suffix", ["", "/report", "/issues", "/pages", "/templates", "/diff", "/fix-prompt"])
def test_another_teams_audit_answers_the_same_404_as_an_unknown_one(world: World, suffix: str) -> None:
    start(world, world.owner_key)
    theirs = world.client.simulate_get(f"/v1/crawls/1{suffix}", headers=world.auth(world.rival_key))
    unknown = world.client.simulate_get(f"/v1/crawls/999{suffix}", headers=world.auth(world.rival_key))
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json["error"]["code"] == "not_found"
    assert theirs.json["error"]["message"].replace("1", "N") == unknown.json["error"]["message"].replace(
        "999", "N"
    )
    cancel = world.client.simulate_delete("/v1/crawls/1", headers=world.auth(world.rival_key))
    assert cancel.status_code == 404


def test_cancelling_twice_answers_conflict_the_second_time(world: World) -> None:
    start(world, world.owner_key)
    first = world.client.simulate_delete("/v1/crawls/1", headers=world.auth(world.owner_key))
    assert (first.status_code, first.json) == (200, {"status": "cancelled"})
    second = world.client.simulate_delete("/v1/crawls/1", headers=world.auth(world.owner_key))
    assert (second.status_code, second.json["error"]["code"]) == (409, "conflict")
    with world.app.uow() as uow:
        assert uow.credits.balance(uow.users.by_email("owner@retro-clock.example").id) == credits(5_000)


@pytest.mark.parametrize("suffix", ["/report", "/templates", "/diff", "/fix-prompt"])
def test_report_parts_answer_report_not_ready_before_the_report_exists(world: World, suffix: str) -> None:
    start(world, world.owner_key)
    result = world.client.simulate_get(f"/v1/crawls/1{suffix}", headers=world.auth(world.owner_key))
    assert (result.status_code, result.json["error"]["code"]) == (404, "report_not_ready")


def test_a_non_numeric_or_huge_crawl_id_answers_404(world: World) -> None:
    for path in ("/v1/crawls/abc", "/v1/crawls/99999999999999999999999", "/v1/crawls/0"):
        result = world.client.simulate_get(path, headers=world.auth(world.owner_key))
        assert (result.status_code, result.json["error"]["code"]) == (404, "not_found"), path


def test_the_sixty_first_request_in_a_minute_answers_429_with_retry_after(world: World) -> None:
    for _ in range(60):
        assert world.client.simulate_get("/v1/ping", headers=world.auth(world.owner_key)).status_code == 200
    refused = world.client.simulate_get("/v1/ping", headers=world.auth(world.owner_key))
    assert (refused.status_code, refused.json["error"]["code"]) == (429, "rate_limited")
    assert int(refused.headers["Retry-After"]) >= 1
    other = world.client.simulate_get("/v1/ping", headers=world.auth(world.member_key))
    assert other.status_code == 200
    world.clock.advance(2)
    assert world.client.simulate_get("/v1/ping", headers=world.auth(world.owner_key)).status_code == 200


def test_request_ids_are_echoed_or_made(world: World) -> None:
    given = world.client.simulate_get("/v1/health", headers={"X-Request-ID": "abc-123"})
    assert given.headers["X-Request-ID"] == "abc-123"
    made = world.client.simulate_get("/v1/health", headers={"X-Request-ID": "<script>"})
    assert made.headers["X-Request-ID"] != "<script>"


def test_an_audit_with_a_webhook_url_queues_one_signed_delivery_when_it_ends(world: World) -> None:
    started = start(world, world.owner_key, webhook_url="https://hooks.retro-clock.example/audit")
    crawl_id = started.json["crawl_id"]
    world.client.simulate_delete(f"/v1/crawls/{crawl_id}", headers=world.auth(world.owner_key))
    world.client.simulate_delete(f"/v1/crawls/{crawl_id}", headers=world.auth(world.owner_key))
    with world.app.uow() as uow:
        delivery = uow.webhooks.of_audit(crawl_id)
        assert delivery is not None
        assert delivery.url == "https://hooks.retro-clock.example/audit"
        assert delivery.body == b'{"crawl_id":1,"status":"cancelled","pages_crawled":0,"health_score":null}'


def test_an_audit_without_a_webhook_url_queues_nothing(world: World) -> None:
    crawl_id = start(world, world.owner_key).json["crawl_id"]
    world.client.simulate_delete(f"/v1/crawls/{crawl_id}", headers=world.auth(world.owner_key))
    with world.app.uow() as uow:
        assert uow.webhooks.of_audit(crawl_id) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost/",
        "http://10.1.2.3/",
        "http://[::1]/",
        "http://unknown-host.example/",
    ],
)
def test_urls_that_are_not_public_addresses_answer_invalid_url(world: World, url: str) -> None:
    result = start(world, world.owner_key, url=url)
    assert (result.status_code, result.json["error"]["code"]) == (422, "invalid_url")


@pytest.mark.parametrize("suffix", ["", "/report", "/templates", "/diff", "/fix-prompt"])
def test_an_audit_read_refuses_an_unknown_query_parameter_by_name(world: World, suffix: str) -> None:
    start(world, world.owner_key)
    result = world.client.simulate_get(f"/v1/crawls/1{suffix}?color=red", headers=world.auth(world.owner_key))
    assert result.status_code == 422
    assert result.json["error"]["fields"] == {"color": "unknown parameter"}
