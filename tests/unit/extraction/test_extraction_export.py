"""The pages export of an audit with extraction rules (docs/extraction.md): a column a rule in CSV, its
values joined as a list's are and made safe for spreadsheets; an `extract` object in JSON Lines."""

import csv
import io
import json

from siteaudit.adapters.export import COLUMNS, pieces
from siteaudit.domain.extraction import Extracted
from siteaudit.ports.application import ExportKind
from siteaudit.ports.crawl import PageRow

SITE = "https://retro-clock.example"
ROWS = [
    PageRow(
        1,
        f"{SITE}/mantel",
        200,
        1,
        extracted=(Extracted("price", ("€49.00",)), Extracted("tags", ("=HYPERLINK(1)", "brass"))),
    ),
    PageRow(2, f"{SITE}/about.txt", 200, 1, extracted=(Extracted("price", ()), Extracted("tags", ()))),
]


def _export(format: str, rows: list[PageRow]) -> str:
    return b"".join(pieces(ExportKind.PAGES, format, iter(rows))).decode()


def test_csv_has_a_column_a_rule_and_guards_formulas() -> None:
    table = list(csv.reader(io.StringIO(_export("csv", ROWS))))
    assert table[0] == [*COLUMNS[ExportKind.PAGES], "extract.price", "extract.tags"]
    assert table[1][-2:] == ["€49.00", "'=HYPERLINK(1); brass"]
    assert table[2][-2:] == ["", ""]


def test_json_lines_carry_each_rules_values_by_name() -> None:
    lines = [json.loads(line) for line in _export("jsonl", ROWS).splitlines()]
    assert lines[0]["extract"] == {"price": ["€49.00"], "tags": ["=HYPERLINK(1)", "brass"]}
    assert lines[1]["extract"] == {"price": [], "tags": []}


def test_an_audit_without_rules_exports_as_before() -> None:
    plain = [PageRow(1, f"{SITE}/", 200, 0)]
    assert next(csv.reader(io.StringIO(_export("csv", plain)))) == list(COLUMNS[ExportKind.PAGES])
    assert "extract" not in json.loads(_export("jsonl", plain))
    assert _export("csv", []).splitlines() == [",".join(f'"{c}"' for c in COLUMNS[ExportKind.PAGES])]
