"""A URL robots.txt excludes through REST (issue 12): its page row says `excluded_by: robots.txt`, the
`status_code` filter still selects by status, and the report counts it in `stats`, in no total."""

from typing import Any

from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.services import audit as audits
from siteaudit.services import finalize
from tests.unit.rest.conftest import World
from tests.unit.services.test_archive import a_site

SITE = "https://retro-clock.example"
PRIVATE = f"{SITE}/private/plans"


def an_audit_with_an_excluded_url(world: World) -> int:
    started = world.client.simulate_post(
        "/v1/crawls", json={"url": SITE + "/", "max_pages": 50}, headers=world.auth(world.owner_key)
    )
    assert started.status_code == 202, started.json
    audit_id = AuditId(started.json["crawl_id"])
    app = world.app
    audits.begin_audit(audit_id, uow=app.uow(), clock=world.clock)
    pages = [*a_site(), PageFacts(PRIVATE, depth=1, disallowed=True, in_sitemap=True)]
    app.crawl.write_pages(audit_id, pages)
    app.crawl.write_links(audit_id, [(p.url, link) for p in pages if p.html for link in p.html.links])
    audits.record_progress(
        audit_id, pages_crawled=len(pages) - 1, pages_not_modified=0, uow=app.uow(), clock=world.clock
    )
    audits.stop_crawling(audit_id, partial=False, uow=app.uow(), clock=world.clock)
    done = finalize.finalize_audit(audit_id, uow=app.uow(), crawl=app.crawl, clock=world.clock)
    assert done.status is AuditStatus.DONE
    return audit_id


def get(world: World, path: str) -> Any:
    answer = world.client.simulate_get(f"/v1{path}", headers=world.auth(world.owner_key))
    assert answer.status_code == 200, answer.text
    return answer.json


def test_the_page_row_of_an_excluded_url_says_so(world: World) -> None:
    audit_id = an_audit_with_an_excluded_url(world)
    rows = get(world, f"/crawls/{audit_id}/pages")["data"]
    marked = {row["url"]: (row["excluded_by"], row["status_code"], row["fetch_error"]) for row in rows}
    assert marked[PRIVATE] == ("robots.txt", None, None)
    assert {value for url, value in marked.items() if url != PRIVATE} == {
        (None, 200, None),
        (None, 404, None),
    }
    filtered = get(world, f"/crawls/{audit_id}/pages?status_code=200")
    assert filtered["meta"]["total"] == 4
    assert {row["status_code"] for row in filtered["data"]} == {200}


def test_the_report_counts_the_excluded_url_in_stats_only(world: World) -> None:
    audit_id = an_audit_with_an_excluded_url(world)
    report = get(world, f"/crawls/{audit_id}/report")
    assert report["stats"]["excluded_by_robots"] == 1
    assert report["totals"] == {
        "pages": 5,
        "ok": 4,
        "redirects": 0,
        "broken": 1,
        "fetch_errors": 0,
        "blocked": 0,
    }
