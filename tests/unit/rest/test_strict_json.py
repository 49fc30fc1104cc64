"""docs/security.md, "Strict JSON bodies": lone surrogates and NUL refused by field, nesting capped at
32 before parsing, a JSON string never read as a number or a boolean, at the REST door, `/mcp` and in tool
arguments (stdio, the CLI); and what the hostile-body guard found besides."""

import json
from pathlib import Path
from typing import Any

import pytest

from siteaudit.adapters import strict_json
from siteaudit.adapters.mcp.params import read_arguments
from siteaudit.adapters.mcp.tools import tool_specs
from siteaudit.bootstrap import USE_CASES
from siteaudit.domain.error import ValidationFailed
from siteaudit.settings import Settings
from tests.unit.rest.conftest import World, make_world

HOME = "https://retro-clock.example/"
JSON = {"Content-Type": "application/json"}
MCP = {**JSON, "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
NOT_TEXT = "must be valid Unicode text (no lone surrogates, no NUL characters)"


def send(world: World, method: str, path: str, body: str | bytes, *, key: str | None = "owner") -> Any:
    headers = dict(JSON)
    if key is not None:
        headers.update(world.auth(world.owner_key))
    return world.client.simulate_request(method, path, body=body, headers=headers)


def refused(result: Any, field: str) -> str:
    assert result.status_code == 422, result.text
    error = result.json["error"]
    assert error["code"] == "validation_failed"
    return str(error["fields"][field])


def site(world: World) -> int:
    registered = world.client.simulate_post(
        "/v1/sites", json={"url": HOME}, headers=world.auth(world.owner_key)
    )
    assert registered.status_code == 201
    return int(registered.json["id"])


# --- lone surrogates and NUL ----------------------------------------------------------------------------

SURROGATE_BODIES = [
    ("POST", "/v1/device/token", '{"device_code": "\\ud800"}', "device_code"),
    ("POST", "/v1/device/start", '{"client_name": "ab\\udfffc"}', "client_name"),
    ("POST", "/v1/device/start", '{"client_name": "a\\u0000b"}', "client_name"),
    ("POST", "/v1/crawls", '{"url": "https://retro-clock.example/\\ud800"}', "url"),
    ("POST", "/v1/crawls", '{"\\ud800": 1}', "\\ud800"),  # an unknown field so named: answered escaped
    ("POST", "/v1/sites", '{"url": "https://retro-clock.example/\\ud83d"}', "url"),
    ("PUT", "/v1/sites/{site}/indexnow/key", '{"key": "abcdefgh\\ud800"}', "key"),
    ("POST", "/v1/sites/{site}/gsc/inspect", '{"urls": ["https://retro-clock.example/\\ud800"]}', "urls"),
    ("POST", "/v1/sites/{site}/recheck", '{"urls": ["https://retro-clock.example/\\ud800"]}', "urls"),
    ("POST", "/v1/sites", '{"url": "https://retro-clock.example/", "x": {"y": ["\\ud800"]}}', "x"),
]


@pytest.mark.parametrize(("method", "path", "body", "field"), SURROGATE_BODIES)
def test_a_string_that_is_not_unicode_text_is_refused_by_field_at_the_door(
    world: World, method: str, path: str, body: str, field: str
) -> None:
    target = path.format(site=site(world))
    before = world.client.simulate_get("/v1/crawls", headers=world.auth(world.owner_key)).json["meta"][
        "total"
    ]
    assert refused(send(world, method, target, body), field) == NOT_TEXT
    assert (
        world.client.simulate_get("/v1/crawls", headers=world.auth(world.owner_key)).json["meta"]["total"]
        == before
    )


def test_a_surrogate_sent_as_raw_bytes_is_refused_as_well(world: World) -> None:
    body = '{"url": "https://retro-clock.example/\ud800"}'.encode("utf-8", "surrogatepass")
    assert refused(send(world, "POST", "/v1/sites", body), "url") == NOT_TEXT


def test_nan_and_infinity_are_not_json(world: World) -> None:
    for constant in ("NaN", "Infinity", "-Infinity"):
        body = f'{{"url": "{HOME}", "max_rps": {constant}}}'
        assert refused(send(world, "POST", "/v1/sites", body), "body") == "not valid JSON"


@pytest.mark.parametrize("number", ["1" + "0" * 400, "-" + "9" * 80, "1e400"])
def test_a_number_no_float_holds_is_refused_by_its_field(world: World, number: str) -> None:
    """`max_rps` compared exactly: an integer too large for a float answered 500 (OverflowError)."""
    body = f'{{"url": "{HOME}", "max_rps": {number}}}'
    assert "must be" in refused(send(world, "POST", "/v1/sites", body), "max_rps")
    patched = send(world, "PATCH", f"/v1/sites/{site(world)}", f'{{"max_rps": {number}}}')
    assert "must be" in refused(patched, "max_rps")


# --- nesting ----------------------------------------------------------------------------------------------

DEEP = "[" * 5_000 + "]" * 5_000  # 10 KB


@pytest.mark.parametrize(
    "path", ["/v1/device/token", "/v1/device/start", "/v1/crawls", "/v1/sites", "/v1/billing/checkout"]
)
def test_a_deeply_nested_body_is_refused_before_it_is_parsed(world: World, path: str) -> None:
    for key in ("owner", None):
        result = send(world, "POST", path, DEEP, key=key)
        if key is None and not path.startswith("/v1/device"):
            assert result.status_code == 401
        else:
            assert refused(result, "body") == "nested more than 32 levels deep"


def test_mcp_refuses_a_deeply_nested_body_after_the_key(world: World) -> None:
    anonymous = world.client.simulate_post("/mcp", body=DEEP, headers=MCP)
    assert anonymous.status_code == 401
    assert anonymous.json["error"]["code"] == "unauthenticated"
    keyed = world.client.simulate_post("/mcp", body=DEEP, headers={**MCP, **world.auth(world.owner_key)})
    assert refused(keyed, "body") == "nested more than 32 levels deep"


def test_mcp_names_a_bad_string_by_its_path(world: World) -> None:
    body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        '"params": {"name": "register_site", "arguments": {"url": "https://retro-clock.example/\\ud800"}}}'
    )
    result = world.client.simulate_post("/mcp", body=body, headers={**MCP, **world.auth(world.owner_key)})
    assert refused(result, "params.arguments.url") == NOT_TEXT


def test_the_cap_is_32_levels_and_brackets_inside_strings_do_not_count() -> None:
    assert not strict_json.deeper_than(b"[" * 32 + b"]" * 32)
    assert strict_json.deeper_than(b"[" * 33 + b"]" * 33)
    assert strict_json.deeper_than(b'{"a":' + b"[" * 10_000)  # never closed: refused all the same
    assert not strict_json.deeper_than(
        json.dumps({"urls": ["https://a.example/" + "[{" * 500 + '\\"']}).encode()
    )
    assert strict_json.loads(b"[" * 32 + b"]" * 32) is not None


# --- strict types ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field", "why"),
    [
        ("/v1/crawls", {"url": HOME, "max_pages": "5"}, "max_pages", "must be an integer"),
        ("/v1/crawls", {"site_id": "1"}, "site_id", "must be an integer"),
        ("/v1/crawls", {"url": HOME, "max_rps": "2"}, "max_rps", "must be a number"),
        ("/v1/sites", {"url": HOME, "alert_email": "true"}, "alert_email", "must be true or false"),
        ("/v1/sites", {"url": HOME, "max_pages": 1e400}, "max_pages", "must be an integer"),
        ("/v1/sites", {"url": HOME, "max_pages": 10**400}, "max_pages", "must be between 1 and 500,000"),
    ],
)
def test_a_json_string_is_never_a_number_or_a_boolean(
    world: World, path: str, body: dict[str, Any], field: str, why: str
) -> None:
    text = json.dumps(body).replace("Infinity", "1e400")
    assert refused(send(world, "POST", path, text), field) == why
    assert (
        world.client.simulate_get("/v1/crawls", headers=world.auth(world.owner_key)).json["meta"]["total"]
        == 0
    )


def test_query_strings_still_read_digits_as_integers(world: World) -> None:
    site(world)
    listed = world.client.simulate_get(
        "/v1/crawls", params={"site_id": "1", "page": "1"}, headers=world.auth(world.owner_key)
    )
    assert listed.status_code == 200
    assert (
        refused(
            world.client.simulate_get(
                "/v1/crawls/1/issues", params={"template": "\x00"}, headers=world.auth(world.owner_key)
            ),
            "template",
        )
        == NOT_TEXT
    )


# --- tool arguments (stdio, HTTP, the CLI all read them here) ---------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "why"),
    [
        ("start_audit", {"url": HOME + "\ud800"}, "url", NOT_TEXT),
        ("start_audit", {"url": HOME + "\x00"}, "url", NOT_TEXT),
        ("start_audit", {"url": HOME, "\ud800": 1}, "\\ud800", NOT_TEXT),
        ("start_audit", {"url": HOME, "max_rps": float("nan")}, "max_rps", "must be a finite number"),
        ("start_audit", {"url": HOME, "max_pages": "5"}, "max_pages", "must be a integer"),
        ("wait_for_audit", {"crawl_id": 1, "timeout_s": []}, "timeout_s", "must be a number"),
        ("get_audit", {"crawl_id": 2**64}, "crawl_id", f"must be at most {2**62:g}"),
        ("list_audits", {"page": 2**62}, "page", "must be at most 100000"),
        ("submit_to_indexnow", {"site_id": 1, "urls": [HOME, "\udc00"]}, "urls", NOT_TEXT),
    ],
)
def test_tool_arguments_are_read_as_strictly_as_bodies(
    tool: str, arguments: dict[str, Any], field: str, why: str
) -> None:
    with pytest.raises(ValidationFailed) as refused_:
        read_arguments({t.name: t for t in tool_specs(USE_CASES)}[tool].params, arguments)
    assert refused_.value.fields[field] == why


# --- what the guard found besides -------------------------------------------------------------------------


def test_a_recheck_of_a_site_without_tasks_on_sqlite_is_answered(tmp_path: Path) -> None:
    world = make_world(Settings(database_url=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"))
    result = world.client.simulate_post(
        f"/v1/sites/{site(world)}/recheck", json={"urls": [HOME]}, headers=world.auth(world.owner_key)
    )
    assert result.status_code == 409, result.text
    assert result.json["error"]["code"] == "site_not_verified"
