"""siteaudit.adapters.text: no line, block, CSV cell or JSON document it gives carries a character a
terminal acts on; a cell a spreadsheet would run as a formula is led by a quote; ordinary text and numbers
come through unchanged (docs/security.md, "Human output: terminal escapes and spreadsheet formulas")."""

import csv
import io
import json
import re
import string

from hypothesis import assume, example, given
from hypothesis import strategies as st

from siteaudit.adapters.text import (
    FORMULA_START,
    block,
    cell,
    csv_pieces,
    csv_text,
    json_text,
    line,
    pairs,
)

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
ESCAPES = ["\x1b]0;title\x07", "\x1b[2J", "\x1b]8;;https://evil.example/\x1b\\", "\x9b31m", "\u202e", "\r"]

anything = st.text(st.characters(codec=None, categories=None))  # every code point, surrogates too
# Text people write: letters of any script, digits, punctuation and spaces, no control or bidi character.
ordinary = st.text(
    st.characters(categories=["L", "M", "N", "P", "S", "Zs"], exclude_characters="\u2028\u2029")
).filter(lambda t: not t.startswith(FORMULA_START) and not t.lstrip(" ").startswith(FORMULA_START))


@given(anything)
@example("".join(ESCAPES))
def test_a_line_has_no_unsafe_character_and_no_line_break(text: str) -> None:
    assert not UNSAFE.search(line(text))


@given(anything)
def test_a_block_keeps_only_line_breaks_and_tabs(text: str) -> None:
    assert not UNSAFE.search(block(text).replace("\n", "").replace("\t", ""))


@given(ordinary)
@example("Crème brûlée – 東京の時計 👩‍💻")
@example("a\u200db\u200cc")  # joiners are part of words and emoji
def test_ordinary_text_comes_through_unchanged(text: str) -> None:
    assert line(text) == text
    assert block(text) == text
    assert cell(text) == text


@given(st.lists(ordinary, max_size=5), st.sampled_from(["\n", "\t"]))
def test_a_block_keeps_its_lines_and_tabs(parts: list[str], separator: str) -> None:
    text = separator.join(parts)
    assert block(text) == text


@given(st.sampled_from(FORMULA_START), anything)
@example("=", 'HYPERLINK("https://evil.example/")')
@example("-", "2+3+cmd|' /C calc'!A0")
def test_a_formula_is_always_led_by_a_quote(start: str, rest: str) -> None:
    # A plain number such as -5 or -0 is data, not a formula (`cell` keeps it: test_numbers_are_data).
    assume(not NUMBER.fullmatch(start + rest))
    written = cell(start + rest)
    assert written.startswith("'") and not UNSAFE.search(written)


@given(st.integers() | st.floats(allow_nan=False, allow_infinity=False))
@example(-5)
def test_numbers_are_data(number: float) -> None:
    assert cell(number) == str(number)
    assert cell(str(number)) == str(number) or not NUMBER.fullmatch(str(number))


def test_leading_spaces_do_not_hide_a_formula() -> None:
    assert cell("  =1+1") == "'  =1+1"
    assert cell("\t=1+1") == "' =1+1"


@given(st.lists(st.lists(anything | st.integers(), min_size=2, max_size=2), max_size=5))
@example([["=cmd", "\x1b[2Jx"]])
def test_every_csv_cell_is_quoted_inert_and_reads_back(rows: list[list[object]]) -> None:
    written = csv_text(["a", "b"], rows)
    assert not UNSAFE.search(written.replace("\r\n", ""))
    assert all(record.startswith('"') for record in written.split("\r\n") if record)
    read = list(csv.reader(io.StringIO(written, newline="")))
    assert read == [["a", "b"], *([cell(v) for v in row] for row in rows)]
    formulas = [v for row in read for v in row if v.startswith(FORMULA_START) and not NUMBER.fullmatch(v)]
    assert not formulas


@given(
    st.recursive(
        st.none() | anything | st.integers(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(anything, inner, max_size=3),
    )
)
@example({"title": "".join(ESCAPES)})
def test_json_keeps_the_exact_data_without_a_raw_unsafe_character(data: object) -> None:
    written = json_text(data)
    assert not UNSAFE.search(written.replace("\n", ""))
    assert json.loads(written) == data


def test_ascii_printable_is_untouched() -> None:
    assert line(string.printable.strip()) == string.printable.strip().replace("\t", " ").replace(
        "\n", " "
    ).replace("\r", " ").replace("\x0b", " ").replace("\x0c", " ")


@given(
    st.lists(st.lists(st.one_of(anything, st.integers(), st.none()), min_size=2, max_size=2), max_size=40),
    st.integers(min_value=1, max_value=200),
)
def test_a_streamed_csv_is_the_same_document_a_piece_at_a_time(rows: list[list[object]], size: int) -> None:
    pieces = list(csv_pieces(["url", "title"], iter(rows), size=size))
    assert "".join(pieces) == csv_text(["url", "title"], rows)
    assert all(
        len(piece) < size + 4 * 200 for piece in pieces[:-1]
    )  # a piece ends after the row that filled it


def test_a_mapping_is_one_cell_of_pairs_never_json() -> None:
    value = {"target": "=cmd|' /C calc'!A0", "status": 404, "seen": ["a", "b"], "inner": {"x": 1}}
    assert pairs(value) == "target='=cmd|' /C calc'!A0, status=404, seen=a; b, inner.x=1"
