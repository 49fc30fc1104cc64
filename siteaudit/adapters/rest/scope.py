"""What an audit covers at the REST door (docs/audits.md): the `urls`, `sitemap_only`, `include`,
`exclude`, `query_params` and `keep_params` of `POST /v1/crawls`, read strictly, and their OpenAPI schema.
The site's own (PATCH /v1/sites/{id}, POST /v1/sites/{id}/crawls) are declared inputs
(`services/sites/usecases.py`), read by the derived door from the same bounds."""

from collections.abc import Mapping
from typing import Any, Final

from siteaudit.adapters.rest.params import MAX_BODY_BYTES, Fields
from siteaudit.domain.scope import (
    MAX_KEEP_PARAMS,
    MAX_LISTED_URLS,
    MAX_PARAM_CHARS,
    MAX_PATTERN_CHARS,
    MAX_PATTERNS,
    PARAM_REGEX,
    PATTERN_REGEX,
    QueryParams,
)
from siteaudit.domain.site import MAX_URL_LENGTH

SCOPE_FIELDS: Final = ("urls", "sitemap_only", "include", "exclude", "query_params", "keep_params")
# A body with a full list of the longest URLs is read whole.
LIST_BODY_BYTES: Final = MAX_BODY_BYTES + MAX_LISTED_URLS * (MAX_URL_LENGTH + 8)

URLS_SCHEMA: Final[dict[str, Any]] = {
    "type": "array",
    "minItems": 1,
    "maxItems": MAX_LISTED_URLS,
    "items": {"type": "string", "minLength": 1, "maxLength": MAX_URL_LENGTH, "format": "uri"},
    "description": (
        "a list audit (docs/audits.md): exactly these URLs, nothing followed; one origin, duplicates "
        "removed, at most max_pages and the plan's page cap; others answer 422 validation_failed "
        "naming urls[i]"
    ),
}
SITEMAP_ONLY_SCHEMA: Final[dict[str, Any]] = {
    "type": "boolean",
    "default": False,
    "description": "audit what the sitemaps list, nothing followed (docs/audits.md)",
}


def patterns_schema(which: str) -> dict[str, Any]:
    return {
        "type": "array",
        "maxItems": MAX_PATTERNS,
        "items": {"type": "string", "pattern": PATTERN_REGEX},
        "description": (
            f"URLs {which}: a path prefix (/blog/) or a glob over path and query (*.pdf, /p/*?color=*)"
        ),
    }


QUERY_PARAMS_SCHEMA: Final[dict[str, Any]] = {
    "type": "string",
    "enum": [mode.value for mode in QueryParams],
    "description": "what is done with query strings; default: the site's setting, else keep",
}
KEEP_PARAMS_SCHEMA: Final[dict[str, Any]] = {
    "type": "array",
    "maxItems": MAX_KEEP_PARAMS,
    "items": {"type": "string", "pattern": PARAM_REGEX},
    "description": "the parameters query_params keep_listed keeps (only with keep_listed)",
}

SCOPE_PROPERTIES: Final[dict[str, Any]] = {
    "urls": URLS_SCHEMA,
    "sitemap_only": SITEMAP_ONLY_SCHEMA,
    "include": patterns_schema("kept (none: every URL)"),
    "exclude": patterns_schema("left out"),
    "query_params": QUERY_PARAMS_SCHEMA,
    "keep_params": KEEP_PARAMS_SCHEMA,
}
# What JSON Schema can say of their combinations: a list audit takes its URLs as listed.
SCOPE_EXCLUSIONS: Final[tuple[dict[str, Any], ...]] = (
    {"required": ["urls", "sitemap_only"], "properties": {"sitemap_only": {"const": True}}},
    *({"required": ["urls", name]} for name in ("include", "exclude", "query_params", "keep_params")),
    {"required": ["keep_params"], "properties": {"query_params": {"enum": ["drop", "keep"]}}},
)


def _strings(
    fields: Fields, body: Mapping[str, Any], name: str, *, most: int, longest: int
) -> tuple[str, ...] | None:
    """A list of strings as given (None: absent), typed and bounded; its grammar is the domain's."""
    if name not in body:
        return None
    value = body[name]
    if not isinstance(value, list) or len(value) > most:
        fields.bad[name] = f"must be a list of at most {most:,} strings"
        return None
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item or len(item) > longest:
            fields.bad[f"{name}[{i}]"] = f"must be a string of 1 to {longest:,} characters"
    return None if any(key.startswith(f"{name}[") for key in fields.bad) else tuple(value)


def scope_of(fields: Fields, body: Mapping[str, Any]) -> dict[str, Any]:
    """The scope inputs of a new audit's body, as `AuditRequest` keywords; faults into `fields.bad`."""
    sitemap_only = fields.boolean("sitemap_only")
    mode = fields.string("query_params", max_length=20, choices=tuple(m.value for m in QueryParams))
    urls = _strings(fields, body, "urls", most=MAX_LISTED_URLS, longest=MAX_URL_LENGTH)
    if urls is not None and not urls:
        fields.bad["urls"] = "must list at least one URL"
    return {
        "urls": urls,
        "sitemap_only": bool(sitemap_only),
        "include": _strings(fields, body, "include", most=MAX_PATTERNS, longest=MAX_PATTERN_CHARS),
        "exclude": _strings(fields, body, "exclude", most=MAX_PATTERNS, longest=MAX_PATTERN_CHARS),
        "query_params": QueryParams(mode) if mode is not None else None,
        "keep_params": _strings(fields, body, "keep_params", most=MAX_KEEP_PARAMS, longest=MAX_PARAM_CHARS),
    }
