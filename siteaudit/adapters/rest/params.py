"""Request syntax: JSON bodies and query strings checked field by field into 422 validation_failed."""

import math
from collections.abc import Iterable, Mapping
from typing import Any, Final

import falcon

from siteaudit.adapters import strict_json
from siteaudit.domain.error import DomainError, ErrorCode, ValidationFailed
from siteaudit.ports.usecases import MAX_PAGE

MAX_BODY_BYTES: Final = 1_048_576


class PayloadTooLarge(DomainError):
    code = ErrorCode.PAYLOAD_TOO_LARGE

    def __init__(self, max_bytes: int = MAX_BODY_BYTES) -> None:
        super().__init__(f"request bodies are limited to {max_bytes:,} bytes")


class UnsupportedMediaType(DomainError):
    code = ErrorCode.UNSUPPORTED_MEDIA_TYPE

    def __init__(self) -> None:
        super().__init__("send the request body as JSON with Content-Type: application/json")


def json_body(
    req: falcon.Request, *, allowed: Iterable[str], required: bool = True, max_bytes: int = MAX_BODY_BYTES
) -> dict[str, Any]:
    """The request's JSON object, read by the rules of docs/security.md ("Strict JSON bodies"): at most
    `max_bytes`, nested at most `strict_json.MAX_DEPTH` deep, every string valid text. Unknown fields are
    refused by name, so typos never pass silently."""
    length = req.content_length or 0
    if length > max_bytes:
        raise PayloadTooLarge(max_bytes)
    raw = req.bounded_stream.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise PayloadTooLarge(max_bytes)
    if not raw.strip():
        if required:
            raise ValidationFailed({"body": "a JSON object is required"})
        return {}
    media_type = (req.content_type or "").split(";")[0].strip().lower()
    if media_type not in ("application/json", "") and not media_type.endswith("+json"):
        raise UnsupportedMediaType()
    body = strict_json.loads(raw)
    if not isinstance(body, dict):
        raise ValidationFailed({"body": "must be a JSON object"})
    bad_text = strict_json.not_text_at(body)
    if bad_text is not None:  # named by its top-level field: the one the caller sent
        raise ValidationFailed({strict_json.field_name(bad_text[:1]): strict_json.NOT_TEXT})
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise ValidationFailed({name: "unknown field" for name in unknown})
    return body


class Fields:
    """Collects every bad field of one request before answering, so the caller fixes them all at once.

    A JSON body is typed strictly: a string is never read as a number or a boolean (docs/security.md,
    "Strict JSON bodies"). A query string (`query=True`) has only strings, so there "5" is the integer 5."""

    def __init__(self, source: Mapping[str, Any], *, query: bool = False) -> None:
        self.source = source
        self.query = query
        self.bad: dict[str, str] = {}

    def _given(self, name: str, kind: str) -> tuple[bool, Any]:
        """(present, value). An explicit JSON null is not "absent": it is a value of the wrong type."""
        if name not in self.source:
            return False, None
        value = self.source[name]
        if value is None:
            self.bad[name] = f"must be {kind}, not null"
            return False, None
        return True, value

    def integer(self, name: str, *, low: int, high: int, default: int | None = None) -> int | None:
        present, value = self._given(name, "an integer")
        if not present:
            return default
        if isinstance(value, str) and self.query:
            try:
                value = int(value.strip())
            except ValueError:
                self.bad[name] = "must be an integer"
                return default
        if isinstance(value, float) and value.is_integer():  # JSON (and JSON Schema) call 441.0 an integer
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.bad[name] = "must be an integer"
            return default
        if not low <= value <= high:
            self.bad[name] = f"must be between {low:,} and {high:,}"
            return default
        return value

    def number(self, name: str, *, low: float, high: float) -> float | None:
        present, value = self._given(name, "a number")
        if not present:
            return None
        if isinstance(value, str) and self.query:
            try:
                value = float(value)
            except ValueError:
                self.bad[name] = "must be a number"
                return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.bad[name] = "must be a number"
            return None
        # An int is compared exactly, however large (math.isfinite would convert it: OverflowError).
        if isinstance(value, float) and not math.isfinite(value):
            self.bad[name] = "must be a number"
            return None
        if not low <= value <= high:
            self.bad[name] = f"must be between {low:g} and {high:g}"
            return None
        return float(value)

    def string(
        self, name: str, *, max_length: int, min_length: int = 0, choices: Iterable[str] = ()
    ) -> str | None:
        present, value = self._given(name, "a string")
        if not present:
            return None
        if not isinstance(value, str):
            self.bad[name] = "must be a string"
            return None
        if not strict_json.is_text(value):  # a query string's %00 too
            self.bad[name] = strict_json.NOT_TEXT
            return None
        if not min_length <= len(value) <= max_length:
            self.bad[name] = f"must have {min_length}-{max_length} characters"
            return None
        options = tuple(choices)
        if options and value not in options:
            self.bad[name] = f"must be one of: {', '.join(options)}"
            return None
        return value

    def boolean(self, name: str) -> bool | None:
        present, value = self._given(name, "true or false")
        if not present:
            return None
        if isinstance(value, str) and self.query and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            self.bad[name] = "must be true or false"
            return None
        return value

    def done(self) -> None:
        if self.bad:
            raise ValidationFailed(self.bad)


def page_params(req: falcon.Request, *, default: int, maximum: int) -> tuple[int, int]:
    """`page` and `per_page` from the query string: (page, per_page)."""
    fields = Fields(req.params, query=True)
    page = fields.integer("page", low=1, high=MAX_PAGE, default=1)
    per_page = fields.integer("per_page", low=1, high=maximum, default=default)
    fields.done()
    assert page is not None and per_page is not None
    return page, per_page


def known_query(req: falcon.Request, allowed: Iterable[str]) -> None:
    """Refuse unknown or repeated query parameters by name."""
    names = set(allowed)
    bad = {name: "unknown parameter" for name in req.params if name not in names}
    bad.update(
        {name: "given more than once" for name, value in req.params.items() if isinstance(value, list)}
    )
    if bad:
        raise ValidationFailed(bad)


def paginated(rows: list[Any], *, page: int, per_page: int, total: int) -> dict[str, Any]:
    return {
        "data": rows,
        "meta": {
            "current_page": page,
            "per_page": per_page,
            "total": total,
            "last_page": max(1, -(-total // per_page)),
        },
    }
