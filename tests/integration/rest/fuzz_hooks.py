"""Schemathesis hooks for the schema-fuzz run (loaded through SCHEMATHESIS_HOOKS): the contract's own checks."""

import ast
import re
import threading
from typing import Any, Final

import schemathesis
from hypothesis.internal import lambda_sources, reflection

PROSE_RULES: Final = frozenset({"webhook_url"})
# Rules JSON Schema cannot state either, which the document states in prose: a CSS or XPath rule's grammar
# (`extract[i].expression`), a pages filter naming a rule the audit does not have (`extract_rule`,
# docs/extraction.md) and rule names unique in the audit, a staging cookie's `name=value` form and its
# user name's lengths, a header's `Name: value` form (docs/security.md), extract_value without extract_rule.
# docs/audits.md in prose: a list's URLs share one origin (its site's) and number at most max_pages;
# keep_listed needs keep_params, which a site may have saved.
PROSE_RULE_PATTERN: Final = re.compile(
    r"extract\[\d+\]\.(expression|name)|extract_rule|extract_value|cookies|headers|basic_auth_user"
    r"|urls(\[\d+\])?|keep_params"
)


class _OneParseAtATime:
    """The `ast` module as hypothesis sees it, with `parse` serialised. Hypothesis parses source to
    describe the lambdas of schemathesis' filters; two workers doing so at the same moment trip
    CPython 3.11's per-interpreter AST recursion counter ("SystemError: AST constructor recursion
    depth mismatch", a crash inside schemathesis that says nothing about our answers)."""

    _lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(ast, name)

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return ast.parse(*args, **kwargs)


for _module in (lambda_sources, reflection):
    if getattr(_module, "ast", None) is ast:
        _module.ast = _OneParseAtATime()  # type: ignore[attr-defined]


@schemathesis.check
def valid_requests_are_never_validation_failed(ctx: Any, response: Any, case: Any) -> bool | None:
    """Business rules may refuse schema-valid data (422 invalid_url, 409 site_not_verified, ...), but
    `validation_failed` means "malformed", which a schema-valid request never is."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    error = _json(response).get("error") or {}
    # JSON Schema cannot state every URL rule (host names, ports, no user info): the document states
    # them in prose for these fields, so only they may be refused as malformed.
    fields = set(error.get("fields") or {"?": ""})
    if error.get("code") == "validation_failed" and not all(
        field in PROSE_RULES or PROSE_RULE_PATTERN.fullmatch(field) for field in fields
    ):
        raise AssertionError(f"a schema-valid request answered 422 validation_failed: {response.text[:500]}")
    return None


@schemathesis.check
def every_error_is_the_envelope_with_a_request_id(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every answer carries X-Request-ID; every error is {error: {code, message}} as JSON (SPEC 7)."""
    if not response.headers.get("x-request-id"):
        raise AssertionError("no X-Request-ID header")
    if response.status_code < 400:
        return None
    error = _json(response).get("error")
    if not isinstance(error, dict) or not {"code", "message"} <= set(error):
        raise AssertionError(f"{response.status_code} without the error envelope: {response.text[:500]!r}")
    if response.status_code == 429 and not response.headers.get("retry-after"):
        raise AssertionError("429 without Retry-After")
    return None


def _json(response: Any) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
