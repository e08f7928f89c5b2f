"""What every tool needs from the MCP request: the app, the session, a progress callback."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent

from ..app import App, AppHolder
from ..execution.requests import SessionRef
from .sessions import SessionIds


class ServerState:
    """The lifespan context handed to tools."""

    def __init__(self, holder: AppHolder, sessions: SessionIds) -> None:
        self.holder = holder
        self.sessions = sessions


def holder_and_session(ctx: Context[ServerState, Any]) -> tuple[AppHolder, SessionRef]:
    state: ServerState = ctx.request_context.lifespan_context
    return state.holder, state.sessions.resolve(ctx)


async def app_and_session(ctx: Context[ServerState, Any]) -> tuple[App, SessionRef]:
    """The app (built on the first call; a store that cannot open raises here) and the caller's session."""
    holder, session = holder_and_session(ctx)
    return await holder.get(), session


# The executions a reply cites (its text ends with `[#42]`), for clients and scripts that read ids, not text.
EXECUTION_META_KEY = "context-kernel/executions"


def text_result(text: str, is_error: bool = False, executions: list[int] | None = None) -> CallToolResult:
    """A tool's reply: one text block (`isError` for a reply that says the work failed, as a cell's error);
    `executions`: the ids of the executions it cites, carried in `_meta` too."""
    meta = {EXECUTION_META_KEY: executions} if executions else None
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error, _meta=meta)
