"""Custom extraction at the REST door (docs/extraction.md): the `extract` rules of a declared body and
their OpenAPI schema. The pages filter and the values on each row are the declared pages list's
(`services/audits/`)."""

from collections.abc import Mapping
from typing import Any, Final

from siteaudit.domain.extraction import (
    MAX_EXPRESSION_CHARS,
    MAX_RULES,
    ExtractionRule,
    RuleKind,
    rule_faults,
)

RULE_KEYS: Final = ("name", "expression", "kind", "take", "all")

RULES_SCHEMA: Final[dict[str, Any]] = {
    "type": "array",
    "maxItems": MAX_RULES,
    # Two equal rules share a name: refused. JSON Schema cannot say that names are unique across the
    # rules, nor whether an expression parses: the description says so.
    "uniqueItems": True,
    "description": (
        "extraction rules read on each HTML page (docs/extraction.md), each name used once; a rule that "
        "does not parse answers 422 validation_failed naming extract[i].expression"
    ),
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "expression"],
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,39}$"},
            "expression": {"type": "string", "minLength": 1, "maxLength": MAX_EXPRESSION_CHARS},
            "kind": {"type": "string", "enum": [k.value for k in RuleKind], "default": "css"},
            "take": {
                "type": "string",
                "pattern": "^(text|count|attribute:[A-Za-z_:][A-Za-z0-9_:.-]{0,99})$",
                "default": "text",
            },
            "all": {"type": "boolean", "default": False},
        },
    },
}


def given_rules(
    body: Mapping[str, Any], bad: dict[str, str], *, field: str = "extract"
) -> tuple[ExtractionRule, ...] | None:
    """The rules of the body's input `field` (None: not given), strictly typed; each fault added to `bad`
    by field (`extract[1].kind`). Names, lengths and grammar are judged by the application, which names the
    same fields."""
    given = body.get(field)
    if given is None:
        if field in body:
            bad[field] = "must be a list of rules, not null"
        return None
    if not isinstance(given, list):
        bad[field] = "must be a list of rules"
        return None
    if len(given) > MAX_RULES:
        bad[field] = f"at most {MAX_RULES} rules"
        return None
    rules: list[ExtractionRule] = []
    for i, item in enumerate(given):
        at = f"{field}[{i}]"
        if not isinstance(item, dict):
            bad[at] = "must be an object with name and expression"
            continue
        for key in sorted(set(item) - set(RULE_KEYS)):
            bad[f"{at}.{key}"[:200]] = "unknown field"
        name, expression = item.get("name"), item.get("expression")
        kind, take, every = item.get("kind", "css"), item.get("take", "text"), item.get("all", False)
        for key, value in (("name", name), ("expression", expression), ("take", take)):
            if not isinstance(value, str):
                bad[f"{at}.{key}"] = "is required" if value is None and key != "take" else "must be a string"
        if kind not in ("css", "xpath"):
            bad[f"{at}.kind"] = "must be one of: css, xpath"
        if not isinstance(every, bool):
            bad[f"{at}.all"] = "must be true or false"
        if (
            isinstance(name, str)
            and isinstance(expression, str)
            and isinstance(take, str)
            and kind in ("css", "xpath")
            and isinstance(every, bool)
        ):
            rule = ExtractionRule(name, expression, kind=RuleKind(kind), take=take, all=every)
            rules.append(rule)
            # Its own faults now, so that one answer names them with the others' typing faults.
            bad.update(rule_faults(rule, at=at))
    return tuple(rules)
