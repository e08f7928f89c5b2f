"""ctx_fetch_and_index: a typed signature over the fetch service."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from ..errors import ContextKernelError
from ..web.outcomes import FetchRequest, render_many, render_one
from .context import holder_and_session

FETCH_DOC = (
    "Fetch a page (HTML → main content as markdown, JSON, text) once, index it, and return only a short preview; "
    "then ask ctx_search. Cached for 24 h by default. Plain HTTP fetch, no JavaScript. Link-local/metadata "
    "addresses are refused."
)


class FetchItem(BaseModel):
    url: str
    source: str | None = Field(default=None, description="Label for this page (default: its URL).")


async def ctx_fetch_and_index(
    ctx: Context,
    url: Annotated[str | None, Field(description="The page to fetch (or give requests).")] = None,
    requests: Annotated[list[FetchItem] | None, Field(description="Several pages: [{url, source?}].")] = None,
    source: Annotated[str | None, Field(description="Label to index it under (default: the URL).")] = None,
    ttl: Annotated[int | None, Field(description="Milliseconds a cached copy stays fresh (default 24 h); "
                                     "0 refetches.")] = None,
    force: Annotated[bool, Field(description="Refetch even if cached.")] = False,
    concurrency: Annotated[int, Field(description="Parallel fetches for requests (1-8).", ge=1, le=8)] = 1,
) -> CallToolResult:
    holder, session = holder_and_session(ctx)
    if (url is None) == (requests is None):
        return _text("give exactly one of url or requests", True)
    app = await holder.get()
    items = [FetchRequest(url, source)] if url is not None else [FetchRequest(r.url, r.source) for r in requests or []]
    try:
        outcomes = await app.fetch.fetch_many(items, session_id=session.id,
                                              ttl_s=None if ttl is None else ttl / 1000, force=force,
                                              concurrency=concurrency)
    except ContextKernelError as exc:
        return _text(str(exc), True)
    if url is not None:
        return _text(render_one(outcomes[0]), outcomes[0].status == "error")
    text, all_failed = render_many(outcomes)
    return _text(text, all_failed)


def _text(text: str, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)
