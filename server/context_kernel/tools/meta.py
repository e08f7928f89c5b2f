"""ctx_stats, ctx_doctor, ctx_upgrade and ctx_insight: the server describing itself."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult

from ..setup.upgrade import render_upgrade
from ..wording import counted
from .context import ServerState, app_and_session, holder_and_session, text_result

STATS_DOC = ("Bytes taken in, indexed and returned per tool, for this session and in total, with how much "
             "raw data was kept out of the conversation.")
DOCTOR_DOC = ("Check kernels (each started), which Python environment the python kernel uses and where javascript "
              "and R find packages, and why, SQLite FTS5 and trigram, the data dir, client hooks and versions.")
UPGRADE_DOC = "The command that upgrades context-kernel the way it was installed."
INSIGHT_DOC = ("Write a local HTML page listing every recorded session (accounting, exported notebooks, hook "
               "memory) for a person to browse; returns its path. Nothing is sent anywhere.")


async def ctx_stats(ctx: Context[ServerState, Any]) -> CallToolResult:
    app, session = await app_and_session(ctx)
    return text_result(await app.records.stats(session.id))


async def ctx_doctor(ctx: Context[ServerState, Any]) -> CallToolResult:
    holder, _session = holder_and_session(ctx)
    checks = await holder.doctor()
    return text_result("\n".join(c.line() for c in checks), any(c.level == "FAIL" for c in checks))


async def ctx_insight(ctx: Context[ServerState, Any]) -> CallToolResult:
    app, _session = await app_and_session(ctx)
    done = await app.records.insight()
    listed = counted(done.sessions, "session")
    return text_result(f"Wrote {done.page} ({listed}). Open it in a browser; export a session with ctx_export.")


async def ctx_upgrade() -> CallToolResult:
    return text_result(render_upgrade())
