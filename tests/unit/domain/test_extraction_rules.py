"""The extraction rules' own rules (docs/extraction.md): names, bounds, how many, and the pages filter."""

import pytest

from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.extraction import (
    MAX_RULES,
    Extracted,
    ExtractionRule,
    ExtractMatch,
    bounded,
    check_rules,
    every_rule,
    filter_errors,
    rule_syntax,
)


def test_good_rules_pass() -> None:
    check_rules(
        [ExtractionRule("price", ".price"), ExtractionRule("og_image", "meta", take="attribute:content")]
    )


def test_names_takes_and_expressions_are_checked_by_field() -> None:
    rules = [
        ExtractionRule("Price", ".price"),
        ExtractionRule("sku", ""),
        ExtractionRule("sku", "x" * 501),
        ExtractionRule("img", "img", take="attribute:"),
        ExtractionRule("n", "img", take="html"),
    ]
    assert rule_syntax(rules) == {
        "extract[0].name": "must be 1-40 characters from a-z 0-9 _, starting with a letter",
        "extract[1].expression": "must be 1-500 characters",
        "extract[2].name": "'sku' is already the name of another rule",
        "extract[2].expression": "must be 1-500 characters",
        "extract[3].take": 'must be "text", "count" or "attribute:<name>"',
        "extract[4].take": 'must be "text", "count" or "attribute:<name>"',
    }


def test_at_most_twenty_rules() -> None:
    rules = [ExtractionRule(f"r{i}", "p") for i in range(MAX_RULES + 1)]
    assert rule_syntax(rules) == {"extract": "at most 20 rules"}
    assert rule_syntax(rules[:MAX_RULES]) == {}


def test_the_parsers_grammar_faults_join_the_others_in_one_refusal() -> None:
    with pytest.raises(ValidationFailed) as refused:
        check_rules([ExtractionRule("a", "p["), ExtractionRule("B", "p")], {0: "not a valid CSS selector"})
    assert set(refused.value.fields) == {"extract[0].expression", "extract[1].name"}


def test_values_are_collapsed_and_cut() -> None:
    assert bounded("  €12\n  00 ") == "€12 00"
    assert bounded("y" * 600) == "y" * 500


def test_a_filter_matches_a_value_exactly_or_any_value() -> None:
    extracted = (Extracted("price", ("€12", "€15")), Extracted("sku", ()))
    assert ExtractMatch("price", "€15").matches(extracted)
    assert not ExtractMatch("price", "€1").matches(extracted)
    assert ExtractMatch("price").matches(extracted)
    assert not ExtractMatch("sku").matches(extracted)
    assert not ExtractMatch("other").matches(extracted)


def test_a_filter_on_a_rule_the_audit_lacks_is_named_by_its_field() -> None:
    rules = [ExtractionRule("price", ".price")]
    assert filter_errors(ExtractMatch("price", "1"), rules) == {}
    assert filter_errors(ExtractMatch("cost", "1"), rules) == {
        "extract_rule": "the audit has no extraction rule named 'cost' (its rules: price)"
    }
    assert list(filter_errors(ExtractMatch("cost"), [])) == ["extract_rule"]


def test_every_rule_is_on_a_row_in_the_rules_order() -> None:
    rules = [ExtractionRule("price", ".price"), ExtractionRule("sku", ".sku")]
    assert every_rule((Extracted("sku", ("1",)),), rules) == (
        Extracted("price", ()),
        Extracted("sku", ("1",)),
    )
