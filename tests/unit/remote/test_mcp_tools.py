"""The tool table against the application interface: every use case has a tool or a reason on the one
exclusion list, tools call only what the HTTP client offers, and arguments are checked as REST checks them."""

import inspect

import pytest

from siteaudit.adapters.client import HttpApplication
from siteaudit.adapters.mcp.derived import derived_tools
from siteaudit.adapters.mcp.listing import INSTRUCTIONS, VOCABULARY, shared, tool_listing
from siteaudit.adapters.mcp.params import Param, input_schema, read_arguments
from siteaudit.adapters.mcp.sizing import params_of
from siteaudit.adapters.mcp.tools import NOT_TOOLS, tool_specs, tools_using
from siteaudit.bootstrap import USE_CASES as DECLARED
from siteaudit.domain.error import ValidationFailed
from siteaudit.ports.application import Application, CallerApi
from siteaudit.services.billing import usecases as billing_links
from siteaudit.services.console import usecases as console_reads

TOOLS = tool_specs(DECLARED)
TOOLS_BY_NAME = {t.name: t for t in TOOLS}
USE_CASES = sorted(
    name for name, _ in inspect.getmembers(Application, inspect.isfunction) if not name.startswith("_")
)


def test_every_use_case_has_a_tool_or_a_reason_on_the_exclusion_list() -> None:
    used, excluded = set(tools_using(TOOLS)), set(NOT_TOOLS)
    forgotten = [name for name in USE_CASES if name not in used | excluded]
    assert forgotten == [], "give each a tool in adapters/mcp/tools.py, or a reason in NOT_TOOLS"
    assert used & excluded == set(), "a use case with a tool is not excluded too"
    assert (used | excluded) - set(USE_CASES) == set(), "no tool or exclusion for a use case that is gone"


def test_tools_call_only_the_callers_api_which_the_http_client_implements() -> None:
    callers_api = {n for n, _ in inspect.getmembers(CallerApi, inspect.isfunction) if not n.startswith("_")}
    for name in tools_using(TOOLS):
        assert name in callers_api, name
        assert name in vars(HttpApplication), name


def test_every_tool_and_argument_is_described_for_a_model() -> None:
    names = [t.name for t in TOOLS]
    assert len(names) == len(set(names))
    for tool in TOOLS:
        assert len(tool.description) > 40 and tool.title, tool.name
        assert not (tool.read_only and tool.destructive), tool.name
        schema = input_schema(tool.params)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for prop in schema["properties"].values():
            assert prop["description"], tool.name
    # A tool costs nothing unless its description says so (the server's instructions say it once).
    assert "costs nothing unless its description says COSTS CREDITS" in INSTRUCTIONS
    costly = {t.name for t in TOOLS if "COSTS CREDITS" in t.description}
    assert costly == {"start_audit", "start_site_audit", "update_site", "request_recheck"}
    assert {t.name for t in TOOLS if not t.read_only} >= costly
    quoting_sites = {"get_console_summary", "list_not_indexed", "get_console_url", "get_index_triage"}
    assert {t.name for t in TOOLS if t.untrusted} >= quoting_sites | {"get_report", "get_fix_prompt"}
    billing = {t.name for t in derived_tools(billing_links.USE_CASES)}
    assert all("Team owner only" in TOOLS_BY_NAME[name].description for name in billing)
    assert len(billing) == 3
    console = {t.name for t in derived_tools(console_reads.USE_CASES)}
    assert all("demo" in TOOLS_BY_NAME[name].description for name in console) and len(console) == 6


LIMIT = Param("per_page", "integer", "Rows per page.", low=1, high=200, default=50)
URL = Param("url", "string", "A URL.", True, min_length=1, max_length=20)
CHOICE = Param("severity", "string", "A severity.", choices=("error", "warning"))
FLAG = Param("alert_email", "boolean", "Mail.")
RATE = Param("max_rps", "number", "Speed.", low=0.5, high=10)


@pytest.mark.parametrize(
    ("arguments", "fields"),
    [
        ({}, {"url": "required"}),
        ({"url": ""}, {"url": "must be at least 1 characters"}),
        ({"url": "x" * 21}, {"url": "must be at most 20 characters"}),
        ({"url": 5}, {"url": "must be a string"}),
        ({"url": "u", "per_page": 0}, {"per_page": "must be at least 1"}),
        ({"url": "u", "per_page": 201}, {"per_page": "must be at most 200"}),
        ({"url": "u", "per_page": True}, {"per_page": "must be a integer"}),
        ({"url": "u", "per_page": 2.5}, {"per_page": "must be a integer"}),
        ({"url": "u", "severity": "fatal"}, {"severity": "must be one of error, warning"}),
        ({"url": "u", "alert_email": "yes"}, {"alert_email": "must be a boolean"}),
        ({"url": "u", "max_rps": 0.1}, {"max_rps": "must be at least 0.5"}),
        ({"url": "u", "extra": 1}, {"extra": "unknown argument"}),
    ],
)
def test_bad_arguments_name_each_field(arguments: dict[str, object], fields: dict[str, str]) -> None:
    with pytest.raises(ValidationFailed) as raised:
        read_arguments((URL, LIMIT, CHOICE, FLAG, RATE), arguments)
    assert raised.value.fields == fields


def test_the_not_indexed_tool_takes_any_template_as_rest_does() -> None:
    """An empty template is the group of inspected URLs outside the latest audit: REST has always taken
    it, and the tool, declared with REST, takes it too; an empty reason is refused by both."""
    params = TOOLS_BY_NAME["list_not_indexed"].params
    assert read_arguments(params, {"site_id": 1, "reason": "Excluded", "template": ""})["template"] == ""
    with pytest.raises(ValidationFailed) as raised:
        read_arguments(params, {"site_id": 1, "reason": ""})
    assert set(raised.value.fields) == {"reason"}


def test_good_arguments_come_with_defaults_and_numbers_as_floats() -> None:
    values = read_arguments(
        (URL, LIMIT, CHOICE, FLAG, RATE), {"url": "u", "max_rps": 3, "alert_email": False}
    )
    assert values == {"url": "u", "per_page": 50, "severity": None, "alert_email": False, "max_rps": 3.0}
    assert isinstance(values["max_rps"], float)


URLS = Param("urls", "urls", "URLs.", True, low=1, high=3, min_length=1, max_length=10)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("https://a", "must be an array of URLs"),
        ([], "must be an array of 1 to 3 URLs"),
        (["a"] * 4, "must be an array of 1 to 3 URLs"),
        (["a", ""], "item 1 must be a string of 1 to 10 characters"),
        (["a", 7], "item 1 must be a string of 1 to 10 characters"),
        (["x" * 11], "item 0 must be a string of 1 to 10 characters"),
    ],
)
def test_a_list_of_urls_is_checked_by_count_and_by_item(value: object, problem: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        read_arguments((URLS,), {"urls": value})
    assert raised.value.fields == {"urls": problem}


def test_a_list_of_urls_is_an_array_schema_and_comes_back_as_a_list() -> None:
    assert URLS.schema() == {
        "type": "array",
        "description": "URLs.",
        "items": {"type": "string", "minLength": 1, "maxLength": 10},
        "minItems": 1,
        "maxItems": 3,
    }
    assert read_arguments((URLS,), {"urls": ("a", "b")}) == {"urls": ["a", "b"]}


def test_the_listed_schemas_only_leave_out_what_the_instructions_say_once() -> None:
    """Each listed argument keeps its type, its choices and every bound it lists as checked (it may leave
    one out, never change one); it has a description unless it is one of the shared arguments, which the
    server's instructions describe once (docs/agents.md, "The tool list")."""
    used: set[str] = set()
    for tool in TOOLS:
        listed = tool_listing(tool).input_schema
        checked = input_schema(params_of(tool))
        assert listed.get("required", []) == checked["required"], tool.name
        assert set(listed["properties"]) == set(checked["properties"]), tool.name
        for param in params_of(tool):
            shown, full = listed["properties"][param.name], checked["properties"][param.name]
            assert shown["type"] == full["type"] and shown.get("enum") == full.get("enum"), param.name
            assert all(full[key] == value for key, value in shown.items() if key != "items"), param.name
            assert all(full["items"][k] == v for k, v in shown.get("items", {}).items()), param.name
            if shared(param):
                used.add(param.name)
                assert "description" not in shown, (tool.name, param.name)
            else:
                assert shown["description"], (tool.name, param.name)
    assert used == set(VOCABULARY)
    for name in VOCABULARY:
        assert f"- {name}: " in INSTRUCTIONS
    # The optional ids keep their own description: what the id does there is the tool's.
    start = {p.name: p for p in TOOLS_BY_NAME["start_audit"].params}
    assert not shared(start["site_id"]) and shared(TOOLS_BY_NAME["get_site"].params[0])
