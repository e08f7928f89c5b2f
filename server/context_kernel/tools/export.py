"""ctx_export: a typed signature over the export service."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from ..errors import ContextKernelError
from .context import holder_and_session

EXPORT_DOC = (
    "Write this session's executions as Jupyter notebooks (every cell with its full recorded outputs, timings "
    "and what you were shown) for a person to read and replay. Returns the path."
)


async def ctx_export(
    ctx: Context,
    session: Annotated[str | None, Field(description="Session id (default: this one).")] = None,
    path: Annotated[str | None, Field(description="Directory inside the project (default: the data dir).")] = None,
    format: Literal["ipynb", "html"] = "ipynb",  # noqa: A002 - the reference's parameter name
) -> CallToolResult:
    holder, current = holder_and_session(ctx)
    app = await holder.get()
    try:
        done = await app.export.export(session or current.id, path, html=format == "html")
    except ContextKernelError as exc:
        return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
    others = "".join(f"\n- {nb.path} ({nb.kernel_name}, {nb.cells} cells)" for nb in done.notebooks[1:])
    text = f"Exported {done.executions} executions to {done.main}" + (f"; per-kernel notebooks:{others}" if others else "")
    return CallToolResult(content=[TextContent(type="text", text=text)])
