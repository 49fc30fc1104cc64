"""Custom extraction rules (docs/extraction.md): CSS through Lexbor on the page's tree, XPath through lxml.

A rule set is compiled once per process (`compiled`, cached by the rules, which are frozen values): CSS
selectors are checked once, XPath expressions compiled once. A page is parsed by lxml only when a rule is
XPath. XPath runs without EXSLT regular expressions (no pattern of the caller's reaches a regex engine).
"""

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import frozen
from lxml import etree  # type: ignore[import-untyped]
from lxml import html as lxml_html
from selectolax.lexbor import LexborHTMLParser, LexborNode

from siteaudit.domain.extraction import (
    MAX_VALUES,
    TAKE_COUNT,
    Extracted,
    ExtractionRule,
    RuleKind,
    bounded,
)

_PROBE: Final = "<html><head></head><body><p>probe</p></body></html>"


@frozen
class _Compiled:
    rule: ExtractionRule
    xpath: Any = None  # etree.XPath for an XPath rule


@frozen
class CompiledRules:
    rules: tuple[_Compiled, ...]
    needs_lxml: bool


def _css_error(expression: str) -> str | None:
    try:
        LexborHTMLParser(_PROBE).css(expression)
    except Exception as exc:  # selectolax raises several types for a bad selector
        return f"not a valid CSS selector: {str(exc)[:200] or type(exc).__name__}"
    return None


def _xpath(expression: str) -> Any:
    return etree.XPath(expression, regexp=False, smart_strings=False)


def _xpath_error(expression: str) -> str | None:
    try:
        compiled = _xpath(expression)
        compiled(lxml_html.document_fromstring(_PROBE))
    except (etree.XPathError, TypeError, ValueError) as exc:
        return f"not a valid XPath 1.0 expression: {str(exc)[:200] or type(exc).__name__}"
    return None


def rule_errors(rules: Sequence[ExtractionRule]) -> Mapping[int, str]:
    """What is wrong with each rule's expression, by index; a rule whose expression parses is absent."""
    found: dict[int, str] = {}
    for i, rule in enumerate(rules):
        why = _xpath_error(rule.expression) if rule.kind is RuleKind.XPATH else _css_error(rule.expression)
        if why is not None:
            found[i] = why
    return found


@functools.lru_cache(maxsize=64)
def compiled(rules: tuple[ExtractionRule, ...]) -> CompiledRules:
    """The rules ready to run on pages; a rule that does not parse is left out (the doors refuse them
    before an audit starts, so this happens only to rules stored before a parser change)."""
    bad = rule_errors(rules)
    kept = tuple(
        _Compiled(rule, _xpath(rule.expression) if rule.kind is RuleKind.XPATH else None)
        for i, rule in enumerate(rules)
        if i not in bad
    )
    return CompiledRules(kept, needs_lxml=any(c.xpath is not None for c in kept))


def _css_values(tree: LexborHTMLParser, rule: ExtractionRule) -> tuple[str, ...]:
    nodes: list[LexborNode] = tree.css(rule.expression)
    if rule.take == TAKE_COUNT:
        return (str(len(nodes)),)
    attribute = rule.attribute
    values: list[str] = []
    for node in nodes:
        if attribute is None:
            value = node.text(deep=True) or ""
        else:
            found = node.attrs.get(attribute)
            if found is None:
                continue
            value = found
        values.append(bounded(value))
        if not rule.all or len(values) >= MAX_VALUES:
            break
    return tuple(values)


def _xpath_values(document: Any, item: _Compiled) -> tuple[str, ...]:
    rule = item.rule
    try:
        result = item.xpath(document)
    except etree.XPathError:
        return ()
    if not isinstance(result, list):  # string(), count(), a boolean or a number
        if isinstance(result, bool):
            text = "true" if result else "false"
        elif isinstance(result, float):
            text = str(int(result)) if result.is_integer() else repr(result)
        else:
            text = str(result)
        return (bounded(text),)
    if rule.take == TAKE_COUNT:
        return (str(len(result)),)
    attribute = rule.attribute
    values: list[str] = []
    for node in result:
        if isinstance(node, str):
            value: str | None = node
        elif attribute is not None:
            value = node.get(attribute) if hasattr(node, "get") else None
        else:
            value = node.text_content() if hasattr(node, "text_content") else None
        if value is None:
            continue
        values.append(bounded(value))
        if not rule.all or len(values) >= MAX_VALUES:
            break
    return tuple(values)


def extract_values(tree: LexborHTMLParser, source: bytes, rules: CompiledRules) -> tuple[Extracted, ...]:
    """Each rule's values on one page, in the rules' order: CSS on `tree` (before anything is removed from
    it), XPath on lxml's parse of `source` (the page's UTF-8 bytes)."""
    document = None
    if rules.needs_lxml:
        try:
            document = lxml_html.document_fromstring(
                source, parser=lxml_html.HTMLParser(encoding="utf-8", no_network=True)
            )
        except (etree.ParserError, ValueError):
            document = None
    found: list[Extracted] = []
    for item in rules.rules:
        if item.xpath is None:
            values = _css_values(tree, item.rule)
        elif document is None:
            values = ("0",) if item.rule.take == TAKE_COUNT else ()
        else:
            values = _xpath_values(document, item)
        found.append(Extracted(item.rule.name, values))
    return tuple(found)
