# Over 500 lines: the one OpenAPI document, its hand-written paths for the use cases not declared yet and the derived ones; it shrinks as features are declared.
"""The OpenAPI 3.1 document of `/v1`, kept true by a test that compares it with the routes.
(Over 500 lines: most of it is the one `PATHS` literal, read top to bottom like the document.)

Every answer is a named schema under `components.schemas`, referred to by `$ref`. The schemas of the
report and of the views (`views.py`) are generated from their attrs classes by `_Schemas`, so a field
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

from siteaudit.adapters.rest import views
from siteaudit.adapters.rest.extraction import RULES_SCHEMA
from siteaudit.domain.billing import Interval, Pack, PlanName, Tier
from siteaudit.domain.console import FILTER_MAX, INSPECT_MAX_URLS, URL_MAX
from siteaudit.domain.console_answers import (
    ConsoleSummary,
    InspectAnswer,
    NotIndexedAnswer,
    Opportunities,
)
from siteaudit.domain.error import HTTP_STATUS, ErrorCode
from siteaudit.domain.prompt import MAX_PROMPT_CHARS
from siteaudit.domain.report import COVERAGE_CODES, CoverageWarning, Report, Stats
from siteaudit.domain.site import (
    MAX_PAGES_CEILING,
    MAX_RPS,
    MAX_URL_LENGTH,
    MIN_RPS,
    VERIFY_METHOD_NAMES,
)
from siteaudit.domain.triage import IndexTriage
from siteaudit.ports.usecases import OMITTED_WHEN_NONE, SCHEMA, Declared, Field, Http, fields_of, result_of

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

    def of(self, kind: Any) -> dict[str, Any]:
        """The schema of a type: a `$ref` for an attrs class (generated on first use)."""
        if kind in _PRIMITIVES:
            return dict(_PRIMITIVES[kind])
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
for _answer in (
    views.AuditRow,
    views.Account,
    Report,
    # Registered sites.
    views.SiteList,
    views.UpdatedSite,
    views.RegisteredSite,
    views.SiteWithAudits,
    views.SiteVerification,
    views.VerifiedSite,
):
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
META: Final = _obj({"current_page": INT, "per_page": INT, "total": INT, "last_page": INT})


def _list_of(item: str) -> dict[str, Any]:
    return _obj({"data": {"type": "array", "items": ref(item)}, "meta": ref("ListMeta")})


SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "Error": ERROR,
    "ErrorDetail": ERROR_DETAIL,
    "ErrorCode": {"type": "string", "enum": sorted(code.value for code in ErrorCode)},
    "ListMeta": META,
    "AuditList": _list_of("AuditRow"),
    "AuditStarted": _obj(
        {
            "crawl_id": INT,
            "estimated_credits": NUM,
            "max_rps": NUM,
            "warnings": {"type": "array", "items": ref("Notice")},
        }
    ),
    "Health": _obj({"ok": BOOL}),
    "Ping": _obj({"user_id": INT}),
    "OpenApiDocument": {"type": "object", "description": "an OpenAPI 3.1 document"},
    **_schemas.components,
}


def _page_params(default: int, maximum: int) -> list[dict[str, Any]]:
    return [
        {
            "name": "page",
            "in": "query",
            "schema": {"type": "integer", "minimum": 1, "maximum": 100_000, "default": 1},
        },
        {
            "name": "per_page",
            "in": "query",
            "schema": {"type": "integer", "minimum": 1, "maximum": maximum, "default": default},
        },
    ]


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


@attrs.frozen
class LinksTo:
    """The links of an answer naming the id `name`: to every declared operation taking it with a `link`
    (`Http.link`), filled in by `document`. Clients (and stateful fuzzers) follow them."""

    name: str


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
    links: dict[str, Any] | LinksTo | None = None,
) -> dict[str, Any]:
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


def _link(operation_id: str, name: str, description: str) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "parameters": {name: f"$response.body#/{name}"},
        "description": description,
    }


# Where the id an audit answers leads.
_CRAWL_LINKS: Final = LinksTo("crawl_id")


PATHS: Final[dict[str, dict[str, Any]]] = {
    "/v1/health": {"get": _op("health", "Liveness", _ok(ref("Health"), public=True), security=[])},
    "/v1/openapi.json": {
        "get": _op("openapi", "This document", _ok(ref("OpenApiDocument"), public=True), security=[])
    },
    "/v1/ping": {"get": _op("ping", "Check a key", {**_ok(ref("Ping")), **_errors()})},
    "/v1/account": {
        "get": _op(
            "getAccount",
            "Balances and usage",
            {
                **_ok(ref("Account")),
                **_errors(),
            },
        )
    },
    "/v1/crawls": {
        "get": _op(
            "listCrawls",
            "List audits, newest first",
            {
                **_ok(ref("AuditList")),
                **_errors(ErrorCode.NOT_FOUND, ErrorCode.VALIDATION_FAILED),
            },
            parameters=[
                {"name": "site_id", "in": "query", "schema": ID_SCHEMA},
                *_page_params(20, 100),
            ],
        ),
        "post": _op(
            "startCrawl",
            "Start an audit",
            {
                **_ok(
                    ref("AuditStarted"),
                    202,
                    "Accepted",
                    links=_CRAWL_LINKS,
                ),
                **_errors(
                    ErrorCode.INSUFFICIENT_CREDITS,
                    ErrorCode.PLAN_LIMIT_MAX_PAGES,
                    ErrorCode.NOT_FOUND,
                    ErrorCode.SITE_NOT_VERIFIED,
                    ErrorCode.VALIDATION_FAILED,
                    ErrorCode.INVALID_URL,
                    ErrorCode.SITE_URL_MISMATCH,
                    ErrorCode.MAX_RPS_REQUIRES_VERIFIED_SITE,
                    ErrorCode.PAYLOAD_TOO_LARGE,
                    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                    ErrorCode.DISPATCH_FAILED,
                ),
            },
            requestBody={
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "additionalProperties": False,
                            "anyOf": [{"required": ["url"]}, {"required": ["site_id"]}],
                            "not": {"required": ["site_id", "verify_token"]},
                            "examples": [
                                {"url": "https://retro-clock.example/", "max_pages": 50},
                                {"url": "https://retro-clock.example/shop/", "max_pages": 20, "max_rps": 1},
                            ],
                            "properties": {
                                "url": {"type": "string", "maxLength": 2048, "format": "uri"},
                                "site_id": ID_SCHEMA,
                                "max_pages": {"type": "integer", "minimum": 1, "maximum": MAX_PAGES_CEILING},
                                "concurrency": {"type": "integer", "minimum": 1, "maximum": 20, "default": 2},
                                "max_rps": {"type": "number", "minimum": 0.5, "maximum": 10, "default": 2},
                                "webhook_url": {
                                    "type": "string",
                                    "maxLength": 2048,
                                    "format": "uri",
                                    "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://",
                                    "description": (
                                        "an http or https URL with a valid host name and no user name or "
                                        "password; others answer 422 validation_failed naming webhook_url"
                                    ),
                                },
                                "verify_token": {"type": "string", "pattern": "^[A-Za-z0-9_-]{16,128}$"},
                                "render": {
                                    "type": "boolean",
                                    "description": (
                                        "load each HTML page in a browser after its raw fetch and judge the "
                                        "rendered DOM (5 credits a page instead of 1); default: the site's "
                                        "saved setting, else false"
                                    ),
                                },
                                "extract": RULES_SCHEMA,
                            },
                        }
                    }
                },
            },
        ),
    },
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

# --- registered sites (docs/rest-api.md "Registered sites") -------------------------------------------

SITE_ID: Final = {"name": "site_id", "in": "path", "required": True, "schema": ID_SCHEMA}
_BODY_ERRORS: Final = (
    ErrorCode.VALIDATION_FAILED,
    ErrorCode.PAYLOAD_TOO_LARGE,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
)
_SITE_MAX_PAGES: Final = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_PAGES_CEILING,
    "description": "at most the plan's per-audit limit (403 plan_limit_max_pages)",
}
_SITE_MAX_RPS: Final = {"type": "number", "minimum": MIN_RPS, "maximum": MAX_RPS}


def _body(
    properties: dict[str, Any], *, required: tuple[str, ...] = (), examples: tuple[dict[str, Any], ...] = ()
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = list(required)
    if examples:
        schema["examples"] = list(examples)
    return {"required": bool(required), "content": {"application/json": {"schema": schema}}}


def _site_link(operation_id: str, description: str) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "parameters": {"site_id": "$response.body#/id"},
        "description": description,
    }


# Where a registered site's id leads.
_SITE_LINKS: Final = {
    "GetSite": _site_link("getSite", "the site with its latest audit and trend"),
    "UpdateSite": _site_link("updateSite", "change its monitoring and settings"),
    "GetSiteVerification": _site_link("getSiteVerification", "what to publish to prove ownership"),
    "VerifySite": _site_link("verifySite", "check ownership"),
    "StartSiteCrawl": _site_link("startSiteCrawl", "audit the site"),
    "DeleteSite": _site_link("deleteSite", "delete the site"),
}


def _no_content(description: str) -> dict[str, Any]:
    return {"204": {"description": description, "headers": _REQUEST_ID | _RATE_HEADERS}}


SITE_PATHS: Final[dict[str, dict[str, Any]]] = {
    "/v1/sites": {
        "get": _op(
            "listSites",
            "The team's registered sites",
            {**_ok(ref("SiteList")), **_errors(ErrorCode.VALIDATION_FAILED)},
        ),
        "post": _op(
            "registerSite",
            "Register a site",
            {
                **_ok(ref("RegisteredSite"), 201, "Created", links=_SITE_LINKS),
                **_errors(
                    ErrorCode.PLAN_LIMIT_SITES,
                    ErrorCode.PLAN_LIMIT_MAX_PAGES,
                    ErrorCode.SITE_EXISTS,
                    ErrorCode.INVALID_URL,
                    *_BODY_ERRORS,
                ),
            },
            requestBody=_body(
                {
                    "url": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_URL_LENGTH,
                        "format": "uri",
                        "description": "http or https, a public address; others answer 422 invalid_url",
                    },
                    "max_pages": _SITE_MAX_PAGES,
                    "max_rps": {**_SITE_MAX_RPS, "default": 2},
                    "alert_email": {"type": "boolean", "default": True},
                },
                required=("url",),
                examples=({"url": "https://retro-clock.example/", "max_pages": 2_000, "max_rps": 2},),
            ),
        ),
    },
    "/v1/sites/{site_id}": {
        "parameters": [SITE_ID],
        "get": _op(
            "getSite",
            "A site with its token, latest audit and health trend",
            {**_ok(ref("SiteWithAudits")), **_errors(ErrorCode.NOT_FOUND, ErrorCode.VALIDATION_FAILED)},
        ),
        "patch": _op(
            "updateSite",
            "Change a site's monitoring and saved audit settings",
            {
                **_ok(ref("UpdatedSite")),
                **_errors(
                    ErrorCode.PLAN_LIMIT_MAX_PAGES,
                    ErrorCode.PLAN_LIMIT_MONITORING,
                    ErrorCode.NOT_FOUND,
                    ErrorCode.CONFLICT,
                    ErrorCode.SITE_NOT_VERIFIED,
                    *_BODY_ERRORS,
                ),
            },
            requestBody=_body(
                {
                    "monitoring": ref("Monitoring"),
                    "max_pages": _SITE_MAX_PAGES,
                    "max_rps": _SITE_MAX_RPS,
                    "alert_email": BOOL,
                    "render": {
                        "type": "boolean",
                        "description": "the site's audits render pages in a browser unless they say otherwise",
                    },
                }
            ),
        ),
        "delete": _op(
            "deleteSite",
            "Delete a site (its audits stay)",
            {**_no_content("Deleted"), **_errors(ErrorCode.NOT_FOUND)},
        ),
    },
    "/v1/sites/{site_id}/verification": {
        "parameters": [SITE_ID],
        "get": _op(
            "getSiteVerification",
            "Ownership status and the proofs to publish",
            {**_ok(ref("SiteVerification")), **_errors(ErrorCode.NOT_FOUND, ErrorCode.VALIDATION_FAILED)},
        ),
    },
    "/v1/sites/{site_id}/verify": {
        "parameters": [SITE_ID],
        "post": _op(
            "verifySite",
            "Check ownership (10 requests a minute per key besides the shared limit)",
            {
                **_ok(ref("VerifiedSite")),
                **_errors(
                    ErrorCode.NOT_FOUND,
                    ErrorCode.CONFLICT,
                    ErrorCode.VERIFICATION_FAILED,
                    *_BODY_ERRORS,
                ),
            },
            requestBody=_body(
                {
                    "method": {
                        "type": "string",
                        "enum": list(VERIFY_METHOD_NAMES),
                        "description": "one method; none: gsc, dns, meta, file in that order "
                        "(sc is gsc, cdn is cloudflare)",
                    }
                }
            ),
        ),
    },
    "/v1/sites/{site_id}/crawls": {
        "parameters": [SITE_ID],
        "post": _op(
            "startSiteCrawl",
            "Audit a registered site with its saved settings (charged to the team owner)",
            {
                **_ok(ref("AuditStarted"), 202, "Accepted", links=_CRAWL_LINKS),
                **_errors(
                    ErrorCode.INSUFFICIENT_CREDITS,
                    ErrorCode.PLAN_LIMIT_MAX_PAGES,
                    ErrorCode.NOT_FOUND,
                    ErrorCode.SITE_NOT_VERIFIED,
                    ErrorCode.INVALID_URL,
                    *_BODY_ERRORS,
                    ErrorCode.DISPATCH_FAILED,
                ),
            },
            requestBody=_body(
                {
                    "max_pages": {
                        **_SITE_MAX_PAGES,
                        "description": "above 500 on an unverified site: 409 site_not_verified",
                    },
                    "max_rps": {
                        **_SITE_MAX_RPS,
                        "description": "capped at the site's max_rps, and at 3 while unverified",
                    },
                    "trigger": {"type": "string", "enum": ["api", "ci"], "default": "api"},
                    "render": {
                        "type": "boolean",
                        "description": "render each HTML page in a browser (5 credits a page instead of 1); "
                        "default: the site's setting",
                    },
                    "extract": RULES_SCHEMA,
                }
            ),
        ),
    },
}
PATHS.update(SITE_PATHS)

# --- the search-console integration (docs/rest-api.md "Search console"): /gsc/... and /sengine/... alike

for _console_answer in (
    ConsoleSummary,
    NotIndexedAnswer,
    views.ConsoleUrlAnswer,
    Opportunities,
    InspectAnswer,
    IndexTriage,
):
    _schemas.of(_console_answer)
SCHEMAS.update(_schemas.components)
# One request body for both path names (a client generates one model).
SCHEMAS["InspectRequest"] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["urls"],
    "properties": {
        "urls": {
            "type": "array",
            "minItems": 1,
            "maxItems": INSPECT_MAX_URLS,
            "items": {"type": "string", "minLength": 1, "maxLength": URL_MAX},
        }
    },
}

_CONSOLE_ERRORS: Final = (ErrorCode.NOT_FOUND, ErrorCode.SITE_NOT_VERIFIED, ErrorCode.VALIDATION_FAILED)
_FILTER: Final = {"type": "string", "maxLength": FILTER_MAX}


def _console_paths(segment: str, name: str, note: str) -> dict[str, dict[str, Any]]:
    base = f"/v1/sites/{{site_id}}/{segment}"
    return {
        base: {
            "parameters": [SITE_ID],
            "get": _op(
                f"get{name}Summary",
                f"Search-console summary: headline, indexing funnel, trend, templates, sync{note}",
                {**_ok(ref("ConsoleSummary")), **_errors(*_CONSOLE_ERRORS)},
            ),
        },
        f"{base}/not-indexed": {
            "parameters": [SITE_ID],
            "get": _op(
                f"get{name}NotIndexed",
                f"Not-indexed groups, or one group's URLs with both reason and template{note}",
                {**_ok(ref("NotIndexedAnswer")), **_errors(*_CONSOLE_ERRORS)},
                parameters=[
                    {
                        "name": "reason",
                        "in": "query",
                        "schema": {**_FILTER, "minLength": 1},
                        "description": "the engine's coverage state, verbatim",
                    },
                    {"name": "template", "in": "query", "schema": _FILTER},
                    {
                        "name": "page",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 100_000, "default": 1},
                    },
                ],
            ),
        },
        f"{base}/url": {
            "parameters": [SITE_ID],
            "get": _op(
                f"get{name}Url",
                f"One URL's crawl facts, console facts and search figures{note}",
                {**_ok(ref("ConsoleUrlAnswer")), **_errors(*_CONSOLE_ERRORS, ErrorCode.URL_NOT_IN_SITE)},
                parameters=[
                    {
                        "name": "url",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string", "minLength": 1, "maxLength": URL_MAX},
                    }
                ],
            ),
        },
        f"{base}/opportunities": {
            "parameters": [SITE_ID],
            "get": _op(
                f"get{name}Opportunities",
                f"Low CTR, striking distance and canonical mismatches, with the rules used{note}",
                {**_ok(ref("Opportunities")), **_errors(*_CONSOLE_ERRORS)},
            ),
        },
        f"{base}/inspect": {
            "parameters": [SITE_ID],
            "post": _op(
                f"inspect{name}Urls",
                "Fresh inspection of 1-20 URLs within the property's daily budget (10 requests a minute "
                f"per key besides the shared limit){note}",
                {
                    **_ok(ref("InspectAnswer")),
                    **_errors(
                        *_CONSOLE_ERRORS,
                        ErrorCode.SC_NOT_CONNECTED,
                        ErrorCode.URL_NOT_IN_SITE,
                        ErrorCode.BUDGET_EXHAUSTED,
                        ErrorCode.PAYLOAD_TOO_LARGE,
                        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                    ),
                },
                requestBody={
                    "required": True,
                    "content": {"application/json": {"schema": ref("InspectRequest")}},
                },
            ),
        },
    }


PATHS.update(_console_paths("gsc", "Gsc", ""))
PATHS["/v1/sites/{site_id}/index-triage"] = {
    "parameters": [SITE_ID],
    "get": _op(
        "getIndexTriage",
        "Crawled pages not indexed, by URL template and value class, with why and what to do",
        {**_ok(ref("IndexTriage")), **_errors(*_CONSOLE_ERRORS)},
    ),
}
PATHS.update(_console_paths("sengine", "Sengine", " (the alias of the gsc path)"))


# --- billing (docs/rest-api.md "Billing") ------------------------------------------------------------------

_schemas.of(views.PaymentLink)
SCHEMAS.update(_schemas.components)
_BILLING_ERRORS: Final = (ErrorCode.NOT_TEAM_OWNER, ErrorCode.PAYMENT_PROVIDER_FAILED)


def _enum_of(kind: type[enum.Enum]) -> dict[str, Any]:
    return {"type": "string", "enum": [member.value for member in kind]}


BILLING_PATHS: Final[dict[str, dict[str, Any]]] = {
    "/v1/billing/checkout": {
        "post": _op(
            "billingCheckout",
            "Credit pack link (small: 5,000 credits for 9 USD; large: 25,000 for 29 USD); team owner only",
            {
                **_ok(ref("PaymentLink")),
                **_errors(*_BILLING_ERRORS, ErrorCode.PRICE_NOT_CONFIGURED, *_BODY_ERRORS),
            },
            requestBody=_body({"pack": _enum_of(Pack)}, required=("pack",)),
        )
    },
    "/v1/billing/subscribe": {
        "post": _op(
            "billingSubscribe",
            "Plan subscription link (one subscription per account); team owner only",
            {
                **_ok(ref("PaymentLink")),
                **_errors(
                    *_BILLING_ERRORS,
                    ErrorCode.PRICE_NOT_CONFIGURED,
                    ErrorCode.SUBSCRIPTION_EXISTS,
                    *_BODY_ERRORS,
                ),
            },
            requestBody=_body(
                {"plan": _enum_of(PlanName), "tier": _enum_of(Tier), "interval": _enum_of(Interval)},
                required=("plan", "tier", "interval"),
            ),
        )
    },
    "/v1/billing/portal": {
        "post": _op(
            "billingPortal",
            "Billing portal link (invoices, payment method, cancellation); team owner only",
            {
                **_ok(ref("PaymentLink")),
                **_errors(*_BILLING_ERRORS, ErrorCode.NO_BILLING_ACCOUNT, *_BODY_ERRORS),
            },
        )
    },
}
PATHS.update(BILLING_PATHS)


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


def _input_schema(found: Field) -> dict[str, Any]:
    """What the document says of an input: its bounds as the REST door checks them (a pattern stands for
    a string's lengths; a list of URLs shows each URL's greatest length, its count is the handler's)."""
    spec = found.spec
    schema: dict[str, Any]
    if found.kind == "urls" and spec.counted:
        schema = {
            "type": "array",
            "minItems": spec.min_items,
            "maxItems": spec.max_items,
            "items": {"type": "string", "minLength": spec.min_length, "maxLength": spec.max_length},
        }
    elif found.kind == "urls":
        schema = {"type": "array", "items": {"type": "string", "maxLength": spec.max_length}}
    elif found.enum_type is not None:
        schema = _schemas.of(found.enum_type)
    elif found.kind == "string":
        schema = {"type": "string"}
        if spec.pattern is not None:
            schema["pattern"] = spec.pattern
        else:
            if spec.where == "query" and spec.min_length is not None:  # the door checks both lengths
                schema["minLength"] = spec.min_length
            if spec.max_length is not None:
                schema["maxLength"] = spec.max_length
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
    if spec.doc is not None:
        schema["description"] = spec.doc
    return schema


def _request_body(declared: Declared, inputs: list[Field]) -> dict[str, Any]:
    """The JSON body; with `exactly_one_of`, one object per alternative (`oneOf`)."""
    alternatives = [f for f in inputs if f.name in declared.exactly_one_of]
    if alternatives:
        schema: dict[str, Any] = {
            "oneOf": [
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [f.name],
                    "properties": {f.name: _input_schema(f)},
                }
                for f in alternatives
            ]
        }
    else:
        schema = _obj({f.name: _input_schema(f) for f in inputs}, tuple(f.name for f in inputs if f.required))
        schema["additionalProperties"] = False  # the door refuses an unknown field
    http = declared.http
    assert isinstance(http, Http)
    if http.examples:
        schema["examples"] = [dict(example) for example in http.examples]
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def declared_paths(use_cases: Sequence[Declared]) -> dict[str, dict[str, Any]]:
    """The path items of the declared use cases: each operation from its `Http` binding, its answer's
    schema generated from its result class, its parameters and body from its inputs."""
    paths: dict[str, dict[str, Any]] = {}
    for declared in use_cases:
        http = declared.http
        if not isinstance(http, Http):
            continue
        inputs = list(fields_of(declared))
        item = paths.setdefault(http.path, {})
        in_path = [
            {"name": f.name, "in": "path", "required": True, "schema": _input_schema(f)}
            for f in inputs
            if f.spec.where == "path"
        ]
        if in_path:
            item["parameters"] = in_path
        operation = _op(
            http.operation_id,
            http.summary,
            {
                **_ok(
                    _schemas.of(result_of(declared)), http.status, "Accepted" if http.status == 202 else "OK"
                ),
                **_errors(*http.errors),
            },
        )
        if http.description is not None:
            operation["description"] = http.description
        in_query = [
            {"name": f.name, "in": "query", "schema": _input_schema(f)}
            for f in inputs
            if f.spec.where == "query"
        ]
        if in_query:
            operation["parameters"] = in_query
        in_body = [f for f in inputs if f.spec.where == "body"]
        if in_body:
            operation["requestBody"] = _request_body(declared, in_body)
        item[http.method.lower()] = operation
    return paths


def declared_links(use_cases: Sequence[Declared], name: str) -> dict[str, Any]:
    """The links to every declared operation with a `link` taking `name` in its path, by the operation's
    id capitalised (`getCrawl`: `GetCrawl`)."""
    links: dict[str, Any] = {}
    for declared in use_cases:
        http = declared.http
        if not isinstance(http, Http) or http.link is None:
            continue
        if any(f.name == name and f.spec.where == "path" for f in fields_of(declared)):
            key = http.operation_id[:1].upper() + http.operation_id[1:]
            links[key] = _link(http.operation_id, name, http.link)
    return links


def _with_declared_links(paths: Mapping[str, Any], use_cases: Sequence[Declared]) -> dict[str, Any]:
    """`paths` with each answer's `LinksTo` made the links to the declared operations taking its id."""
    linked: dict[str, Any] = {}
    for where, item in paths.items():
        linked[where] = item
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status, response in operation["responses"].items():
                links = response.get("links")
                if not isinstance(links, LinksTo):
                    continue
                response = {**response, "links": declared_links(use_cases, links.name)}
                operation = {**operation, "responses": {**operation["responses"], status: response}}
                linked[where] = item = {**item, method: operation}
    return linked


def document(use_cases: Sequence[Declared]) -> dict[str, Any]:
    """The document `/v1` serves: the paths written here and those of the declared use cases."""
    paths = _with_declared_links({**PATHS, **declared_paths(use_cases)}, use_cases)
    schemas = {**SCHEMAS, **_schemas.components}
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
    return _schemas.of(answer)


def resolved(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` itself, or the component its `$ref` names."""
    name = schema.get("$ref")
    if not isinstance(name, str):
        return dict(schema)
    return resolved({**SCHEMAS, **_schemas.components}[name.removeprefix(REF)])
