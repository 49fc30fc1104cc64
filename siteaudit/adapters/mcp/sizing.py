"""Answers sized for agents (docs/agents.md, "Answers sized for agents"): every tool answer within a size
budget. A tool's `detail` argument leaves out the keys another tool answers; a list of the answer that
would pass the budget is cut, and `more` says how many items were shown of how many and gives the opaque
`cursor` that reads on; the outputSchema of each tool names the top-level keys of its OpenAPI answer."""

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from siteaudit.adapters.mcp.params import Param
from siteaudit.adapters.mcp.spec import ToolSpec
from siteaudit.adapters.rest.openapi import answer_schema, resolved
from siteaudit.domain.error import ValidationFailed

# A token is counted as 4 bytes of compact UTF-8 JSON, the usual measure for English text and JSON.
BYTES_PER_TOKEN: Final = 4
BUDGET_TOKENS: Final = 8_000
BUDGET_BYTES: Final = BUDGET_TOKENS * BYTES_PER_TOKEN
# Kept free for `more`, the keys around the lists and the result's own keys.
_RESERVE: Final = 600
# A summary longer than this (a line per task, say) is cut at a line: the rows are in the structured content.
SUMMARY_MAX: Final = 2_000

CURSOR: Final = Param(
    "cursor", "string", "From more.cursor; same other arguments.", min_length=1, max_length=400
)
DETAIL: Final = Param(
    "detail", "string", "brief (default) or full.", choices=("brief", "full"), default="brief"
)
BAD_CURSOR: Final = "not a cursor of this tool: call without it"
OTHER_CALL: Final = "a cursor of a call with other arguments: repeat them"


def params_of(spec: ToolSpec) -> tuple[Param, ...]:
    """The tool's arguments: its own, then `detail` and `cursor` when its answer has them."""
    return (*spec.params, *((DETAIL,) if spec.omits else ()), *((CURSOR,) if spec.lists else ()))


def size(value: Any) -> int:
    """Bytes of `value` as compact UTF-8 JSON."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode())


def fingerprint(name: str, args: Mapping[str, Any]) -> str:
    text = json.dumps([name, dict(args)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode_cursor(name: str, args: Mapping[str, Any], at: tuple[int, int]) -> str:
    payload = json.dumps({"t": name, "a": fingerprint(name, args), "l": at[0], "o": at[1]})
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_cursor(spec: ToolSpec, args: Mapping[str, Any], cursor: str) -> tuple[int, int]:
    """Where the cursor reads on: (index in `spec.lists`, offset). ValidationFailed for any other text."""
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError):
        raise ValidationFailed({"cursor": BAD_CURSOR}) from None
    if not (
        isinstance(payload, dict)
        and set(payload) == {"t", "a", "l", "o"}
        and payload["t"] == spec.name
        and all(type(payload[k]) is int and payload[k] >= 0 for k in ("l", "o"))
        and payload["l"] < len(spec.lists)
    ):
        raise ValidationFailed({"cursor": BAD_CURSOR})
    if payload["a"] != fingerprint(spec.name, args):
        raise ValidationFailed({"cursor": OTHER_CALL})
    return payload["l"], payload["o"]


def briefed(spec: ToolSpec, answer: dict[str, Any], detail: str | None) -> dict[str, Any]:
    """The answer without the keys `detail` brief leaves out; `omitted` names the tool answering each."""
    if not spec.omits or detail == "full":
        return answer
    left = {key: tool for key, tool in spec.omits if key in answer}
    return {**{k: v for k, v in answer.items() if k not in left}, "omitted": left}


def short(summary: str) -> str:
    """The summary, cut at a line boundary to about SUMMARY_MAX bytes when longer."""
    if len(summary.encode()) <= SUMMARY_MAX:
        return summary
    lines, kept, used = summary.split("\n"), [], 0
    for line in lines[:-1]:
        if used + len(line.encode()) + 1 > SUMMARY_MAX - 200:
            break
        kept.append(line)
        used += len(line.encode()) + 1
    if not kept:
        kept = [summary.encode()[: SUMMARY_MAX - 200].decode(errors="ignore")]
    return "\n".join([*kept, "(cut here: every row is in the structured content)", lines[-1][:200]])


def fitted(
    spec: ToolSpec,
    answer: dict[str, Any],
    at: tuple[int, int] | None,
    args: Mapping[str, Any],
    budget: int = BUDGET_BYTES,
) -> dict[str, Any]:
    """The answer within the budget. Its lists (`spec.lists`, in that order) are read as one stream: from
    `at` (a cursor's place; None: the start) as many items as fit, at least one, and when some are left
    `more` = {"cursor", "lists": {key: {"total", "from", "shown"}}}. A continued answer has the other keys
    and the lists it reaches; the lists read before are left out."""
    if at is None and size(answer) + _RESERVE <= budget:
        return answer
    start, offset = at or (0, 0)
    keys = [key for key in spec.lists if isinstance(answer.get(key), list)]
    index = {key: n for n, key in enumerate(spec.lists)}
    base = {key: value for key, value in answer.items() if key not in keys}
    used = size(base) + _RESERVE
    shown: dict[str, list[Any]] = {}
    counts: dict[str, dict[str, int]] = {}
    stop: tuple[int, int] | None = None
    for key in keys:
        if index[key] < start:
            continue
        items: list[Any] = answer[key]
        begin = offset if index[key] == start else 0
        if begin > len(items):
            raise ValidationFailed({"cursor": BAD_CURSOR})
        counts[key] = {"total": len(items), "from": begin, "shown": 0}
        if stop is not None:
            continue
        taken: list[Any] = []
        used += size(key) + 3
        for n in range(begin, len(items)):
            cost = size(items[n]) + 1
            if used + cost > budget and (taken or any(shown.values())):
                stop = (index[key], n)
                break
            taken.append(items[n])
            used += cost
        shown[key] = taken
        counts[key]["shown"] = len(taken)
    out = {
        key: (shown[key] if key in keys else value)
        for key, value in answer.items()
        if key not in keys or key in shown
    }
    if stop is not None:
        out["more"] = {"cursor": encode_cursor(spec.name, args, stop), "lists": counts}
    return out


def more_text(spec: ToolSpec, answer: Mapping[str, Any]) -> str:
    """What the summary adds about a cut answer: what was shown and how to read on."""
    more = answer.get("more")
    if not isinstance(more, Mapping):
        return ""
    parts = [
        f"{key} {c['from'] + 1}-{c['from'] + c['shown']} of {c['total']}" if c["shown"] else f"no {key} yet"
        for key, c in more["lists"].items()
    ]
    return (
        f" Cut to the size budget: {', '.join(parts)}. Call {spec.name} again with the same arguments and "
        "cursor=more.cursor for the rest."
    )


def output_schema(spec: ToolSpec) -> dict[str, Any]:
    """The answer's top level: each key it may have, from its OpenAPI schema (docs/agents.md, "The tool
    list"). Neither the keys' types (the OpenAPI document has them; a key's name says it to a model, and
    they would double the list) nor `required` (`detail` and the budget leave keys out, and `more` and
    `omitted` may be added) is said."""
    keys = [key for key in resolved(answer_schema(spec.answer)).get("properties", {}) if key != spec.text]
    return {
        "type": "object",
        "properties": {key: {} for key in (*keys, *(("characters",) if spec.text else ()))},
    }
