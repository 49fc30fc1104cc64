"""Every read answer of `/v1` on the golden audit, pinned: status, content type and JSON body, in the order
of keys served (docs/architecture.md, "Pinned behaviour").

The golden audit's scripted Retro Clock site (tests/integration/crawl, served on 127.0.0.1) is registered
by the owner's team, verified by hand, and audited twice through `POST /v1/sites/{id}/crawls` (the second
audit is diffed against the first), the queue run in-process as a worker would. Then each read endpoint
of the crawls, the site and its tasks is asked, with a few filters and pages. One scenario, one store:
the answers are taken once per module and each is its own test against its own pin file.
"""

import json
from collections.abc import Iterator
from typing import Any, Final

import falcon.testing
import pytest
from crawl_doubles import RESOLVER, SiteServer
from test_crawl_site import retro_clock_site

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.settings import Settings
from tests.integration.rest.live import drain, seed
from tests.local_sites import UNPACED_LOCAL
from tests.unit.pinned.pinning import assert_pinned, normalised

# Durations measured on the wall clock while the scripted site answers (its /slow page takes 1.5 s).
VOLATILE: Final = frozenset({"ttfb_ms", "crawl_s", "finalize_s", "site_checks_s", "templates_s"})
SITE: Final = 1
FIRST: Final = 1
SECOND: Final = 2
# name of the pin -> the request (method, path, JSON body or None); asked in this order.
Request = tuple[str, str, dict[str, Any] | None]
SETUP: Final[dict[str, Request]] = {
    "post_site": ("POST", "/v1/sites", {"url": "<site>", "max_pages": 100, "max_rps": 10}),
    "post_site_crawl_1": ("POST", f"/v1/sites/{SITE}/crawls", {}),
    "post_site_crawl_2": ("POST", f"/v1/sites/{SITE}/crawls", {"max_pages": 100}),
}
READS: Final[dict[str, str]] = {
    "account": "/v1/account",
    "ping": "/v1/ping",
    "crawls": "/v1/crawls",
    "crawls_of_site_page_2": f"/v1/crawls?site_id={SITE}&per_page=1&page=2",
    "sites": "/v1/sites",
    "site": f"/v1/sites/{SITE}",
    "site_verification": f"/v1/sites/{SITE}/verification",
    "site_indexnow": f"/v1/sites/{SITE}/indexnow",
    "site_index_triage": f"/v1/sites/{SITE}/index-triage",
    "tasks": "/v1/tasks",
    "site_tasks": f"/v1/sites/{SITE}/tasks",
    "site_tasks_limit_2": f"/v1/sites/{SITE}/tasks?limit=2",
    "fix_impact": "/v1/fix-impact",
    "site_fix_impact": f"/v1/sites/{SITE}/fix-impact?limit=3",
    **{
        f"crawl_{audit}_{name}": f"/v1/crawls/{audit}{path}"
        for audit in (FIRST, SECOND)
        for name, path in (
            ("status", ""),
            ("report", "/report"),
            ("issues", "/issues"),
            ("pages", "/pages"),
            ("templates", "/templates"),
            ("diff", "/diff"),
            ("fix_prompt", "/fix-prompt"),
        )
    },
    "crawl_2_issues_errors_page_2": f"/v1/crawls/{SECOND}/issues?severity=error&per_page=2&page=2",
    "crawl_2_issues_of_a_check": f"/v1/crawls/{SECOND}/issues?check_code=broken_internal_link",
    "crawl_2_issues_of_a_template": f"/v1/crawls/{SECOND}/issues?template=/slow",
    "crawl_2_pages_404": f"/v1/crawls/{SECOND}/pages?status_code=404",
    "crawl_2_pages_page_3": f"/v1/crawls/{SECOND}/pages?per_page=5&page=3",
}

# Asked last, about the first task the site's list names (its key read from that answer): the task, a
# recheck of it before and after a worker runs it, and the task after.
TASK_STEPS: Final = ("site_task", "post_recheck", "recheck_queued", "recheck_done", "site_task_rechecked")


def answer_of(result: falcon.testing.Result) -> dict[str, Any]:
    """Status, content type and body of one answer. The body must be the compact JSON text of what is
    pinned, so the pin holds its bytes too: the order of keys, the numbers as written, nothing between."""
    body = json.loads(result.text) if result.text else None
    if body is not None:
        assert json.dumps(body, ensure_ascii=False, separators=(",", ":")) == result.text
    return {"status": result.status_code, "content_type": result.headers.get("content-type"), "body": body}


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, dict[str, Any]]]:
    site = SiteServer()
    retro_clock_site(site)
    try:
        yield _scenario(site)
    finally:
        site.close()


def _scenario(site: SiteServer) -> dict[str, dict[str, Any]]:
    # The demo console seeds its figures by URL, and the scripted site's URLs hold a port that changes
    # from run to run: with it on, clicks and impressions (and the ranking of tasks by them) would too.
    settings = Settings(
        database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL, console_demo=False
    )
    app = bootstrap(settings, clock=FixedClock(), queue=MemoryTaskQueue(), resolver=RESOLVER)
    keys = seed(app)
    client = falcon.testing.TestClient(app.rest_api())
    auth = {"Authorization": f"Bearer {keys.owner}"}
    answers: dict[str, dict[str, Any]] = {}
    for name, (method, path, body) in SETUP.items():
        if body is not None and body.get("url") == "<site>":
            body = {**body, "url": site.url("/")}
        answers[name] = answer_of(client.simulate_request(method, path, json=body, headers=auth))
        if name == "post_site":
            assert answers[name]["status"] == 201, answers[name]
            app.application.verify_site_by_hand(answers[name]["body"]["id"], "pinned tests")
        drain(app)
        app.clock.advance(hours=1)  # type: ignore[attr-defined]
    for name, path in READS.items():
        answers[name] = answer_of(client.simulate_get(path, headers=auth))
    task = f"/v1/sites/{SITE}/tasks/{answers['site_tasks']['body']['tasks'][0]['id']}"
    answers["site_task"] = answer_of(client.simulate_get(task, headers=auth))
    answers["post_recheck"] = answer_of(
        client.simulate_post(
            f"/v1/sites/{SITE}/recheck", json={"task_key": task.rsplit("/", 1)[1]}, headers=auth
        )
    )
    recheck = f"/v1/rechecks/{answers['post_recheck']['body']['recheck_id']}"
    answers["recheck_queued"] = answer_of(client.simulate_get(recheck, headers=auth))
    drain(app)
    answers["recheck_done"] = answer_of(client.simulate_get(recheck, headers=auth))
    answers["site_task_rechecked"] = answer_of(client.simulate_get(task, headers=auth))
    # Made at random: the keys (and the prefix shown of each), the site's verification token, its
    # IndexNow key.
    secrets = (
        *(key for key in (keys.owner, keys.member, keys.rival)),
        *(key[:12] for key in (keys.owner, keys.member, keys.rival)),
        answers["site"]["body"]["verify_token"],
        answers["site_indexnow"]["body"]["key"],
    )
    return {name: normalised(answer, volatile=VOLATILE, secrets=secrets) for name, answer in answers.items()}


@pytest.mark.parametrize("name", [*SETUP, *READS, *TASK_STEPS])
def test_the_answer_is_the_pinned_one(served: dict[str, dict[str, Any]], name: str) -> None:
    assert_pinned(f"rest/{name}", served[name], sort_keys=False)
