"""ctx_index, ctx_search and ctx_purge: typed signatures that call the knowledge service.

Parameter names follow context-mode (camelCase where it uses camelCase) so agents and
instruction files written for it work unchanged.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from ..errors import ContextKernelError
from .context import holder_and_session

INDEX_DOC = (
    "Index text, a file or a directory tree into the searchable knowledge base instead of reading it into the "
    "conversation; then ask ctx_search. Re-indexing a label replaces it; changed files are re-indexed when searched."
)
SEARCH_DOC = (
    "Search everything indexed (files, fetched pages, large outputs, batch results): ranked sections with snippets "
    "around the matching words, each headed by its title and source. Several queries per call; a section already "
    "sent in this session is only named, not repeated."
)
PURGE_DOC = "Delete indexed content and execution records of this session (or of the whole project). Needs confirm."


def _text(text: str, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


async def ctx_index(
    ctx: Context,
    content: Annotated[str | None, Field(description="Text to index (or give path).")] = None,
    path: Annotated[str | None, Field(description="A file or directory inside the project.")] = None,
    source: Annotated[str | None, Field(description="Label to file it under (default: the path).")] = None,
    include: Annotated[list[str] | None, Field(description="Directory mode: only these globs.")] = None,
    exclude: Annotated[list[str] | None, Field(description="Directory mode: skip these globs.")] = None,
    maxDepth: Annotated[int | None, Field(description="Directory mode: how deep to go.")] = None,  # noqa: N803
    maxFiles: Annotated[int, Field(description="Directory mode: at most this many files.")] = 1000,  # noqa: N803
    respectGitignore: bool = True,  # noqa: N803
) -> CallToolResult:
    holder, session = holder_and_session(ctx)
    if (content is None) == (path is None):
        return _text("give exactly one of content or path", True)
    app = await holder.get()
    if content is not None:
        label = source or "text-" + hashlib.sha256(content.encode()).hexdigest()[:10]
        row = await app.knowledge.index_text(label=label, text=content, session_id=session.id)
        return _text(f'Indexed {row.chunk_count} sections ({row.code_chunks} with code) as "{label}".')
    assert path is not None
    try:
        report = await app.knowledge.index_path(path, source=source, include=include, exclude=exclude,
                                                max_depth=maxDepth, max_files=maxFiles,
                                                respect_gitignore=respectGitignore, session_id=session.id)
    except ContextKernelError as exc:
        return _text(str(exc), True)
    files = len(report.sources)
    skipped = "; skipped: " + ", ".join(f"{n} {why}" for why, n in report.skipped.items()) if report.skipped else ""
    what = f"{files} files, " if files != 1 or report.skipped else ""
    return _text(f'Indexed {what}{report.sections} sections ({report.code_sections} with code) as '
                 f'"{report.root_label}"{skipped}. Search with ctx_search(queries=[...], source="{report.root_label}").')


async def ctx_search(
    queries: Annotated[list[str], Field(description="One or more questions or keyword sets.")],
    ctx: Context,
    source: Annotated[str | None, Field(description="Only sources whose label contains this.")] = None,
    limit: Annotated[int, Field(description="Hits per query (1-10).", ge=1, le=10)] = 3,
    contentType: Annotated[Literal["code", "prose"] | None, Field(description="Only code or only prose.")] = None,  # noqa: N803
    sort: Literal["relevance", "timeline"] = "relevance",
) -> CallToolResult:
    holder, session = holder_and_session(ctx)
    if not [q for q in queries if q.strip()]:
        return _text("queries is empty: pass one or more search strings", True)
    app = await holder.get()
    await app.db.run(app.memory.ingest)  # events hooks spooled since the last call become searchable
    reply = await app.knowledge.search([q for q in queries if q.strip()], session_id=session.id, source=source,
                                       limit=limit, content_type=contentType, sort=sort)
    return _text(reply.text)


async def ctx_purge(
    confirm: Annotated[bool, Field(description="Must be true.")],
    ctx: Context,
    scope: Literal["session", "project"] = "session",
    sessionId: Annotated[str | None, Field(description="Another session's id (default: this one).")] = None,  # noqa: N803
) -> CallToolResult:
    holder, session = holder_and_session(ctx)
    if not confirm:
        return _text("nothing deleted: pass confirm=true to purge", True)
    app = await holder.get()
    events = 0
    if scope == "project":
        await app.db.run(app.memory.ingest)  # spooled hook events too
        events = await app.db.run(app.events.purge_project, str(holder.settings.project_dir))
    counts = await app.knowledge.purge(scope=scope, session_id=sessionId or session.id)
    memory = f", {events} hook events" if scope == "project" else ""
    return _text(f"Purged {counts['sources']} indexed sources, {counts['executions']} execution records{memory} and "
                 f"{counts['sessions']} session(s) ({scope} scope).")
