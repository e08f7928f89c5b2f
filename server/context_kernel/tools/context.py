"""What every tool needs from the MCP request: the app holder, the session, a progress callback."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcp.server.mcpserver import Context

from ..app import AppHolder
from ..execution.requests import SessionRef
from .sessions import SessionIds


class ServerState:
    """The lifespan context handed to tools."""

    def __init__(self, holder: AppHolder, sessions: SessionIds) -> None:
        self.holder = holder
        self.sessions = sessions


def holder_and_session(ctx: Context) -> tuple[AppHolder, SessionRef]:
    state: ServerState = ctx.request_context.lifespan_context
    return state.holder, state.sessions.resolve(ctx)


def progress_reporter(ctx: Context) -> Callable[[float], Awaitable[None]] | None:
    """MCP progress notifications while a cell runs, so long runs do not hit the client's timeout.

    The SDK makes this a no-op when the caller gave no progress token.
    """

    async def report(elapsed: float) -> None:
        await ctx.report_progress(elapsed, None, f"running for {elapsed:.0f} s")

    return report
