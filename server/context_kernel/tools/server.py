"""create_server(settings): the MCP server with its tools; the same factory serves CLI and tests.

This module is the MCP edge's one error boundary and its one meter. Tools raise our errors and
never build error replies; here every `ContextKernelError` (raised by a tool, or found as the
cause of the SDK's wrapper) becomes an `isError` result carrying its message and hint, the SDK's
argument validation becomes one plain sentence naming the argument, and every call — answered,
failed or refused — is counted for ctx_stats after its reply has gone out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import anyio.lowlevel
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import ToolManager
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    Resource,
    TextContent,
    Tool,
)
from pydantic import AnyUrl, ValidationError

from .. import __version__
from ..activity import tracking
from ..app import AppHolder
from ..errors import ContextKernelError
from ..metering import CallRecord, metering
from ..records.conversation import said
from ..records.published import Published
from ..serving.stdio import serve_stdio
from ..settings import Settings
from . import offerings
from .context import ServerState, holder_and_session, text_result
from .heartbeat import reporting
from .schema import compact_schema
from .sessions import SESSION_META_KEY, SessionIds

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "context-kernel runs your code in warm Jupyter kernels next to the data and returns only what it prints. "
    "Think in code: filter, count and summarise inside ctx_execute / ctx_execute_file and print the answer. "
    "Each execution's reply ends with its id, e.g. [#42]: cite it next to every number you report from it."
)
# Calls answered before the store could open are kept here until it can (bounded: a server whose
# store never opens must not grow without end).
MAX_UNRECORDED = 1000


def _returned_bytes(result: CallToolResult) -> int:
    total = 0
    for item in result.content:
        if isinstance(item, TextContent):
            total += len(item.text.encode("utf-8", "replace"))
        else:
            total += len(item.model_dump_json().encode())
    return total


def ours(exc: BaseException | None) -> ContextKernelError | None:
    """Our error behind the SDK's wrappers: the exception itself, its cause or context, or inside a group."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ContextKernelError):
            return current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend([current.__cause__, current.__context__])
    return None


def argument_errors(tool: str, exc: ValidationError) -> str:
    """One sentence naming each bad argument: what an agent needs to fix the call, no pydantic internals."""
    problems = []
    for err in exc.errors(include_url=False):
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".") or "arguments"
        if err["type"] == "missing":
            problems.append(f"`{where}` is required")
        elif err["type"] == "extra_forbidden":
            problems.append(f"`{where}` is not a parameter of {tool}")
        else:
            problems.append(f"`{where}`: {err['msg'][:1].lower()}{err['msg'][1:]}")
    return (f"{tool} was called with invalid arguments: {'; '.join(dict.fromkeys(problems))}. "
            "Call it again with the arguments its schema describes.")


def error_result(tool: str, exc: ToolError) -> CallToolResult:
    """The `isError` result for a failed call; an unexpected exception is logged with its traceback."""
    found = ours(exc)
    if found is not None:
        log.info("tool %s refused or failed: %s", tool, found.message)
        return text_result(str(found), True)
    if isinstance(exc.__cause__, ValidationError):
        return text_result(argument_errors(tool, exc.__cause__), True)
    if isinstance(exc, UnexpectedToolError):
        log.error("tool %s raised an unexpected exception", tool, exc_info=exc.__cause__ or exc)
        kind = type(exc.__cause__).__name__ if exc.__cause__ is not None else "error"
        return text_result(f"{tool} failed inside context-kernel ({kind}); this is a fault of the server, not of "
                           "the call. The server log has the traceback; calling again may work.", True)
    return text_result(str(exc), True)  # e.g. an unknown tool name: the SDK's message says it


class ContextKernelServer(MCPServer[ServerState]):
    """MCPServer plus compact schemas in tools/list, the error boundary, byte accounting of every call,
    and the exports and insight page as resources (offerings.py)."""

    def __init__(self, *args: Any, published: Published, register: Callable[[ContextKernelServer], None],
                 progress_s: float = 5.0, **kwargs: Any) -> None:
        """`progress_s`: how often a running call notifies its progress (tools/heartbeat.py)."""
        self._register: Callable[[ContextKernelServer], None] | None = register
        self._progress_s = progress_s
        super().__init__(*args, **kwargs)
        self._unrecorded: list[CallRecord] = []
        self._published = published

    # The tools are registered on first use of the tool manager (tools/list or tools/call), not before
    # `initialize` is answered: building their argument models and schemas, and importing their modules,
    # is ~60 ms of a server start (docs/benchmarks.md, "initialize").
    @property
    def _tool_manager(self) -> ToolManager:
        register, self._register = self._register, None
        if register is not None:
            register(self)
        return self._tools

    @_tool_manager.setter
    def _tool_manager(self, manager: ToolManager) -> None:  # MCPServer.__init__ sets it
        self._tools = manager

    @property
    def tools_registered(self) -> bool:
        return self._register is None

    async def run_stdio_async(self) -> None:
        """Serve over stdin/stdout with the loop's own pipe transports (stdio.py says why)."""
        async with serve_stdio() as (read_stream, write_stream):
            await self._lowlevel_server.run(read_stream, write_stream,
                                            self._lowlevel_server.create_initialization_options())

    async def list_resources(self) -> list[Resource]:
        return [*await super().list_resources(), *await offerings.resources(self._published)]

    async def read_resource(self, uri: AnyUrl | str, context: Context[ServerState, Any] | None = None,
                            ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        if self._published.owns(str(uri)):
            return await offerings.read(self._published, str(uri))
        return await super().read_resource(uri, context)

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Context[ServerState, Any] | None = None) -> GetPromptResult | InputRequiredResult:
        # The SDK answers an unknown name with a ValueError, which its dispatcher logs with a traceback
        # and sends as an internal error; the spec's answer is invalid params, naming what exists.
        if self._prompt_manager.get_prompt(name) is None:
            known = ", ".join(prompt.name for prompt in self._prompt_manager.list_prompts())
            raise MCPError(INVALID_PARAMS, f"no prompt named {name!r}; prompts/list names them: {known}")
        return await super().get_prompt(name, arguments, context)

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [t.model_copy(update={"input_schema": compact_schema(t.input_schema)}) for t in tools]

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[ServerState, Any] | None = None) -> CallToolResult | InputRequiredResult:
        began = time.perf_counter()
        with metering() as meter, tracking(name) as activity:
            try:
                call = super().call_tool(name, arguments, context)
                result = await (reporting(context, activity, self._progress_s, call) if context is not None else call)
            except MCPError:
                raise  # a protocol-level error: the SDK answers it as JSON-RPC
            except ToolError as exc:  # UnexpectedToolError included
                result = error_result(name, exc)
        if context is not None and isinstance(result, CallToolResult):
            holder, session = holder_and_session(context)  # resolved now, while the request is current
            handle = context.request_context.lifespan_context.sessions.handle_to_return(context)
            if handle is not None:  # over HTTP: how a client without cookies continues this session
                result = result.model_copy(update={"meta": {**(result.meta or {}), SESSION_META_KEY: handle}})
            returned = _returned_bytes(result)
            asked, answered = said(name, arguments, "".join(getattr(b, "text", "") for b in result.content))
            record = CallRecord(session.id, name, (time.perf_counter() - began) * 1000, meter.bytes_in,
                                meter.bytes_indexed, returned, bool(result.is_error), meter.kept_out(returned),
                                dict(meter.sources_in), dict(meter.sources_back), asked, answered)

            async def write() -> None:
                await self._record(holder, record)

            # The accounting row is written after the reply goes out: a round trip pays nothing
            # for it (the database thread is FIFO, so a later ctx_stats still sees it).
            holder.spawn(write)
        return result

    async def _record(self, holder: AppHolder, record: CallRecord) -> None:
        self._unrecorded = [*self._unrecorded, record][-MAX_UNRECORDED:]
        try:
            app = await holder.get()  # a call refused before anything ran (bad arguments) is counted too
        except ContextKernelError as exc:
            log.warning("tool call %s not recorded yet (the store is unavailable): %s", record.tool, exc.message)
            return  # kept: written with the first call after the store opens
        calls, self._unrecorded = self._unrecorded, []
        if not calls:
            return  # a concurrent write took this one
        try:
            await app.records.record_calls(calls)
        except Exception:
            log.exception("could not record %d tool call(s)", len(calls))


class WarmStart:
    """Middleware: once the client has connected, make ready in the background what its first call needs:
    the tools (their argument models and schemas, ~40 ms: held back until `initialize` is answered), the
    App (its modules and store, ~0.6 s), and, with prewarm on, its prewarm kernels.

    Triggered after the first inbound message other than `initialize` has been handled (with the
    2025 handshake that is `notifications/initialized`, which the client sends once it has our
    initialize reply; a stateless 2026-07-28 client sends no handshake, so it is its first request),
    so the work never delays the initialize reply. The first call's kernel then is (or is being)
    started already; a call that arrives while a spare starts waits for that spare.
    """

    def __init__(self, count: int) -> None:
        self._count = count
        self._done = False
        self.tools: Callable[[], object] | None = None
        """Registers the tools (the server's tool manager, on first use); set once the server exists."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if not self._done and ctx.method != "initialize":
            self._done = True
            state: ServerState = ctx.lifespan_context
            if self.tools is not None:
                state.holder.spawn(partial(_register_tools, self.tools))
            state.holder.spawn(lambda: _prewarm(state.holder, self._count))
        return result


async def _register_tools(tools: Callable[[], object]) -> None:
    await anyio.lowlevel.checkpoint()  # after the reply to the message that triggered it has gone
    tools()


async def _prewarm(holder: AppHolder, count: int) -> None:
    try:
        app = await holder.get()
        await app.execution.prewarm(count)  # none when count is 0
    except Exception:
        log.warning("prewarming failed", exc_info=True)


def create_server(settings: Settings, *, transport: str = "stdio") -> ContextKernelServer:
    @asynccontextmanager
    async def lifespan(_server: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        async with AppHolder(settings) as holder:
            yield ServerState(holder, SessionIds(transport))

    warm = WarmStart(min(settings.prewarm_kernels, settings.max_kernels))
    server = ContextKernelServer(
        "context-kernel", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING",
        published=Published(settings.export_dir, settings.insight_page), progress_s=settings.progress_interval_s,
        middleware=[warm],
        register=partial(_add_tools, remote=settings.gateway is not None),
    )
    warm.tools = lambda: server._tool_manager  # its first use registers them
    server.add_prompt(offerings.routing_prompt())
    return server


def _add_tools(server: ContextKernelServer, *, remote: bool) -> None:
    from . import batch, execute, export, fetch, knowledge, meta

    note = execute.REMOTE_NOTE if remote else ""
    server.add_tool(execute.ctx_execute, name="ctx_execute", description=execute.EXECUTE_DOC + note)
    server.add_tool(execute.ctx_execute_file, name="ctx_execute_file", description=execute.EXECUTE_FILE_DOC + note)
    server.add_tool(execute.ctx_follow, name="ctx_follow", description=execute.FOLLOW_DOC)
    server.add_tool(knowledge.ctx_index, name="ctx_index", description=knowledge.INDEX_DOC)
    server.add_tool(knowledge.ctx_search, name="ctx_search", description=knowledge.SEARCH_DOC)
    server.add_tool(batch.ctx_batch_execute, name="ctx_batch_execute", description=batch.BATCH_DOC)
    server.add_tool(fetch.ctx_fetch_and_index, name="ctx_fetch_and_index", description=fetch.FETCH_DOC)
    server.add_tool(export.ctx_export, name="ctx_export", description=export.EXPORT_DOC)
    server.add_tool(knowledge.ctx_purge, name="ctx_purge", description=knowledge.PURGE_DOC)
    server.add_tool(meta.ctx_stats, name="ctx_stats", description=meta.STATS_DOC)
    server.add_tool(meta.ctx_doctor, name="ctx_doctor", description=meta.DOCTOR_DOC)
    server.add_tool(meta.ctx_upgrade, name="ctx_upgrade", description=meta.UPGRADE_DOC)
    server.add_tool(meta.ctx_insight, name="ctx_insight", description=meta.INSIGHT_DOC)
