"""Answers sized for agents (docs/agents.md, "Answers sized for agents"): the tool list within 27.4 KB (a guard
at what it is now; the aim of 16 KB is not reached, docs/agents.md says why) and every tool answer within 8,000
tokens (4 bytes a token, compact JSON of the JSON-RPC result), on the golden
audit's scripted site (audited twice, as the pinned REST answers) and on a generated 500-page audit; the
lists cut to the budget read on with their cursor to exactly the rows `/v1` answers."""

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import falcon.testing
import httpx2
import pytest
from crawl_doubles import HOST, RESOLVER, SiteServer
from test_crawl_site import retro_clock_site

from benchmarks.finalize import make_page
from siteaudit.adapters.mcp.sizing import BAD_CURSOR, BUDGET_BYTES, OTHER_CALL, size
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import Audit
from siteaudit.domain.checks import PageContext, check_page
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import AuditId
from siteaudit.domain.issue import Issue
from siteaudit.domain.thresholds import Thresholds
from siteaudit.services import audit as audits
from siteaudit.services import finalize
from siteaudit.settings import Settings
from tests.integration.rest.live import Keys, drain, seed, serve
from tests.local_sites import unpaced

LIST_BUDGET: Final = (
    29_800  # 46 tools, measured 29,758 bytes with the scope inputs; the aim is 16 KB (docs/agents.md)
)
HEADERS: Final = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


class Door:
    """The service's /mcp and /v1 served on 127.0.0.1, with the owner's key."""

    def __init__(self, root: str, keys: Keys) -> None:
        self.root = root
        self.auth = {"Authorization": f"Bearer {keys.owner}"}

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = httpx2.post(self.root + "/mcp", json=body, headers={**HEADERS, **self.auth}, timeout=60)
        lines = [line[5:].strip() for line in re.split(r"\r?\n", answer.text) if line.startswith("data:")]
        result: dict[str, Any] = json.loads(lines[-1])["result"]
        return result

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = self.rpc("tools/call", {"name": name, "arguments": arguments})
        assert not result.get("isError"), (name, result["content"][0]["text"])
        assert size(result) <= BUDGET_BYTES, (name, arguments, size(result))
        return result

    def rest(self, path: str) -> dict[str, Any]:
        answer: dict[str, Any] = httpx2.get(self.root + path, headers=self.auth, timeout=60).json()
        return answer

    def read_all(self, name: str, key: str, **arguments: Any) -> list[Any]:
        """Every item of the answer's list `key`, following `more.cursor` to the end."""
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(100):
            more = {} if cursor is None else {"cursor": cursor}
            shown = self.call(name, **arguments, **more)["structuredContent"]
            items.extend(shown.get(key, []))
            cursor = shown.get("more", {}).get("cursor")
            if cursor is None:
                return items
        raise AssertionError(f"{name} did not end")


def assert_within_budget(door: Door, crawl_id: int) -> dict[str, int]:
    """Reads the audit's report, templates, issues, pages and fix prompt as an agent would; returns the
    greatest answer of each tool, in bytes."""
    listed = door.rpc("tools/list", {})
    assert size(listed) <= LIST_BUDGET, size(listed)
    measured = {"tools/list": size(listed)}
    report = door.rest(f"/v1/crawls/{crawl_id}/report")
    for detail in ("brief", "full"):
        assert door.read_all("get_report", "templates", crawl_id=crawl_id, detail=detail) == (
            report["templates"] if detail == "full" else []
        )
        assert door.read_all("get_report", "issues", crawl_id=crawl_id, detail=detail) == report["issues"]
    assert door.read_all("get_templates", "templates", crawl_id=crawl_id) == report["templates"]
    for name, path, per_page in (("list_issues", "issues", 200), ("list_pages", "pages", 200)):
        total = door.rest(f"/v1/crawls/{crawl_id}/{path}?per_page=1")["meta"]["total"]
        for page in range(1, -(-total // per_page) + 1):
            rows = door.rest(f"/v1/crawls/{crawl_id}/{path}?per_page={per_page}&page={page}")["data"]
            assert door.read_all(name, "data", crawl_id=crawl_id, per_page=per_page, page=page) == rows
    prompt = door.call("get_fix_prompt", crawl_id=crawl_id)
    assert prompt["content"][1]["text"] == report["fix_prompt"]
    for name in ("get_report", "get_templates", "get_fix_prompt", "get_diff", "get_audit"):
        measured[name] = size(door.call(name, crawl_id=crawl_id))
    for name in ("list_issues", "list_pages"):
        measured[name] = size(door.call(name, crawl_id=crawl_id, per_page=200))
    measured["list_audits"] = size(door.call("list_audits", per_page=100))
    return measured


@pytest.fixture(scope="module")
def golden() -> Iterator[Door]:
    with golden_door() as door:
        yield door


@contextmanager
def golden_door() -> Iterator[Door]:
    """The golden audit's site registered, verified and audited twice, as the pinned REST answers."""
    site = SiteServer()
    retro_clock_site(site)
    try:
        # Unpaced by the name the site is reached at (tests/local_sites.py): paced, each audit waited for
        # its turns (7-8 s of the fixture's 9 s under load).
        settings = Settings(
            database_url="memory://", allow_networks=("127.0.0.0/8",), **unpaced(HOST), console_demo=False
        )
        app = bootstrap(settings, clock=FixedClock(), queue=MemoryTaskQueue(), resolver=RESOLVER)
        keys = seed(app)
        client = falcon.testing.TestClient(app.rest_api())
        auth = {"Authorization": f"Bearer {keys.owner}"}
        created = client.simulate_post(
            "/v1/sites", json={"url": site.url("/"), "max_pages": 100, "max_rps": 10}, headers=auth
        )
        app.application.verify_site_by_hand(created.json["id"], "budget tests")
        for _ in range(2):
            client.simulate_post(f"/v1/sites/{created.json['id']}/crawls", json={}, headers=auth)
            drain(app)
            app.clock.advance(hours=1)  # type: ignore[attr-defined]
        with serve(app.rest_api()) as root:
            yield Door(root, keys)
    finally:
        site.close()


def test_the_golden_audit_is_read_within_the_budget(golden: Door) -> None:
    for crawl_id in (1, 2):
        assert_within_budget(golden, crawl_id)
    site_tasks = golden.call("list_site_tasks", site_id=1, limit=100)
    assert site_tasks["structuredContent"]["tasks"]
    for name in ("get_site", "get_site_verification", "list_sites", "get_account", "list_team_tasks"):
        golden.call(name, **({"site_id": 1} if name.startswith("get_site") else {}))


SITE: Final = "https://retro-clock.example"
PAGES: Final = 500


@pytest.fixture(scope="module")
def generated() -> Iterator[Door]:
    with generated_door() as door:
        yield door


@contextmanager
def generated_door() -> Iterator[Door]:
    """A finished 500-page audit of a generated site (the finalisation benchmark's pages and their page
    checks), written straight to the memory crawl store and finalised as a worker does."""
    app = bootstrap(Settings(database_url="memory://"), clock=FixedClock(), queue=MemoryTaskQueue())
    keys = seed(app)
    owner = app.application.authenticate(keys.owner)
    with app.uow() as work:
        audit = work.audits.add(
            Audit(
                id=AuditId(0),
                team_id=owner.team_id,
                user_id=owner.user_id,
                payer_id=owner.user_id,
                url=SITE + "/",
                origin=SITE,
                created_at=app.clock.now(),
                max_pages=PAGES,
                credits_reserved=credits(PAGES),
            )
        )
        work.credits.reserve(
            owner.user_id, credits(PAGES), reference=audits.audit_reference(audit.id), at=app.clock.now()
        )
        work.commit()
    audits.begin_audit(audit.id, uow=app.uow(), clock=app.clock)
    facts = [make_page(i, PAGES, 10) for i in range(PAGES)]
    context, limits = PageContext(start_url=SITE + "/"), Thresholds()
    issues: list[Issue] = [i for p in facts for i in check_page(p, thresholds=limits, context=context)]
    app.crawl.write_pages(audit.id, facts)
    app.crawl.write_links(audit.id, [(p.url, link) for p in facts if p.html for link in p.html.links])
    app.crawl.write_issues(audit.id, issues)
    audits.record_progress(
        audit.id, pages_crawled=PAGES, pages_not_modified=0, uow=app.uow(), clock=app.clock
    )
    audits.stop_crawling(audit.id, partial=False, uow=app.uow(), clock=app.clock)
    finalize.finalize_audit(audit.id, uow=app.uow(), crawl=app.crawl, clock=app.clock)
    with serve(app.rest_api()) as root:
        yield Door(root, keys)


def test_a_500_page_audit_is_read_within_the_budget(generated: Door) -> None:
    assert generated.rest("/v1/crawls/1")["pages_crawled"] == PAGES
    measured = assert_within_budget(generated, 1)
    assert measured["get_report"] <= BUDGET_BYTES


def test_a_cursor_is_checked(golden: Door) -> None:
    cut = golden.call("list_site_tasks", site_id=1, limit=100)["structuredContent"]
    cursor = cut["more"]["cursor"]
    assert cut["more"]["lists"]["tasks"]["shown"] < cut["more"]["lists"]["tasks"]["total"] == 100
    for arguments, problem in (
        ({"site_id": 1, "limit": 100, "cursor": "not-a-cursor"}, BAD_CURSOR),
        ({"site_id": 1, "limit": 100, "cursor": cursor[:-4]}, BAD_CURSOR),
        ({"site_id": 1, "limit": 99, "cursor": cursor}, OTHER_CALL),
    ):
        result = golden.rpc("tools/call", {"name": "list_site_tasks", "arguments": arguments})
        assert result["isError"] and result["structuredContent"]["error"]["code"] == "validation_failed"
        assert result["structuredContent"]["error"]["fields"] == {"cursor": problem}, arguments
    elsewhere = golden.rpc("tools/call", {"name": "list_team_tasks", "arguments": {"cursor": cursor}})
    assert elsewhere["structuredContent"]["error"]["fields"] == {"cursor": BAD_CURSOR}
    rest = golden.rest("/v1/sites/1/tasks?limit=100")["tasks"]
    assert golden.read_all("list_site_tasks", "tasks", site_id=1, limit=100) == rest
