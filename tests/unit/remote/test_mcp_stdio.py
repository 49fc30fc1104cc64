"""`siteaudit mcp` over stdio through the MCP SDK's own client: against a running service with the key in
the environment, and `--local` with the embedded default in-process (its own workers crawl)."""

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from siteaudit.adapters.mcp.tools import tool_specs
from siteaudit.bootstrap import USE_CASES
from siteaudit.services.accounts.usecases import GetAccount
from tests.local_sites import UNPACED_LOCAL_ENV
from tests.unit.remote.conftest import Service

TOOLS = tool_specs(USE_CASES)

ROOT = Path(__file__).resolve().parents[3]


def environment(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SITEAUDIT_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(values)
    return env


@asynccontextmanager
async def stdio(env: dict[str, str], *extra: str) -> AsyncIterator[Client]:
    command = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from siteaudit.entrypoints.cli import main; main()", "mcp", *extra],
        env=env,
        cwd=str(ROOT),
    )
    async with Client(command) as client:
        yield client


def test_the_stdio_server_calls_the_service_with_the_key_of_its_environment(service: Service) -> None:
    env = environment(SITEAUDIT_URL=service.root, SITEAUDIT_API_KEY=service.keys.owner)

    async def scenario() -> None:
        async with stdio(env) as client:
            assert [t.name for t in (await client.list_tools()).tools] == [t.name for t in TOOLS]
            started = await client.call_tool("start_audit", {"url": service.site_url, "max_pages": 10})
            crawl_id = started.structured_content["crawl_id"]  # type: ignore[index]
            await anyio.to_thread.run_sync(service.crawl)
            waited = await client.call_tool("wait_for_audit", {"crawl_id": crawl_id, "timeout_s": 10})
            assert waited.structured_content["status"] == "done"  # type: ignore[index]
            prompt = await client.call_tool("get_fix_prompt", {"crawl_id": crawl_id})
            assert "/products/[id]" in prompt.content[1].text  # type: ignore[union-attr]  # markdown text
            bad = await client.call_tool("get_audit", {"crawl_id": 0})
            assert bad.structured_content["error"]["fields"] == {"crawl_id": "must be at least 1"}  # type: ignore[index]
            missing = await client.call_tool("get_report", {"crawl_id": 424242})
            assert missing.structured_content["error"]["code"] == "not_found"  # type: ignore[index]
        owner = service.app.application.authenticate(service.keys.owner)
        account = service.app.application.handle(GetAccount(), owner)
        assert account.crawls_total == 1

    anyio.run(scenario)


def test_the_stdio_server_refuses_to_start_without_a_key(service: Service) -> None:
    async def scenario() -> None:
        async with stdio(environment(SITEAUDIT_URL=service.root)) as client:
            await client.list_tools()

    with pytest.raises(Exception):
        anyio.run(scenario)


def test_the_local_stdio_server_audits_with_the_embedded_default(tmp_path: Path, site_url: str) -> None:
    env = environment(
        SITEAUDIT_DATABASE_URL=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}",
        SITEAUDIT_ALLOW_NETWORKS="127.0.0.0/8",
        SITEAUDIT_STARTING_CREDITS="500",
        **UNPACED_LOCAL_ENV,
    )

    async def scenario() -> None:
        async with stdio(env, "--local") as client:
            account = await client.call_tool("get_account", {})
            assert account.structured_content["balance"] == 500  # type: ignore[index]
            started = await client.call_tool("start_audit", {"url": site_url, "max_pages": 10})
            crawl_id = started.structured_content["crawl_id"]  # type: ignore[index]
            waited = await client.call_tool("wait_for_audit", {"crawl_id": crawl_id, "timeout_s": 60})
            assert waited.structured_content["status"] == "done", waited.content  # type: ignore[index]
            report = await client.call_tool("get_report", {"crawl_id": crawl_id})
            assert report.structured_content["totals"]["pages"] >= 5  # type: ignore[index]

    anyio.run(scenario)
