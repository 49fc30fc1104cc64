"""The tool server over stdio (`siteaudit mcp`): one caller for the whole connection, the key's."""

from collections.abc import Callable
from datetime import datetime

import anyio
from mcp.server.stdio import stdio_server

from siteaudit.adapters.mcp.server import build_server
from siteaudit.domain.account import Caller
from siteaudit.ports.application import CallerApi


def serve_stdio(
    application: CallerApi, caller: Caller, *, now: Callable[[], datetime], poll_s: float = 2.0
) -> None:
    """Serve tool calls for `caller` on stdin/stdout until the client closes the connection."""
    server = build_server(application, caller_of=lambda ctx: caller, now=now, poll_s=poll_s)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
