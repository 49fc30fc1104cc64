# Over 500 lines: the one OpenAPI document, its hand-written paths (the doors' own) and the derived ones; it shrinks as features are declared.
"""The OpenAPI 3.1 document of `/v1`, kept true by a test that compares it with the routes.
(Over 500 lines: most of it is the one `PATHS` literal, read top to bottom like the document.)

Every answer is a named schema under `components.schemas`, referred to by `$ref`. The schemas of the
report and of the declared answers (`services/*/answers.py`) are generated from their attrs classes by
`_Schemas`, so a field
added to a value is in the document too; only the error envelope and a few one-field answers are
written here. A nullable object is `anyOf: [{$ref}, {type: null}]` (generators do not read
`type: [object, null]`).
"""

import datetime
import enum
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs
import falcon

from siteaudit.adapters.rest.extraction import RULES_SCHEMA
from siteaudit.domain.error import HTTP_STATUS, ErrorCode
from siteaudit.domain.extraction import RuleKind
from siteaudit.domain.prompt import MAX_PROMPT_CHARS
from siteaudit.domain.report import COVERAGE_CODES, CoverageWarning, Report, Stats
from siteaudit.ports.usecases import (
    OMITTED_WHEN_NONE,
    SCHEMA,
    Declared,
    Field,
    Http,
    Leads,
    body_required,
    fields_of,
    result_of,
)

REF: Final = "#/components/schemas/"


def _obj(properties: dict[str, Any], required: tuple[str, ...] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
    }


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    return (
        {**schema, "type": [kind, "null"]} if isinstance(kind, str) else {"anyOf": [schema, {"type": "null"}]}
    )


def ref(name: str) -> dict[str, Any]:
    return {"$ref": REF + name}


INT: Final = {"type": "integer"}
NUM: Final = {"type": "number"}
STR: Final = {"type": "string"}
BOOL: Final = {"type": "boolean"}
TIME: Final = {"type": "string", "format": "date-time"}

_PRIMITIVES: Final[Mapping[object, dict[str, Any]]] = {
    int: INT,
    float: NUM,
    int | float: NUM,
    str: STR,
    bool: BOOL,
    datetime.datetime: TIME,
}

# What the types alone do not say.
_REFINED: Final[Mapping[tuple[type, str], dict[str, Any]]] = {
    # null when no HTML page was audited (docs/scoring.md; `coverage_warning` says why).
    (Report, "health_score"): {"type": ["integer", "null"], "minimum": 0, "maximum": 100},
    (CoverageWarning, "code"): {"type": "string", "enum": list(COVERAGE_CODES)},
    (Report, "fix_prompt"): {"type": "string", "maxLength": MAX_PROMPT_CHARS},
}
# Fields left out of the JSON when None (so optional, never null); a declared answer's field says so
# itself (`answer_schema(..., omitted_when_none=True)`).
_OMITTED_WHEN_NONE: Final = frozenset({(Stats, "diff_basis")})


class _Schemas:
    """JSON schemas of attrs classes, each class once under `components.schemas` by its name."""

    def __init__(self) -> None:
        self.components: dict[str, dict[str, Any]] = {}

    def copy(self) -> "_Schemas":
        copied = _Schemas()
        copied.components = dict(self.components)
        return copied

    def of(self, kind: Any) -> dict[str, Any]:
        """The schema of a type: a `$ref` for an attrs class (generated on first use)."""
        if kind in _PRIMITIVES:
            return dict(_PRIMITIVES[kind])
        if isinstance(kind, typing.NewType):  # an id (`siteaudit.domain.ids`): its supertype's schema
            return self.of(kind.__supertype__)
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            return self._enum(kind)
        if attrs.has(kind):
            return self._component(kind)
        origin, arguments = typing.get_origin(kind), typing.get_args(kind)
        if origin is typing.Literal:
            return {"type": "string", "enum": list(arguments)}
        if origin in (types.UnionType, typing.Union) and type(None) in arguments:
            (inner,) = [a for a in arguments if a is not type(None)]
            return _nullable(self.of(inner))
        if origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis:
            return {"type": "array", "items": self.of(arguments[0])}
        if origin in (Mapping, dict):
            value = arguments[1]
            return (
                {"type": "object"}
                if value is Any
                else {"type": "object", "additionalProperties": self.of(value)}
            )
        raise TypeError(f"no JSON schema for {kind!r}")

    def _enum(self, kind: type[enum.Enum]) -> dict[str, Any]:
        name = kind.__name__
        if name not in self.components:
            self.components[name] = {"type": "string", "enum": [member.value for member in kind]}
            if kind.__doc__ and kind.__doc__ != enum.Enum.__doc__:
                self.components[name]["description"] = " ".join(kind.__doc__.split())
        return ref(name)

    def _component(self, kind: type) -> dict[str, Any]:
        name = kind.__name__
        known = self.components.get(name)
        if known is None:
            self.components[name] = {}  # placeholder: a class may refer to itself
            hints = typing.get_type_hints(kind)
            properties: dict[str, Any] = {}
            required: list[str] = []
            for field in attrs.fields(kind):
                hint = hints[field.name]
                if (kind, field.name) in _OMITTED_WHEN_NONE or field.metadata.get(OMITTED_WHEN_NONE):
                    (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
                else:
                    required.append(field.name)
                declared = field.metadata.get(SCHEMA)
                refined = dict(declared) if declared is not None else _REFINED.get((kind, field.name))
                properties[field.name] = refined or self.of(hint)
            schema: dict[str, Any] = {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,  # the class's fields are the whole answer
            }
            if kind.__doc__:
                schema["description"] = " ".join(kind.__doc__.split())
            self.components[name] = schema
        return ref(name)


_schemas = _Schemas()
# The tools' answers generated beyond the document's own components (a tool's result that no operation
# answers): kept apart, so that the served document does not depend on which door was built first.
_answers = _Schemas()
for _answer in (Report,):
    _schemas.of(_answer)

ERROR_DETAIL: Final = _obj(
    {
        "code": ref("ErrorCode"),
        "message": STR,
        "fields": {"type": "object", "additionalProperties": STR},
        "resets_at": TIME,
    },
    required=("code", "message"),
)
ERROR: Final = _obj({"error": ref("ErrorDetail")})


SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "Error": ERROR,
    "ErrorDetail": ERROR_DETAIL,
    "ErrorCode": {"type": "string", "enum": sorted(code.value for code in ErrorCode)},
    "Health": _obj({"ok": BOOL}),
    "Ping": _obj({"user_id": INT}),
    "OpenApiDocument": {"type": "object", "description": "an OpenAPI 3.1 document"},
    **_schemas.components,
}


ID_SCHEMA: Final = {"type": "integer", "minimum": 1, "maximum": 2**62}
CRAWL_ID: Final = {"name": "crawl_id", "in": "path", "required": True, "schema": ID_SCHEMA}


_REQUEST_ID: Final = {
    "X-Request-ID": {
        "description": "the request's id, echoed from the request or made; quote it when reporting a problem",
        "required": True,
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
    }
}
_RATE_HEADERS: Final = {
    name: {"description": description, "required": True, "schema": {"type": "integer", "minimum": 0}}
    for name, description in (
        ("RateLimit-Limit", "requests allowed per window"),
        ("RateLimit-Remaining", "requests still allowed now"),
        ("RateLimit-Reset", "seconds until the bucket is full again"),
    )
} | {
    "RateLimit-Policy": {
        "description": "the limit as `count;w=seconds`",
        "required": True,
        "schema": {"type": "string", "pattern": "^[0-9]+;w=[0-9]+$"},
    }
}
_RETRY_AFTER: Final = {
    "Retry-After": {
        "description": "whole seconds until a request would pass",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    }
}


def _errors(*codes: ErrorCode, public: bool = False) -> dict[str, Any]:
    by_status: dict[int, list[str]] = {}
    always = (
        () if public else (ErrorCode.UNAUTHENTICATED, ErrorCode.TEAM_ACCESS_REVOKED, ErrorCode.RATE_LIMITED)
    )
    for code in (*always, *codes):
        by_status.setdefault(HTTP_STATUS[code], []).append(code.value)
    return {
        str(status): {
            "description": ", ".join(names),
            "headers": _REQUEST_ID | (_RETRY_AFTER if status == 429 else {}),
            "content": {"application/json": {"schema": ref("Error")}},
        }
        for status, names in sorted(by_status.items())
    }


def _ok(
    schema: dict[str, Any],
    status: int = 200,
    description: str = "OK",
    *,
    public: bool = False,
    links: tuple[Leads, ...] = (),
) -> dict[str, Any]:
    """A success answer; `links`: the ids it leads on from, made its OpenAPI links by `document`."""
    response: dict[str, Any] = {
        "description": description,
        "headers": _REQUEST_ID | ({} if public else _RATE_HEADERS),
        "content": {"application/json": {"schema": schema}},
    }
    if links:
        response["links"] = links
    return {str(status): response}


def _op(operation_id: str, summary: str, responses: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "summary": summary, "responses": responses, **more}


PATHS: Final[dict[str, dict[str, Any]]] = {
    "/v1/health": {"get": _op("health", "Liveness", _ok(ref("Health"), public=True), security=[])},
    "/v1/openapi.json": {
        "get": _op("openapi", "This document", _ok(ref("OpenApiDocument"), public=True), security=[])
    },
    "/v1/ping": {"get": _op("ping", "Check a key", {**_ok(ref("Ping")), **_errors()})},
    "/v1/crawls/{crawl_id}/export": {
        "parameters": [CRAWL_ID],
        "get": _op(
            "exportCrawl",
            "Every page, issue or link of the audit as a CSV or JSON Lines file, streamed",
            {
                "200": {
                    "description": (
                        "The file (Content-Disposition: attachment). CSV: every cell quoted, a cell a "
                        "spreadsheet would run as a formula led by a single quote; JSON Lines: one object a line"
                    ),
                    "headers": _REQUEST_ID | _RATE_HEADERS,
                    "content": {
                        media.split(";")[0]: {"schema": {"type": "string"}}
                        for media in ("text/csv; charset=utf-8", "application/jsonl; charset=utf-8")
                    },
                },
                **_errors(ErrorCode.NOT_FOUND, ErrorCode.CRAWL_ARCHIVED, ErrorCode.VALIDATION_FAILED),
            },
            parameters=[
                {
                    "name": "kind",
                    "in": "query",
                    "required": True,
                    "schema": {"type": "string", "enum": ["pages", "issues", "links"]},
                },
                {
                    "name": "format",
                    "in": "query",
                    "schema": {"type": "string", "enum": ["csv", "jsonl"], "default": "csv"},
                },
            ],
        ),
    },
}

# --- registered sites (docs/rest-api.md "Registered sites"): declared; what other paths under a site share

SITE_ID: Final = {"name": "site_id", "in": "path", "required": True, "schema": ID_SCHEMA}


def _body(
    properties: dict[str, Any], *, required: tuple[str, ...] = (), examples: tuple[dict[str, Any], ...] = ()
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = list(required)
    if examples:
        schema["examples"] = list(examples)
    return {"required": bool(required), "content": {"application/json": {"schema": schema}}}


def _no_content(description: str) -> dict[str, Any]:
    return {"204": {"description": description, "headers": _REQUEST_ID | _RATE_HEADERS}}


# --- device login (docs/security.md "Device login"): no key; limited per client address ------------------

_DEVICE_ERRORS: Final = (
    ErrorCode.VALIDATION_FAILED,
    ErrorCode.PAYLOAD_TOO_LARGE,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
)
SCHEMAS.update(
    {
        "DeviceLoginStarted": _obj(
            {
                "device_code": STR,
                "user_code": {"type": "string", "pattern": "^[B-Z]{4}-[B-Z]{4}$"},
                "verification_uri": STR,
                "verification_uri_complete": STR,
                "interval": {"type": "integer", "const": 5},
                "expires_in": {"type": "integer", "const": 600},
            }
        ),
        "DeviceKey": _obj({"api_key": STR, "team": ref("DeviceTeam")}),
        "DeviceTeam": _obj({"id": INT, "name": STR}),
        "DeviceLoginCancelled": _obj(
            {
                "status": {
                    "type": "string",
                    "enum": ["denied", "expired"],
                    "description": "the login's state now: it can no longer be approved nor exchanged",
                }
            }
        ),
    }
)
DEVICE_PATHS: Final[dict[str, dict[str, Any]]] = {
    "/v1/device/start": {
        "post": _op(
            "startDeviceLogin",
            "Start a device login (10 an hour per address)",
            {
                **_ok(ref("DeviceLoginStarted"), public=True),
                **_errors(ErrorCode.RATE_LIMITED, *_DEVICE_ERRORS, public=True),
            },
            security=[],
            requestBody=_body(
                {
                    "client_name": {
                        "type": "string",
                        "maxLength": 64,
                        "description": "the machine and agents, as `connect on HOST: agent1, agent2`",
                    }
                }
            ),
        )
    },
    "/v1/device/token": {
        "post": _op(
            "pollDeviceLogin",
            "Poll a device login (every 5 s at most; 60 a minute per address)",
            {
                **_ok(ref("DeviceKey"), public=True),
                **_errors(
                    ErrorCode.AUTHORIZATION_PENDING,
                    ErrorCode.SLOW_DOWN,
                    ErrorCode.ACCESS_DENIED,
                    ErrorCode.EXPIRED_TOKEN,
                    ErrorCode.INVALID_GRANT,
                    *_DEVICE_ERRORS,
                    public=True,
                ),
            },
            security=[],
            requestBody=_body(
                {"device_code": {"type": "string", "minLength": 1, "maxLength": 128}},
                required=("device_code",),
            ),
        )
    },
    "/v1/device/cancel": {
        "post": _op(
            "cancelDeviceLogin",
            "Cancel a device login by its device code: it can no longer be approved (60 a minute per address)",
            {
                **_ok(ref("DeviceLoginCancelled"), public=True),
                **_errors(ErrorCode.INVALID_GRANT, ErrorCode.RATE_LIMITED, *_DEVICE_ERRORS, public=True),
            },
            security=[],
            requestBody=_body(
                {"device_code": {"type": "string", "minLength": 1, "maxLength": 128}},
                required=("device_code",),
            ),
        )
    },
}
PATHS.update(DEVICE_PATHS)


WRITTEN_DOCUMENT: Final[dict[str, Any]] = {
    "openapi": "3.1.0",
    "info": {
        "title": "siteaudit",
        "version": "1",
        "description": (
            "Crawls websites and reports technical search-optimisation problems. Every error answers "
            "{error: {code, message}}; the shared per-key limit (60 requests a minute) answers 429 "
            "rate_limited with Retry-After and RateLimit-* headers."
        ),
    },
    "servers": [{"url": "/"}],
    "components": {
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer", "description": "sk_ + 40 characters"}
        },
        "schemas": SCHEMAS,
    },
    "security": [{"bearer": []}],
    "paths": PATHS,
}


# --- the declared use cases (`siteaudit.ports.usecases`) -------------------------------------------------


def _input_schema(found: Field, schemas: _Schemas) -> dict[str, Any]:
    """What the document says of an input: its bounds as the REST door checks them (a pattern stands for
    a string's lengths; a list of URLs shows each URL's greatest length, its count is the handler's)."""
    spec = found.spec
    schema: dict[str, Any]
    if found.kind == "urls" and spec.counted:
        counted: dict[str, Any] = {
            "type": "string",
            "minLength": spec.min_length,
            "maxLength": spec.max_length,
        }
        if spec.format is not None:
            counted["format"] = spec.format
        schema = {"type": "array", "minItems": spec.min_items, "maxItems": spec.max_items, "items": counted}
    elif found.kind == "urls":
        item: dict[str, Any] = {"type": "string", "maxLength": spec.max_length}
        if spec.pattern is not None:
            item["pattern"] = spec.pattern
        if spec.refuses is not None:
            item["not"] = {"pattern": spec.refuses}
        schema = {"type": "array", "items": item}
        if spec.min_items is not None:
            schema["minItems"] = spec.min_items
        if spec.max_items is not None:
            schema["maxItems"] = spec.max_items
    elif found.kind == "rules":  # one component for the rule given, whichever body gives it
        rule = dict(RULES_SCHEMA["items"])
        rule["properties"] = {**rule["properties"], "kind": {**schemas.of(RuleKind), "default": "css"}}
        schemas.components.setdefault("NewExtractionRule", rule)
        schema = {key: value for key, value in RULES_SCHEMA.items() if key != "description"}
        schema["items"] = ref("NewExtractionRule")
    elif found.kind == "enum" and spec.named:
        assert found.enum_type is not None
        schema = schemas.of(found.enum_type)  # every member: the enum's component
    elif found.kind == "enum":  # the values stand for the lengths
        schema = {"type": "string", "enum": list(found.choices)}
        if found.default is not None:
            schema["default"] = found.shown(found.default)
    elif found.kind == "string":
        schema = {"type": "string"}
        if spec.refuses is not None:
            schema["not"] = {"pattern": spec.refuses}
        if spec.pattern is not None:
            schema["pattern"] = spec.pattern
        # A pattern open at its end (a URL's scheme) leaves the lengths to be said.
        if spec.pattern is None or not spec.pattern.endswith("$"):
            if spec.strict and spec.min_length is not None:
                schema["minLength"] = spec.min_length
            if spec.max_length is not None:
                schema["maxLength"] = spec.max_length
        if spec.format is not None:
            schema["format"] = spec.format
    elif found.kind == "boolean":
        schema = dict(BOOL)
        if found.default is not None:
            schema["default"] = found.default
    else:
        schema = {"type": found.kind}
        if spec.low is not None:
            schema["minimum"] = spec.low
        if spec.high is not None:
            schema["maximum"] = spec.high
        if found.default is not None:
            schema["default"] = found.default
    if spec.shown_default is not None:
        schema["default"] = spec.shown_default
    if spec.doc is not None and spec.where == "body":  # a parameter's is the parameter's (below)
        schema["description"] = spec.doc
    return schema


def _parameter(found: Field, schemas: _Schemas) -> dict[str, Any]:
    """A path or query parameter: its schema, whether it is required, what the document says of it."""
    parameter: dict[str, Any] = {"name": found.name, "in": found.spec.where}
    if found.spec.where == "path" or found.required:
        parameter["required"] = True
    parameter["schema"] = _input_schema(found, schemas)
    if found.spec.doc is not None:
        parameter["description"] = found.spec.doc
    return parameter


def _request_body(declared: Declared, inputs: list[Field], schemas: _Schemas) -> dict[str, Any]:
    """The JSON body; with `exactly_one_of`, one object per alternative (`oneOf`)."""
    alternatives = [f for f in inputs if f.name in declared.exactly_one_of]
    if alternatives:
        schema: dict[str, Any] = {
            "oneOf": [
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [f.name],
                    "properties": {f.name: _input_schema(f, schemas)},
                }
                for f in alternatives
            ]
        }
    else:
        schema = _obj(
            {f.name: _input_schema(f, schemas) for f in inputs}, tuple(f.name for f in inputs if f.required)
        )
        schema["additionalProperties"] = False  # the door refuses an unknown field
        if not schema["required"] and not body_required(declared):
            del schema["required"]
        schema.update(_body_rules(declared, inputs))
    http = declared.http
    assert isinstance(http, Http)
    if http.examples:
        schema["examples"] = [dict(example) for example in http.examples]
    if http.body_name is not None:
        schemas.components[http.body_name] = schema
        schema = ref(http.body_name)
    return {"required": body_required(declared), "content": {"application/json": {"schema": schema}}}


def _body_rules(declared: Declared, inputs: list[Field]) -> dict[str, Any]:
    """The rules across a body's inputs the handler checks: those `given_together` (each requires the
    others), `at_least_one_of` (the body where none is given, a list empty, is refused with `not`) and the
    pairs one `excludes` (refused with `not` too, the second input with the values it counts with)."""
    rules: dict[str, Any] = {}
    together = declared.given_together
    if together:
        rules["dependentRequired"] = {name: [n for n in together if n != name] for name in together}
    if declared.at_least_one_of:
        kinds = {f.name: f.kind for f in inputs}
        lists = [n for n in declared.at_least_one_of if kinds[n] == "urls"]
        others = [n for n in declared.at_least_one_of if kinds[n] != "urls"]
        none_given: dict[str, Any] = {"properties": {n: {"maxItems": 0} for n in lists}}
        if len(others) == 1:
            none_given["not"] = {"required": others}
        elif others:
            none_given["not"] = {"anyOf": [{"required": [n]} for n in others]}
        rules["not"] = none_given
    if declared.excludes:
        kinds = {f.name: f.kind for f in inputs}
        refused: list[dict[str, Any]] = []
        for exclusion in declared.excludes:
            one, other = exclusion[0], exclusion[1]
            pair: dict[str, Any] = {"required": [one, other]}
            if len(exclusion) == 3:  # the second counts only with one of these values
                pair["properties"] = {other: {"enum": list(exclusion[2])}}
            elif kinds[other] == "boolean":
                pair["properties"] = {other: {"const": True}}
            refused.append(pair)
        rules["not"] = {"anyOf": [rules["not"], *refused] if "not" in rules else refused}
    return rules


_STATUS_PHRASES: Final = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content"}


def _declared_answer(declared: Declared, http: Http, schemas: _Schemas) -> dict[str, Any]:
    """The answer of a declared operation: its result's schema (none for a 204), its links."""
    description = http.answer or _STATUS_PHRASES[http.status]
    if http.status == 204:
        return _no_content(description)
    return _ok(schemas.of(result_of(declared)), http.status, description, links=http.links)


def declared_paths(
    use_cases: Sequence[Declared], schemas: _Schemas | None = None
) -> dict[str, dict[str, Any]]:
    """The path items of the declared use cases: each operation from its `Http` binding (and one per
    alias, with the alias's id and summary), its answer's schema generated from its result class, its
    parameters and body from its inputs."""
    schemas = schemas if schemas is not None else _schemas.copy()  # what it adds stays its own
    paths: dict[str, dict[str, Any]] = {}
    for declared in use_cases:
        http = declared.http
        if not isinstance(http, Http):
            continue
        inputs = list(fields_of(declared))
        in_path = [_parameter(f, schemas) for f in inputs if f.spec.where == "path"]
        answer = {**_declared_answer(declared, http, schemas), **_errors(*http.errors)}
        named = [(http.path, http.operation_id, http.summary)]
        named += [(alias.path, alias.operation_id, alias.summary) for alias in http.aliases]
        for path, operation_id, summary in named:
            item = paths.setdefault(path, {})
            if in_path:
                item["parameters"] = in_path
            operation = _op(operation_id, summary, answer)
            if http.description is not None:
                operation["description"] = http.description
            in_query = [_parameter(f, schemas) for f in inputs if f.spec.where == "query"]
            if in_query:
                operation["parameters"] = in_query
            in_body = [f for f in inputs if f.spec.where == "body"]
            if in_body:
                operation["requestBody"] = _request_body(declared, in_body, schemas)
            item[http.method.lower()] = operation
    return paths


def declared_links(use_cases: Sequence[Declared], leads: Leads) -> dict[str, Any]:
    """The links to every declared operation with a `link` taking `leads.parameter` in its path, by the
    operation's id capitalised (`getCrawl`: `GetCrawl`)."""
    name = leads.parameter
    links: dict[str, Any] = {}
    for declared in use_cases:
        http = declared.http
        if not isinstance(http, Http) or http.link is None:
            continue
        if any(f.name == name and f.spec.where == "path" for f in fields_of(declared)):
            key = http.operation_id[:1].upper() + http.operation_id[1:]
            links[key] = {
                "operationId": http.operation_id,
                "parameters": {name: f"$response.body#/{leads.source or name}"},
                "description": http.link,
            }
    return links


def _with_declared_links(paths: Mapping[str, Any], use_cases: Sequence[Declared]) -> dict[str, Any]:
    """`paths` with each answer's `Leads` made the links to the declared operations taking its ids."""
    linked: dict[str, Any] = {}
    for where, item in paths.items():
        linked[where] = item
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status, response in operation["responses"].items():
                leads = response.get("links")
                if not isinstance(leads, tuple):
                    continue
                links = {key: link for one in leads for key, link in declared_links(use_cases, one).items()}
                response = {**response, "links": links}
                operation = {**operation, "responses": {**operation["responses"], status: response}}
                linked[where] = item = {**item, method: operation}
    return linked


def document(use_cases: Sequence[Declared]) -> dict[str, Any]:
    """The document `/v1` serves: the paths written here and those of the declared use cases (a path
    may hold both: a declared method beside one written here)."""
    # The document's own components: its use cases' schemas added to a copy of the written ones, so that
    # what another document derived (another application's, a test's) never shows in this one.
    derived = _schemas.copy()
    merged = {path: dict(item) for path, item in PATHS.items()}
    for path, item in declared_paths(use_cases, derived).items():
        merged.setdefault(path, {}).update(item)
    paths = _with_declared_links(merged, use_cases)
    schemas = {**SCHEMAS, **derived.components}
    return {
        **WRITTEN_DOCUMENT,
        "components": {**WRITTEN_DOCUMENT["components"], "schemas": schemas},
        "paths": paths,
    }


class OpenApi:
    public = True

    def __init__(self, served: dict[str, Any]) -> None:
        self.served = served

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.served


def answer_schema(answer: str | type | Mapping[str, Any]) -> dict[str, Any]:
    """The schema of an answer, `$ref`s left to `resolved`: a component's name, a class generated as the
    document generates it, or a schema written out (returned as is)."""
    if isinstance(answer, str):
        return ref(answer)
    if isinstance(answer, Mapping):
        return dict(answer)
    for name, schema in _schemas.components.items():
        _answers.components.setdefault(name, schema)
    return _answers.of(answer)


def resolved(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` itself, or the component its `$ref` names."""
    name = schema.get("$ref")
    if not isinstance(name, str):
        return dict(schema)
    return resolved({**SCHEMAS, **_answers.components, **_schemas.components}[name.removeprefix(REF)])
