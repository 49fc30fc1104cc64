"""The tool server at /mcp under gunicorn with several sync worker processes on PostgreSQL: stateless, so
the MCP SDK's client works whichever worker answers each of its requests."""

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from attrs import frozen
from gunicorn_app import sql_overrides
from live import Keys, gunicorn, seed
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from siteaudit.adapters.mcp.tools import tool_specs
from siteaudit.adapters.sql import dispose_engines, migrate
from siteaudit.bootstrap import USE_CASES, bootstrap
from siteaudit.settings import Settings

TOOLS = tool_specs(USE_CASES)

pytestmark = pytest.mark.postgres

HERE = Path(__file__).parent
SECRET_KEY = "mcp-gunicorn-test-secret-key-0123456789abcdef"


@frozen
class Served:
    base: str
    keys: Keys


@pytest.fixture(scope="module")
def served(new_postgres_database: Callable[..., str]) -> Iterator[Served]:
    url = new_postgres_database(migrated=True)
    migrate(url)
    settings = Settings(database_url=url, secret_key=SECRET_KEY)
    keys = seed(bootstrap(settings, **sql_overrides(settings)))
    dispose_engines()
    env = {"SITEAUDIT_DATABASE_URL": url, "SITEAUDIT_SECRET_KEY": SECRET_KEY}
    with gunicorn("gunicorn_app:create_app()", workers=2, env=env, pythonpath=[str(HERE)]) as base:
        yield Served(base, keys)


def test_the_sdk_client_works_across_worker_processes(served: Served) -> None:
    async def scenario() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {served.keys.owner}"}, timeout=60)
        async with http, Client(streamable_http_client(served.base + "/mcp", http_client=http)) as client:
            assert len((await client.list_tools()).tools) == len(TOOLS)
            for _ in range(6):
                account = await client.call_tool("get_account", {})
                assert account.structured_content["balance"] == 50_000  # type: ignore[index]
                missing = await client.call_tool("get_audit", {"crawl_id": 4242})
                assert missing.structured_content["error"]["code"] == "not_found"  # type: ignore[index]

    anyio.run(scenario)


def test_several_workers_answer_tool_calls(served: Served) -> None:
    """Bursts of 8 concurrent calls until both workers have answered one: on a busy machine one sync
    worker can take a whole burst (or the second may still be booting), so one burst proves nothing."""
    pids: list[str] = []
    lock = threading.Lock()

    def one(start: threading.Barrier) -> None:
        start.wait()
        response = httpx2.post(
            served.base + "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "ping", "arguments": {}},
            },
            headers={
                "Authorization": f"Bearer {served.keys.member}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
            timeout=60,
        )
        assert response.status_code == 200 and '"user_id"' in response.text
        with lock:
            pids.append(response.headers["X-Worker-Pid"])

    for burst in range(1, 21):
        start = threading.Barrier(8)
        threads = [threading.Thread(target=one, args=(start,)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert len(pids) == 8 * burst  # every call answered
        if len(set(pids)) == 2:
            break
    assert len(set(pids)) == 2, pids
