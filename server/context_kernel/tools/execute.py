"""ctx_execute and ctx_execute_file: typed signatures (the schema) that call the execution service."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from ..execution.requests import ExecuteRequest
from .context import ServerState, app_and_session, text_result

Language = Annotated[str, Field(description=(
    "python, shell, r, javascript, typescript (warm, stateful kernels); ruby, go, rust, php, perl, elixir, "
    "csharp (a fresh process per call, no state)"))]
Timeout = Annotated[int | None, Field(description="Milliseconds; default 120000, clamped to the server maximum. "
                                      "On timeout the cell is interrupted and the kernel keeps its state.")]
Intent = Annotated[str | None, Field(description=(
    "What you look for in the output. Over 5 KB, the output is indexed and the reply (at most 4 KB) is the "
    "lines that best match it, then rare, failing or extreme lines."))]

EXECUTE_DOC = (
    "Run code in a warm Jupyter kernel next to the data; only what the code prints (and a last expression's "
    "value) comes back. Variables, imports and loaded data persist between calls of the same language. Print "
    "derived answers (counts, filtered rows, summaries), not raw data: long output is cut to head+tail and "
    "recorded in full. Images are recorded, not returned. python runs in the project's own environment (its "
    ".venv or the activated one; the first reply names it), the same `python` shell cells get."
)
EXECUTE_FILE_DOC = (
    "Run code over one project file without reading it into the conversation: FILE_CONTENT (text), "
    "FILE_CONTENT_PATH and file_path are defined before your code (file_content... in elixir and rust). Only what "
    "you print comes back. Use Read instead when you need the exact text to edit it."
)
# Added to both descriptions when every kernel runs on a kernel gateway (`serve --gateway-url`).
REMOTE_NOTE = (
    " Kernels run on a remote kernel gateway here, not on this machine: the project's files are not on their disk "
    "(unless the deployment mounts them there) and their working directory is the gateway's. ctx_execute_file sends "
    "the file's content with the cell (FILE_CONTENT, at most 8 MB); opening FILE_CONTENT_PATH there fails."
)


async def ctx_execute(
    language: Language,
    code: Annotated[str, Field(description="The code to run. Print what you need to see.")],
    ctx: Context[ServerState, Any],
    timeout: Timeout = None,
    intent: Intent = None,
    background: Annotated[bool, Field(description=(
        "Return after the timeout with partial output and leave the cell running in its own kernel "
        "(for servers, watchers, long jobs); follow it with ctx_follow."))] = False,
    fresh: Annotated[bool, Field(description="Run in a throwaway kernel that shares no state.")] = False,
    kernel: Annotated[str | None, Field(description="Any installed Jupyter kernelspec name (e.g. ir); "
                                        "overrides language.")] = None,
) -> CallToolResult:
    app, session = await app_and_session(ctx)
    reply = await app.execution.execute(
        ExecuteRequest(code=code, language=language, kernel=kernel, timeout_ms=timeout, intent=intent,
                       background=background, fresh=fresh, tool="ctx_execute"),
        session,
    )
    return text_result(reply.text, reply.is_error, [reply.execution_id] if reply.execution_id else None)


async def ctx_execute_file(
    path: Annotated[str, Field(description="File path, relative to the project directory or absolute inside it.")],
    language: Language,
    code: Annotated[str, Field(description="Code that processes FILE_CONTENT and prints the answer.")],
    ctx: Context[ServerState, Any],
    timeout: Timeout = None,
    intent: Intent = None,
) -> CallToolResult:
    app, session = await app_and_session(ctx)
    reply = await app.execution.execute(
        ExecuteRequest(code=code, language=language, timeout_ms=timeout, intent=intent, path=path,
                       tool="ctx_execute_file"),
        session,
    )
    return text_result(reply.text, reply.is_error, [reply.execution_id] if reply.execution_id else None)


FOLLOW_DOC = (
    "Follow a background cell (ctx_execute background=true): status, output since your last look (≤ 4 KB), how it "
    "ended; all of it is searchable as exec-N."
)


async def ctx_follow(
    execution: Annotated[int, Field(description="The id its reply cites: 42 for [#42].")],
    ctx: Context[ServerState, Any],
    intent: Annotated[str | None, Field(description="What to look for in long new output.")] = None,
    wait: Annotated[float, Field(description="Seconds to wait for its end first.", ge=0, le=60)] = 0,
    cancel: Annotated[bool, Field(description="Stop it.")] = False,
) -> CallToolResult:
    app, session = await app_and_session(ctx)
    reply = await app.execution.background.follow(execution, session.id, intent=intent, wait_s=wait, cancel=cancel)
    return text_result(reply.text, reply.is_error, [execution])
