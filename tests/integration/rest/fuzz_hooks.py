"""Schemathesis hooks for the schema-fuzz run (loaded through SCHEMATHESIS_HOOKS): the contract's own checks."""

import ast
import re
import threading
from typing import Any, Final

import schemathesis
from hypothesis.internal import lambda_sources, reflection

# The rules JSON Schema cannot state, which the document states in prose: a schema-valid request may be
# refused as malformed (422 validation_failed) only by one of them, as (field, what the refusal says). Every
# other rule of these inputs is in the document's schemas (patterns, lengths, counts, `not`,
# `dependentRequired`), so the fuzzer's valid data never meets it.
PROSE_RULES: Final = tuple(
    (re.compile(field), re.compile(says, re.DOTALL))
    for field, says in (
        # A URL's host name, port and user info (the webhook's).
        (r"webhook_url", r".*"),
        # Whether a CSS selector or an XPath 1.0 expression parses: a grammar, not a regular language.
        (r"extract\[\d+\]\.expression", r"not a valid (CSS selector|XPath 1\.0 expression): .*"),
        # Rule names unique across the rules: `uniqueItems` compares whole rules, not one member of each.
        (r"extract\[\d+\]\.name", r"'.*' is already the name of another rule"),
        # A pages filter naming one of the audit's rules: the document does not know an audit's rules.
        (r"extract_rule", r"the audit has no extraction rule named .*"),
        # extract_value only with extract_rule: an OpenAPI parameter cannot require another.
        (r"extract_value", r"give extract_rule too: .*"),
        # A staging header or cookie named once: `uniqueItems` compares whole entries, and header names
        # compare in any case.
        (r"headers|cookies", r".* is given twice"),
        # docs/audits.md: a list's URLs share one origin (its site's) and number at most max_pages; a list
        # excludes the crawl's own scope inputs; keep_listed needs keep_params, which a site may have saved.
        (r"urls(\[\d+\])?", r".*"),
        (r"keep_params", r".*"),
    )
)


def _prose_rule(field: str, says: str) -> bool:
    return any(name.fullmatch(field) and text.fullmatch(says) for name, text in PROSE_RULES)


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
    fields = error.get("fields") or {"?": ""}
    if error.get("code") == "validation_failed" and not all(
        _prose_rule(str(field), str(says)) for field, says in fields.items()
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
