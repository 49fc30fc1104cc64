"""Text for people: crawled data (titles, URLs, messages a service sent) made inert before a terminal or a
spreadsheet reads it (docs/security.md, "Human output: terminal escapes and spreadsheet formulas").

`line` is one line (a table cell, an `error:` line), `block` is several lines (a fix prompt), `cell` is a
spreadsheet cell, `csv_text` a whole CSV document (`csv_records` one of nested rows, flattened; `csv_pieces`
one streamed a piece at a time) and `json_text` a JSON document that keeps the exact data but carries none
of these characters raw.
"""

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

# What a terminal acts on or that reorders what is shown: C0 controls, DEL and C1 controls (ESC, CSI
# U+009B, OSC U+009D, ... start escape sequences; BEL, BS and CR rewrite what was printed), the
# bidirectional controls of the Trojan Source attack (ALM, LRM, RLM, LRE..RLO, LRI..PDI), the line and
# paragraph separators, and lone surrogates (which cannot be written as UTF-8 at all). Joiners (ZWJ,
# ZWNJ) and other format characters stay: emoji and several scripts need them and no terminal obeys them.
_UNSAFE: Final = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_ANY_UNSAFE: Final = re.compile(f"[{_UNSAFE}]")
_BREAKS: Final = re.compile("\r\n|[\t\n\v\f\r\x85\u2028\u2029]")  # whitespace in a line: one space
# In JSON every C0 control inside a string is already escaped; the raw newlines left are its indentation.
_UNSAFE_IN_JSON: Final = re.compile(f"[{_UNSAFE.removeprefix(chr(0) + '-' + chr(31))}]")

# OWASP "CSV Injection": a cell starting with one of these is read as a formula by a spreadsheet.
FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")
_NUMBER: Final = re.compile(r"-?[0-9]+(\.[0-9]+)?")  # a plain number is data, never a formula


def line(text: str) -> str:
    """`text` as one line with nothing a terminal acts on: line breaks and tabs become a space, every
    other unsafe character is removed."""
    return _ANY_UNSAFE.sub("", _BREAKS.sub(" ", text))


def block(text: str) -> str:
    """`text` keeping its lines and tabs, with every other unsafe character removed (CR too: it would let
    a line overwrite the one before it)."""
    rows = text.replace("\r\n", "\n").split("\n")
    return "\n".join("\t".join(line(part) for part in row.split("\t")) for row in rows)


def cell(value: object) -> str:
    """`value` as a spreadsheet cell: one line (as `line`), and a text a spreadsheet would run as a formula
    (starting with = + - @, a tab or a CR) led by a single quote, so it is shown, not run. A number (an int
    or a float, or text that is only a plain decimal number like -5 or -0.25) is data and stays as it is."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    text = str(value)
    flat = line(text)
    if _NUMBER.fullmatch(flat) and flat == text:
        return flat
    if text.startswith(FORMULA_START) or flat.lstrip(" ").startswith(FORMULA_START):
        return "'" + flat
    return flat


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A CSV document (RFC 4180, CRLF line ends): every cell passed through `cell` and quoted, as OWASP
    advises."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL)
    writer.writerow([cell(name) for name in header])
    writer.writerows([cell(value) for value in row] for row in rows)
    return out.getvalue()


def csv_pieces(header: Sequence[str], rows: Iterable[Sequence[Any]], *, size: int = 65_536) -> Iterator[str]:
    """`csv_text` of the same header and rows, a piece of about `size` characters at a time (a streamed
    download): only one piece is held, however many rows there are."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL)
    writer.writerow([cell(name) for name in header])
    for row in rows:
        writer.writerow([cell(value) for value in row])
        if out.tell() >= size:
            yield out.getvalue()
            out.seek(0)
            out.truncate()
    if out.tell():
        yield out.getvalue()


def pairs(value: Mapping[str, Any]) -> str:
    """A mapping as one cell's text: `key=value` pairs joined by `, ` (nested keys joined by dots, lists
    by `; `), every value as `cell` makes it; never JSON."""
    return _item(value)


LIST_SEPARATOR: Final = "; "


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A nested value as flat columns: a mapping's keys joined by dots (`totals.pages`), a list as one
    text of its items joined by `; ` (a mapping item as `key=value` pairs joined by `, `), so no cell ever
    holds JSON."""
    if isinstance(value, Mapping):
        columns: dict[str, Any] = {}
        for key, item in value.items():
            columns.update(flatten(item, f"{prefix}{key}."))
        return columns
    name = prefix.removesuffix(".")
    if isinstance(value, list | tuple):
        return {name: LIST_SEPARATOR.join(_item(item) for item in value)}
    return {name: value}


def _item(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{key}={cell(item)}" for key, item in flatten(value).items())
    return cell(value)


def csv_records(rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows (nested JSON objects) as a CSV document of `flatten`ed columns: every column any row has, in
    the order first seen; an empty text for no row."""
    flat = [flatten(row) for row in rows]
    header = list(dict.fromkeys(name for row in flat for name in row))
    if not header:
        return ""
    return csv_text(header, ([row.get(name) for name in header] for row in flat))


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """`data` as JSON with the exact values (a parser reads back the same strings) and no unsafe character
    written raw: each is written as its `\\uXXXX` escape. Other non-ASCII text (accents, scripts, emoji)
    stays readable."""
    raw = json.dumps(data, indent=indent, ensure_ascii=False, default=str)
    return _UNSAFE_IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", raw)
