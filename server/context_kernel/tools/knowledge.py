"""ctx_index, ctx_search and ctx_purge: typed signatures that call the knowledge service.

Parameter names follow context-mode (camelCase where it uses camelCase) so agents and
instruction files written for it work unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from ..wording import counted
from .context import ServerState, app_and_session, holder_and_session, text_result

INDEX_DOC = (
    "Index text, a file or a directory tree into the searchable knowledge base instead of reading it into the "
    "conversation; then ask ctx_search. Re-indexing a label replaces it; changed files are re-indexed when searched."
)
SEARCH_DOC = (
    "Search what this project indexed (files, fetched pages, large outputs, batch results): ranked sections with "
    "snippets around the matching words, each headed by its title and source. Several queries per call; a section "
    "already sent in this session is only named, not repeated (sent again after a context compaction or an hour). "
    'scope="all" searches every project\'s sources in the data dir.'
)
PURGE_DOC = "Delete indexed content and execution records of this session (or of the whole project). Needs confirm."


async def ctx_index(
    ctx: Context[ServerState, Any],
    content: Annotated[str | None, Field(description="Text to index (or give path).")] = None,
    path: Annotated[str | None, Field(description="A file or directory inside the project.")] = None,
    source: Annotated[str | None, Field(description="Label to file it under (default: the path).")] = None,
    include: Annotated[list[str] | None, Field(description="Directory mode: only these globs.")] = None,
    exclude: Annotated[list[str] | None, Field(description="Directory mode: skip these globs.")] = None,
    maxDepth: Annotated[int | None, Field(description="Directory mode: how deep to go.")] = None,  # noqa: N803 - the reference's name
    maxFiles: Annotated[int, Field(description="Directory mode: at most this many files.")] = 1000,  # noqa: N803 - the reference's name
    respectGitignore: bool = True,  # noqa: N803 - the reference's name
) -> CallToolResult:
    app, session = await app_and_session(ctx)
    report = await app.knowledge.index(content=content, path=path, source=source, include=include, exclude=exclude,
                                       max_depth=maxDepth, max_files=maxFiles, respect_gitignore=respectGitignore,
                                       session_id=session.id)
    coverage = await app.knowledge.semantic_coverage([s.label for s in report.sources])
    semantic = f"\n{coverage}" if coverage else ""
    if content is not None:
        row, label = report.sources[0], report.root_label
        return text_result(f'Indexed {counted(row.chunk_count, "section")} ({row.code_chunks} with code) as '
                           f'"{label}".{semantic}')
    files = len(report.sources)
    skipped = "; skipped: " + ", ".join(f"{n} {why}" for why, n in report.skipped.items()) if report.skipped else ""
    what = f"{counted(files, 'file')}, " if files != 1 or report.skipped else ""
    if report.removed:
        skipped += f"; removed {counted(len(report.removed), 'file')} this walk no longer covers"
    return text_result(f'Indexed {what}{counted(report.sections, "section")} ({report.code_sections} with code) as '
                       f'"{report.root_label}"{skipped}. Search with ctx_search(queries=[...], '
                       f'source="{report.root_label}").{semantic}')


async def ctx_search(
    queries: Annotated[list[str], Field(description="One or more questions or keyword sets.")],
    ctx: Context[ServerState, Any],
    source: Annotated[str | None, Field(description="Only sources whose label contains this.")] = None,
    limit: Annotated[int, Field(description="Hits per query (1-10).", ge=1, le=10)] = 3,
    contentType: Annotated[Literal["code", "prose"] | None, Field(description="Only code or only prose.")] = None,  # noqa: N803 - the reference's name
    sort: Literal["relevance", "timeline"] = "relevance",
    scope: Annotated[Literal["project", "all"], Field(
        description="project: this project's sources; all: every project's in the data dir, labels naming it.")
    ] = "project",
) -> CallToolResult:
    holder, session = holder_and_session(ctx)
    async with holder.knowledge() as knowledge:  # a new server's first search need not wait for its kernels' modules
        reply = await knowledge.search(queries, session_id=session.id, source=source, limit=limit,
                                       content_type=contentType, sort=sort, scope=scope)
    return text_result(reply.text)


async def ctx_purge(
    confirm: Annotated[bool, Field(description="Must be true.")],
    ctx: Context[ServerState, Any],
    scope: Literal["session", "project"] = "session",
    sessionId: Annotated[str | None, Field(description="Another session's id (default: this one).")] = None,  # noqa: N803 - the reference's name
) -> CallToolResult:
    app, session = await app_and_session(ctx)
    done = await app.records.purge(confirm=confirm, scope=scope, session_id=sessionId or session.id)
    memory = f", {done.hook_events} hook events" if done.hook_events is not None else ""
    return text_result(f"Purged {done.sources} indexed sources, {done.executions} execution records{memory} and "
                       f"{done.sessions} session(s) ({done.scope} scope).")
