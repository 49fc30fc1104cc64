"""Request JSON read strictly, the same at every door (REST bodies, `/mcp`, MCP tool arguments): nesting
capped before the parser sees it, NaN and Infinity refused, and every string (keys too, at any depth) valid
Unicode text without NUL. The rules are stated in docs/security.md ("Strict JSON bodies")."""

import json
import re
from array import array
from collections.abc import Iterator
from itertools import accumulate
from typing import Any, Final

from siteaudit.domain.error import ValidationFailed

# Our deepest document is a JSON-RPC message's arguments holding a list (4 levels); 32 leaves room.
MAX_DEPTH: Final = 32
NOT_TEXT: Final = "must be valid Unicode text (no lone surrogates, no NUL characters)"

_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Brackets as signed steps: an opening one +1, a closing one -1 (0xff as a signed byte); all else deleted.
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")


def deeper_than(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text `raw` nests arrays and objects more than `limit` deep, counted in C (the
    brackets outside strings, their running sum) so that no parser ever recurses that far."""
    steps = _STRING.sub(b"", raw).translate(_STEPS, _NOT_BRACKETS)
    return max(accumulate(array("b", steps)), default=0) > limit


def is_text(value: str) -> bool:
    """Unicode scalar values only (no lone surrogate, which no encoder, database or URL accepts) and no
    NUL (which PostgreSQL text refuses)."""
    if "\x00" in value:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(name: str) -> str:
    """A field name fit to be answered: lone surrogates and NULs written as escapes."""
    return (
        name if is_text(name) else name.encode("utf-8", "backslashreplace").decode().replace("\x00", "\\x00")
    )


def _strings(value: Any) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(path, string) for every key and string inside `value`, a key at the path of its value; iterative,
    so any depth the parser allowed is walked."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            yield path, item
        elif isinstance(item, dict):
            for key, inner in item.items():
                yield (*path, key), key
                stack.append(((*path, key), inner))
        elif isinstance(item, list | tuple):
            stack.extend(((*path, n), inner) for n, inner in enumerate(item))


def not_text_at(value: Any) -> tuple[Any, ...] | None:
    """The path (keys and indexes) of the first key or string inside `value` that is not text, or None."""
    for path, text in _strings(value):
        if not is_text(text):
            return path
    return None


def field_name(path: tuple[Any, ...], *, whole: str = "body") -> str:
    """A path answered as a field: its parts joined by dots, each fit to be answered; `whole` when empty."""
    return ".".join(shown(str(part)) for part in path) or whole


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON document `raw`, read strictly. Raises ValidationFailed (field `body`) when it nests deeper
    than `max_depth` or is not JSON (NaN and Infinity included). Its strings are not checked here: see
    `not_text_at`, which names where the bad one is."""
    if deeper_than(raw, max_depth):
        raise ValidationFailed({"body": f"nested more than {max_depth} levels deep"})
    try:
        document = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # RecursionError only if the count above were ever wrong
        raise ValidationFailed({"body": "not valid JSON"}) from None
    return document
