"""create_server(settings): the MCP server with its tools; the same factory serves CLI and tests."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, Tool

from .. import __version__
from ..app import AppHolder
from ..metering import metering
from ..settings import Settings
from . import batch, execute, export, fetch, knowledge, meta
from .context import ServerState, holder_and_session
from .schema import compact_schema
from .sessions import SessionIds

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "context-kernel runs your code in warm Jupyter kernels next to the data and returns only what it prints. "
    "Think in code: filter, count and summarise inside ctx_execute / ctx_execute_file and print the answer."
)


def _returned_bytes(result: CallToolResult) -> int:
    total = 0
    for item in result.content:
        if isinstance(item, TextContent):
            total += len(item.text.encode("utf-8", "replace"))
        else:
            total += len(item.model_dump_json().encode())
    return total


class ContextKernelServer(MCPServer[ServerState]):
    """MCPServer plus compact schemas in tools/list and byte accounting around every tool call."""

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [t.model_copy(update={"input_schema": compact_schema(t.input_schema)}) for t in tools]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[ServerState, Any] | None = None
                        ) -> Any:
        began = time.perf_counter()
        with metering() as meter:
            result = await super().call_tool(name, arguments, context)
        if context is not None and isinstance(result, CallToolResult):
            duration_ms = (time.perf_counter() - began) * 1000
            holder, session = holder_and_session(context)  # resolved now, while the request is current

            async def record() -> None:
                await self._record(holder, session.id, name, result, meter.bytes_in, meter.bytes_indexed,
                                   duration_ms)

            # The accounting row is written after the reply goes out: a round trip pays nothing
            # for it (the database thread is FIFO, so a later ctx_stats still sees it).
            holder.spawn(record)
        return result

    async def _record(self, holder: AppHolder, session_id: str, name: str, result: CallToolResult, bytes_in: int,
                      bytes_indexed: int, duration_ms: float) -> None:
        app = holder.started
        if app is None:
            return  # a call refused before the app was built (bad arguments): nothing ran, nothing to count
        try:
            await app.db.run(app.events.record_call, session_id, name, duration_ms=duration_ms, bytes_in=bytes_in,
                             bytes_indexed=bytes_indexed, bytes_returned=_returned_bytes(result),
                             is_error=bool(result.is_error))
        except Exception:  # accounting must never fail the call it accounts for
            log.exception("could not record tool call %s", name)


def create_server(settings: Settings, *, transport: str = "stdio") -> ContextKernelServer:
    @asynccontextmanager
    async def lifespan(_server: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        async with AppHolder(settings) as holder:
            yield ServerState(holder, SessionIds(transport))

    server = ContextKernelServer(
        "context-kernel", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING",
    )
    server.add_tool(execute.ctx_execute, name="ctx_execute", description=execute.EXECUTE_DOC)
    server.add_tool(execute.ctx_execute_file, name="ctx_execute_file", description=execute.EXECUTE_FILE_DOC)
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
    return server
