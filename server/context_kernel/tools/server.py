"""create_server(settings): the MCP server with its tools; the same factory serves CLI and tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer

from .. import __version__
from ..app import AppHolder
from ..settings import Settings
from . import batch, execute, export, fetch, knowledge
from .context import ServerState
from .sessions import SessionIds

INSTRUCTIONS = (
    "context-kernel runs your code in warm Jupyter kernels next to the data and returns only what it prints. "
    "Think in code: filter, count and summarise inside ctx_execute / ctx_execute_file and print the answer."
)


def create_server(settings: Settings, *, transport: str = "stdio") -> MCPServer[ServerState]:
    @asynccontextmanager
    async def lifespan(_server: MCPServer[ServerState]) -> AsyncIterator[ServerState]:
        async with AppHolder(settings) as holder:
            yield ServerState(holder, SessionIds(transport))

    server: MCPServer[ServerState] = MCPServer(
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
    return server
