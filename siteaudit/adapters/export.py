"""An audit's rows as a file to download (`GET /v1/crawls/{id}/export` and the app's report page): CSV,
every cell made safe for a spreadsheet by `siteaudit.adapters.text`, or JSON Lines, one object a line.

Both are written a piece at a time from the iterator the application streams from the crawl store, so a
download holds one piece and one batch of rows in memory however large the audit (docs/app.md, "Reports").
"""

import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from siteaudit.adapters import text
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.issue import Issue
from siteaudit.ports.application import ExportKind, ExportRow
from siteaudit.ports.crawl import LinkLine, PageRow

KINDS: Final = tuple(kind.value for kind in ExportKind)
# Format -> (media type, file extension).
FORMATS: Final[Mapping[str, tuple[str, str]]] = {
    "csv": ("text/csv; charset=utf-8", "csv"),
    "jsonl": ("application/jsonl; charset=utf-8", "jsonl"),
}
COLUMNS: Final[Mapping[ExportKind, tuple[str, ...]]] = {
    ExportKind.PAGES: (
        "url",
        "status_code",
        "title",
        "meta_description",
        "word_count",
        "depth",
        "template",
        "in_sitemap",
        "content_type",
        "blocked_by",
        "fetch_error",
        "excluded_by",
    ),
    ExportKind.ISSUES: ("check_code", "severity", "url", "template", "details"),
    ExportKind.LINKS: ("source", "target", "kind", "nofollow", "internal"),
}
PIECE: Final = 65_536  # characters per piece written to the client


def chosen(params: Mapping[str, Any]) -> tuple[ExportKind, str]:
    """`kind` (required) and `format` (default csv) from a query string; ValidationFailed naming each bad
    or unknown parameter."""
    bad = {name: "unknown parameter" for name in params if name not in ("kind", "format")}
    kind, format = params.get("kind"), params.get("format", "csv")
    if kind is None:
        bad["kind"] = f"is required: one of {', '.join(KINDS)}"
    elif not isinstance(kind, str) or kind not in KINDS:  # a repeated parameter is a list
        bad["kind"] = f"must be one of: {', '.join(KINDS)}"
    if not isinstance(format, str) or format not in FORMATS:
        bad["format"] = f"must be one of: {', '.join(FORMATS)}"
    if bad or not isinstance(kind, str) or not isinstance(format, str):
        raise ValidationFailed(bad)
    return ExportKind(kind), format


def record(row: ExportRow) -> dict[str, Any]:
    """One row as the export's JSON object (its keys are `COLUMNS` of its kind, in that order; a page of an
    audit with extraction rules adds `extract`, each rule's values by its name)."""
    if isinstance(row, PageRow):
        return {
            "url": row.url,
            "status_code": row.status_code,
            "title": row.title,
            "meta_description": row.meta_description,
            "word_count": row.word_count,
            "depth": row.depth,
            "template": row.template,
            "in_sitemap": row.in_sitemap,
            "content_type": row.content_type,
            "blocked_by": row.blocked_by,
            "fetch_error": None if row.fetch_error is None else row.fetch_error.value,
            "excluded_by": row.excluded_by,
            # The audit's extraction rules (docs/extraction.md): only on the rows of an audit with rules.
            **({"extract": {e.name: list(e.values) for e in row.extracted}} if row.extracted else {}),
        }
    if isinstance(row, Issue):
        return {
            "check_code": row.check_code,
            "severity": row.severity.value,
            "url": row.url,
            "template": row.template,
            "details": dict(row.details),
        }
    link: LinkLine = row
    return {
        "source": link.source,
        "target": link.target,
        "kind": link.kind.value,
        "nofollow": link.nofollow,
        "internal": link.internal,
    }


def _cells(rows: Iterable[ExportRow]) -> Iterator[list[Any]]:
    for row in rows:
        values = record(row)
        details = values.get("details")
        if isinstance(details, Mapping):
            values["details"] = text.pairs(details)
        extracted = values.pop("extract", None)
        if isinstance(extracted, Mapping):  # a column a rule, its values joined as a list's are
            values.update({f"extract.{name}": text.LIST_SEPARATOR.join(v) for name, v in extracted.items()})
        yield list(values.values())


def _header(kind: ExportKind, rows: Iterator[ExportRow]) -> tuple[tuple[str, ...], Iterator[ExportRow]]:
    """The CSV header and the rows: the pages of an audit with extraction rules add a column a rule,
    named by the first row (every row of such an audit carries every rule, in the rules' order)."""
    if kind is not ExportKind.PAGES:
        return COLUMNS[kind], rows
    first = next(rows, None)
    if first is None:
        return COLUMNS[kind], rows
    rules = tuple(f"extract.{e.name}" for e in first.extracted) if isinstance(first, PageRow) else ()
    return COLUMNS[kind] + rules, itertools.chain((first,), rows)


def _json_lines(rows: Iterable[ExportRow]) -> Iterator[str]:
    lines: list[str] = []
    held = 0
    for row in rows:
        line = text.json_text(record(row), indent=None)
        lines.append(line)
        held += len(line) + 1
        if held >= PIECE:
            yield "\n".join(lines) + "\n"
            lines, held = [], 0
    if lines:
        yield "\n".join(lines) + "\n"


def pieces(kind: ExportKind, format: str, rows: Iterable[ExportRow]) -> Iterator[bytes]:
    """The file's bytes, a piece at a time; `format` is one of `FORMATS`. Closing this closes `rows`."""
    try:
        if format == "csv":
            header, streamed = _header(kind, iter(rows))
            for piece in text.csv_pieces(header, _cells(streamed), size=PIECE):
                yield piece.encode()
        else:
            for piece in _json_lines(rows):
                yield piece.encode()
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()


def file_name(crawl_id: int, kind: ExportKind, format: str) -> str:
    return f"crawl-{crawl_id}-{kind.value}.{FORMATS[format][1]}"
