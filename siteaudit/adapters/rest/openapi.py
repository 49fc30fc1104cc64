"""The OpenAPI 3.1 document of `/v1`, kept true by a test that compares it with the routes."""

from typing import Any, Final

import falcon

from siteaudit.domain.error import HTTP_STATUS, ErrorCode


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


INT: Final = {"type": "integer"}
NUM: Final = {"type": "number"}
STR: Final = {"type": "string"}
BOOL: Final = {"type": "boolean"}
TIME: Final = {"type": "string", "format": "date-time"}
STATUS: Final = {"type": "string", "enum": ["queued", "running", "finalizing", "done", "failed", "cancelled"]}
SEVERITY: Final = {"type": "string", "enum": ["error", "warning", "notice"]}

ERROR: Final = _obj(
    {
        "error": _obj(
            {
                "code": {"type": "string", "enum": sorted(code.value for code in ErrorCode)},
                "message": STR,
                "fields": {"type": "object", "additionalProperties": STR},
                "resets_at": TIME,
            },
            required=("code", "message"),
        )
    }
)

META: Final = _obj({"current_page": INT, "per_page": INT, "total": INT, "last_page": INT})

AUDIT_ROW: Final = _obj(
    {
        "crawl_id": INT,
        "site_id": _nullable(INT),
        "site_url": STR,
        "status": STATUS,
        "trigger": STR,
        "health_score": _nullable(INT),
        "pages_crawled": INT,
        "max_pages": INT,
        "created_at": TIME,
        "finished_at": _nullable(TIME),
        "archived_at": _nullable(TIME),
    }
)

AUDIT_DETAIL: Final = _obj(
    {
        "crawl_id": INT,
        "site_id": _nullable(INT),
        "site_url": STR,
        "trigger": STR,
        "status": STATUS,
        "pages_crawled": INT,
        "max_pages": INT,
        "credits_reserved": NUM,
        "created_at": TIME,
        "started_at": _nullable(TIME),
        "finished_at": _nullable(TIME),
        "archived_at": _nullable(TIME),
        "failure_reason": _nullable(STR),
        "verify_token_set": BOOL,
        "max_rps": NUM,
        "concurrency": INT,
        "duration_s": _nullable(NUM),
        "pages_per_minute": _nullable(NUM),
    }
)

ISSUE_ROW: Final = _obj(
    {"check_code": STR, "severity": SEVERITY, "url": STR, "template": STR, "details": {"type": "object"}}
)
PAGE_ROW: Final = _obj(
    {
        "url": STR,
        "status_code": _nullable(INT),
        "title": _nullable(STR),
        "meta_description": _nullable(STR),
        "word_count": _nullable(INT),
        "depth": INT,
        "blocked_by": _nullable(STR),
        "fetch_error": _nullable(STR),
    }
)
TEMPLATE_GROUP: Final = _obj(
    {
        "template": STR,
        "pages": INT,
        "issues": {
            "type": "array",
            "items": _obj(
                {
                    "check_code": STR,
                    "severity": SEVERITY,
                    "count": INT,
                    "template_wide": BOOL,
                    "sample_urls": {"type": "array", "items": STR},
                }
            ),
        },
    }
)
DIFF: Final = _nullable(
    _obj(
        {
            "previous_crawl_id": INT,
            "health_delta": INT,
            "new": INT,
            "fixed": INT,
            "new_errors": INT,
            "fixed_errors": INT,
            "new_samples": {"type": "array"},
        }
    )
)
REPORT: Final = _obj(
    {
        "crawl_id": INT,
        "health_score": {"type": "integer", "minimum": 0, "maximum": 100},
        "partial": BOOL,
        "totals": _obj(
            {"pages": INT, "ok": INT, "redirects": INT, "broken": INT, "fetch_errors": INT, "blocked": INT}
        ),
        "issues": {
            "type": "array",
            "items": _obj({"check_code": STR, "severity": SEVERITY, "count": INT, "fix": STR}),
        },
        "issue_counts": _obj({"error": INT, "warning": INT, "notice": INT}),
        "blocked": {"type": "object"},
        "coverage_warning": _nullable({"type": "object"}),
        "stats": {"type": "object"},
        "templates": {"type": "array", "items": TEMPLATE_GROUP},
        "diff": DIFF,
        "fix_prompt": {"type": "string", "maxLength": 6000},
    }
)


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
            "content": {"application/json": {"schema": ERROR}},
        }
        for status, names in sorted(by_status.items())
    }


def _ok(
    schema: dict[str, Any],
    status: int = 200,
    description: str = "OK",
    *,
    public: bool = False,
    links: dict[str, Any] | None = None,
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


def _crawl_link(operation_id: str, description: str) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "parameters": {"crawl_id": "$response.body#/crawl_id"},
        "description": description,
    }


# Where the id an audit answers leads: clients (and stateful fuzzers) follow these.
_CRAWL_LINKS: Final = {
    "GetCrawl": _crawl_link("getCrawl", "the audit's status"),
    "CancelCrawl": _crawl_link("cancelCrawl", "cancel the audit"),
    "GetReport": _crawl_link("getReport", "the audit's report, once it exists"),
    "ListIssues": _crawl_link("listIssues", "the audit's issues"),
    "ListPages": _crawl_link("listPages", "the audit's pages"),
    "GetTemplates": _crawl_link("getTemplates", "issues by template, once the report exists"),
    "GetDiff": _crawl_link("getDiff", "changes against the previous audit, once the report exists"),
    "GetFixPrompt": _crawl_link("getFixPrompt", "the fix prompt, once the report exists"),
}


_REPORT_ERRORS: Final = (ErrorCode.NOT_FOUND, ErrorCode.REPORT_NOT_READY)

PATHS: Final[dict[str, dict[str, Any]]] = {
    "/v1/health": {"get": _op("health", "Liveness", _ok(_obj({"ok": BOOL}), public=True), security=[])},
    "/v1/openapi.json": {
        "get": _op("openapi", "This document", _ok({"type": "object"}, public=True), security=[])
    },
    "/v1/ping": {"get": _op("ping", "Check a key", {**_ok(_obj({"user_id": INT})), **_errors()})},
    "/v1/account": {
        "get": _op(
            "getAccount",
            "Balances and usage",
            {
                **_ok(
                    _obj(
                        {
                            "balance": NUM,
                            "team_id": INT,
                            "team_credits": NUM,
                            "crawls_total": INT,
                            "credits_spent_30d": NUM,
                            "team_credits_spent_30d": NUM,
                            "api_key_prefix": STR,
                        }
                    )
                ),
                **_errors(),
            },
        )
    },
    "/v1/crawls": {
        "get": _op(
            "listCrawls",
            "List audits, newest first",
            {
                **_ok(_obj({"data": {"type": "array", "items": AUDIT_ROW}, "meta": META})),
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
                    _obj({"crawl_id": INT, "estimated_credits": NUM, "max_rps": NUM}),
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
                                "max_pages": {"type": "integer", "minimum": 1, "maximum": 500_000},
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
                            },
                        }
                    }
                },
            },
        ),
    },
    "/v1/crawls/{crawl_id}": {
        "parameters": [CRAWL_ID],
        "get": _op("getCrawl", "Audit status", {**_ok(AUDIT_DETAIL), **_errors(ErrorCode.NOT_FOUND)}),
        "delete": _op(
            "cancelCrawl",
            "Cancel an audit",
            {
                **_ok(_obj({"status": {"type": "string", "enum": ["cancelled"]}})),
                **_errors(ErrorCode.NOT_FOUND, ErrorCode.CONFLICT),
            },
        ),
    },
    "/v1/crawls/{crawl_id}/report": {
        "parameters": [CRAWL_ID],
        "get": _op("getReport", "Full report", {**_ok(REPORT), **_errors(*_REPORT_ERRORS)}),
    },
    "/v1/crawls/{crawl_id}/issues": {
        "parameters": [CRAWL_ID],
        "get": _op(
            "listIssues",
            "Issues, paginated",
            {
                **_ok(_obj({"data": {"type": "array", "items": ISSUE_ROW}, "meta": META})),
                **_errors(ErrorCode.NOT_FOUND, ErrorCode.CRAWL_ARCHIVED, ErrorCode.VALIDATION_FAILED),
            },
            parameters=[
                {
                    "name": "check",
                    "in": "query",
                    "schema": {"type": "string", "minLength": 1, "maxLength": 100},
                },
                {
                    "name": "check_code",
                    "in": "query",
                    "schema": {"type": "string", "minLength": 1, "maxLength": 100},
                },
                {"name": "severity", "in": "query", "schema": SEVERITY},
                {
                    "name": "template",
                    "in": "query",
                    "schema": {"type": "string", "minLength": 1, "maxLength": 2048},
                },
                *_page_params(50, 200),
            ],
        ),
    },
    "/v1/crawls/{crawl_id}/pages": {
        "parameters": [CRAWL_ID],
        "get": _op(
            "listPages",
            "Pages, paginated",
            {
                **_ok(_obj({"data": {"type": "array", "items": PAGE_ROW}, "meta": META})),
                **_errors(ErrorCode.NOT_FOUND, ErrorCode.CRAWL_ARCHIVED, ErrorCode.VALIDATION_FAILED),
            },
            parameters=[
                {
                    "name": "status_code",
                    "in": "query",
                    "schema": {"type": "integer", "minimum": 0, "maximum": 999},
                },
                *_page_params(50, 200),
            ],
        ),
    },
    "/v1/crawls/{crawl_id}/templates": {
        "parameters": [CRAWL_ID],
        "get": _op(
            "getTemplates",
            "Issues by template",
            {
                **_ok(_obj({"crawl_id": INT, "templates": {"type": "array", "items": TEMPLATE_GROUP}})),
                **_errors(*_REPORT_ERRORS),
            },
        ),
    },
    "/v1/crawls/{crawl_id}/diff": {
        "parameters": [CRAWL_ID],
        "get": _op(
            "getDiff",
            "Changes against the previous audit",
            {**_ok(_obj({"crawl_id": INT, "diff": DIFF})), **_errors(*_REPORT_ERRORS)},
        ),
    },
    "/v1/crawls/{crawl_id}/fix-prompt": {
        "parameters": [CRAWL_ID],
        "get": _op(
            "getFixPrompt",
            "Markdown fix prompt for a coding agent (contains data from the crawled site)",
            {
                **_ok(_obj({"crawl_id": INT, "prompt": {"type": "string", "maxLength": 6000}})),
                **_errors(*_REPORT_ERRORS),
            },
        ),
    },
}

DOCUMENT: Final[dict[str, Any]] = {
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
        "schemas": {"Error": ERROR},
    },
    "security": [{"bearer": []}],
    "paths": PATHS,
}


class OpenApi:
    public = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = DOCUMENT
