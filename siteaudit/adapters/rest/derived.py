"""The `/v1` routes of the declared use cases (`siteaudit.ports.usecases`), derived: one resource per path
with a responder per declared method. A responder reads the use case's inputs where its `Http` binding
says (the path; a GET's query string, unknown parameters refused; the strict JSON body, unknown fields
refused; required when one of its inputs is), checks their bounds into one 422 `validation_failed` naming
each bad field, calls `application.handle` and answers the result through the converter with the
binding's status (a 204 without a body)."""

from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Protocol

import falcon

from siteaudit.adapters.answers import converter
from siteaudit.adapters.rest.extraction import given_rules
from siteaudit.adapters.rest.params import MAX_BODY_BYTES, Fields, json_body, known_query
from siteaudit.adapters.rest.resources import Resource
from siteaudit.domain.error import ValidationFailed
from siteaudit.ports.application import CallerApi, RequestAdmission
from siteaudit.ports.clock import Clock
from siteaudit.ports.ratelimit import Limit
from siteaudit.ports.usecases import (
    Declared,
    Field,
    Http,
    UseCase,
    body_required,
    exactly_one_problem,
    fields_of,
    unbounded,
)


def http_of(declared: Declared) -> Http | None:
    binding = declared.http
    return binding if isinstance(binding, Http) else None


def route(declared: Declared, path: str | None = None) -> str:
    """`path` (an alias's; None: the binding's) with Falcon's converter for each integer path input (its
    bounds)."""
    if path is None:
        http = http_of(declared)
        assert http is not None
        path = http.path
    for found in fields_of(declared):
        if found.spec.where == "path" and found.kind == "integer":
            low, high = int(found.spec.low or 0), int(found.spec.high or 0)
            path = path.replace(f"{{{found.name}}}", f"{{{found.name}:int(min={low}, max={high})}}")
    return path


def _scalar(fields: Fields, found: Field) -> Any:
    spec = found.spec
    if found.kind == "integer":
        return fields.integer(
            found.name, low=int(spec.low or 0), high=int(spec.high or 0), default=found.default
        )
    if found.kind == "number":
        number = fields.number(found.name, low=spec.low or 0.0, high=spec.high or 0.0)
        return found.default if number is None else number
    if found.kind == "boolean":
        given = fields.boolean(found.name)
        return found.default if given is None else given
    if found.kind == "enum":
        chosen = fields.string(found.name, max_length=spec.max_length or 0, choices=found.choices)
        return found.default if chosen is None else found.read(chosen)
    # A strict string's lower bound (a query string's always) is checked here (docs/architecture.md,
    # "Adding a use case").
    shortest = (spec.min_length or 0) if spec.strict else 0
    text = fields.string(found.name, max_length=spec.max_length or 0, min_length=shortest)
    return found.default if text is None else text


def _counted_urls(found: Field, body: Mapping[str, Any]) -> tuple[str, ...] | None:
    """A `counted` list of URLs: present (None when an optional one is not), its count and each URL's
    lengths within bounds."""
    spec = found.spec
    if not found.required and found.name not in body:
        return None
    fewest, most, shortest, longest = (
        spec.min_items or 0,
        spec.max_items or 0,
        spec.min_length or 0,
        spec.max_length or 0,
    )
    if found.name not in body:
        raise ValidationFailed({found.name: "required"})
    value = body[found.name]
    if not isinstance(value, list) or not fewest <= len(value) <= most:
        raise ValidationFailed({found.name: f"must be an array of {fewest:,} to {most:,} URLs"})
    if not all(isinstance(u, str) and shortest <= len(u) <= longest for u in value):
        problem = f"every URL must be a string of {shortest:,} to {longest:,} characters"
        raise ValidationFailed({found.name: problem})
    return tuple(value)


def _max_body_bytes(in_body: Sequence[Field]) -> int:
    """The largest body read: the usual limit, and room for each `counted` list's longest URLs."""
    room = sum(
        (f.spec.max_items or 0) * ((f.spec.max_length or 0) + 8)
        for f in in_body
        if f.kind == "urls" and f.spec.counted
    )
    return MAX_BODY_BYTES + room


def _urls(found: Field, body: Mapping[str, Any]) -> tuple[str, ...] | None:
    """A list of URLs as given, each within its length (the count and the host are the handler's)."""
    if found.spec.counted:
        return _counted_urls(found, body)
    if found.name not in body:
        return None
    value, most = body[found.name], found.spec.max_length or 0
    # A list of strings that are not URLs (a staging access's headers) is named for what it holds.
    what = "URLs" if found.name.endswith("urls") else "strings"
    if value is None:
        raise ValidationFailed({found.name: f"must be a list of {what}, not null"})
    if not isinstance(value, list) or not all(isinstance(u, str) and len(u) <= most for u in value):
        raise ValidationFailed({found.name: f"must be a list of {what} of at most {most:,} characters"})
    return tuple(value)


def _itemwise(fields: Fields, found: Field, body: Mapping[str, Any]) -> tuple[str, ...] | None:
    """An `itemwise` list of strings as given (None: absent), its count and each string's length within
    bounds, each fault added to `fields.bad` by its place (`urls[3]`); the rest is the handler's."""
    spec, name = found.spec, found.name
    if name not in body:
        return None
    value, most, longest = body[name], spec.max_items or 0, spec.max_length or 0
    if not isinstance(value, list) or len(value) > most:
        fields.bad[name] = f"must be a list of at most {most:,} strings"
        return None
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item or len(item) > longest:
            fields.bad[f"{name}[{i}]"] = f"must be a string of 1 to {longest:,} characters"
    if any(key.startswith(f"{name}[") for key in fields.bad):
        return None
    fewest = spec.min_items or 0
    if len(value) < fewest:
        what = "URL" if name.endswith("urls") else "string"
        fields.bad[name] = f"must list at least {'one' if fewest == 1 else f'{fewest:,}'} {what}"
        fields.bad[name] += "s" if fewest > 1 else ""
        return None
    return tuple(value)


# Each use case's inputs, read from its declaration once: its type hints cost more CPU than the rest of a
# cheap request's reading.
_inputs: dict[Declared, tuple[Field, ...]] = {}


def _inputs_of(declared: Declared) -> tuple[Field, ...]:
    inputs = _inputs.get(declared)
    if inputs is None:
        inputs = _inputs[declared] = fields_of(declared)
    return inputs


def read_use_case(declared: Declared, req: falcon.Request, given: Mapping[str, Any]) -> UseCase[Any]:
    """The use case of a request: `given` the path's values. Raises ValidationFailed."""
    inputs = _inputs_of(declared)
    http = http_of(declared)
    assert http is not None
    values: dict[str, Any] = dict(given)
    if http.method == "GET":
        known_query(req, [f.name for f in inputs if f.spec.where == "query"])
    query = Fields(req.params, query=True)
    for found in inputs:
        if found.spec.where == "query":
            values[found.name] = _scalar(query, found)
            if values[found.name] is None and found.required and found.name not in query.bad:
                query.bad[found.name] = "required"
    query.done()
    in_body = [f for f in inputs if f.spec.where == "body"]
    if not in_body and http.method in ("POST", "PUT", "PATCH"):
        json_body(req, allowed=(), required=False)  # none or an empty object: no field is unknown
    if in_body:
        document = json_body(
            req,
            allowed=[f.name for f in in_body],
            required=body_required(declared),
            max_bytes=_max_body_bytes(in_body),
        )
        fields = Fields(document)
        for found in in_body:
            if found.kind == "rules":
                values[found.name] = given_rules(document, fields.bad, field=found.name)
            elif found.kind == "urls" and found.spec.itemwise:
                values[found.name] = _itemwise(fields, found, document)
            elif found.kind != "urls":
                values[found.name] = _scalar(fields, found)
                if values[found.name] is None and found.required and found.name not in fields.bad:
                    fields.bad[found.name] = "required"
        fields.done()
        for found in in_body:
            if found.kind == "urls" and not found.spec.itemwise:
                values[found.name] = _urls(found, document)
    problem = exactly_one_problem(declared, values)
    if problem:
        raise ValidationFailed(problem)
    return declared(**values)


class DeclaredApi(CallerApi, RequestAdmission, Protocol):
    """What the derived routes call: the callers' API, and a use case handled with what its request's
    admission read with the key (`Http.audit_with_key`)."""


class Declaring(Resource):
    """The resource of one path: a responder (`on_get`, `on_post`, ...) per use case declared on it."""

    def __init__(self, application: DeclaredApi, clock: Clock, declared: Sequence[Declared]) -> None:
        super().__init__(application, clock)
        self.admitting = application
        # The stricter limits by method, and the path input naming the audit read with the key by method
        # (`Http.audit_with_key`), which the authentication middleware reads.
        self.extra_limits: dict[str, tuple[str, Limit]] = {}
        self.audit_with_key: dict[str, str] = {}
        for one in declared:
            http = http_of(one)
            assert http is not None
            if http.limit is not None:
                self.extra_limits[http.method] = http.limit
            if http.audit_with_key:
                self.audit_with_key[http.method] = "crawl_id"
            for found in fields_of(one):
                # A path's string is the handler's to check (a task key's format); every other input
                # is bounded here (a path's integer by Falcon's converter).
                path_string = found.spec.where == "path" and found.kind == "string"
                lacking = None if path_string else unbounded(found)
                if lacking is not None:  # a declaration's mistake, refused when the app is built
                    raise TypeError(f"{one.__name__}.{found.name}: {lacking}")
            setattr(self, f"on_{http.method.lower()}", partial(self._respond, one, http))

    def _respond(
        self, declared: Declared, http: Http, req: falcon.Request, resp: falcon.Response, **given: Any
    ) -> None:
        use_case = read_use_case(declared, req, given)
        admission = getattr(req.context, "admission", None)
        if admission is not None and admission.audit is not None:
            result = self.admitting.handle_admitted(use_case, admission)
        else:
            result = self.application.handle(use_case, req.context.caller)
        resp.status = falcon.code_to_http_status(http.status)
        if http.status != 204:  # a 204 answers no body (docs/architecture.md, "Feature packages")
            resp.media = converter.unstructure(result)


def routes(application: DeclaredApi, clock: Clock) -> Iterator[tuple[str, Declaring]]:
    """(route, resource) of every path the application's declared use cases are served at, their aliases'
    too."""
    by_path: dict[str, list[Declared]] = {}
    for declared in application.use_cases():
        http = http_of(declared)
        if http is not None:
            for path in (http.path, *(alias.path for alias in http.aliases)):
                by_path.setdefault(route(declared, path), []).append(declared)
    for path, on_path in by_path.items():
        yield path, Declaring(application, clock, on_path)
