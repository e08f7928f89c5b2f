"""The record service behind ctx_stats, ctx_insight and ctx_purge: what the session record says, and
deleting it. Tool-call accounting is written here too (the MCP edge meters every call).

Reads take in what hooks spooled first (`ingest`), so a page or a count never lags the hooks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

import anyio

from ..errors import InvalidRequest
from ..knowledge.service import KnowledgeService
from ..metering import CallRecord
from ..store.db import Database
from ..store.events import EventRepository
from ..store.executions import ExecutionRepository
from .conversation import redacted
from .insight import read_insight, write_insight
from .stats import render_stats

PurgeScope = Literal["session", "project"]


@dataclass(frozen=True)
class PurgeReport:
    scope: PurgeScope
    sources: int
    executions: int
    sessions: int
    hook_events: int | None
    """Hook events deleted; None for a session purge (hook and MCP session ids are unrelated)."""


@dataclass(frozen=True)
class InsightReport:
    page: Path
    sessions: int


class RecordService:
    def __init__(self, *, db: Database, executions: ExecutionRepository, events: EventRepository,
                 knowledge: KnowledgeService, ingest: Callable[[], Awaitable[object]], home: Path,
                 project_dir: Path, export_dir: Path, insight_page: Path,
                 after_purge: Callable[[], None] = lambda: None,
                 after_call: Callable[[str, str], None] = lambda tool, session_id: None) -> None:
        """`after_purge`: told when session rows were deleted (the execution service re-creates a
        purged session's row on its next call, so the session goes on working). `after_call`: told of each
        call once it is recorded (tool, session): the live notebooks follow."""
        self._db = db
        self._executions = executions
        self._events = events
        # call accounting is written on the loop when it can be (store/db.py `run_quick`)
        self._quick_events = EventRepository(db.engine, db.quick.transaction) if db.quick is not None else None
        self._knowledge = knowledge
        self._ingest = ingest
        self._home = home
        self._project_dir = project_dir
        self._export_dir = export_dir
        self._insight_page = insight_page
        self._after_purge = after_purge
        self._after_call = after_call

    async def record_calls(self, calls: list[CallRecord]) -> None:
        quick = partial(_write_calls, self._quick_events) if self._quick_events is not None else None
        await self._db.run_quick(partial(_write_calls, self._events), quick, calls)
        for call in calls:
            self._after_call(call.tool, call.session_id)

    async def stats(self, session_id: str) -> str:
        """ctx_stats: this session and the lifetime of the data dir, every figure defined."""
        await self._ingest()

        def read() -> str:
            events = sum(self._events.event_counts().values())
            return render_stats(session_id, self._events.tool_totals(session_id), self._events.tool_totals(),
                                self._events.session_count(), events, self._events.source_totals(session_id))

        return await self._db.run(read) + "\n" + await self._knowledge.semantic_line()

    async def insight(self, page: Path | None = None) -> InsightReport:
        """ctx_insight: write the local HTML page of every session."""
        await self._ingest()
        target = page or self._insight_page
        data = await self._db.run(read_insight, self._executions, self._events)
        count = await anyio.to_thread.run_sync(write_insight, data, self._home, self._export_dir, target)
        return InsightReport(target, count)

    async def purge(self, *, confirm: bool, scope: PurgeScope, session_id: str) -> PurgeReport:
        """ctx_purge: a session's (or the whole project's) indexed sources and execution records,
        and for the project its hook memory too."""
        if not confirm:
            raise InvalidRequest("nothing deleted: purging needs confirm=true",
                                 hint="call again with confirm=true if you mean it")
        hook_events: int | None = None
        if scope == "project":
            await self._ingest()  # spooled hook events belong to the project too
            hook_events = await self._db.run(self._events.purge_project, str(self._project_dir))
        counts = await self._knowledge.purge(scope=scope, session_id=session_id)
        self._after_purge()
        return PurgeReport(scope, counts["sources"], counts["executions"], counts["sessions"], hook_events)


def _write_calls(events: EventRepository, calls: list[CallRecord]) -> None:
    # Redacted here, in the same hop as the write: a thread hop before it would let an export or ctx_stats
    # queued meanwhile read the database without this call.
    for c in map(redacted, calls):
        events.record_call(c.session_id, c.tool, duration_ms=c.duration_ms, bytes_in=c.bytes_in,
                           bytes_indexed=c.bytes_indexed, bytes_returned=c.bytes_returned, is_error=c.is_error,
                           bytes_kept_out=c.bytes_kept_out, sources_in=c.sources_in, sources_back=c.sources_back,
                           arguments=c.arguments, reply=c.reply)
