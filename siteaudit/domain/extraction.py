"""Custom extraction (docs/extraction.md): named CSS or XPath rules an audit reads on each HTML page.

A rule says where (`kind`, `expression`), what (`take`: the text, an attribute, or how many match) and how
many (`all`: every match, up to `MAX_VALUES`, or the first). What it reads is the page's, never ours: the
values are bounded (`MAX_VALUE_CHARS`) and every door treats them as untrusted data.
"""

import enum
import re
from collections.abc import Mapping, Sequence
from typing import Final

from attrs import frozen

from siteaudit.domain.error import ValidationFailed

MAX_RULES: Final = 20
MAX_EXPRESSION_CHARS: Final = 500
MAX_VALUES: Final = 10  # values kept of one rule on one page when it takes every match
MAX_VALUE_CHARS: Final = 500  # a longer value is cut to this many characters
NAME_PATTERN: Final = re.compile(r"[a-z][a-z0-9_]{0,39}")
_ATTRIBUTE: Final = re.compile(r"[A-Za-z_:][A-Za-z0-9_:.-]{0,99}")
TAKE_TEXT: Final = "text"
TAKE_COUNT: Final = "count"
ATTRIBUTE_PREFIX: Final = "attribute:"


class RuleKind(enum.StrEnum):
    CSS = "css"
    XPATH = "xpath"


@frozen
class ExtractionRule:
    """One named rule. `take`: "text" (the element's text, whitespace collapsed), "attribute:<name>" (that
    attribute's value; elements without it are skipped), or "count" (how many elements match, one value).
    An XPath expression that selects text or attribute nodes, or computes a string or number, gives those
    values whatever `take` says (but "count")."""

    name: str
    expression: str
    kind: RuleKind = RuleKind.CSS
    take: str = TAKE_TEXT
    all: bool = False  # every match (up to MAX_VALUES), else the first

    @property
    def attribute(self) -> str | None:
        return self.take[len(ATTRIBUTE_PREFIX) :] if self.take.startswith(ATTRIBUTE_PREFIX) else None


@frozen
class Extracted:
    """What one rule read on one page: its values in document order (a count is one value)."""

    name: str
    values: tuple[str, ...]


def bounded(value: str) -> str:
    """A value as stored: whitespace collapsed, cut to MAX_VALUE_CHARS characters."""
    return " ".join(value.split())[:MAX_VALUE_CHARS]


def rule_syntax(rules: Sequence[ExtractionRule], *, field: str = "extract") -> dict[str, str]:
    """What is wrong with each rule's name, expression and take, by field (`extract[0].name`, ...); the
    expressions' grammar is the parser's to judge (`PageParser.rule_errors`)."""
    bad: dict[str, str] = {}
    if len(rules) > MAX_RULES:
        bad[field] = f"at most {MAX_RULES} rules"
        return bad
    seen: set[str] = set()
    for i, rule in enumerate(rules):
        at = f"{field}[{i}]"
        bad.update(rule_faults(rule, at=at))
        if rule.name in seen and f"{at}.name" not in bad:
            bad[f"{at}.name"] = f"{rule.name!r} is already the name of another rule"
        seen.add(rule.name)
    return bad


def rule_faults(rule: ExtractionRule, *, at: str) -> dict[str, str]:
    """What is wrong with one rule on its own (its name, expression and take), by field under `at`."""
    bad: dict[str, str] = {}
    if not NAME_PATTERN.fullmatch(rule.name):
        bad[f"{at}.name"] = "must be 1-40 characters from a-z 0-9 _, starting with a letter"
    # A blank expression has the length; that it parses as nothing is the parser's to say (its grammar).
    if not rule.expression or len(rule.expression) > MAX_EXPRESSION_CHARS:
        bad[f"{at}.expression"] = f"must be 1-{MAX_EXPRESSION_CHARS} characters"
    attribute = rule.attribute
    if rule.take not in (TAKE_TEXT, TAKE_COUNT) and (
        attribute is None or not _ATTRIBUTE.fullmatch(attribute)
    ):
        bad[f"{at}.take"] = 'must be "text", "count" or "attribute:<name>"'
    return bad


def check_rules(
    rules: Sequence[ExtractionRule], grammar: Mapping[int, str] | None = None, *, field: str = "extract"
) -> None:
    """Raise ValidationFailed naming every bad field of `rules`; `grammar` is what the parser found wrong
    with the expressions, by rule index."""
    bad = rule_syntax(rules, field=field)
    for i, why in (grammar or {}).items():
        bad.setdefault(f"{field}[{i}].expression", why)
    if bad:
        raise ValidationFailed(bad)


@frozen
class ExtractMatch:
    """A pages filter (docs/extraction.md): pages where rule `name` read `value` (one of its values,
    exactly), or read anything at all when `value` is None."""

    name: str
    value: str | None = None

    def matches(self, extracted: Sequence[Extracted]) -> bool:
        for found in extracted:
            if found.name == self.name:
                return bool(found.values) if self.value is None else self.value in found.values
        return False


def every_rule(extracted: Sequence[Extracted], rules: Sequence[ExtractionRule]) -> tuple[Extracted, ...]:
    """A page's values with every rule of its audit, in the rules' order: a rule not read on the page (not
    HTML, a redirect, an error) has no values."""
    found = {e.name: e for e in extracted}
    return tuple(found.get(rule.name, Extracted(rule.name, ())) for rule in rules)


def filter_errors(match: ExtractMatch, rules: Sequence[ExtractionRule]) -> dict[str, str]:
    """What is wrong with a pages filter on an audit with these rules, by the filter's query field."""
    if any(rule.name == match.name for rule in rules):
        return {}
    known = ", ".join(rule.name for rule in rules) or "none"
    return {
        "extract_rule": f"the audit has no extraction rule named {match.name[:40]!r} (its rules: {known})"
    }
