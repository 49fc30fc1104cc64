"""The machine-readable descriptions of the doors, pinned whole: the OpenAPI document `GET /v1/openapi.json`
serves and the tool list `tools/list` answers at `/mcp` (names, titles, descriptions, input schemas,
annotations). Both are compared as canonical JSON (sorted keys, 2-space indent) with the checked-in pins
(docs/architecture.md, "Pinned behaviour")."""

import json
import re
from typing import Any

import falcon.testing

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from siteaudit.settings import Settings
from tests.unit.pinned.pinning import assert_pinned

MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def _client_and_key() -> tuple[falcon.testing.TestClient, str]:
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())
    accounts.create_user("owner@retro-clock.example", uow=app.uow(), clock=app.clock, secrets=app.secrets)
    accounts.create_team(
        "Retro Clock", owner_email="owner@retro-clock.example", uow=app.uow(), clock=app.clock
    )
    key = keys.create_settings_key(
        "owner@retro-clock.example", "Retro Clock", uow=app.uow(), clock=app.clock, secrets=app.secrets
    )
    return falcon.testing.TestClient(app.rest_api()), key.raw


def test_the_served_openapi_document_is_the_pinned_one() -> None:
    client, _ = _client_and_key()
    served = client.simulate_get("/v1/openapi.json")
    assert served.status_code == 200
    assert_pinned("openapi", served.json, sort_keys=True)


def _rpc_result(text: str) -> dict[str, Any]:
    """The JSON-RPC answer: the last `data:` line of the event stream, or the JSON body."""
    lines = [line[5:].strip() for line in re.split(r"\r?\n", text) if line.startswith("data:")]
    message: dict[str, Any] = json.loads(lines[-1] if lines else text)
    return message


def test_the_listed_mcp_tools_are_the_pinned_ones() -> None:
    client, key = _client_and_key()
    answer = client.simulate_post(
        "/mcp",
        body=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        headers={**MCP_HEADERS, "Authorization": f"Bearer {key}"},
    )
    assert answer.status_code == 200, answer.text
    message = _rpc_result(answer.text)
    assert set(message) == {"jsonrpc", "id", "result"}, message
    # The whole list in the order served (a client shows them in this order), each tool in canonical form.
    assert_pinned("mcp_tools", message["result"], sort_keys=True)
