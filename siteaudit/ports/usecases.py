# Over 400 lines: the one vocabulary every declaration and every door reads (inputs, bindings, cross-input rules).
"""A use case declared once: the machinery every feature package's declarations use (docs/architecture.md,
"Adding a use case").

A use case is a frozen attrs class of its inputs deriving from `UseCase[R]`, `R` its result. Each input
field says where a door finds it and its bounds (`path`, `query`, `body`: attrs metadata); the class says
how each door offers it (`http`, `tool`: an `Http` or `Tool` binding, or `NotOffered` with the reason)
and, when two inputs exclude each other, `exactly_one_of`. Its handler is a plain function over ports
(`siteaudit/services/registry.py` maps each class to it). The doors derive everything from these values:
REST routes, body and query checks and the OpenAPI document (`adapters/rest/derived.py`), the MCP tools
(`adapters/mcp/derived.py`), and the typed HTTP client (`adapters/client/application.py`).
"""

import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, Generic, Literal, NewType, TypeVar, Unpack

import attrs
from attrs import frozen

from siteaudit.domain.error import ErrorCode
from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.ids import MAX_ID
from siteaudit.domain.records import copy_named as copy_named  # where declarations and handlers look
from siteaudit.domain.site import MAX_URL_LENGTH
from siteaudit.ports.ratelimit import Limit

R = TypeVar("R", covariant=True)
# The result of `handle(use_case: UseCase[Result], caller) -> Result`, one type variable for every door.
Result = TypeVar("Result")

INPUT: Final = "siteaudit.input"
# attrs metadata of a result's field: its JSON schema where the field's type alone says too little (a
# string's greatest length), read by the OpenAPI document.
SCHEMA: Final = "siteaudit.schema"
# attrs metadata of a result's optional field (default None): left out of the answer when None, so every
# door's JSON lacks it rather than showing null, and the OpenAPI document shows it as not required.
OMITTED_WHEN_NONE: Final = "siteaudit.omitted_when_none"
# The greatest page number a paged list is read at (its `page` input).
MAX_PAGE: Final = 100_000

Where = Literal["path", "query", "body"]
# What a door reads: an integer, a number, a string, true or false, one of an enum's values, a list
# of URLs (strings), or a list of extraction rules (docs/extraction.md; objects, bounded by their module).
Kind = Literal["integer", "number", "string", "boolean", "enum", "urls", "rules"]


@frozen
class Input:
    """Where a door finds one input and its bounds. `description` is what a tool's caller reads; `doc`
    what the OpenAPI document says of it (None: nothing). Bounds: `low`/`high` for numbers;
    `min_length`/`max_length` for a string or each URL of a list; `min_items`/`max_items` for a list
    (shown in the document; the handler counts it unless `counted`); `pattern` for a string (shown in the
    OpenAPI document, where it stands for the lengths; the handler checks it) or for each string of a list
    (shown with their greatest length), and `refuses` a pattern none may match (the document's `not`: a
    form JSON Schema cannot say without one, as names refused in any case). The REST door checks a string's or a URL's `max_length` and leaves the lower bounds and
    the count to the handler (its own 422), unless `counted`: then it checks a list's count and each URL's
    lengths itself, reads a body large enough for the longest list, and the document shows them; a tool's
    schema carries every length and count. `strict`: the REST door checks a string's `min_length` too,
    and the document shows it (a query string is always strict). An enum's input takes `choices` (shown
    inline in the document), or every member's value (shown inline, or as the enum's component when
    `named`: the type its answers name too); its `max_length` bounds what the REST door reads.
    `shown_default`: the default the document shows when the field's is None because the domain decides
    it; `format`: the document's format of a string. `rest_only`: an input only `/v1` reads (a second
    name kept for its clients; a list of extraction rules), not a tool's argument. A list of strings that
    is not `counted` shows its `max_items` and each string's `pattern` in the document; its handler checks
    them. `itemwise`: the REST door reads a body's list itself, string by string, and names a bad one by
    its place (`urls[3]`) with the other faults of the body; the count and each string's lengths are
    its own, and the rest (a pattern, what a URL must be) the handler's."""

    where: Where
    description: str = ""
    doc: str | None = None
    low: float | None = None
    high: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    pattern: str | None = None
    refuses: str | None = None
    counted: bool = False
    strict: bool = False
    choices: tuple[str, ...] = ()
    named: bool = False
    shown_default: Any = None
    format: str | None = None
    rest_only: bool = False
    itemwise: bool = False


class Bounds(typing.TypedDict, total=False):
    """The bounds `path` takes (`Input` says what each means); bounds an input shares wherever it is read
    (a path's or a body's) are written once as one."""

    min_length: int | None
    max_length: int | None
    pattern: str | None
    low: float | None
    high: float | None


class _QueryBounds(typing.TypedDict, total=False):
    """What `query` takes besides the description."""

    doc: str | None
    low: float | None
    high: float | None
    min_length: int | None
    max_length: int | None
    named: bool
    rest_only: bool


class _BodyBounds(_QueryBounds, total=False):
    """What `body` takes besides the description."""

    min_items: int | None
    max_items: int | None
    pattern: str | None
    refuses: str | None
    counted: bool
    strict: bool
    choices: tuple[str, ...]
    shown_default: Any
    format: str | None
    itemwise: bool


class _UrlListBounds(typing.TypedDict, total=False):
    """What `url_list` takes besides the description and the count."""

    doc: str | None
    counted: bool
    format: str | None
    itemwise: bool


def path(description: str, **bounds: Unpack[Bounds]) -> dict[str, Input]:
    """attrs metadata of an input in the request path (REST) or a required argument (tool)."""
    return {INPUT: Input("path", description, **bounds)}


def query(description: str, **bounds: Unpack[_QueryBounds]) -> dict[str, Input]:
    """attrs metadata of an input in the query string (REST) or an argument (tool); its default is the
    attrs field's, and one without a default is required. A string's lengths are checked by the REST door
    (both bounds, unlike a body's) and shown in the document; `doc` is the parameter's description there."""
    return {INPUT: Input("query", description, strict=True, **bounds)}


def body(description: str, **bounds: Unpack[_BodyBounds]) -> dict[str, Input]:
    """attrs metadata of a field of the JSON body (REST) or an argument (tool; `rest_only`: not one)."""
    return {INPUT: Input("body", description, **bounds)}


def url_list(description: str, most: int, **bounds: Unpack[_UrlListBounds]) -> dict[str, Input]:
    """attrs metadata of a body's list of 1 to `most` URLs, each of 1 to MAX_URL_LENGTH characters."""
    return body(description, min_items=1, max_items=most, min_length=1, max_length=MAX_URL_LENGTH, **bounds)


# The errors of every use case reading a JSON body (a field's fault, a body too large, not JSON).
BODY_ERRORS: Final = (
    ErrorCode.VALIDATION_FAILED,
    ErrorCode.PAYLOAD_TOO_LARGE,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
)
# The errors of a use case naming what it reads by id: none of the team's, or an input malformed.
LOOKUP_ERRORS: Final = (ErrorCode.NOT_FOUND, ErrorCode.VALIDATION_FAILED)
# The errors of a use case reading the team's own by no id: an input malformed.
QUERY_ERRORS: Final = (ErrorCode.VALIDATION_FAILED,)
# The errors of cancelling a run: none of the team's, or it already ended.
CANCEL_ERRORS: Final = (ErrorCode.NOT_FOUND, ErrorCode.CONFLICT)

# The inputs many use cases share, declared once.
SITE_ID: Final = path("The registered site's id (from list_sites or register_site).", low=1, high=MAX_ID)


def page_of(what: str = "") -> dict[str, Input]:
    """A paged answer's `page` input; `what`: what is paged, when not the answer's rows ("a group's URLs")."""
    return query(f"Page of {what}, from 1." if what else "Page, from 1.", low=1, high=MAX_PAGE)


PAGE: Final = page_of()


def per_page(most: int) -> dict[str, Input]:
    """A paged answer's `per_page` input, 1 to `most`."""
    return query(f"Rows per page, 1-{most}.", low=1, high=most)


def how_many(what: str, most: int) -> dict[str, Input]:
    """A `limit` input: how many of `what` the answer shows, 1 to `most`."""
    return query(f"How many {what}.", low=1, high=most)


def answer_schema(schema: Mapping[str, Any] | None, *, omitted_when_none: bool = False) -> dict[str, Any]:
    """attrs metadata of a result's field: the JSON schema the OpenAPI document shows for it (None: its
    type's); `omitted_when_none`: the field (default None) is left out of the answer when None."""
    shown = {} if schema is None else {SCHEMA: schema}
    return {**shown, OMITTED_WHEN_NONE: omitted_when_none}


@frozen
class Alias:
    """One more path `/v1` serves a use case at (a renamed identifier's other name), with its own OpenAPI
    operation id and summary; the typed client and the tools use the binding's own path."""

    path: str
    operation_id: str
    summary: str


@frozen
class Leads:
    """An id an answer names, which leads on: the answer's OpenAPI links go to every declared operation
    taking `parameter` in its path that says what it is as a link (`Http.link`), the answer's `source`
    field (empty: the parameter's name) given as that input."""

    parameter: str
    source: str = ""


@frozen
class Http:
    """How `/v1` serves a use case: the method and path (`{name}` for a path input), the answer's status,
    the OpenAPI operation (id, summary, description, the error codes it answers, body examples, the ids
    its answer `links` on from (`Leads`) and its description `answer`, else the status's phrase), a
    stricter limit on top of the shared per-key one (`limit`: the bucket's name and its `Limit`), which
    its tool shares and its `aliases` too (the same bucket), and the other paths it is served at. A 204
    answers no body at REST: its result (what the tools show) is built from the path's inputs. `link`:
    what the operation is to an answer leading on to its path input (the OpenAPI link every such answer
    carries to it: an audit started leads to its status). One mechanism: an answer's links are the
    `link`s of the operations its `links` lead to. `audit_with_key`: the audit its `crawl_id` path input
    names is read with the request's key (on PostgreSQL in the key gate's one round trip) and given to
    its handler as `admitted`."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    path: str
    operation_id: str
    summary: str
    errors: tuple[ErrorCode, ...] = ()
    status: int = 200
    description: str | None = None
    examples: tuple[Mapping[str, Any], ...] = ()
    limit: tuple[str, Limit] | None = None
    aliases: tuple[Alias, ...] = ()
    # The OpenAPI component its request body is named (None: written in place), so that a client
    # generates one model for it whichever path, the binding's or an alias's, it calls.
    body_name: str | None = None
    links: tuple[Leads, ...] = ()
    answer: str | None = None
    link: str | None = None
    audit_with_key: bool = False


def lookup(
    path: str, operation_id: str, summary: str, *, description: str | None = None, link: str | None = None
) -> Http:
    """The binding of a GET naming what it reads by id: its errors are LOOKUP_ERRORS."""
    return Http("GET", path, operation_id, summary, errors=LOOKUP_ERRORS, description=description, link=link)


Summary = Callable[[Mapping[str, Any]], str]


@frozen
class Wait:
    """A door-own tool polling the use case (`get_x`) until its answer says it `ended`, or a timeout,
    reporting `progress` (done, total, message) meanwhile. Its arguments are the use case's and
    `timeout_s`."""

    name: str
    title: str
    description: str
    ended: Callable[[Mapping[str, Any]], bool]
    progress: Callable[[Mapping[str, Any]], tuple[float, float | None, str]]
    summary: Summary


@frozen
class Tool:
    """How the MCP door (HTTP and stdio, and so the remote CLI) offers a use case: the tool's name, title,
    description and annotations, the summary of its answer a model reads first, and door-own tools
    built on it (`waits`). `after`: the tool it is listed after (empty: after the hand-written ones, in
    declaration order), so a moved tool keeps its place in the list."""

    name: str
    title: str
    description: str
    summary: Summary
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False  # fetches the audited site
    untrusted: bool = False  # quotes text taken from crawled sites
    waits: tuple[Wait, ...] = ()
    after: str = ""
    # Answers sized for agents (docs/agents.md): the lists of the answer cut to the size budget and read
    # on with a `cursor`; the keys left out unless `detail` is full, each with the tool that answers it;
    # the key whose markdown is the tool's text instead of structured content.
    lists: tuple[str, ...] = ()
    omits: tuple[tuple[str, str], ...] = ()
    text: str = ""


class Effects(typing.TypedDict, total=False):
    """A writing tool's MCP annotations (`Tool`'s fields of the same names, docs/agents.md), each kind of
    writing tool named once below and given to its `Tool` as `**KIND`."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


# The tool changes what it names; called again with the same inputs, it changes nothing more.
CHANGES: Final[Effects] = {"read_only": False}
# The tool makes something new at each call (a site, a payment link).
MAKES: Final[Effects] = {"read_only": False, "idempotent": False}
# The tool stops or removes what it names for good.
DESTRUCTIVE: Final[Effects] = {"read_only": False, "destructive": True}
# The tool reaches beyond the service (the audited site) to change what it names.
REACHES_OUT: Final[Effects] = {"read_only": False, "open_world": True}
# The tool starts work reaching beyond the service (the audited site, IndexNow, the search console),
# anew at each call: an audit, a recheck, a submission, an inspection.
STARTS_WORK: Final[Effects] = {"read_only": False, "idempotent": False, "open_world": True}


@frozen
class NotOffered:
    """A door does not offer the use case, and why."""

    door: str
    reason: str


# Two body inputs refused together; a third member: the values the second counts only with.
Exclusion = tuple[str, str] | tuple[str, str, tuple[str, ...]]


class UseCase(Generic[R]):
    """Base of every declared use case (a frozen attrs class of its inputs); `R` is its result."""

    http: ClassVar[Http | NotOffered]
    tool: ClassVar[Tool | NotOffered]
    # Names of inputs of which exactly one is given: checked by every door with one message, and shown
    # in the OpenAPI document as `oneOf`.
    exactly_one_of: ClassVar[tuple[str, ...]] = ()
    # Names of body inputs given together or not at all (a user and its password), and of body inputs of
    # which at least one is given (a list: not empty): checked by the handler, and shown in the OpenAPI
    # document (`dependentRequired`; `not` of none given), so that a body it calls valid is accepted.
    given_together: ClassVar[tuple[str, ...]] = ()
    at_least_one_of: ClassVar[tuple[str, ...]] = ()
    # Pairs of body inputs the handler refuses together (a true/false input counting only when true; a
    # third member, the values the second counts only with: keep_params with query_params drop or keep):
    # shown in the OpenAPI document under `not`, so that a body it calls valid is accepted.
    excludes: ClassVar[tuple[Exclusion, ...]] = ()


Declared = type[UseCase[Any]]


def result_of(declared: Declared) -> type[Any]:
    """The result type `R` of `UseCase[R]`."""
    for klass in declared.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            if typing.get_origin(base) is UseCase:
                (result,) = typing.get_args(base)
                return typing.cast(type[Any], result)
    raise TypeError(f"{declared.__name__} does not derive from UseCase[R]")


@frozen
class Field:
    """One input of a declared use case as the doors read it."""

    name: str
    kind: Kind
    spec: Input
    required: bool
    default: Any
    enum_type: type[enum.Enum] | None = None  # the enum of an "enum" input

    @property
    def choices(self) -> tuple[str, ...]:
        """The values an enum input takes."""
        if self.spec.choices or self.enum_type is None:
            return self.spec.choices
        return tuple(str(member.value) for member in self.enum_type)

    def read(self, value: Any) -> Any:
        """An enum input's member from its value (None stays None); any other input as it is."""
        return value if self.enum_type is None or value is None else self.enum_type(value)

    def shown(self, value: Any) -> Any:
        """What a door writes of a value (an enum's member as its value)."""
        return value.value if isinstance(value, enum.Enum) else value


def _enum_of(hint: Any) -> type[enum.Enum] | None:
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in arguments:
        (hint,) = [a for a in arguments if a is not type(None)]
    return hint if isinstance(hint, type) and issubclass(hint, enum.Enum) else None


def _kind(hint: Any) -> tuple[Kind, bool]:
    """(kind, whether None is allowed) of a field's type."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in arguments:
        (inner,) = [a for a in arguments if a is not type(None)]
        return _kind(inner)[0], True
    while isinstance(hint, NewType):
        hint = hint.__supertype__
    if origin is tuple:
        return ("rules" if typing.get_args(hint)[0] is ExtractionRule else "urls"), False
    if hint is bool:
        return "boolean", False
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "enum", False
    if hint is int:
        return "integer", False
    if hint is float:
        return "number", False
    if hint is str:
        return "string", False
    raise TypeError(f"no input kind for {hint!r}")


def fields_of(declared: Declared) -> tuple[Field, ...]:
    """The inputs of a declared use case, in declaration order."""
    hints = typing.get_type_hints(declared)
    found: list[Field] = []
    for attribute in attrs.fields(typing.cast(Any, declared)):
        spec = attribute.metadata.get(INPUT)
        if not isinstance(spec, Input):
            raise TypeError(f"{declared.__name__}.{attribute.name} says nowhere where a door finds it")
        kind, _ = _kind(hints[attribute.name])
        required = attribute.default is attrs.NOTHING
        default = None if required else attribute.default
        found.append(Field(attribute.name, kind, spec, required, default, _enum_of(hints[attribute.name])))
    return tuple(found)


def unbounded(found: Field) -> str | None:
    """What bound a door reading `found` lacks (None: none): a number read from a query or body needs its
    range, a string or a URL its greatest length."""
    spec = found.spec
    if found.kind in ("integer", "number") and (spec.low is None or spec.high is None):
        return "a number needs low and high"
    if found.kind in ("string", "urls", "enum") and spec.max_length is None:
        return "a string needs max_length"
    return None  # true or false needs no bound


def body_required(declared: Declared) -> bool:
    """Whether the REST door requires a JSON body (and the document says so): when an input in it is
    required, or one of `exactly_one_of` or `at_least_one_of` is, or the method is PUT (the body is the
    whole resource put); else none reads as `{}`."""
    http = declared.http
    in_body = [f for f in fields_of(declared) if f.spec.where == "body"]
    put = isinstance(http, Http) and http.method == "PUT"
    one_of = bool(declared.exactly_one_of) or bool(declared.at_least_one_of)
    return any(f.required for f in in_body) or one_of or put


def exactly_one_problem(declared: Declared, values: Mapping[str, Any]) -> dict[str, str]:
    """The fields a door names when not exactly one of `exactly_one_of` is given (None: not given)."""
    names = declared.exactly_one_of
    if not names or sum(values.get(name) is not None for name in names) == 1:
        return {}
    problem = "give exactly one of " + " and ".join(names)
    return {name: problem for name in names}
