"""The server's side of session memory: hook events spooled since the last call become database rows
and the searchable source `session-events:<session>` before any read that could show them.

Services that read (search, stats, insight, a project purge) call `ingest()` first; that is the
rule, and the composition root wires it. Reading and deleting spool files runs on anyio's worker
threads, SQL on the store's thread, and the session's events are indexed through the knowledge
service like everything else in the knowledge base.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio

from ..knowledge.service import KnowledgeService
from ..metering import metering
from ..store.db import Database
from ..store.events import EventRepository, EventRow
from . import spool
from .memory import SOURCE_PREFIX, event_chunks, source_label, store_spooled


class Ingestion:
    def __init__(self, *, db: Database, events: EventRepository, knowledge: KnowledgeService, home: Path) -> None:
        self._db = db
        self._events = events
        self._knowledge = knowledge
        self._home = home

    async def ingest(self) -> dict[str, int]:
        """Move what hooks spooled into the store; returns how many events were kept per session."""
        if not await anyio.to_thread.run_sync(spool.pending, self._home):
            return {}
        drained = await anyio.to_thread.run_sync(lambda: list(spool.drain(self._home)))
        kept: dict[str, int] = {}
        for taken, rows in drained:
            for session_id, n in (await self._db.run(store_spooled, self._events, rows)).items():
                kept[session_id] = kept.get(session_id, 0) + n
            # Deleted only after its rows are committed: a crash in between re-reads the file
            # (dedup against the last events makes that harmless).
            await anyio.to_thread.run_sync(partial(taken.unlink, missing_ok=True))
        for session_id in kept:
            events, project = await self._db.run(self._session_events, session_id)
            chunks, text = event_chunks(events)
            with metering():  # hook events are not what the calling tool took in or indexed
                await self._knowledge.index_chunks(label=source_label(session_id), chunks=chunks, text=text,
                                                   kind=SOURCE_PREFIX, session_id=session_id, project_dir=project)
        return kept

    def _session_events(self, session_id: str) -> tuple[list[EventRow], str | None]:
        return self._events.events(session_id), self._events.project_of(session_id)
