"""`GET /v1/crawls/{id}/export`: every page, issue or link of an audit as CSV or JSON Lines, the CSV made
safe for spreadsheets, refusals in the error envelope (docs/app.md, "Reports")."""

import csv
import io
import json
from typing import Any

import pytest

from siteaudit.domain.facts import HtmlFacts, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.ports.application import ExportKind
from siteaudit.services import archive
from tests.unit.rest.conftest import World
from tests.unit.rest.test_archived import SITE, a_done_audit


def _export(world: World, crawl_id: int, key: str | None = None, **query: Any) -> Any:
    return world.client.simulate_get(
        f"/v1/crawls/{crawl_id}/export", params=query, headers=world.auth(key or world.owner_key)
    )


def _csv(body: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(body)))


def test_pages_as_csv_one_row_a_page_with_a_header_and_a_file_name(world: World) -> None:
    crawl_id = a_done_audit(world)
    answer = _export(world, crawl_id, kind="pages", format="csv")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/csv; charset=utf-8"
    assert answer.headers["content-disposition"] == f'attachment; filename="crawl-{crawl_id}-pages.csv"'
    rows = _csv(answer.text)
    assert rows[0][:3] == ["url", "status_code", "title"]
    listed = world.client.simulate_get(f"/v1/crawls/{crawl_id}/pages", headers=world.auth(world.owner_key))
    assert [r[0] for r in rows[1:]] == [p["url"] for p in listed.json["data"]]
    assert answer.text.endswith("\r\n") and '"' + SITE + '/products/1"' in answer.text


def test_the_format_is_csv_unless_jsonl_is_asked_for(world: World) -> None:
    crawl_id = a_done_audit(world)
    assert _export(world, crawl_id, kind="links").headers["content-type"] == "text/csv; charset=utf-8"


def test_issues_as_json_lines_keep_their_details(world: World) -> None:
    crawl_id = a_done_audit(world)
    answer = _export(world, crawl_id, kind="issues", format="jsonl")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/jsonl; charset=utf-8"
    lines = [json.loads(line) for line in answer.text.splitlines()]
    listed = world.client.simulate_get(
        f"/v1/crawls/{crawl_id}/issues", params={"per_page": "200"}, headers=world.auth(world.owner_key)
    )
    assert len(lines) == listed.json["meta"]["total"] > 0
    assert sorted(lines, key=json.dumps) == sorted(listed.json["data"], key=json.dumps)


def test_links_name_both_ends(world: World) -> None:
    crawl_id = a_done_audit(world)
    rows = _csv(_export(world, crawl_id, kind="links", format="csv").text)
    assert rows[0] == ["source", "target", "kind", "nofollow", "internal"]
    assert [SITE + "/", SITE + "/products/1", "a", "False", "True"] in rows
    jsonl = _export(world, crawl_id, kind="links", format="jsonl").text.splitlines()
    assert len(jsonl) == len(rows) - 1 == len(list(world.app.crawl.stream_links(AuditId(crawl_id))))


def test_a_cell_a_spreadsheet_would_run_is_led_by_a_quote(world: World) -> None:
    crawl_id = a_done_audit(world)
    hostile = PageFacts(
        f"{SITE}/=cmd",
        depth=1,
        status_code=200,
        content_type="text/html",
        html=HtmlFacts(titles=('=HYPERLINK("https://evil.example","click")',), meta_descriptions=("-2+3",)),
    )
    world.app.crawl.write_pages(AuditId(crawl_id), [hostile])
    rows = _csv(_export(world, crawl_id, kind="pages").text)
    row = next(r for r in rows if r[0] == hostile.url)
    assert row[2] == '\'=HYPERLINK("https://evil.example","click")'
    assert row[3] == "'-2+3"
    assert row[1] == "200"  # a number stays a number
    # JSON Lines keep the exact text: no spreadsheet reads them.
    lines = _export(world, crawl_id, kind="pages", format="jsonl").text.splitlines()
    assert json.loads(next(x for x in lines if "cmd" in x))["title"] == hostile.html.titles[0]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("query", "field", "why"),
    [
        ({"kind": "people"}, "kind", "must be one of: pages, issues, links"),
        ({}, "kind", "is required: one of pages, issues, links"),
        ({"kind": "pages", "format": "xlsx"}, "format", "must be one of: csv, jsonl"),
        ({"kind": "pages", "sheet": "1"}, "sheet", "unknown parameter"),
        ({"kind": ["pages", "links"]}, "kind", "must be one of: pages, issues, links"),
        ({"kind": "pages", "format": ["csv", "csv"]}, "format", "must be one of: csv, jsonl"),
    ],
)
def test_an_unknown_kind_or_format_answers_422_naming_the_field(
    world: World, query: dict[str, Any], field: str, why: str
) -> None:
    crawl_id = a_done_audit(world)
    answer = _export(world, crawl_id, **query)
    assert answer.status_code == 422
    assert answer.json["error"]["code"] == "validation_failed"
    assert answer.json["error"]["fields"][field] == why


@pytest.mark.parametrize("kind", [k.value for k in ExportKind])
def test_another_teams_crawl_answers_404_in_the_envelope(world: World, kind: str) -> None:
    crawl_id = a_done_audit(world)
    answer = _export(world, crawl_id, world.rival_key, kind=kind)
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/json"
    assert answer.json["error"]["code"] == "not_found"
    assert _export(world, 999_999, kind=kind).status_code == 404


def test_a_member_of_the_team_may_export_and_an_archived_crawl_answers_410(world: World) -> None:
    crawl_id = a_done_audit(world)
    assert _export(world, crawl_id, world.member_key, kind="pages").status_code == 200
    archive.archive_audits(
        uow=world.app.uow(), crawl=world.app.crawl, clock=world.clock, older_than_days=0, keep_last=None
    )
    answer = _export(world, crawl_id, kind="pages")
    assert (answer.status_code, answer.json["error"]["code"]) == (410, "crawl_archived")
