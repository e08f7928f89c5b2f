"""ctx_fetch_and_index: a typed signature over the fetch service."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from ..web.outcomes import FetchRequest
from .context import ServerState, app_and_session, text_result

FETCH_DOC = (
    "Fetch a page (HTML → main content as markdown, JSON, text) once, index it, and return only a short preview; "
    "then ask ctx_search. Cached for 24 h by default. Plain HTTP fetch, no JavaScript. Link-local/metadata "
    "addresses are refused."
)


class FetchItem(BaseModel):
    url: str
    source: str | None = Field(default=None, description="Label for this page (default: its URL).")


async def ctx_fetch_and_index(
    ctx: Context[ServerState, Any],
    url: Annotated[str | None, Field(description="The page to fetch (or give requests).")] = None,
    requests: Annotated[list[FetchItem] | None, Field(description="Several pages: [{url, source?}].")] = None,
    source: Annotated[str | None, Field(description="Label to index it under (default: the URL).")] = None,
    ttl: Annotated[int | None, Field(description="Milliseconds a cached copy stays fresh (default 24 h); "
                                     "0 refetches.")] = None,
    force: Annotated[bool, Field(description="Refetch even if cached.")] = False,
    concurrency: Annotated[int, Field(description="Parallel fetches for requests (1-8).", ge=1, le=8)] = 1,
) -> CallToolResult:
    app, session = await app_and_session(ctx)
    reply = await app.fetch.fetch(
        url=url, requests=None if requests is None else [FetchRequest(r.url, r.source) for r in requests],
        source=source, session_id=session.id, ttl_s=None if ttl is None else ttl / 1000, force=force,
        concurrency=concurrency)
    return text_result(reply.text, reply.is_error)
