"""The tool server over streamable HTTP at /mcp of a running service, through the MCP SDK's own client:
every tool with good and bad input, team isolation, the key rules of /v1, the Origin check, and progress
notifications while an audit runs."""

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from siteaudit.adapters.mcp.server import UNTRUSTED_META
from siteaudit.adapters.mcp.spec import UNTRUSTED_NOTE, ToolSpec
from siteaudit.adapters.mcp.tools import tool_specs
from siteaudit.bootstrap import USE_CASES
from siteaudit.services.sites.usecases import RegisterSite
from tests.unit.remote.conftest import ALLOWED_ORIGIN, Crawler, Service

TOOLS = tool_specs(USE_CASES)

LEGACY = "2025-11-25"


@asynccontextmanager
async def connected(service: Service, key: str, *, mode: str = "auto") -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    async with http, Client(streamable_http_client(service.mcp_url, http_client=http), mode=mode) as client:
        yield client


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def raw(service: Service, key: str | None, body: dict[str, Any], **headers: str) -> httpx2.Response:
    """One JSON-RPC message POSTed as a legacy stateless client would, without the SDK."""
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LEGACY,
        **headers,
    }
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    return httpx2.post(service.mcp_url, json={"jsonrpc": "2.0", "id": 1, **body}, headers=sent, timeout=30)


def sse_result(response: httpx2.Response) -> dict[str, Any]:
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    message: dict[str, Any] = json.loads(data[-1])
    return message


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_tools_are_listed_with_schemas_annotations_and_descriptions(service: Service, mode: str) -> None:
    async def scenario() -> None:
        async with connected(service, service.keys.owner, mode=mode) as client:
            listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == [t.name for t in TOOLS]
        by_name = {t.name: t for t in listed}
        start = by_name["start_audit"]
        assert set(start.input_schema["properties"]) == {
            "url",
            "site_id",
            "max_pages",
            "concurrency",
            "max_rps",
            "webhook_url",
            "verify_token",
            "render",
            # What the audit covers (docs/audits.md).
            "urls",
            "sitemap_only",
            "include",
            "exclude",
            "query_params",
            "keep_params",
        }
        assert "COSTS CREDITS" in (start.description or "")
        assert start.annotations is not None and start.annotations.read_only_hint is not True
        assert start.output_schema and "crawl_id" in start.output_schema["properties"]
        report = by_name["get_report"]
        assert report.annotations is not None and report.annotations.read_only_hint is True
        assert by_name["delete_site"].annotations.destructive_hint is True  # type: ignore[union-attr]

    run(scenario)


def test_every_tool_answers_good_input_with_the_rest_json_and_a_summary(service: Service) -> None:
    called: set[str] = set()

    async def scenario() -> None:
        async with connected(service, service.keys.owner) as client:
            # What each tool's outputSchema names: every key of its answer (the SDK checks the answer
            # against the schema; the keys' types are the OpenAPI document's).
            named = {
                t.name: set((t.output_schema or {})["properties"]) for t in (await client.list_tools()).tools
            }

            async def call(name: str, ok: bool = True, **args: Any) -> dict[str, Any]:
                called.add(name)
                result = await client.call_tool(name, args)
                assert result.is_error is not ok, (name, result.content)
                assert result.content and result.content[0].type == "text" and result.content[0].text
                assert isinstance(result.structured_content, dict)
                if ok:
                    assert set(result.structured_content) - {"more", "omitted"} <= named[name], name
                return result.structured_content

            assert (await call("ping"))["user_id"] > 0
            assert (await call("get_account"))["balance"] == 50_000
            site = await call("register_site", url=service.site_url, max_pages=100)
            assert site["verify"]["url"].endswith(".txt") and not site["verified"]
            assert [s["id"] for s in (await call("list_sites"))["data"]] == [site["id"]]
            assert (await call("get_site", site_id=site["id"]))["latest_crawl"] is None
            assert (await call("update_site", site_id=site["id"], max_pages=40, alert_email=False))[
                "max_pages"
            ] == 40
            methods = (await call("get_site_verification", site_id=site["id"]))["methods"]
            assert methods["file"]["body"].strip() == site["verify_token"]
            failed = await call("verify_site", False, site_id=site["id"], method="file")
            assert failed["error"]["code"] == "verification_failed"
            site_audit = await call("start_site_audit", site_id=site["id"], max_pages=5)
            assert site_audit["estimated_credits"] == 5
            started = await call("start_audit", url=service.site_url, max_pages=10)
            crawl_id = started["crawl_id"]
            assert started["estimated_credits"] == 10
            assert (await call("list_audits", per_page=1))["meta"]["total"] == 2
            assert (await call("get_audit", crawl_id=crawl_id))["status"] == "queued"
            await anyio.to_thread.run_sync(service.crawl)
            assert (await call("wait_for_audit", crawl_id=crawl_id, timeout_s=5))["status"] == "done"
            report = await call("get_report", crawl_id=crawl_id)
            assert report["crawl_id"] == crawl_id and 0 <= report["health_score"] <= 100
            issues = await call("list_issues", crawl_id=crawl_id, severity="warning", per_page=5)
            assert issues["data"] and {i["severity"] for i in issues["data"]} == {"warning"}
            pages = await call("list_pages", crawl_id=crawl_id, status_code=404)
            assert {p["status_code"] for p in pages["data"]} == {404}
            assert (await call("get_templates", crawl_id=crawl_id))["templates"]
            assert (await call("get_diff", crawl_id=crawl_id))["crawl_id"] == crawl_id
            prompt = await client.call_tool("get_fix_prompt", {"crawl_id": crawl_id})
            called.add("get_fix_prompt")
            # The prompt is the second text, as markdown; the structured content says its length only.
            markdown = prompt.content[1].text  # type: ignore[union-attr]
            assert markdown.startswith("#") and prompt.structured_content == {
                "crawl_id": crawl_id,
                "characters": len(markdown),
            }
            assert prompt.meta is not None and prompt.meta[UNTRUSTED_META] is True
            assert prompt.content[0].text.endswith(UNTRUSTED_NOTE)  # type: ignore[union-attr]
            # The search console (demo data), index triage, IndexNow and billing links on the site,
            # verified now (by hand) and audited above.
            await anyio.to_thread.run_sync(service.app.application.verify_site_by_hand, site["id"], "t")
            sid = {"site_id": site["id"]}
            summary = await call("get_console_summary", **sid)
            assert summary["demo"] is True and summary["funnel"]["found"] >= 3
            assert (await call("list_not_indexed", **sid))["urls"] is None
            url_status = await call("get_console_url", **sid, url=service.site_url)
            assert url_status["url"] == service.site_url and url_status["demo"] is True
            outside = await call("get_console_url", False, **sid, url="https://elsewhere.example/")
            assert outside["error"]["code"] == "url_not_in_site"
            assert "counts" in await call("get_console_opportunities", **sid)
            inspected = await call("inspect_urls", **sid, urls=[service.site_url])
            assert [r["url"] for r in inspected["results"]] == [service.site_url]
            assert (await call("get_index_triage", **sid))["demo"] is True
            status = await call("get_indexnow_status", **sid)
            assert status["key_verified"] is False and status["sengine_supported"] is False
            failed = await call("check_indexnow_key", **sid)
            assert failed["result"] == "failed"
            unverified = await call("submit_to_indexnow", False, **sid, urls=[service.site_url])
            assert unverified["error"]["code"] == "indexnow_key_unverified"
            service.publish(f"/{status['key']}.txt", status["key"])
            assert (await call("check_indexnow_key", **sid))["result"] == "verified"
            submitted = await call("submit_to_indexnow", **sid, urls=[service.site_url + "about"])
            assert submitted["submitted"] == 1 and submitted["status"] == "ok"
            assert (await call("set_indexnow_auto", **sid, auto=True))["auto"] is True
            assert (await call("detect_indexnow_key", **sid))["detection"] is not None
            bad_key = await call("set_indexnow_key", False, **sid, key="no!")
            assert bad_key["error"]["code"] == "invalid_indexnow_key"
            assert (await call("set_indexnow_key", **sid, key="retro-clock-key-1"))[
                "key_source"
            ] == "existing"
            assert (await call("get_credit_pack_link", pack="small"))["url"].startswith("http")
            link = await call("get_subscription_link", plan="starter", tier="10k", interval="monthly")
            assert link["url"].startswith("http")
            portal = await call("get_billing_portal_link", False)
            assert portal["error"]["code"] == "no_billing_account"
            # Fix tasks of the site audited above, a task recheck run to its end, a URL recheck cancelled.
            found = await call("list_site_tasks", **sid, limit=100)
            assert found["crawl_id"] is not None and found["tasks"] and found["open_total"] >= 1
            key = next(t["id"] for t in found["tasks"] if t["recheckable"])
            marked = await client.call_tool("list_site_tasks", sid)
            assert marked.meta is not None and marked.meta[UNTRUSTED_META] is True
            team = await call("list_team_tasks", limit=20)
            assert team["tasks"] and {t["site_id"] for t in team["tasks"]} == {site["id"]}
            task = await call("get_task", **sid, task_key=key)
            assert task["task"]["id"] == key and task["urls"]["total"] == len(task["urls"]["data"]) >= 1
            unknown = await call("get_task", False, **sid, task_key="0" * 16)
            assert unknown["error"]["code"] == "not_found"
            both = await call("request_recheck", False, **sid, task_key=key, urls=[service.site_url])
            assert set(both["error"]["fields"]) == {"task_key", "urls"}
            recheck = await call("request_recheck", **sid, task_key=key)
            assert recheck["status"] == "queued" and recheck["estimated_credits"] == recheck["urls_total"]
            assert [(t["task_key"], t["status"]) for t in recheck["tasks"]] == [(key, "verifying")]
            busy = await call("request_recheck", False, **sid, task_key=key)
            assert busy["error"]["code"] == "conflict"
            recheck_id = recheck["recheck_id"]
            assert (await call("get_recheck", recheck_id=recheck_id))["status"] == "queued"
            await anyio.to_thread.run_sync(service.crawl)
            done = await call("wait_for_recheck", recheck_id=recheck_id, timeout_s=5)
            assert done["status"] == "done" and [t["task_key"] for t in done["tasks"]] == [key]
            assert len(done["urls"]) == done["urls_total"] == done["pages_crawled"]
            impact = await call("get_site_fix_impact", **sid, limit=200)
            assert impact["note"] and impact["methodology"] and isinstance(impact["events"], list)
            assert impact["measured_events"] == sum(e["status"] == "measured" for e in impact["events"])
            team_impact = await call("get_team_fix_impact", limit=50)
            assert {e["site_id"] for e in team_impact["events"]} <= {site["id"]}
            assert team_impact["note"] == impact["note"]
            access = await call("get_site_access", **sid)
            assert access["kinds"] == [] and access["site_id"] == site["id"] and access["updated_at"] is None
            by_url = await call("request_recheck", **sid, urls=[service.site_url])
            assert by_url["urls_total"] == 1 and by_url["estimated_credits"] == 1
            cancelled = await call("cancel_recheck", recheck_id=by_url["recheck_id"])
            assert cancelled["status"] == "cancelled"
            ended = await call("cancel_recheck", False, recheck_id=by_url["recheck_id"])
            assert ended["error"]["code"] == "conflict"
            again = await call("start_audit", url=service.site_url, max_pages=5)
            assert await call("cancel_audit", crawl_id=again["crawl_id"]) == {"status": "cancelled"}
            assert (await call("cancel_audit", False, crawl_id=again["crawl_id"]))["error"][
                "code"
            ] == "conflict"
            assert await call("delete_site", site_id=site["id"]) == {"deleted": True, "site_id": site["id"]}
            assert (await call("get_site", False, site_id=site["id"]))["error"]["code"] == "not_found"

    run(scenario)
    assert called == {t.name for t in TOOLS}


def test_every_tool_refuses_bad_input_as_a_tool_error_with_the_rest_code(service: Service) -> None:
    async def scenario() -> None:
        # Two keys, as the calls outnumber one key's 60 a minute.
        async with (
            connected(service, service.keys.owner) as client,
            connected(service, service.keys.member) as other,
        ):
            for tool in TOOLS:
                result = await client.call_tool(tool.name, {"surprise": 1})
                assert result.is_error, tool.name
                error = result.structured_content["error"]  # type: ignore[index]
                assert error["code"] == "validation_failed"
                assert error["fields"]["surprise"] == "unknown argument"
                for param in tool.params:
                    if param.required:
                        assert error["fields"][param.name] == "required", (tool.name, param.name)
            wrong = await other.call_tool(
                "start_audit", {"url": "https://retro-clock.example/", "max_rps": 50}
            )
            assert wrong.structured_content["error"]["fields"] == {"max_rps": "must be at most 10"}  # type: ignore[index]
            typed = await other.call_tool("get_audit", {"crawl_id": "seven"})
            assert typed.structured_content["error"]["fields"] == {"crawl_id": "must be a integer"}  # type: ignore[index]
            for name, args, fields in (
                (
                    "inspect_urls",
                    {"site_id": 1, "urls": "https://x.example/"},
                    {"urls": "must be an array of URLs"},
                ),
                (
                    "inspect_urls",
                    {"site_id": 1, "urls": ["u"] * 21},
                    {"urls": "must be an array of 1 to 20 URLs"},
                ),
                (
                    "submit_to_indexnow",
                    {"site_id": 1, "urls": []},
                    {"urls": "must be an array of 1 to 10,000 URLs"},
                ),
                (
                    "submit_to_indexnow",
                    {"site_id": 1, "urls": [5]},
                    {"urls": "item 0 must be a string of 1 to 2,048 characters"},
                ),
                ("list_not_indexed", {"site_id": 1, "page": 0}, {"page": "must be at least 1"}),
                ("set_indexnow_auto", {"site_id": 1, "auto": "yes"}, {"auto": "must be a boolean"}),
                ("get_credit_pack_link", {"pack": "huge"}, {"pack": "must be one of small, large"}),
                ("list_team_tasks", {"limit": 21}, {"limit": "must be at most 20"}),
                ("get_team_fix_impact", {"limit": 51}, {"limit": "must be at most 50"}),
                ("get_site_fix_impact", {"site_id": 1, "limit": 0}, {"limit": "must be at least 1"}),
                ("list_site_tasks", {"site_id": 1, "limit": 0}, {"limit": "must be at least 1"}),
                ("get_task", {"site_id": 1, "task_key": ""}, {"task_key": "must be at least 1 characters"}),
                (
                    "request_recheck",
                    {"site_id": 1, "urls": ["u"] * 201},
                    {"urls": "must be an array of 1 to 200 URLs"},
                ),
                (
                    "request_recheck",
                    {"site_id": 1},
                    {
                        "task_key": "give exactly one of task_key and urls",
                        "urls": "give exactly one of task_key and urls",
                    },
                ),
                (
                    "wait_for_recheck",
                    {"recheck_id": 1, "timeout_s": 500},
                    {"timeout_s": "must be at most 120"},
                ),
            ):
                result = await other.call_tool(name, args)
                assert result.is_error and result.structured_content["error"]["fields"] == fields, name  # type: ignore[index]
            refused = await other.call_tool("start_audit", {"url": "ftp://retro-clock.example/"})
            assert refused.is_error and refused.content[0].text.startswith("invalid_url: ")  # type: ignore[union-attr]

    run(scenario)


def site_tools(service: Service) -> list[tuple[ToolSpec, dict[str, Any]]]:
    """Every tool acting on a registered site but delete_site, with good arguments besides site_id."""
    more: dict[str, dict[str, Any]] = {
        "get_console_url": {"url": service.site_url},
        "inspect_urls": {"urls": [service.site_url]},
        "submit_to_indexnow": {"urls": [service.site_url]},
        "set_indexnow_auto": {"auto": True},
        "set_indexnow_key": {"key": "retro-clock-key-1"},
        "update_site": {"max_pages": 5},
        "verify_site": {},
        "start_site_audit": {},
        "get_task": {"task_key": "0" * 16},
        "request_recheck": {"urls": [service.site_url]},
    }
    return [
        (tool, more.get(tool.name, {}))
        for tool in TOOLS
        if any(p.name == "site_id" and p.required for p in tool.params) and tool.name != "delete_site"
    ]


def test_another_teams_audit_and_site_do_not_exist_for_a_key(service: Service) -> None:
    site_id = service.audited_site()  # verified and audited: it has fix tasks and takes a recheck

    async def scenario() -> None:
        async with connected(service, service.keys.owner) as owner:
            started = await owner.call_tool("start_audit", {"url": service.site_url, "max_pages": 5})
            crawl_id = started.structured_content["crawl_id"]  # type: ignore[index]
            asked = await owner.call_tool("request_recheck", {"site_id": site_id, "urls": [service.site_url]})
            recheck_id = asked.structured_content["recheck_id"]  # type: ignore[index]
        async with connected(service, service.keys.rival) as rival:
            for name in ("get_recheck", "wait_for_recheck", "cancel_recheck"):
                result = await rival.call_tool(name, {"recheck_id": recheck_id})
                assert result.structured_content["error"]["code"] == "not_found", name  # type: ignore[index]
            teams = await rival.call_tool("list_team_tasks", {})
            assert teams.structured_content == {"tasks": []}
            impact = await rival.call_tool("get_team_fix_impact", {})
            assert impact.structured_content["events"] == []  # type: ignore[index]
            site_impact = await rival.call_tool("get_site_fix_impact", {"site_id": site_id})
            assert site_impact.structured_content["error"]["code"] == "not_found"  # type: ignore[index]
            for name, args in (
                ("get_audit", {"crawl_id": crawl_id}),
                ("cancel_audit", {"crawl_id": crawl_id}),
                ("get_report", {"crawl_id": crawl_id}),
                ("get_site", {"site_id": site_id}),
                *((tool.name, {"site_id": site_id, **more}) for tool, more in site_tools(service)),
                ("delete_site", {"site_id": site_id}),
            ):
                result = await rival.call_tool(name, args)
                assert result.structured_content["error"]["code"] == "not_found", name  # type: ignore[index]
            listed = await rival.call_tool("list_audits", {})
            assert listed.structured_content["meta"]["total"] == 0  # type: ignore[index]
        async with connected(service, service.keys.member) as member:
            seen = await member.call_tool("get_audit", {"crawl_id": crawl_id})
            assert seen.structured_content["crawl_id"] == crawl_id  # type: ignore[index]
            for name, args in (
                ("get_credit_pack_link", {"pack": "small"}),
                ("get_subscription_link", {"plan": "growth", "tier": "50k", "interval": "yearly"}),
                ("get_billing_portal_link", {}),
            ):
                result = await member.call_tool(name, args)
                assert result.structured_content["error"]["code"] == "not_team_owner", name  # type: ignore[index]

    run(scenario)


def test_progress_is_notified_while_an_audit_runs(service: Service) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def scenario() -> dict[str, Any]:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            seen.append((done, total, message))

        async with connected(service, service.keys.owner) as client:
            started = await client.call_tool("start_audit", {"url": service.site_url, "max_pages": 10})
            crawl_id = started.structured_content["crawl_id"]  # type: ignore[index]
            with Crawler(service):
                result = await client.call_tool(
                    "wait_for_audit", {"crawl_id": crawl_id, "timeout_s": 60}, progress_callback=progress
                )
        assert not result.is_error
        return result.structured_content  # type: ignore[return-value]

    outcome: dict[str, Any] = {}

    async def main() -> None:
        outcome.update(await scenario())

    run(main)
    assert outcome["status"] == "done"
    assert len(seen) >= 3
    assert [done for done, _, _ in seen] == sorted(done for done, _, _ in seen)
    assert all(total == 10 for _, total, _ in seen)
    assert any(message and message.startswith("running: ") for _, _, message in seen)
    assert seen[-1][0] == outcome["pages_crawled"]


def test_the_key_rules_of_v1_apply_to_mcp(service: Service) -> None:
    initialize = {
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    ok = raw(service, service.keys.owner, initialize, **{"X-Request-ID": "retro-clock-42"})
    assert ok.status_code == 200 and ok.headers["X-Request-ID"] == "retro-clock-42"
    assert sse_result(ok)["result"]["serverInfo"]["name"] == "siteaudit"
    assert ok.headers["RateLimit-Limit"] == "60"
    missing = raw(service, None, initialize)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "unauthenticated"
    app = service.app.application
    app.revoke_key("rival@other-shop.example", service.keys.rival[:12])
    revoked = raw(service, service.keys.rival, initialize)
    assert revoked.status_code == 401 and revoked.json() == missing.json()
    # RFC 6750 section 3: the challenge names the realm; `invalid_token` only when a key was sent
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="siteaudit"'
    assert revoked.headers["WWW-Authenticate"].startswith('Bearer realm="siteaudit", error="invalid_token", ')
    assert "WWW-Authenticate" not in ok.headers
    app.remove_member("Retro Clock", "member@retro-clock.example")
    removed = raw(service, service.keys.member, initialize)
    assert removed.status_code == 403 and removed.json()["error"]["code"] == "team_access_revoked"

    async def sdk_with_revoked_key() -> None:
        async with connected(service, service.keys.rival, mode="legacy") as client:
            await client.list_tools()

    with pytest.raises(Exception):
        run(sdk_with_revoked_key)


def test_a_browser_origin_must_be_allowed(service: Service) -> None:
    body = {"method": "tools/list", "params": {}}
    evil = raw(service, service.keys.owner, body, Origin="http://rebinding.example:8080")
    assert evil.status_code == 403 and evil.json()["error"]["code"] == "forbidden_origin"
    allowed = raw(service, service.keys.owner, body, Origin=ALLOWED_ORIGIN)
    assert allowed.status_code == 200
    assert len(sse_result(allowed)["result"]["tools"]) == len(TOOLS)


def test_verify_site_shares_the_stricter_limit_of_its_endpoint(service: Service) -> None:
    site = service.app.application.handle(
        RegisterSite(url=service.site_url), service.app.application.authenticate(service.keys.owner)
    )
    call = {"method": "tools/call", "params": {"name": "verify_site", "arguments": {"site_id": site.id}}}
    answers = [raw(service, service.keys.owner, call) for _ in range(11)]
    assert [a.status_code for a in answers] == [200] * 10 + [429]
    assert sse_result(answers[0])["result"]["structuredContent"]["error"]["code"] == "verification_failed"
    assert int(answers[-1].headers["Retry-After"]) >= 1
    other = raw(
        service, service.keys.owner, {"method": "tools/call", "params": {"name": "ping", "arguments": {}}}
    )
    assert other.status_code == 200


def test_the_service_as_bootstrap_builds_it_serves_mcp(site_url: str) -> None:
    from siteaudit.adapters.memory.queue import MemoryTaskQueue
    from siteaudit.bootstrap import bootstrap
    from siteaudit.settings import Settings
    from tests.integration.rest.live import seed, serve

    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())
    keys = seed(app)
    with serve(app.rest_api()) as root:

        async def scenario() -> None:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {keys.owner}"}, timeout=30)
            async with http, Client(streamable_http_client(root + "/mcp", http_client=http)) as client:
                assert len((await client.list_tools()).tools) == len(TOOLS)

        run(scenario)


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_a_stateless_server_answers_405_to_get_and_delete(service: Service, method: str) -> None:
    answer = httpx2.request(
        method,
        service.mcp_url,
        headers={"Authorization": f"Bearer {service.keys.owner}", "Accept": "text/event-stream"},
        timeout=10,
    )
    assert answer.status_code == 405 and answer.json()["error"]["code"] == "method_not_allowed"


def test_an_allowed_origin_is_compared_by_scheme_host_and_port() -> None:
    from siteaudit.adapters.mcp.http import origin_of

    assert origin_of("https://App.Retro-Clock.example/siteaudit/") == "https://app.retro-clock.example"
    assert origin_of("http://127.0.0.1:8080") != origin_of("http://127.0.0.1:8081")


class CountingApplication:
    """The application, counting `handle` calls (a waiting tool runs `GetAudit` each poll)."""

    def __init__(self, application: Any) -> None:
        self._application = application
        self.polls = 0

    def handle(self, *args: Any) -> Any:
        self.polls += 1
        return self._application.handle(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._application, name)


def test_a_wait_stops_polling_when_its_client_goes_away(service: Service) -> None:
    import time

    from siteaudit.adapters.mcp.http import mount_mcp
    from siteaudit.services.audits.usecases import StartAudit
    from tests.integration.rest.live import serve

    app = service.app
    counting = CountingApplication(app.application)
    owner = app.application.authenticate(service.keys.owner)
    audit = app.application.handle(StartAudit(url=service.site_url, max_pages=5), owner)
    api = app.rest_api()
    mount_mcp(api, counting, clock=app.clock, limiter=app.limiter, poll_s=0.05)  # type: ignore[arg-type]
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "wait_for_audit",
            "arguments": {"crawl_id": audit.crawl_id, "timeout_s": 60},
            "_meta": {"progressToken": "t1"},
        },
    }
    headers = {
        "Authorization": f"Bearer {service.keys.owner}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LEGACY,
    }
    with serve(api) as root:
        with httpx2.stream("POST", root + "/mcp", json=call, headers=headers, timeout=30) as answer:
            lines = answer.iter_lines()
            assert any("notifications/progress" in line for line in lines)
        time.sleep(1.0)
        settled = counting.polls
        time.sleep(1.0)
        assert counting.polls == settled, "the tool kept polling for a client that left"
    assert settled < 60 / 0.05


@pytest.mark.parametrize(("tool", "more"), [("check_indexnow_key", {}), ("inspect_urls", {"urls": ["u"]})])
def test_indexnow_and_inspect_share_the_stricter_limit_of_their_endpoints(
    service: Service, tool: str, more: dict[str, Any]
) -> None:
    call = {"method": "tools/call", "params": {"name": tool, "arguments": {"site_id": 999_999, **more}}}
    answers = [raw(service, service.keys.owner, call) for _ in range(11)]
    assert [a.status_code for a in answers] == [200] * 10 + [429]
    assert sse_result(answers[0])["result"]["structuredContent"]["error"]["code"] == "not_found"
    assert answers[-1].json()["error"]["code"] == "rate_limited"
