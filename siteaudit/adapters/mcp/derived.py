"""The tools of the declared use cases (`siteaudit.ports.usecases`), derived: one per use case a `Tool`
binding offers, its parameters from the use case's inputs (bounds, defaults, descriptions), its run
`application.handle` and the answer as `/v1` shows it, its summary from the binding; and the door-own
polling tools (`Wait`) after the tool they poll."""

import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from siteaudit.adapters.answers import converter
from siteaudit.adapters.mcp.params import Param
from siteaudit.adapters.mcp.spec import Call, ToolSpec
from siteaudit.domain.error import ValidationFailed
from siteaudit.ports.ratelimit import Limit
from siteaudit.ports.usecases import (
    Declared,
    Field,
    Http,
    Tool,
    UseCase,
    Wait,
    copy_named,
    exactly_one_problem,
    fields_of,
    result_of,
)

TIMEOUT: Final = Param("timeout_s", "number", "Seconds to wait at most.", low=1, high=120, default=25)


def param(found: Field) -> Param:
    spec = found.spec
    assert found.kind != "rules", "extraction rules are a REST input only (rest_only)"
    if found.kind == "enum":
        return Param(
            found.name,
            "string",
            spec.description,
            found.required,
            choices=found.choices,
            default=found.shown(found.default),
        )
    # A list's bounds are its count; each URL's lengths are a string's.
    listed = found.kind == "urls"
    return Param(
        found.name,
        found.kind,
        spec.description,
        found.required,
        low=spec.min_items if listed else spec.low,
        high=spec.max_items if listed else spec.high,
        min_length=spec.min_length,
        max_length=spec.max_length,
        default=None if listed else found.default,
    )


def use_case_of(declared: Declared, call: Call) -> UseCase[Any]:
    """The use case the call's checked arguments give (one of `exactly_one_of`, or ValidationFailed)."""
    problem = exactly_one_problem(declared, call.args)
    if problem:
        raise ValidationFailed(problem)
    values = {}
    for found in fields_of(declared):
        if found.spec.rest_only:
            continue  # not a tool's argument: its default
        value = call.args[found.name]
        values[found.name] = tuple(value) if found.kind == "urls" and value is not None else found.read(value)
    return declared(**values)


def answer_of(declared: Declared) -> Callable[[Call], dict[str, Any]]:
    def run(call: Call) -> dict[str, Any]:
        answer: dict[str, Any] = converter.unstructure(
            call.application.handle(use_case_of(declared, call), call.caller)
        )
        return answer

    return run


def waiting(once: Callable[[Call], dict[str, Any]], wait: Wait) -> Callable[[Call], dict[str, Any]]:
    def run(call: Call) -> dict[str, Any]:
        deadline = time.monotonic() + float(call.args["timeout_s"])
        while True:
            answer = once(call)
            call.progress(*wait.progress(answer))
            if wait.ended(answer) or time.monotonic() >= deadline:
                return answer
            call.sleep(min(call.poll_s, max(0.0, deadline - time.monotonic())))

    return run


def limited(declared: Declared) -> tuple[str, str]:
    """The stricter REST limit the tool shares with its endpoint: (bucket, "METHOD /path"), or none."""
    http = declared.http
    if not isinstance(http, Http) or http.limit is None:
        return ("", "")
    resource = re.sub(r"\{\w+\}", "{id}", http.path.removeprefix("/v1"))
    return (http.limit[0], f"{http.method} {resource}")


def declared_limits(use_cases: Sequence[Declared]) -> Mapping[str, tuple[str, Limit]]:
    """By tool name, the stricter limit each declared use case's tool shares with its endpoint."""
    return {
        declared.tool.name: declared.http.limit
        for declared in use_cases
        if isinstance(declared.tool, Tool) and isinstance(declared.http, Http) and declared.http.limit
    }


def derived_tools(use_cases: Sequence[Declared]) -> tuple[ToolSpec, ...]:
    specs: list[ToolSpec] = []
    for declared in use_cases:
        tool = declared.tool
        if not isinstance(tool, Tool):
            continue
        params = tuple(param(found) for found in fields_of(declared) if not found.spec.rest_only)
        run = answer_of(declared)
        answer = result_of(declared)
        specs.append(
            copy_named(
                ToolSpec,
                tool,
                uses=("handle",),
                run=run,
                params=params,
                limited=limited(declared),
                answer=answer,
            )
        )
        # A door-own waiting tool shows what the use case's tool does (its answer, its lists, its text).
        specs.extend(
            copy_named(
                ToolSpec,
                wait,
                uses=("handle",),
                run=waiting(run, wait),
                params=(*params, TIMEOUT),
                untrusted=tool.untrusted,
                answer=answer,
                lists=tool.lists,
                omits=tool.omits,
                text=tool.text,
            )
            for wait in tool.waits
        )
    return tuple(specs)
