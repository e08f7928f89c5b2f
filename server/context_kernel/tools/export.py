"""ctx_export: a typed signature over the export service."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from ..wording import counted
from .context import ServerState, app_and_session, text_result

EXPORT_DOC = (
    "Write this session's executions as Jupyter notebooks (every cell with its full recorded outputs, timings "
    "and what you were shown) for a person to read and replay. Returns the path."
)


async def ctx_export(
    ctx: Context[ServerState, Any],
    session: Annotated[str | None, Field(description="Session id (default: this one).")] = None,
    path: Annotated[str | None, Field(description="Directory inside the project (default: the data dir).")] = None,
    format: Literal["ipynb", "html"] = "ipynb",  # noqa: A002 - the reference's parameter name
    redact: Annotated[bool, Field(description="Take secrets out of the exported code and outputs.")] = False,
    with_inputs: Annotated[bool, Field(description="Copy the files the cells read next to the notebooks, "
                                                   "which then run there.")] = False,
) -> CallToolResult:
    app, current = await app_and_session(ctx)
    done = await app.export.export(session or current.id, path, html=format == "html", redact=redact,
                                   with_inputs=with_inputs)
    others = "".join(f"\n- {nb.path} ({nb.kernel_name}, {counted(nb.cells, 'cell')})" for nb in done.notebooks[1:])
    text = f"Exported {counted(done.executions, 'execution')}{' (secrets redacted)' if redact else ''} to {done.main}"
    return text_result(text + (f"; per-kernel notebooks:{others}" if others else ""))
