"""The app's SVG plots: they parse, values land where the scale says, gaps and empty series are drawn and
told, and text from audited sites is escaped."""

import xml.etree.ElementTree as ET

from siteaudit.adapters.web.plots import (
    BOTTOM,
    HEIGHT,
    LEFT,
    RIGHT,
    TOP,
    WIDTH,
    Bar,
    Point,
    Scale,
    bar_plot,
    line_plot,
    x_of,
)

SVG = "{http://www.w3.org/2000/svg}"


def parse(markup: str) -> ET.Element:
    return ET.fromstring(str(markup))  # well-formed XML, or this raises


def svg_of(figure: ET.Element) -> ET.Element:
    found = figure.find(f"{SVG}svg")
    assert found is not None
    return found


def hidden_rows(figure: ET.Element) -> list[list[str]]:
    return [[td.text or "" for td in tr.findall("td")] for tr in figure.iter("tr") if tr.findall("td")]


def test_a_line_plot_puts_each_value_where_the_scale_says() -> None:
    points = [Point("2026-11-01", 0), Point("2026-11-08", 50), Point("2026-11-15", 100)]
    figure = parse(line_plot(points, ident="trend", title="Health score"))
    svg = svg_of(figure)
    assert svg.get("role") == "img" and svg.get("aria-labelledby") == "trend-title trend-desc"
    assert svg.findtext(f"{SVG}title") == "Health score"
    assert "3 values from 2026-11-01 to 2026-11-15, latest known 100" in (svg.findtext(f"{SVG}desc") or "")
    (line,) = svg.iter(f"{SVG}polyline")
    coordinates = [tuple(map(float, pair.split(","))) for pair in (line.get("points") or "").split()]
    bottom, top = HEIGHT - BOTTOM, TOP
    assert coordinates == [
        (LEFT, bottom),
        ((LEFT + WIDTH - RIGHT) / 2, (bottom + top) / 2),
        (WIDTH - RIGHT, top),
    ]
    dots = [(float(c.get("cx") or 0), float(c.get("cy") or 0)) for c in svg.iter(f"{SVG}circle")]
    assert dots == coordinates
    assert hidden_rows(figure) == [
        ["2026-11-01", "0", ""],
        ["2026-11-08", "50", ""],
        ["2026-11-15", "100", ""],
    ]


def test_the_scale_and_spacing_are_linear() -> None:
    scale = Scale(0, 100)
    assert scale.y(100) == TOP and scale.y(0) == HEIGHT - BOTTOM
    assert scale.y(25) == round(TOP + (HEIGHT - TOP - BOTTOM) * 0.75, 1)
    assert x_of(0, 5) == LEFT and x_of(4, 5) == WIDTH - RIGHT and x_of(0, 1) == (LEFT + WIDTH - RIGHT) / 2


def test_an_empty_series_says_so_in_the_picture_and_the_text() -> None:
    figure = parse(line_plot([], ident="t", title="Health score", empty="No finished audit yet."))
    svg = svg_of(figure)
    assert svg.findtext(f"{SVG}desc") == "No finished audit yet."
    assert not list(svg.iter(f"{SVG}polyline")) and not list(svg.iter(f"{SVG}circle"))
    assert [t.text for t in svg.iter(f"{SVG}text")] == ["No finished audit yet."]
    assert hidden_rows(figure) == []


def test_one_point_is_a_centred_dot_without_a_line() -> None:
    svg = svg_of(parse(line_plot([Point("2026-11-01", 72)], ident="t", title="Score")))
    assert not list(svg.iter(f"{SVG}polyline"))
    (dot,) = svg.iter(f"{SVG}circle")
    assert float(dot.get("cx") or 0) == (LEFT + WIDTH - RIGHT) / 2
    assert float(dot.get("cy") or 0) == Scale(0, 100).y(72)


def test_null_values_break_the_line_and_carry_their_reason() -> None:
    points = [
        Point("a", 80),
        Point("b", 82),
        Point("c", None, "No page could be crawled: the firewall challenged every request."),
        Point("d", 85),
        Point("e", 86),
    ]
    figure = parse(line_plot(points, ident="t", title="Score"))
    svg = svg_of(figure)
    assert len(list(svg.iter(f"{SVG}polyline"))) == 2  # before and after the gap
    (gap,) = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "gap"]
    assert "firewall challenged" in (gap.findtext(f"{SVG}title") or "")
    assert "1 without a value (gaps)" in (svg.findtext(f"{SVG}desc") or "")
    assert hidden_rows(figure)[2] == [
        "c",
        "none",
        "No page could be crawled: the firewall challenged every request.",
    ]


def test_an_all_null_series_draws_gaps_only() -> None:
    points = [Point("a", None, "failed"), Point("b", None, "cancelled")]
    svg = svg_of(parse(line_plot(points, ident="t", title="Score")))
    assert not list(svg.iter(f"{SVG}polyline")) and not list(svg.iter(f"{SVG}circle"))
    assert len([g for g in svg.iter(f"{SVG}g") if g.get("class") == "gap"]) == 2
    assert "none known; 2 without a value" in (svg.findtext(f"{SVG}desc") or "")


def test_hostile_text_is_escaped_everywhere() -> None:
    hostile = '</title><script>alert("x")</script><a href="javascript:1">&'
    markup = str(
        line_plot([Point(hostile, 10), Point("b", None, hostile)], ident='x" onload="alert(1)', title=hostile)
    ) + str(bar_plot([Bar(hostile, 3, 2, hostile)], ident="b", title=hostile))
    assert "<script" not in markup and 'javascript:1"' not in markup and 'onload="' not in markup
    for figure in (markup[: markup.index("</figure>") + 9], markup[markup.index("</figure>") + 9 :]):
        parsed = parse(figure)
        assert not list(parsed.iter("script")) and not list(parsed.iter(f"{SVG}script"))
        assert any(hostile in (t.text or "") for t in parsed.iter())  # shown as text, intact


def test_a_bar_plot_draws_values_from_zero_with_their_reference() -> None:
    bars = [Bar("d7", 40, 20), Bar("d14", 60, 40), Bar("d28", None, 80, "not measured yet")]
    figure = parse(bar_plot(bars, ident="impact", title="Clicks after the fix", reference_name="baseline"))
    svg = svg_of(figure)
    rects = list(svg.iter(f"{SVG}rect"))
    assert len(rects) == 2  # no bar for the value not measured
    scale = Scale(0, 80)
    for rect, value in zip(rects, (40, 60), strict=True):
        assert float(rect.get("y") or 0) == scale.y(value)
        assert float(rect.get("y") or 0) + float(rect.get("height") or 0) == scale.y(0)
    references = [
        float(line.get("y1") or 0) for line in svg.iter(f"{SVG}line") if line.get("class") == "reference"
    ]
    assert references == [scale.y(20), scale.y(40), scale.y(80)]
    assert "d7: 40 against baseline 20" in (svg.findtext(f"{SVG}desc") or "")
    assert hidden_rows(figure)[2] == ["d28", "none", "80", "not measured yet"]


def test_a_bar_plot_without_any_value_says_so() -> None:
    svg = svg_of(parse(bar_plot([Bar("d7", None)], ident="b", title="Clicks", empty="No figures yet.")))
    assert svg.findtext(f"{SVG}desc") == "No figures yet." and not list(svg.iter(f"{SVG}rect"))
