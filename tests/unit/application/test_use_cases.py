"""Declared use cases: the declaration machinery (`ports/usecases.py`), the registry and its dependency
injection (`services/registry.py`), every door derived from the declarations, and docs/architecture.md's
walkthrough of adding one, kept true."""

import enum
import inspect
import re
import types
from pathlib import Path
from typing import Any, Final

import attrs
import falcon.inspect
import falcon.testing
import jsonschema
import pytest
from attrs import field, frozen

from siteaudit.adapters.mcp.derived import declared_limits, derived_tools, param, use_case_of
from siteaudit.adapters.mcp.spec import Call
from siteaudit.adapters.mcp.tools import tool_specs
from siteaudit.adapters.rest.derived import Declaring, read_use_case, route, routes
from siteaudit.adapters.rest.openapi import declared_paths, document
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditRequest
from siteaudit.domain.error import ValidationFailed
from siteaudit.ports.ratelimit import Limit
from siteaudit.ports.traffic import NO_TRAFFIC, TrafficSource
from siteaudit.ports.usecases import (
    Alias,
    Field,
    Http,
    NotOffered,
    Tool,
    UseCase,
    body,
    copy_named,
    exactly_one_problem,
    fields_of,
    path,
    query,
    result_of,
    unbounded,
)
from siteaudit.services.audits.usecases import StartAudit
from siteaudit.services.inject import bind
from siteaudit.services.registry import HANDLER_MODULES, HANDLERS, USE_CASES, Handlers, handlers_in
from siteaudit.services.sites.usecases import CrawlSite
from siteaudit.services.tasks.answers import SiteTaskList
from siteaudit.services.tasks.usecases import GetTask, ListSiteTasks, RequestRecheck
from siteaudit.settings import Settings

ROOT: Final = Path(__file__).resolve().parents[3]
CALLER: Final = Caller(user_id=1, team_id=1, key_prefix="sk_test")


@frozen
class Plain(UseCase[int]):
    """A use case of these tests only: no handler, offered by no door."""

    number: int = field(metadata=path("A number.", low=1, high=9))
    word: str | None = field(default=None, metadata=body("A word.", max_length=5))
    words: tuple[str, ...] | None = field(default=None, metadata=body("Words.", max_items=3))
    exactly_one_of = ("word", "words")

    http = NotOffered("rest", "a test's")
    tool = NotOffered("mcp", "a test's")


# --- the declaration machinery -------------------------------------------------------------------------


def test_a_use_cases_result_is_its_generic_parameter() -> None:
    assert result_of(Plain) is int
    assert result_of(ListSiteTasks) is SiteTaskList


def test_a_use_cases_inputs_carry_where_a_door_finds_them_their_kind_and_default() -> None:
    (number, word, words) = fields_of(Plain)
    assert (number.name, number.kind, number.required, number.spec.where) == (
        "number",
        "integer",
        True,
        "path",
    )
    assert (number.spec.low, number.spec.high) == (1, 9)
    assert (word.kind, word.required, word.default, word.spec.max_length) == ("string", False, None, 5)
    assert (words.kind, words.spec.max_items) == ("urls", 3)


def test_an_input_that_says_nowhere_where_a_door_finds_it_is_refused() -> None:
    @frozen
    class Nowhere(UseCase[int]):
        number: int

    with pytest.raises(TypeError, match=r"Nowhere\.number"):
        fields_of(Nowhere)


@frozen
class Request:
    """A service's request of these tests only."""

    number: int
    word: str | None = None
    kept: bool = False


def test_a_request_takes_the_inputs_it_names_alike_and_what_is_given_instead() -> None:
    asked = Plain(number=3, word="a", words=("b",))
    assert copy_named(Request, asked) == Request(number=3, word="a")
    assert copy_named(Request, asked, word="c", kept=True) == Request(number=3, word="c", kept=True)


def test_every_input_of_an_audits_start_reaches_its_request() -> None:
    # The handlers pass their declaration on by name (`copy_named`): an input the request does not name
    # would be dropped without a word.
    for declared in (StartAudit, CrawlSite):
        assert {found.name for found in fields_of(declared)} <= set(attrs.fields_dict(AuditRequest))


@pytest.mark.parametrize(
    ("given", "bad"),
    [
        ({"word": "a", "words": ("b",)}, True),
        ({"word": None, "words": None}, True),
        ({"word": "a", "words": None}, False),
        ({"words": ("b",)}, False),
    ],
)
def test_exactly_one_of_names_both_fields_with_one_message(given: dict[str, Any], bad: bool) -> None:
    problem = exactly_one_problem(Plain, given)
    assert problem == (
        {"word": "give exactly one of word and words", "words": "give exactly one of word and words"}
        if bad
        else {}
    )


def test_a_door_refuses_an_input_read_without_its_bounds_when_the_app_is_built() -> None:
    @frozen
    class Unbounded(UseCase[int]):
        limit: int = field(default=1, metadata=query("How many, unbounded."))
        word: str | None = field(default=None, metadata=body("A word of any length."))

        http = Http("POST", "/v1/unbounded", "unbounded", "A test's")
        tool = NotOffered("mcp", "a test's")

    limit, word = fields_of(Unbounded)
    assert unbounded(limit) == "a number needs low and high"
    assert unbounded(word) == "a string needs max_length"
    assert [unbounded(f) for f in fields_of(Plain)] == [None, None, "a string needs max_length"]
    app = bootstrap(Settings(database_url="memory://"))
    with pytest.raises(TypeError, match=r"Unbounded\.limit: a number needs low and high"):
        Declaring(app.application, app.clock, [Unbounded])

    @frozen
    class UnboundedPath(UseCase[int]):
        site_id: int = field(metadata=path("Which site, unbounded."))
        key: str = field(metadata=path("A key the handler checks."))

        http = Http("GET", "/v1/unbounded/{site_id}/{key}", "unboundedPath", "A test's")
        tool = NotOffered("mcp", "a test's")

    with pytest.raises(TypeError, match=r"UnboundedPath\.site_id: a number needs low and high"):
        Declaring(app.application, app.clock, [UnboundedPath])


# --- the registry --------------------------------------------------------------------------------------


def test_every_declared_use_case_has_one_handler_and_every_handler_handles_a_declared_one() -> None:
    assert len(USE_CASES) == len(set(USE_CASES))
    assert set(HANDLERS) == set(USE_CASES)
    for declared, handler in HANDLERS.items():
        assert inspect.getmodule(handler) in HANDLER_MODULES, declared.__name__
        assert inspect.signature(handler).return_annotation is result_of(declared), declared.__name__


def test_a_use_case_with_two_handlers_is_refused() -> None:
    module = types.ModuleType("two_handlers")

    def first(asked: Plain, caller: Caller) -> int:
        return 1

    def second(asked: Plain, caller: Caller) -> int:
        return 2

    for function in (first, second):
        function.__module__ = module.__name__
        setattr(module, function.__name__, function)
    with pytest.raises(TypeError, match="Plain has two handlers"):
        handlers_in([module])


def test_a_handler_is_bound_once_and_gets_fresh_dependencies_per_call() -> None:
    made: list[int] = []

    def handler(asked: Plain, caller: Caller, *, uow: int, traffic: TrafficSource = NO_TRAFFIC) -> Any:
        return uow, traffic

    def fresh() -> int:
        made.append(len(made) + 1)
        return made[-1]

    bound = bind(handler, {"uow": fresh, "unused": lambda: 0})
    assert set(bound.providers) == {"uow"}  # a provider the handler does not name is not called
    assert bound(Plain(1, word="a"), CALLER) == (1, NO_TRAFFIC)  # a default without a provider stays
    assert bound(Plain(1, word="a"), CALLER) == (2, NO_TRAFFIC)


def test_a_handler_needing_what_no_provider_gives_is_refused_when_bound() -> None:
    def handler(asked: Plain, caller: Caller, *, uow: int, webhooks: int) -> int:
        return uow + webhooks

    with pytest.raises(TypeError, match="webhooks"):
        bind(handler, {"uow": lambda: 1})


def test_an_undeclared_use_case_is_refused() -> None:
    with pytest.raises(LookupError, match="Plain"):
        Handlers({}).handle(Plain(1, word="a"), CALLER)


# --- every door derived ------------------------------------------------------------------------------------


def _described(found: Field) -> bool:
    return len(found.spec.description) > 10


def test_every_declared_use_case_is_served_by_each_door_its_bindings_name() -> None:
    app = bootstrap(Settings(database_url="memory://"))
    routed = {
        (method.method, route.path)
        for route in falcon.inspect.inspect_routes(app.rest_api())
        for method in route.methods
        if method.internal is False
    }
    served = document(app.application.use_cases())["paths"]
    tools = {t.name: t for t in tool_specs(app.application.use_cases())}
    assert list(app.application.use_cases()) == list(USE_CASES)
    for declared in USE_CASES:
        inputs = fields_of(declared)
        assert all(_described(f) for f in inputs), declared.__name__
        if isinstance(declared.http, Http):
            http = declared.http
            assert (http.method, route(declared)) in routed, declared.__name__
            for alias in http.aliases:
                assert (http.method, route(declared, alias.path)) in routed, declared.__name__
                assert served[alias.path][http.method.lower()]["operationId"] == alias.operation_id
            assert set(re.findall(r"{(\w+)}", http.path)) == {
                f.name for f in inputs if f.spec.where == "path"
            }
            assert served[http.path][http.method.lower()]["operationId"] == http.operation_id
        else:
            assert isinstance(declared.http, NotOffered) and declared.http.reason
        if isinstance(declared.tool, Tool):
            tool = tools[declared.tool.name]
            # Every input but those only /v1 reads (a second name kept for its clients).
            offered = [f.name for f in inputs if not f.spec.rest_only]
            assert [p.name for p in tool.params] == offered, declared.__name__
            assert tool.uses == ("handle",) and tool.summary is declared.tool.summary
            assert all(wait.name in tools for wait in declared.tool.waits)
        else:
            assert isinstance(declared.tool, NotOffered) and declared.tool.reason


def test_exactly_one_of_is_one_oneof_in_the_document_and_one_check_at_each_door() -> None:
    app = bootstrap(Settings(database_url="memory://"))
    operation = document(USE_CASES)["paths"]["/v1/sites/{site_id}/recheck"]["post"]
    alternatives = operation["requestBody"]["content"]["application/json"]["schema"]["oneOf"]
    assert [a["required"] for a in alternatives] == [["task_key"], ["urls"]]
    tool = {t.name: t for t in tool_specs(USE_CASES)}["request_recheck"]
    call = Call(app.application, CALLER, {"site_id": 1, "task_key": None, "urls": None}, now=app.clock.now)
    with pytest.raises(ValidationFailed) as refused:
        tool.run(call)
    assert refused.value.fields == exactly_one_problem(RequestRecheck, {})


# --- docs/architecture.md's walkthrough ------------------------------------------------------------------


def walkthrough() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("## Adding a use case, end to end")
    return text[start : text.index("\n## ", start + 1)]


def test_the_walkthroughs_example_is_declared_with_every_binding_in_the_files_it_names() -> None:
    text = walkthrough()
    (name,) = re.findall(r"class (\w+)\(UseCase\[", text)
    declared = {d.__name__: d for d in USE_CASES}[name]
    steps = re.findall(r"^\d+\. \*\*[^*]+\*\*, `(siteaudit/[\w/]+\.py)`", text, re.M)
    assert len(steps) == len(set(steps)) <= 4, steps  # the goal: at most 4 files (plus tests)
    assert all((ROOT / step).is_file() for step in steps)

    def file_of(thing: Any) -> str:
        return str(Path(inspect.getsourcefile(thing) or "").relative_to(ROOT))

    assert isinstance(declared.http, Http) and isinstance(declared.tool, Tool)
    assert file_of(declared) == steps[0]
    assert file_of(result_of(declared)) == steps[1]
    assert file_of(HANDLERS[declared]) == steps[2]
    assert file_of(declared.tool.summary) == steps[3]
    # What the walkthrough quotes of it is what is declared.
    http = declared.http
    assert f'http = Http("{http.method}", "{http.path}", "{http.operation_id}"' in text
    assert f'tool = Tool("{declared.tool.name}"' in text
    assert f"def {HANDLERS[declared].__name__}(asked: {name}, caller: Caller" in text


def test_a_declared_use_case_is_in_no_hand_written_door() -> None:
    """The doors hold no per-use-case code for a declared use case: no adapter names its class, and no
    hand-written tool is declared under its tool's name (the derived modules are generic). The app's pages
    (`adapters/web`) are not derived: a page chooses which answers it renders (its own rendering), so it
    runs declared use cases by name through `handle`."""
    doors = ROOT / "siteaudit" / "adapters"
    app_pages = doors / "web"
    patterns = [rf"\b{d.__name__}\b" for d in USE_CASES] + [
        rf'name="{d.tool.name}"' for d in USE_CASES if isinstance(d.tool, Tool)
    ]
    mentioned = {
        (str(p.relative_to(ROOT)), pattern)
        for p in doors.rglob("*.py")
        if app_pages not in p.parents
        for pattern in patterns
        if re.search(pattern, p.read_text())
    }
    assert mentioned == set()


def test_a_tasks_use_case_reads_from_every_door_as_declared() -> None:
    """One declaration, the same bounds at REST and the tool: limit 1-100 on a site's tasks."""
    (_, limit) = fields_of(ListSiteTasks)
    assert (limit.spec.low, limit.spec.high, limit.default) == (1, 100, 10)
    tool = {t.name: t for t in tool_specs(USE_CASES)}["list_site_tasks"]
    assert tool.params[1].schema() == {
        "type": "integer",
        "description": limit.spec.description,
        "minimum": 1,
        "maximum": 100,
        "default": 10,
    }
    parameter = document(USE_CASES)["paths"]["/v1/sites/{site_id}/tasks"]["get"]["parameters"][0]
    assert parameter["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}
    assert [f.name for f in fields_of(GetTask)] == ["site_id", "task_key", "page"]


@frozen
class Switch(UseCase[int]):
    """A use case of these tests only: a required true or false in the body."""

    number: int = field(metadata=path("A number.", low=1, high=9))
    on: bool = field(metadata=body("true: on; false: off."))

    http = Http("PATCH", "/v1/switch/{number}", "switch", "A test's")
    tool = NotOffered("mcp", "a test's")


@pytest.mark.parametrize(
    ("sent", "read", "bad"),
    [
        (b'{"on": true}', True, None),
        (b'{"on": false}', False, None),
        (b'{"on": "yes"}', None, "must be true or false"),
        (b"{}", None, "required"),
    ],
)
def test_a_true_or_false_input_is_read_as_declared_at_every_door(
    sent: bytes, read: bool | None, bad: str | None
) -> None:
    (_, on) = fields_of(Switch)
    assert (on.kind, on.required, unbounded(on)) == ("boolean", True, None)
    request = falcon.testing.create_req(
        method="PATCH", path="/v1/switch/1", body=sent, headers={"Content-Type": "application/json"}
    )
    if bad is None:
        assert read_use_case(Switch, request, {"number": 1}) == Switch(1, bool(read))
    else:
        with pytest.raises(ValidationFailed) as refused:
            read_use_case(Switch, request, {"number": 1})
        assert refused.value.fields == {"on": bad}
    operation = declared_paths([Switch])["/v1/switch/{number}"]["patch"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert schema["properties"]["on"] == {"type": "boolean"} and schema["required"] == ["on"]
    assert param(on).schema() == {"type": "boolean", "description": "true: on; false: off."}


@frozen
class Limited(UseCase[int]):
    """A use case of these tests only: a stricter limit on its endpoint, which its tool shares."""

    site_id: int = field(metadata=path("A site.", low=1, high=9))

    http = Http("POST", "/v1/sites/{site_id}/poke", "poke", "A test's", limit=("poke", Limit(2, 60.0)))
    tool = Tool("poke_site", "Poke", "A test's.", lambda answer: "")


def test_a_declared_stricter_limit_is_the_endpoints_and_its_tools() -> None:
    app = bootstrap(Settings(database_url="memory://"))
    assert Declaring(app.application, app.clock, [Limited]).extra_limits == {"POST": ("poke", Limit(2, 60.0))}
    (tool,) = derived_tools([Limited])
    assert tool.limited == ("poke", "POST /sites/{id}/poke")
    assert declared_limits([Limited, Plain]) == {"poke_site": ("poke", Limit(2, 60.0))}


def test_a_declared_tool_naming_the_tool_it_comes_after_is_listed_right_after_it() -> None:
    @frozen
    class Early(UseCase[int]):
        site_id: int = field(metadata=path("A site.", low=1, high=9))

        http = NotOffered("rest", "a test's")
        tool = Tool("early_tool", "Early", "A test's.", lambda answer: "", after="ping")

    names = [t.name for t in tool_specs([Limited, Early])]
    assert names[:2] == ["ping", "early_tool"] and names[-1] == "poke_site"


class Flavour(enum.Enum):
    """A test's enumeration."""

    SWEET = "sweet"
    SOUR = "sour"


@frozen
class Pick(UseCase[int]):
    """A use case of these tests only: one value of an enumeration in the body."""

    flavour: Flavour = field(metadata=body("sweet or sour.", max_length=10))

    http = Http("POST", "/v1/pick", "pick", "A test's")
    tool = Tool("pick", "Pick", "A test's.", lambda answer: "")


@pytest.mark.parametrize(
    ("sent", "bad"),
    [
        (b'{"flavour": "sour"}', None),
        (b'{"flavour": "salty"}', "must be one of: sweet, sour"),
        (b'{"flavour": "x"}', "must be one of: sweet, sour"),
        (b'{"flavour": "far too long"}', "must have 0-10 characters"),
        (b"{}", "required"),
    ],
)
def test_an_enumerations_input_is_one_of_its_values_at_every_door(sent: bytes, bad: str | None) -> None:
    (flavour,) = fields_of(Pick)
    assert (flavour.kind, flavour.choices, flavour.enum_type) == ("enum", ("sweet", "sour"), Flavour)
    request = falcon.testing.create_req(
        method="POST", path="/v1/pick", body=sent, headers={"Content-Type": "application/json"}
    )
    if bad is None:
        assert read_use_case(Pick, request, {}) == Pick(Flavour.SOUR)
    else:
        with pytest.raises(ValidationFailed) as refused:
            read_use_case(Pick, request, {})
        assert refused.value.fields == {"flavour": bad}
    schema = declared_paths([Pick])["/v1/pick"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]
    assert schema["properties"]["flavour"] == {"type": "string", "enum": ["sweet", "sour"]}
    assert param(flavour).schema() == {
        "type": "string",
        "description": "sweet or sour.",
        "enum": ["sweet", "sour"],
    }
    app = bootstrap(Settings(database_url="memory://"))
    call = Call(app.application, CALLER, {"flavour": "sweet"}, now=app.clock.now)
    assert use_case_of(Pick, call) == Pick(Flavour.SWEET)


@frozen
class Look(UseCase[int]):
    """A use case of these tests only: served at a path and its alias, a required query string with both
    lengths, an optional one, and the body of its other method named in the document."""

    site_id: int = field(metadata=path("A site.", low=1, high=9))
    word: str = field(metadata=query("A word.", doc="any word", min_length=2, max_length=9))
    note: str | None = field(default=None, metadata=query("A note.", max_length=9))

    http = Http(
        "GET",
        "/v1/sites/{site_id}/look",
        "lookHere",
        "Look",
        aliases=(Alias("/v1/sites/{site_id}/peek", "lookThere", "Look (the alias)"),),
    )
    tool = NotOffered("mcp", "a test's")


@frozen
class Send(UseCase[int]):
    """A use case of these tests only: its body named in the document, at its path and its alias."""

    site_id: int = field(metadata=path("A site.", low=1, high=9))
    words: tuple[str, ...] = field(metadata=body("Words.", max_length=9))

    http = Http(
        "POST",
        "/v1/sites/{site_id}/look",
        "sendHere",
        "Send",
        aliases=(Alias("/v1/sites/{site_id}/peek", "sendThere", "Send (the alias)"),),
        body_name="SendRequest",
    )
    tool = NotOffered("mcp", "a test's")


@pytest.mark.parametrize(
    ("query_string", "read", "bad"),
    [
        ("word=ab", Look(1, "ab"), None),
        (
            "word=ab&note=",
            Look(1, "ab", ""),
            None,
        ),  # a body or optional string's lower bound is the handler's
        ("", None, {"word": "required"}),
        ("word=a", None, {"word": "must have 2-9 characters"}),
        ("word=", None, {"word": "must have 2-9 characters"}),
        (
            "word=abcdefghij&note=abcdefghij",
            None,
            {"word": "must have 2-9 characters", "note": "must have 0-9 characters"},
        ),
    ],
)
def test_a_required_query_string_is_read_with_both_its_lengths(
    query_string: str, read: Look | None, bad: dict[str, str] | None
) -> None:
    request = falcon.testing.create_req(method="GET", path="/v1/sites/1/look", query_string=query_string)
    if bad is None:
        assert read_use_case(Look, request, {"site_id": 1}) == read
    else:
        with pytest.raises(ValidationFailed) as refused:
            read_use_case(Look, request, {"site_id": 1})
        assert refused.value.fields == bad


def test_a_use_case_is_served_and_documented_at_its_aliases_too() -> None:
    app = bootstrap(Settings(database_url="memory://"))

    class Declares:
        def use_cases(self) -> list[type[UseCase[int]]]:
            return [Look, Send]

    served = dict(routes(Declares(), app.clock))  # type: ignore[arg-type]
    here, there = "/v1/sites/{site_id:int(min=1, max=9)}/look", "/v1/sites/{site_id:int(min=1, max=9)}/peek"
    assert set(served) == {here, there}
    assert all(hasattr(served[p], "on_get") and hasattr(served[p], "on_post") for p in (here, there))
    paths = declared_paths([Look, Send])
    assert paths["/v1/sites/{site_id}/look"]["get"]["operationId"] == "lookHere"
    assert (
        paths["/v1/sites/{site_id}/peek"]["get"]["operationId"],
        paths["/v1/sites/{site_id}/peek"]["get"]["summary"],
    ) == ("lookThere", "Look (the alias)")
    assert paths["/v1/sites/{site_id}/peek"]["post"]["operationId"] == "sendThere"
    word, note = paths["/v1/sites/{site_id}/peek"]["get"]["parameters"]
    assert word == {
        "name": "word",
        "in": "query",
        "required": True,
        "schema": {"type": "string", "maxLength": 9, "minLength": 2},
        "description": "any word",
    }
    assert note == {"name": "note", "in": "query", "schema": {"type": "string", "maxLength": 9}}
    for where in ("look", "peek"):
        sent = paths[f"/v1/sites/{{site_id}}/{where}"]["post"]["requestBody"]["content"]["application/json"]
        assert sent["schema"] == {"$ref": "#/components/schemas/SendRequest"}
    assert document([Send])["components"]["schemas"]["SendRequest"]["required"] == ["words"]


class Colour(enum.StrEnum):
    RED = "red"
    BLUE = "blue"
    GREEN = "green"


@frozen
class Paint(UseCase[int]):
    """A use case of these tests only: enum inputs (every member, or some), a strict string, every body
    input optional."""

    number: int = field(metadata=path("A number.", low=1, high=9))
    colour: Colour | None = field(default=None, metadata=body("A colour.", max_length=10, named=True))
    primary: Colour = field(
        default=Colour.RED, metadata=body("red or blue.", max_length=10, choices=("red", "blue"))
    )
    name: str | None = field(
        default=None, metadata=body("A name.", min_length=2, max_length=8, strict=True, format="uri")
    )

    http = Http("PATCH", "/v1/paint/{number}", "paint", "A test's")
    tool = NotOffered("mcp", "a test's")


def _paint(sent: bytes) -> UseCase[Any]:
    request = falcon.testing.create_req(
        method="PATCH", path="/v1/paint/1", body=sent, headers={"Content-Type": "application/json"}
    )
    return read_use_case(Paint, request, {"number": 1})


@pytest.mark.parametrize(
    ("sent", "read", "bad"),
    [
        (b"", Paint(1), None),  # no input is required: neither is the body
        (b'{"colour": "green", "primary": "blue"}', Paint(1, Colour.GREEN, Colour.BLUE), None),
        (b'{"primary": "green"}', None, {"primary": "must be one of: red, blue"}),
        (b'{"colour": "purple"}', None, {"colour": "must be one of: red, blue, green"}),
        (b'{"colour": null}', None, {"colour": "must be a string, not null"}),
        (b'{"name": "a"}', None, {"name": "must have 2-8 characters"}),
        (b'{"name": "ab"}', Paint(1, name="ab"), None),
    ],
)
def test_enum_inputs_and_a_strict_string_are_read_as_declared_at_every_door(
    sent: bytes, read: Any, bad: dict[str, str] | None
) -> None:
    (_, colour, primary, name) = fields_of(Paint)
    assert (colour.kind, colour.enum_type, colour.choices) == ("enum", Colour, ("red", "blue", "green"))
    assert (primary.read("blue"), primary.shown(Colour.BLUE)) == (Colour.BLUE, "blue")
    assert (name.kind, name.spec.strict, unbounded(name)) == ("string", True, None)
    if bad is None:
        assert _paint(sent) == read
    else:
        with pytest.raises(ValidationFailed) as refused:
            _paint(sent)
        assert refused.value.fields == bad
    operation = declared_paths([Paint])["/v1/paint/{number}"]["patch"]
    assert operation["requestBody"]["required"] is False
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert "required" not in schema
    assert schema["properties"]["colour"] == {"$ref": "#/components/schemas/Colour"}
    assert schema["properties"]["primary"] == {"type": "string", "enum": ["red", "blue"], "default": "red"}
    assert schema["properties"]["name"] == {"type": "string", "minLength": 2, "maxLength": 8, "format": "uri"}
    assert param(primary).schema() == {
        "type": "string",
        "description": "red or blue.",
        "enum": ["red", "blue"],
        "default": "red",
    }


@frozen
class Gone(UseCase[Plain]):
    """A use case of these tests only: a 204, with links on no answer."""

    number: int = field(metadata=path("A number.", low=1, high=9))

    http = Http("DELETE", "/v1/gone/{number}", "gone", "A test's", status=204, answer="Deleted")
    tool = NotOffered("mcp", "a test's")


def test_a_204_answers_no_content_in_the_document() -> None:
    answered = declared_paths([Gone])["/v1/gone/{number}"]["delete"]["responses"]["204"]
    assert answered["description"] == "Deleted" and "content" not in answered


@frozen
class Narrow(UseCase[int]):
    """A use case of these tests only: a list that excludes a true/false input and another list."""

    number: int = field(metadata=path("A number.", low=1, high=9))
    urls: tuple[str, ...] | None = field(default=None, metadata=body("URLs.", max_length=20))
    only: bool = field(default=False, metadata=body("Only."))
    words: tuple[str, ...] | None = field(default=None, metadata=body("Words.", max_length=9))

    excludes = (("urls", "only"), ("urls", "words"))
    http = Http("POST", "/v1/narrow/{number}", "narrow", "Narrow")
    tool = NotOffered("mcp", "a test's")


@pytest.mark.parametrize(
    ("sent", "valid"),
    [
        ({"urls": ["a"]}, True),
        ({"urls": ["a"], "only": False}, True),  # a false true/false input is not given
        ({"urls": ["a"], "only": True}, False),
        ({"urls": ["a"], "words": []}, False),
        ({"only": True, "words": ["b"]}, True),
    ],
)
def test_the_document_refuses_the_body_inputs_a_use_case_excludes_together(
    sent: dict[str, Any], valid: bool
) -> None:
    schema = declared_paths([Narrow])["/v1/narrow/{number}"]["post"]["requestBody"]["content"][
        "application/json"
    ]
    assert jsonschema.Draft202012Validator(schema["schema"]).is_valid(sent) is valid


def test_what_one_document_derives_never_shows_in_another() -> None:
    document([Send, Paint])
    served = document(bootstrap(Settings(database_url="memory://")).application.use_cases())
    assert not {"SendRequest", "Colour"} & set(served["components"]["schemas"])
