# Over 400 lines: layout-keeping edits of TOML and JSON, each checked to mean the old settings plus the entry.
"""Edits of a person's TOML and JSON configuration files that keep the file as it was written: only the
lines of the edited table (TOML) or the characters of the edited member (JSON) change; comments stay with
the table they sit above, blank lines elsewhere are neither added nor removed, CRLF stays CRLF, and a JSON
file keeps its key order, its indentation (two spaces, four, a tab, or one line) and everything else's
spacing.

Used by `siteaudit.adapters.agents` to merge the `siteaudit` MCP server into agents' files. Each function
returns the edited text, or None when the file has a shape it does not edit in place (a line whose
strings or brackets it cannot follow, a JSON value that is not an object where one is needed, ...): the
caller then writes the whole document out, and uses a text only once it has checked that the text means
the old settings plus (or minus) the entry (`agents._chosen`).

TOML: a table's lines are its header and the lines below it up to the next header, less the blank lines
and the comment lines directly above the next header (those belong to it: a comment stays attached to
the table it sits above). A new table goes after the last table of its super-table (else at the end),
separated by a blank line when the file separates its tables so.
"""

import json
import re
from collections.abc import Callable
from typing import Any, Final

import tomlkit
import tomlkit.exceptions
from attrs import frozen

_LINE: Final = re.compile(r"[^\n]*\n|[^\n]+$")
_WS: Final = re.compile(r"[ \t\n\r]*")
_DECODER: Final = json.JSONDecoder()


def newline_of(text: str) -> str:
    """The file's line ending: CRLF when its first line ends so, else LF."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


# --- TOML --------------------------------------------------------------------------------------------------


@frozen
class _Block:
    path: tuple[str, ...]  # the header's keys (`[mcp_servers.docs]` -> ("mcp_servers", "docs"))
    lead: int  # the first line of the comments directly above the header (the header when none)
    header: int
    end: int  # one past its last line that is neither blank nor a comment of the next table


def _kinds(lines: list[str]) -> list[tuple[str, str]] | None:
    """Each line's kind, `blank`, `comment`, `header` or `other`, and its text; None when a line's
    strings cannot be followed (the edit is then left to the caller's whole-document write). A line
    inside a multi-line string or array is `other`, whatever it looks like."""
    kinds: list[tuple[str, str]] = []
    open_string: str | None = None  # the delimiter of a multi-line string open at the end of a line
    depth = 0  # the brackets of a multi-line array (or inline table) open at the end of a line
    for line in lines:
        stripped = line.strip()
        inside = open_string is not None or depth > 0
        if not inside and not stripped:
            kinds.append(("blank", line))
            continue
        if not inside and stripped.startswith("#"):
            kinds.append(("comment", line))
            continue
        if not inside and stripped.startswith("["):
            kinds.append(("header", line))
            scanned = _scan(line, None, 0)
            if scanned is None or scanned != (None, 0):  # a header opens nothing that goes on
                return None
            continue
        scanned = _scan(line, open_string, depth)
        if scanned is None:
            return None
        open_string, depth = scanned
        kinds.append(("other", line))
    return None if open_string is not None or depth else kinds


def _scan(line: str, open_string: str | None, depth: int) -> tuple[str | None, int] | None:
    """The multi-line string and bracket depth still open after `line`; None for a string that does not
    close on its line or brackets that close more than opened."""
    i = 0
    while i < len(line):
        if open_string is not None:
            close = line.find(open_string, i)
            while open_string == '"""' and close > 0 and _escaped(line, close):
                close = line.find(open_string, close + 1)
            if close < 0:
                return open_string, depth
            i, open_string = close + 3, None
            while i < len(line) and line[i] == line[i - 1]:  # `""""` ends with a quote in the string
                i += 1
            continue
        char = line[i]
        if char == "#":
            break
        if line.startswith(('"""', "'''"), i):
            open_string, i = line[i : i + 3], i + 3
            continue
        if char in "\"'":
            close = line.find(char, i + 1)
            while char == '"' and close > 0 and _escaped(line, close):
                close = line.find(char, close + 1)
            if close < 0:
                return None
            i = close + 1
            continue
        depth += 1 if char in "[{" else -1 if char in "]}" else 0
        if depth < 0:
            return None
        i += 1
    return open_string, depth


def _escaped(line: str, at: int) -> bool:
    backslashes = len(line[:at]) - len(line[:at].rstrip("\\"))
    return backslashes % 2 == 1


def _header_path(line: str) -> tuple[str, ...] | None:
    try:
        node: Any = tomlkit.parse(line.strip() + "\n").unwrap()
    except tomlkit.exceptions.TOMLKitError:
        return None
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        key, node = next(iter(node.items()))
        path.append(key)
        if isinstance(node, list):  # `[[array.of.tables]]`
            break
    return tuple(path) or None


def _blocks(lines: list[str]) -> tuple[list[tuple[str, str]], list[_Block]] | None:
    kinds = _kinds(lines)
    if kinds is None:
        return None
    headers = [i for i, (kind, _) in enumerate(kinds) if kind == "header"]
    blocks: list[_Block] = []
    for header in headers:
        path = _header_path(lines[header])
        if path is None:
            return None
        lead = header
        while lead > 0 and kinds[lead - 1][0] == "comment":
            lead -= 1
        blocks.append(_Block(path, lead, header, 0))
    for n, block in enumerate(blocks):
        end = blocks[n + 1].lead if n + 1 < len(blocks) else len(lines)
        while end > block.header + 1 and kinds[end - 1][0] == "blank":
            end -= 1
        blocks[n] = _Block(block.path, block.lead, block.header, end)
    return kinds, blocks


def _ours(blocks: list[_Block], path: tuple[str, ...]) -> list[_Block] | None:
    """The blocks of the table at `path` and its sub-tables; None when they are not one run."""
    ours = [n for n, block in enumerate(blocks) if block.path[: len(path)] == path]
    if ours and ours != list(range(ours[0], ours[0] + len(ours))):
        return None
    return [blocks[n] for n in ours]


def toml_set_table(text: str, path: tuple[str, ...], table: str) -> str | None:
    """`text` with the table at `path` (`table`: its header and keys, LF-ended) in place of the one there,
    or added after the last table of its super-table (else at the end of the file)."""
    lines = _LINE.findall(text)
    found = _blocks(lines)
    if found is None:
        return None
    kinds, blocks = found
    nl = newline_of(text)
    new = [line + nl for line in table.rstrip("\n").split("\n")]
    ours = _ours(blocks, path)
    if ours is None:
        return None
    if ours:
        return "".join(lines[: ours[0].header] + new + lines[ours[-1].end :])
    family = [block for block in blocks if block.path[: len(path) - 1] == path[:-1]]
    if family:
        last = family[-1]
        at, lead = last.end, last.lead
        spaced = (lead > 0 and kinds[lead - 1][0] == "blank") or (at < len(lines) and kinds[at][0] == "blank")
        spaced = spaced or (lead == 0 and at == len(lines))
    else:  # the end of the file, one blank line after what is there
        at = len(lines)
        spaced = bool(text.strip()) and kinds[at - 1][0] != "blank"
    head = lines[:at]
    if head and not head[-1].endswith("\n"):
        head[-1] += nl  # a file that did not end with a line break gets one before the table
    return "".join(head + ([nl] if spaced and head else []) + new + lines[at:])


def toml_remove_table(text: str, path: tuple[str, ...]) -> str | None:
    """`text` without the table at `path` (its sub-tables and the comments above it too) and the blank
    line(s) that separated it; None when it has no such table or cannot be edited in place."""
    lines = _LINE.findall(text)
    found = _blocks(lines)
    if found is None:
        return None
    kinds, blocks = found
    ours = _ours(blocks, path)
    if not ours:
        return None
    start, end = ours[0].lead, ours[-1].end
    if start == 0:  # the first thing in the file: the blank lines after it go with it
        while end < len(lines) and kinds[end][0] == "blank":
            end += 1
    elif end == len(lines) or kinds[end][0] == "blank":  # the separator before it goes with it, unless
        while start > 0 and kinds[start - 1][0] == "blank":  # it is the only one left before the next
            start -= 1
    return "".join(lines[:start] + lines[end:])


# --- JSON --------------------------------------------------------------------------------------------------


@frozen
class _Member:
    key: Any
    start: int  # where the key (an object's member) or the value (an array's element) starts
    value_start: int
    value_end: int


def _ws(text: str, at: int) -> int:
    found = _WS.match(text, at)
    return found.end() if found else at


def _items(text: str, opening: int) -> tuple[list[_Member], int]:
    """The members of the object (or elements of the array) opening at `opening`, and its closing index.
    Raises ValueError when the text there is not one."""
    is_object = text[opening] == "{"
    close = "}" if is_object else "]"
    items: list[_Member] = []
    at = _ws(text, opening + 1)
    if text[at] == close:
        return items, at
    while True:
        start = at
        key: Any = len(items)
        if is_object:
            key, at = _DECODER.raw_decode(text, at)
            if not isinstance(key, str):
                raise ValueError("a key that is not a string")
            at = _ws(text, at)
            if text[at] != ":":
                raise ValueError("no colon after a key")
            at = _ws(text, at + 1)
        value_start = at
        _, at = _DECODER.raw_decode(text, at)
        items.append(_Member(key, start, value_start, at))
        at = _ws(text, at)
        if text[at] == close:
            return items, at
        if text[at] != ",":
            raise ValueError("no comma between members")
        at = _ws(text, at + 1)


@frozen
class _Style:
    indent: str | None  # None: the document is on one line
    nl: str

    def render(self, value: Any, depth: int) -> str:
        if self.indent is None:
            return json.dumps(value, ensure_ascii=False)
        return json.dumps(value, indent=self.indent, ensure_ascii=False).replace(
            "\n", self.nl + self.indent * depth
        )


def json_style(text: str) -> tuple[str | None, str]:
    """The indentation unit of a JSON document (None when its top-level members share the brace's line)
    and its line ending. A document without members, or none, is indented by two spaces."""
    nl = newline_of(text)
    try:
        opening = _ws(text, 0)
        members, _ = _items(text, opening) if text[opening : opening + 1] == "{" else ([], 0)
    except (ValueError, IndexError):
        members = []
    if not members:
        return "  ", nl
    line_start = text.rfind("\n", 0, members[0].start) + 1
    prefix = text[line_start : members[0].start]
    if line_start <= opening or prefix.strip(" \t"):
        return None, nl
    return prefix or "  ", nl


def _container(text: str, path: tuple[str, ...]) -> tuple[int, int] | None:
    """Where the value at `path` (keys from the top-level object) opens, and its depth; None when a key
    on the way is missing. Raises ValueError for a value that is not an object on the way."""
    at, depth = _ws(text, 0), 0
    for key in path:
        if text[at] != "{":
            raise ValueError("not an object")
        members, _ = _items(text, at)
        found = [m for m in members if m.key == key]
        if not found:
            return None
        at, depth = found[-1].value_start, depth + 1  # json.loads keeps the last of repeated keys
    return at, depth


def _insert(text: str, opening: int, depth: int, piece: str, style: _Style) -> str:
    """`piece` (a rendered `"key": value` or element) added last in the object or array at `opening`."""
    items, close = _items(text, opening)
    if style.indent is None:
        if not items:
            return text[: opening + 1] + piece + text[close:]
        return text[: items[-1].value_end] + ", " + piece + text[items[-1].value_end :]
    inner = style.indent * (depth + 1)
    if not items:
        return text[: opening + 1] + style.nl + inner + piece + style.nl + style.indent * depth + text[close:]
    last = items[-1]
    line_start = text.rfind("\n", 0, last.start) + 1
    prefix = text[line_start : last.start]
    own_line = line_start > opening and not prefix.strip(" \t")
    joint = "," + (style.nl + prefix if own_line else " ")
    return text[: last.value_end] + joint + piece + text[last.value_end :]


def _on_one_line(text: str, opening: int) -> bool:
    """Whether the object or array at `opening` has members and writes them on its opening's line."""
    items, _ = _items(text, opening)
    return bool(items) and "\n" not in text[opening : items[0].start]


def _remove(text: str, opening: int, index: int) -> str:
    items, close = _items(text, opening)
    if len(items) == 1:
        return text[: opening + 1] + text[close:]
    if index > 0:
        return text[: items[index - 1].value_end] + text[items[index].value_end :]
    return text[: items[0].start] + text[items[1].start :]


def json_set(text: str, path: tuple[str, ...], value: Any) -> str | None:
    """`text` with the member at `path` set to `value`: in place when it is there, else added last in the
    nearest object on the way, with the objects it needs. None when `text` is not a JSON object."""
    indent, nl = json_style(text)
    style = _Style(indent, nl)
    try:
        for depth in range(len(path), 0, -1):
            found = _container(text, path[: depth - 1])
            if found is None:
                continue
            opening, parent_depth = found
            if text[opening] != "{":
                return None
            members = [m for m in _items(text, opening)[0] if m.key == path[depth - 1]]
            nested: Any = value
            for key in reversed(path[depth:]):
                nested = {key: nested}
            if members and depth == len(path):  # an old value on one line is replaced by one on one line
                member = members[-1]
                flat = "\n" not in text[member.value_start : member.value_end]
                rendered = (_Style(None, nl) if flat else style).render(value, parent_depth + 1)
                return text[: member.value_start] + rendered + text[member.value_end :]
            if members:  # the next key is there but is not an object: not edited in place
                return None
            shape = _Style(None, nl) if _on_one_line(text, opening) else style
            name = json.dumps(path[depth - 1], ensure_ascii=False)
            piece = f"{name}: {shape.render(nested, parent_depth + 1)}"
            return _insert(text, opening, parent_depth, piece, style)
    except (ValueError, IndexError):
        return None
    return None


def json_remove(text: str, path: tuple[str, ...]) -> str | None:
    """`text` without the member at `path`; None when it has none or `text` cannot be read so."""
    try:
        found = _container(text, path[:-1])
        if found is None or text[found[0]] != "{":
            return None
        items, _ = _items(text, found[0])
        where = [n for n, m in enumerate(items) if m.key == path[-1]]
        return _remove(text, found[0], where[-1]) if where else None
    except (ValueError, IndexError):
        return None


def json_set_element(text: str, path: tuple[str, ...], value: Any, same: Callable[[Any], bool]) -> str | None:
    """`text` with `value` in the array at `path`: in place of the first element `same` accepts, else
    added last (the array is created when missing)."""
    indent, nl = json_style(text)
    style = _Style(indent, nl)
    try:
        found = _container(text, path)
        if found is None:
            return json_set(text, path, [value])
        opening, depth = found
        if text[opening] != "[":
            return None
        items, _ = _items(text, opening)
        for item in items:
            if same(json.loads(text[item.value_start : item.value_end])):
                flat = "\n" not in text[item.value_start : item.value_end]
                rendered = (_Style(None, nl) if flat else style).render(value, depth + 1)
                return text[: item.value_start] + rendered + text[item.value_end :]
        shape = _Style(None, nl) if _on_one_line(text, opening) else style
        return _insert(text, opening, depth, shape.render(value, depth + 1), style)
    except (ValueError, IndexError):
        return None


def json_remove_elements(text: str, path: tuple[str, ...], same: Callable[[Any], bool]) -> str | None:
    """`text` without the elements `same` accepts of the array at `path`, and without the member itself
    when that leaves it empty; None when the array has none or cannot be read so."""
    try:
        found = _container(text, path)
        if found is None or text[found[0]] != "[":
            return None
        removed = False
        while True:
            items, _ = _items(text, found[0])
            where = [n for n, m in enumerate(items) if same(json.loads(text[m.value_start : m.value_end]))]
            if not where:
                break
            if len(items) == 1:
                return json_remove(text, path)
            text, removed = _remove(text, found[0], where[0]), True
        return text if removed else None
    except (ValueError, IndexError):
        return None
