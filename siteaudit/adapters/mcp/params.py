"""A tool's inputs declared once: the JSON Schema the model sees and the checks its arguments pass, with the
same ranges and the same `validation_failed` fields as the REST door."""

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from attrs import frozen

from siteaudit.adapters import strict_json
from siteaudit.domain.error import ValidationFailed

# "urls": an array of strings (URLs), its count within `low`-`high`, each item within
# `min_length`-`max_length` characters.
Kind = Literal["string", "integer", "number", "boolean", "urls"]
_PY: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "urls": (list, tuple),
}


def _given(**keywords: Any) -> dict[str, Any]:
    """The JSON Schema keywords whose value is given (not None), in order."""
    return {keyword: value for keyword, value in keywords.items() if value is not None}


@frozen
class Param:
    name: str
    kind: Kind
    description: str
    required: bool = False
    low: float | None = None
    high: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    choices: tuple[str, ...] = ()
    default: Any = None

    def schema(self) -> dict[str, Any]:
        if self.kind == "urls":
            return self._array_schema()
        return {
            "type": self.kind,
            "description": self.description,
            **_given(
                minimum=self.low,
                maximum=self.high,
                minLength=self.min_length,
                maxLength=self.max_length,
                enum=list(self.choices) if self.choices else None,
                default=self.default,
            ),
        }

    def _array_schema(self) -> dict[str, Any]:
        items = {"type": "string", **_given(minLength=self.min_length, maxLength=self.max_length)}
        return {
            "type": "array",
            "description": self.description,
            "items": items,
            **_given(
                minItems=None if self.low is None else int(self.low),
                maxItems=None if self.high is None else int(self.high),
            ),
        }

    def _array_problem(self, value: Any) -> str | None:
        if not isinstance(value, list | tuple):
            return "must be an array of URLs"
        if (self.low is not None and len(value) < self.low) or (
            self.high is not None and len(value) > self.high
        ):
            return f"must be an array of {self.low or 0:g} to {self.high or 0:,g} URLs"
        for n, item in enumerate(value):
            if not isinstance(item, str) or not (
                (self.min_length or 0) <= len(item) <= (self.max_length or len(item))
            ):
                return (
                    f"item {n} must be a string of {self.min_length or 0} to {self.max_length:,} characters"
                )
        return None

    def problem(self, value: Any) -> str | None:
        """What is wrong with `value`, or None."""
        if self.kind == "urls":
            return self._array_problem(value)
        if isinstance(value, bool) and self.kind != "boolean":
            return f"must be a {self.kind}"
        if not isinstance(value, _PY[self.kind]):
            return f"must be a {self.kind}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be a finite {self.kind}"
        if isinstance(value, int | float) and not isinstance(value, bool):
            if self.low is not None and value < self.low:
                return f"must be at least {self.low:g}"
            if self.high is not None and value > self.high:
                return f"must be at most {self.high:g}"
        if isinstance(value, str):
            if self.min_length is not None and len(value) < self.min_length:
                return f"must be at least {self.min_length} characters"
            if self.max_length is not None and len(value) > self.max_length:
                return f"must be at most {self.max_length:,} characters"
            if self.choices and value not in self.choices:
                return f"must be one of {', '.join(self.choices)}"
        return None


def input_schema(params: Sequence[Param]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {p.name: p.schema() for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


def read_arguments(params: Sequence[Param], arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every declared argument (absent ones at their default or None). Raises ValidationFailed naming each
    bad or unknown argument."""
    given = dict(arguments or {})
    known = {p.name: p for p in params}
    # Arguments come parsed by the SDK (stdio, HTTP) or from a command line: their strings are checked
    # here, as the REST door checks a body's (docs/security.md, "Strict JSON bodies").
    not_text = {name for name, value in given.items() if strict_json.not_text_at({name: value}) is not None}
    bad = {strict_json.shown(name): strict_json.NOT_TEXT for name in not_text}
    bad.update({name: "unknown argument" for name in given if name not in known and name not in not_text})
    values: dict[str, Any] = {}
    for param in params:
        value = given.get(param.name)
        if param.name in not_text:
            continue
        if value is None:
            if param.required:
                bad[param.name] = "required"
            values[param.name] = param.default
            continue
        problem = param.problem(value)
        if problem is not None:
            bad[param.name] = problem
            continue
        if param.kind == "number":
            value = float(value)
        elif param.kind == "urls":
            value = list(value)
        values[param.name] = value
    if bad:
        raise ValidationFailed(bad)
    return values
