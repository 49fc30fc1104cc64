"""The tool server over the MCP Python SDK's low-level `Server`: the tool list from `tools.tool_specs`, each
call checked, run in a thread (the application blocks) and answered with the REST JSON as structured
content, a short summary, and errors as tool errors carrying the REST code and message."""

import importlib.metadata
import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

import anyio
import anyio.to_thread
import mcp_types as types
from anyio import from_thread
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from siteaudit.adapters.mcp import sizing
from siteaudit.adapters.mcp.listing import INSTRUCTIONS, tool_listing
from siteaudit.adapters.mcp.params import read_arguments
from siteaudit.adapters.mcp.spec import UNTRUSTED_NOTE, Call, CallAbandoned, ToolSpec
from siteaudit.adapters.mcp.tools import tool_specs
from siteaudit.adapters.rest.errors import envelope
from siteaudit.domain.account import Caller
from siteaudit.domain.error import DomainError, ErrorCode, RateLimited, ValidationFailed
from siteaudit.ports.application import CallerApi

log = logging.getLogger("siteaudit.mcp")

SERVER_NAME: Final = "siteaudit"
# Marks a result that quotes crawled sites, for clients that read `_meta`.
UNTRUSTED_META: Final = "io.siteaudit/untrusted"

CallerOf = Callable[[ServerRequestContext[Any, Any]], Caller]


def error_body(error: DomainError) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if isinstance(error, ValidationFailed):
        extra["fields"] = error.fields
    if isinstance(error, RateLimited):
        extra["retry_after"] = error.retry_after
    more = getattr(error, "extra", None)
    if isinstance(more, dict):
        extra.update(more)
    code = getattr(error, "code_text", None) or error.code.value
    return envelope(code, error.message, **extra)


def error_result(body: dict[str, Any]) -> types.CallToolResult:
    error = body["error"]
    return types.CallToolResult(
        content=[types.TextContent(text=f"{error['code']}: {error['message']}")],
        structured_content=body,
        is_error=True,
    )


def answer_result(spec: ToolSpec, summary: str, shown: dict[str, Any]) -> types.CallToolResult:
    """The summary of the whole answer (and, quoting crawled sites, the untrusted note) as text, and the
    part `shown` within the budget as structured content, once; a `text` tool's markdown is its second
    text instead (docs/agents.md, "Answers sized for agents")."""
    summary += sizing.more_text(spec, shown)
    content = [types.TextContent(text=f"{summary}\n{UNTRUSTED_NOTE}" if spec.untrusted else summary)]
    if spec.text:
        markdown = str(shown.pop(spec.text))
        shown["characters"] = len(markdown)
        content.append(types.TextContent(text=markdown))
    return types.CallToolResult(
        content=list(content),
        structured_content=shown,
        _meta={UNTRUSTED_META: True} if spec.untrusted else None,
    )


def package_version() -> str:
    try:
        return importlib.metadata.version("siteaudit")
    except importlib.metadata.PackageNotFoundError:
        return ""


def build_server(
    application: CallerApi,
    *,
    caller_of: CallerOf,
    now: Callable[[], datetime],
    poll_s: float = 2.0,
    version: str | None = None,
) -> Server[Any]:
    """The tool server for `application`; `caller_of` says whom a request acts for (the bearer key's
    caller over HTTP, the configured key's over stdio)."""
    specs = tool_specs(application.use_cases())
    by_name = {spec.name: spec for spec in specs}
    listing = [tool_listing(spec) for spec in specs]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}")

        stop = threading.Event()  # set when the request is cancelled (the client went away)

        def progress(done: float, total: float | None, message: str) -> None:
            from_thread.run(ctx.session.report_progress, done, total, message)

        def sleep(seconds: float) -> None:
            if stop.wait(seconds):
                raise CallAbandoned()

        try:
            args = read_arguments(sizing.params_of(spec), params.arguments)
            cursor, detail = args.pop(sizing.CURSOR.name, None), args.pop(sizing.DETAIL.name, None)
            at = None if cursor is None else sizing.decode_cursor(spec, {**args, "detail": detail}, cursor)
            call = Call(
                application=application,
                caller=caller_of(ctx),
                args=args,
                now=now,
                progress=progress,
                sleep=sleep,
                poll_s=poll_s,
            )
            try:
                answer = await anyio.to_thread.run_sync(spec.run, call, abandon_on_cancel=True)
            except anyio.get_cancelled_exc_class():
                stop.set()  # a waiting tool stops at its next pause instead of polling on unheard
                raise
            summary = sizing.short(spec.summary(answer))
            room = (
                sizing.BUDGET_BYTES
                - sizing.size(summary)
                - len(UNTRUSTED_NOTE)
                - sizing.size(answer.get(spec.text, "") if spec.text else "")
            )
            shown = sizing.fitted(
                spec, sizing.briefed(spec, answer, detail), at, {**args, "detail": detail}, room
            )
        except DomainError as error:
            return error_result(error_body(error))
        except Exception:
            log.exception("tool %s failed", spec.name)
            return error_result(envelope(ErrorCode.INTERNAL_ERROR, "something went wrong on our side"))
        return answer_result(spec, summary, shown)

    return Server(
        SERVER_NAME,
        version=package_version() if version is None else version,
        title="siteaudit",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
