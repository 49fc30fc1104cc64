"""Custom extraction rules read on a page by the parser (docs/extraction.md)."""

import pytest

from siteaudit.adapters.html import rules as rule_module
from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.domain.extraction import MAX_VALUE_CHARS, MAX_VALUES, Extracted, ExtractionRule, RuleKind
from siteaudit.domain.render import Rendered, RenderEnd
from siteaudit.services.crawl.render import rendered_page

ORIGIN = "https://retro-clock.example"
PAGE = b"""<!doctype html><html lang=en><head><title>Clock</title>
<script>var price = "<span class=price>fake</span>";</script></head><body>
<h1>Retro Clock</h1>
<p class="price">  \xe2\x82\xac12.<b>00</b> </p>
<p class="price">\xe2\x82\xac15.00</p>
<span itemprop="sku">RC-1</span><span itemprop="sku">RC-2</span>
<a class="buy" href="/cart?add=1">Buy</a><a class="buy">No href</a>
<img src=a.png><img src=b.png alt=b>
<noscript><p class="price">\xe2\x82\xac99</p></noscript>
</body></html>"""
HTML = [("content-type", "text/html; charset=utf-8")]
parser = LibraryPageParser()


def read(
    *rules: ExtractionRule, body: bytes = PAGE, headers: list[tuple[str, str]] = HTML
) -> tuple[Extracted, ...]:
    page = parser.page_facts(
        url=f"{ORIGIN}/clock", status=200, headers=headers, body=body, origin=ORIGIN, extract=rules
    )
    return page.extracted


def test_a_css_rule_reads_the_first_matchs_text_collapsed() -> None:
    assert read(ExtractionRule("price", "p.price")) == (Extracted("price", ("€12.00",)),)


def test_all_takes_every_match_and_attributes_skip_elements_without_them() -> None:
    assert read(
        ExtractionRule("prices", ".price", all=True),
        ExtractionRule("buy", "a.buy", take="attribute:href", all=True),
        ExtractionRule("images", "img", take="count"),
        ExtractionRule("missing", ".nothing"),
    ) == (
        Extracted("prices", ("€12.00", "€15.00", "€99")),  # the raw DOM: noscript content included
        Extracted("buy", ("/cart?add=1",)),
        Extracted("images", ("2",)),
        Extracted("missing", ()),
    )


def test_xpath_rules_read_nodes_text_attributes_and_computed_values() -> None:
    assert read(
        ExtractionRule("skus", "//span[@itemprop='sku']/text()", kind=RuleKind.XPATH, all=True),
        ExtractionRule("first_sku", "//span[@itemprop='sku']", kind=RuleKind.XPATH),
        ExtractionRule("href", "//a[@class='buy']", kind=RuleKind.XPATH, take="attribute:href"),
        ExtractionRule("buttons", "count(//a)", kind=RuleKind.XPATH),
        ExtractionRule("h1", "normalize-space(//h1)", kind=RuleKind.XPATH),
        ExtractionRule("spans", "//span", kind=RuleKind.XPATH, take="count"),
    ) == (
        Extracted("skus", ("RC-1", "RC-2")),
        Extracted("first_sku", ("RC-1",)),
        Extracted("href", ("/cart?add=1",)),
        Extracted("buttons", ("2",)),
        Extracted("h1", ("Retro Clock",)),
        Extracted("spans", ("2",)),
    )


def test_xpath_reads_a_page_in_another_encoding_as_decoded() -> None:
    body = "<html><body><p class=price>12 €</p></body></html>".encode("cp1252")
    assert read(
        ExtractionRule("css", ".price"),
        ExtractionRule("xpath", "//p", kind=RuleKind.XPATH),
        body=body,
        headers=[("content-type", "text/html; charset=windows-1252")],
    ) == (Extracted("css", ("12 €",)), Extracted("xpath", ("12 €",)))


def test_values_are_bounded_in_length_and_number() -> None:
    body = ("<html><body>" + "<p>" + "x" * 2_000 + "</p>" + "<i>i</i>" * 50 + "</body></html>").encode()
    (long, many) = read(ExtractionRule("long", "p"), ExtractionRule("many", "i", all=True), body=body)
    assert long.values == ("x" * MAX_VALUE_CHARS,)
    assert many.values == ("i",) * MAX_VALUES


def test_no_rules_read_nothing_and_pages_not_html_are_not_read() -> None:
    assert read() == ()
    assert (
        read(ExtractionRule("price", ".price"), body=b"price", headers=[("content-type", "text/plain")]) == ()
    )


@pytest.mark.parametrize(
    ("rule", "wrong"),
    [
        (ExtractionRule("a", "p[", kind=RuleKind.CSS), "not a valid CSS selector"),
        (ExtractionRule("a", "div >>> p"), "not a valid CSS selector"),
        (ExtractionRule("a", "//p[", kind=RuleKind.XPATH), "not a valid XPath 1.0 expression"),
        (ExtractionRule("a", "re:test(//p, 'x')", kind=RuleKind.XPATH), "not a valid XPath 1.0 expression"),
        (ExtractionRule("a", "//p[unknown-fn()]", kind=RuleKind.XPATH), "not a valid XPath 1.0 expression"),
    ],
)
def test_a_rule_that_does_not_parse_is_named_by_its_index(rule: ExtractionRule, wrong: str) -> None:
    good = ExtractionRule("good", "p.price")
    errors = parser.rule_errors([good, rule])
    assert list(errors) == [1]
    assert errors[1].startswith(wrong)


def test_a_rule_set_is_compiled_once_not_per_page() -> None:
    rule_module.compiled.cache_clear()
    rules = (ExtractionRule("price", ".price"), ExtractionRule("sku", "//span", kind=RuleKind.XPATH))
    for _ in range(5):
        read(*rules)
    info = rule_module.compiled.cache_info()
    assert (info.misses, info.hits) == (1, 4)


def test_a_rendered_page_is_read_on_its_rendered_dom() -> None:
    rules = (ExtractionRule("price", ".price"),)
    raw = parser.page_facts(
        url=f"{ORIGIN}/clock",
        status=200,
        headers=HTML,
        body=b"<html><body><div id=app></div></body></html>",
        origin=ORIGIN,
        extract=rules,
    )
    assert raw.extracted == (Extracted("price", ()),)
    dom = "<html><body><div id=app><p class=price>\u20ac12.00</p></div></body></html>"
    page = rendered_page(raw, Rendered(RenderEnd.DONE, html=dom), parser=parser, origin=ORIGIN, extract=rules)
    assert page.extracted == (Extracted("price", ("\u20ac12.00",)),)
    crashed = rendered_page(raw, Rendered(RenderEnd.CRASHED), parser=parser, origin=ORIGIN, extract=rules)
    assert crashed.extracted == raw.extracted
