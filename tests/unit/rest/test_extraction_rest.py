"""Custom extraction at the REST door (docs/extraction.md): rules in the body of POST /v1/crawls, a
rule that does not parse refused naming it, and the pages answer carrying
and filtering the values; an audit without rules answers as before."""

from typing import Any

import pytest

from siteaudit.adapters.mcp.derived import derived_tools
from siteaudit.adapters.mcp.spec import Call
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.extraction import Extracted
from siteaudit.domain.facts import HtmlFacts, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.services import audit as audits
from siteaudit.services import finalize
from siteaudit.services.audits.usecases import ListPages
from tests.unit.rest.conftest import World

SITE = "https://retro-clock.example"
RULES = [
    {"name": "price", "expression": ".price"},
    {"name": "sku", "expression": "//span[@itemprop='sku']/text()", "kind": "xpath", "all": True},
]


def _start(world: World, body: dict[str, Any]) -> Any:
    return world.client.simulate_post("/v1/crawls", json=body, headers=world.auth(world.owner_key))


def _page(path: str, price: tuple[str, ...], sku: tuple[str, ...] = ()) -> PageFacts:
    return PageFacts(
        url=f"{SITE}{path}",
        status_code=200,
        content_type="text/html",
        html=HtmlFacts(titles=(path,)),
        extracted=(Extracted("price", price), Extracted("sku", sku)),
    )


def _done_with_rules(world: World) -> int:
    started = _start(world, {"url": SITE + "/", "max_pages": 10, "extract": RULES})
    assert started.status_code == 202, started.json
    audit_id = AuditId(started.json["crawl_id"])
    app = world.app
    audits.begin_audit(audit_id, uow=app.uow(), clock=world.clock)
    pages = [_page("/", ()), _page("/mantel", ("€49.00",), ("RC-1",)), _page("/wall", ("€49.00",))]
    pages.append(PageFacts(url=f"{SITE}/gone", status_code=404))
    app.crawl.write_pages(audit_id, pages)
    audits.record_progress(
        audit_id, pages_crawled=len(pages), pages_not_modified=0, uow=app.uow(), clock=world.clock
    )
    audits.stop_crawling(audit_id, partial=False, uow=app.uow(), clock=world.clock)
    assert (
        finalize.finalize_audit(audit_id, uow=app.uow(), crawl=app.crawl, clock=world.clock).status
        is AuditStatus.DONE
    )
    return audit_id


def _pages(world: World, crawl_id: int, **query: str) -> Any:
    return world.client.simulate_get(
        f"/v1/crawls/{crawl_id}/pages", params=query, headers=world.auth(world.owner_key)
    )


def test_pages_carry_each_rules_values_and_filter_by_them(world: World) -> None:
    crawl_id = _done_with_rules(world)
    listed = _pages(world, crawl_id)
    assert listed.status_code == 200
    by_path = {row["url"].removeprefix(SITE): row.get("extract") for row in listed.json["data"]}
    assert by_path == {
        "/": {"price": [], "sku": []},
        "/mantel": {"price": ["€49.00"], "sku": ["RC-1"]},
        "/wall": {"price": ["€49.00"], "sku": []},
        "/gone": {"price": [], "sku": []},
    }
    assert list(listed.json["data"][1])[-1] == "extract"
    cheap = _pages(world, crawl_id, extract_rule="price", extract_value="€49.00")
    assert [r["url"] for r in cheap.json["data"]] == [f"{SITE}/mantel", f"{SITE}/wall"]
    assert cheap.json["meta"]["total"] == 2
    with_sku = _pages(world, crawl_id, extract_rule="sku", status_code="200")
    assert [r["url"] for r in with_sku.json["data"]] == [f"{SITE}/mantel"]


def test_bad_filters_answer_422_naming_them(world: World) -> None:
    crawl_id = _done_with_rules(world)
    for query, field in (
        ({"extract_rule": "cost", "extract_value": "1"}, "extract_rule"),
        ({"extract_rule": "cost"}, "extract_rule"),
        ({"extract_value": "1"}, "extract_value"),  # whose value: no rule named
        ({"extract_rule": "price", "extract_value": "x" * 501}, "extract_value"),
        ({"extract_rule": "p" * 41}, "extract_rule"),
        ({"extract.price": "1"}, "extract.price"),  # the filter has two fixed names, no dynamic one
        ({"extracts": "1"}, "extracts"),
    ):
        refused = _pages(world, crawl_id, **query)
        assert refused.status_code == 422, query
        assert refused.json["error"]["code"] == "validation_failed"
        assert field in refused.json["error"]["fields"], (query, refused.json)


def test_a_rule_that_does_not_parse_answers_422_naming_it(world: World) -> None:
    rules = [
        {"name": "price", "expression": ".price"},
        {"name": "sku", "expression": "//span[", "kind": "xpath"},
    ]
    refused = _start(world, {"url": SITE + "/", "extract": rules})
    assert refused.status_code == 422
    fields = refused.json["error"]["fields"]
    assert list(fields) == ["extract[1].expression"]
    assert fields["extract[1].expression"].startswith("not a valid XPath 1.0 expression")


def test_badly_typed_or_named_rules_answer_422_naming_each_field(world: World) -> None:
    rules = [
        {"name": "Price", "expression": ".price"},
        {"name": "sku", "expression": 5},
        {"name": "img", "expression": "img", "kind": "regex", "all": "yes", "extra": 1},
        "p",
    ]
    refused = _start(world, {"url": SITE + "/", "extract": rules})
    assert refused.status_code == 422
    assert set(refused.json["error"]["fields"]) == {
        "extract[0].name",
        "extract[1].expression",
        "extract[2].kind",
        "extract[2].all",
        "extract[2].extra",
        "extract[3]",
    }
    too_many = _start(
        world, {"url": SITE + "/", "extract": [{"name": f"r{i}", "expression": "p"} for i in range(21)]}
    )
    assert (too_many.status_code, too_many.json["error"]["fields"]) == (422, {"extract": "at most 20 rules"})
    assert _start(world, {"url": SITE + "/", "extract": "p"}).json["error"]["fields"] == {
        "extract": "must be a list of rules"
    }


def test_an_audit_without_rules_has_no_extract_field(world: World) -> None:
    started = _start(world, {"url": SITE + "/", "max_pages": 5})
    assert started.status_code == 202
    crawl_id = started.json["crawl_id"]
    world.app.crawl.write_pages(AuditId(crawl_id), [PageFacts(url=f"{SITE}/", status_code=200)])
    rows = _pages(world, crawl_id).json["data"]
    assert rows and all("extract" not in row for row in rows)


def test_the_list_pages_tool_shows_and_filters_the_values(world: World) -> None:
    crawl_id = _done_with_rules(world)
    (tool,) = derived_tools([ListPages])
    assert tool.untrusted  # the values are the site's text
    caller = world.app.application.authenticate(world.owner_key)

    def call(**args: Any) -> Any:
        given = {"crawl_id": crawl_id, "status_code": None, "extract_rule": None, "extract_value": None}
        given |= {"page": 1, "per_page": 50, **args}
        return tool.run(Call(world.app.application, caller, given, world.clock.now))

    cheap = call(extract_rule="price", extract_value="€49.00")
    assert [(r["url"], r["extract"]["price"]) for r in cheap["data"]] == [
        (f"{SITE}/mantel", ["€49.00"]),
        (f"{SITE}/wall", ["€49.00"]),
    ]
    assert [r["url"] for r in call(extract_rule="sku")["data"]] == [f"{SITE}/mantel"]
    with pytest.raises(ValidationFailed) as refused:
        call(extract_value="€49.00")
    assert list(refused.value.fields) == ["extract_value"]
