"""ctx_batch_execute: a typed signature over the batch service."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from ..execution.requests import Command
from .context import ServerState, app_and_session, text_result

BATCH_DOC = (
    "Gather first, derive second: run several labelled shell commands in one call (fresh shells), index every "
    "output as a section named by its label, and answer your queries from them. Returns the command inventory, "
    "matching snippets and distinctive terms for follow-up ctx_search — not the raw outputs. Keep concurrency 1 "
    "for builds, tests or anything touching the same files."
)


class BatchCommand(BaseModel):
    label: str = Field(description="Names this command's section in the index.")
    command: str = Field(description="A shell command.")


async def ctx_batch_execute(
    commands: Annotated[list[BatchCommand], Field(description="Commands to run, in order.")],
    ctx: Context[ServerState, Any],
    queries: Annotated[list[str] | None, Field(description="Questions to answer from the outputs.")] = None,
    concurrency: Annotated[int, Field(description="1 = in order with one shared time budget; up to 8 in "
                                      "parallel with a timeout each.", ge=1, le=8)] = 1,
    timeout: Annotated[int | None, Field(description="Milliseconds (batch budget, or per command when "
                                         "concurrency > 1).")] = None,
    query_scope: Annotated[Literal["batch", "global"], Field(description="Search this batch's output or "
                                                             "everything indexed.")] = "batch",
) -> CallToolResult:
    app, session = await app_and_session(ctx)
    reply = await app.batch.run([Command(c.label, c.command) for c in commands], queries or [], session=session,
                               concurrency=concurrency, timeout_ms=timeout, query_scope=query_scope)
    return text_result(reply.text, executions=reply.execution_ids)
