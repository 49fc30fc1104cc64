"""The OpenAPI document matches the routes, and every error code it names is in the catalogue."""

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, Final

import attrs
import falcon.inspect
from attrs import frozen

from siteaudit.adapters.rest import openapi
from siteaudit.adapters.rest.openapi import document
from siteaudit.bootstrap import USE_CASES
from siteaudit.domain.diff import Diff
from siteaudit.domain.error import ErrorCode
from tests.unit.rest.conftest import World
from tests.unit.rest.test_archived import a_done_audit

DOCUMENT: Final = document(USE_CASES)

METHODS = {"get", "post", "put", "patch", "delete"}


def routes(world: World) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for route in falcon.inspect.inspect_routes(world.app.rest_api()):
        path = route.path
        for part in ("crawl_id", "site_id", "recheck_id"):
            path = path.replace(f"{{{part}:int(min=1, max=4611686018427387904)}}", f"{{{part}}}")
        methods = {m.method.lower() for m in route.methods if m.internal is False}
        found[path] = methods
    return found


def test_every_route_is_documented_with_its_methods_and_nothing_else(world: World) -> None:
    documented = {path: {m for m in ops if m in METHODS} for path, ops in DOCUMENT["paths"].items()}
    served = routes(world)
    # The Prometheus scrape is the operator's, outside the API and its document (README "Metrics").
    assert served.pop("/metrics") == {"get"}
    # Billing's Stripe webhook and the local test checkout page are not part of /v1 (README "Billing").
    assert served.pop("/billing/stripe/webhook") == {"post"}
    assert served.pop("/app/test-checkout/{session_id}") == {"get", "post"}
    # The MCP tool server speaks JSON-RPC at /mcp, outside /v1 and its document (README "MCP").
    assert served.pop("/mcp") == {"post"}
    assert served == documented


def test_every_documented_error_code_is_in_the_catalogue() -> None:
    for path, operations in DOCUMENT["paths"].items():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            for status, response in operation["responses"].items():
                if int(status) >= 400:
                    for code in response["description"].split(", "):
                        assert ErrorCode(code), (path, method, code)


def test_the_document_is_served_without_a_key(world: World) -> None:
    result = world.client.simulate_get("/v1/openapi.json")
    assert result.status_code == 200
    assert result.json["openapi"] == "3.1.0"


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_every_answer_is_a_named_component_and_every_reference_resolves() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    refs = {node["$ref"] for node in _walk(DOCUMENT) if "$ref" in node}
    assert {ref.removeprefix("#/components/schemas/") for ref in refs} == set(schemas)
    for path, operations in DOCUMENT["paths"].items():
        for method, operation in operations.items():
            if method in METHODS:
                for status, response in operation["responses"].items():
                    if status == "204":
                        assert "content" not in response, (path, method)
                        continue
                    if "application/json" not in response["content"]:  # a file to download
                        assert path == "/v1/crawls/{crawl_id}/export" and status == "200", path
                        assert set(response["content"]) == {"text/csv", "application/jsonl"}
                        continue
                    schema = response["content"]["application/json"]["schema"]
                    assert set(schema) == {"$ref"}, (path, method, status)
    for name in ("Audit", "AuditRow", "AuditList", "Report", "Issue", "IssueList", "Page", "PageList"):
        assert name in schemas
    for name in ("TemplateGroup", "Diff", "FixPrompt", "Account", "Error", "ReportDiff", "ReportTemplates"):
        assert name in schemas


def test_nullable_objects_are_any_of_a_reference_and_null() -> None:
    for node in _walk(DOCUMENT):
        kind = node.get("type")
        assert not (isinstance(kind, list) and "object" in kind), node
    report = DOCUMENT["components"]["schemas"]["Report"]["properties"]
    assert report["diff"] == {"anyOf": [{"$ref": "#/components/schemas/Diff"}, {"type": "null"}]}
    assert report["coverage_warning"]["anyOf"][1] == {"type": "null"}


def test_a_field_added_to_a_value_is_in_its_schema() -> None:
    @frozen
    class Sample:
        name: str
        count: int | None
        when: datetime
        tags: tuple[str, ...]
        diff: Diff | None
        extra: Mapping[str, int] = attrs.field(factory=dict)

    schemas = openapi._Schemas()
    assert schemas.of(Sample) == {"$ref": "#/components/schemas/Sample"}
    sample = schemas.components["Sample"]
    assert sample["required"] == [f.name for f in attrs.fields(Sample)]
    assert sample["properties"]["extra"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert sample["properties"]["diff"]["anyOf"][0] == {"$ref": "#/components/schemas/Diff"}
    assert {"Diff", "NewIssue", "Severity"} <= set(schemas.components)


def _properties(name: str) -> set[str]:
    return set(DOCUMENT["components"]["schemas"][name]["properties"])


def test_served_answers_have_exactly_the_documented_fields(world: World) -> None:
    audit_id = a_done_audit(world)
    auth = world.auth(world.owner_key)

    def get(path: str) -> Any:
        answer = world.client.simulate_get(f"/v1{path}", headers=auth)
        assert answer.status_code == 200, answer.text
        return answer.json

    assert set(get("/account")) == _properties("Account")
    assert set(get("/crawls")["data"][0]) == _properties("AuditRow")
    # `scope` only on an audit that does not cover the whole site with no rules (docs/audits.md).
    assert set(get(f"/crawls/{audit_id}")) == _properties("Audit") - {"scope"}
    report = get(f"/crawls/{audit_id}/report")
    assert set(report) == _properties("Report")
    assert set(report["stats"]) <= _properties("Stats")
    assert set(report["templates"][0]) == _properties("TemplateGroup")
    assert set(get(f"/crawls/{audit_id}/issues")["data"][0]) == _properties("Issue")
    # `extract` only on the rows of an audit with extraction rules (docs/extraction.md), which this is not.
    assert set(get(f"/crawls/{audit_id}/pages")["data"][0]) == _properties("Page") - {"extract"}
    assert set(get(f"/crawls/{audit_id}/fix-prompt")) == _properties("FixPrompt")
    assert set(get(f"/crawls/{audit_id}/diff")) == _properties("ReportDiff")
