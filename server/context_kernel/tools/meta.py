"""ctx_stats, ctx_doctor and ctx_upgrade: the server describing itself."""

from __future__ import annotations

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent

from ..doctor import collect
from ..insight import write_insight
from ..stats import render_stats
from ..upgrade import render_upgrade
from .context import holder_and_session

STATS_DOC = ("Bytes taken in, indexed and returned per tool, for this session and in total, with how much "
             "raw data was kept out of the conversation.")
DOCTOR_DOC = "Check kernels (each started), SQLite FTS5 and trigram, the data dir, client hooks and versions."
UPGRADE_DOC = "The command that upgrades context-kernel the way it was installed."
INSIGHT_DOC = ("Write a local HTML page listing every recorded session (accounting, exported notebooks, hook "
               "memory) for a person to browse; returns its path. Nothing is sent anywhere.")


def _text(text: str, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


async def ctx_stats(ctx: Context) -> CallToolResult:
    holder, session = holder_and_session(ctx)
    app = await holder.get()
    await app.db.run(app.memory.ingest)
    mine = await app.db.run(app.events.tool_totals, session.id)
    lifetime = await app.db.run(app.events.tool_totals)
    sessions = await app.db.run(app.events.session_count)
    events = sum((await app.db.run(app.events.event_counts)).values())
    return _text(render_stats(session.id, mine, lifetime, sessions, events))


async def ctx_doctor(ctx: Context) -> CallToolResult:
    holder, _session = holder_and_session(ctx)
    checks = await collect(holder.settings, start=True)
    return _text("\n".join(c.line() for c in checks), any(c.level == "FAIL" for c in checks))


async def ctx_insight(ctx: Context) -> CallToolResult:
    holder, _session = holder_and_session(ctx)
    app = await holder.get()
    await app.db.run(app.memory.ingest)
    page = holder.settings.home / "insight.html"
    count = await app.db.run(write_insight, app.executions, app.events, holder.settings.home,
                             holder.settings.home / "exports", page)
    return _text(f"Wrote {page} ({count} sessions). Open it in a browser; export a session with ctx_export.")


async def ctx_upgrade() -> CallToolResult:
    return _text(render_upgrade())
