"""Session memory on the database: spool ingestion, snapshots at PreCompact, restore at SessionStart.

This module imports SQLAlchemy (through the store); hooks import it only for the rare events
(PreCompact, SessionStart). The frequent ones append to the spool (`spool.py`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..datadir import private_dir
from ..knowledge.model import Chunk
from ..security.redact import redact_text
from ..security.secret_shapes import SecretShapes, cached_shapes
from ..settings import database_path
from ..store.db import open_engine
from ..store.events import EventRepository, EventRow, NewEvent
from ..store.knowledge import KnowledgeRepository, SourceSpec
from ..store.transcripts import TranscriptRepository
from . import spool
from .model import PRIORITY, TRANSCRIPT_EVENT, Event, HookAnswer

if TYPE_CHECKING:
    from ..store.db import Engine

SOURCE_PREFIX = "session-events"
SNAPSHOT_BUDGET = 2048
# What SessionStart injects (header, snapshot, ready-made searches) stays within 2 KB too: the
# guide shrinks the snapshot (least important entries first) to make room for the searches.
INJECT_BUDGET = 2048


def source_label(session_id: str) -> str:
    """Knowledge-base label of a session's events; `ctx_search(source="session-events")` finds all."""
    return f"{SOURCE_PREFIX}:{session_id}"


def to_event(row: EventRow) -> Event:
    return Event(type=row.type, category=row.category, data=row.data, priority=row.priority, time=row.created_at)


@dataclass
class Memory:
    """Everything session memory does with one database."""

    engine: Engine
    home: Path

    @property
    def events_repo(self) -> EventRepository:
        return EventRepository(self.engine)

    def ingest(self) -> dict[str, int]:
        """Move spooled hook events into the database and the knowledge base; returns kept counts per session.

        The hook process's way (PreCompact, SessionStart): it has no services. The server ingests
        with `hooks.ingestion.Ingestion`, which shares these steps but indexes through its
        knowledge service and keeps file work off the database thread.
        """
        kept: dict[str, int] = {}
        shapes = cached_shapes(Path(private_dir(self.home, "cache")))
        for taken, rows in spool.drain(self.home):
            for session_id, n in store_spooled(self.events_repo, rows, shapes).items():
                kept[session_id] = kept.get(session_id, 0) + n
            # Deleted only after the rows are committed: a crash in between re-reads the file
            # (dedup against the last events makes the replay harmless).
            taken.unlink(missing_ok=True)
        for session_id in kept:
            self.reindex(session_id)
        return kept

    def reindex(self, session_id: str) -> None:
        rows = self.events_repo.events(session_id)
        chunks, text = event_chunks(rows)
        KnowledgeRepository(self.engine).replace_sources([SourceSpec(
            label=source_label(session_id), kind=SOURCE_PREFIX, chunks=chunks, size=len(text.encode()),
            session_id=session_id, project_dir=self.events_repo.project_of(session_id))])

    def events(self, session_id: str) -> list[Event]:
        return [to_event(r) for r in self.events_repo.events(session_id)]

    def snapshot(self, client: str | None, session_id: str) -> str:
        """Build and store the compaction snapshot (≤ 2 KB XML) of a session."""
        from .snapshot import build_snapshot

        events = self.events(session_id)
        xml = build_snapshot(events, session_id=session_id, budget=SNAPSHOT_BUDGET)
        self.events_repo.save_resume(session_id, client, xml, len(events))
        return xml

    def resume_text(self, client: str | None, session_id: str) -> str | None:
        """The text SessionStart(compact|resume) injects, or None when nothing was recorded."""
        from .guide import resume_guide

        self.ingest()
        saved = self.events_repo.resume(session_id)
        events = self.events(session_id)
        if saved is None and not events:
            return None
        # Events recorded after PreCompact (or a resume without PreCompact) deserve a fresh snapshot.
        xml = self.snapshot(client, session_id) if saved is None or len(events) != saved.event_count else saved.snapshot
        self.events_repo.mark_consumed(session_id)
        return resume_guide(xml, events, session_id=session_id, budget=INJECT_BUDGET)


def store_spooled(repo: EventRepository, rows: list[dict[str, Any]], shapes: SecretShapes | None = None
                  ) -> dict[str, int]:
    """Add one spool file's rows to the database (blocking SQL); returns how many were kept per session.

    The hooks redacted each row already; it is redacted again here, so that a line spooled by an
    older version (with fewer rules) is not stored as it was. Redacting twice changes nothing."""
    by_session: dict[tuple[str, str | None, str | None], list[NewEvent]] = {}
    transcripts = TranscriptRepository(repo.engine)
    for row in rows:
        try:
            if row.get("type") == TRANSCRIPT_EVENT:  # where the client's transcript is: not a memory event
                transcripts.seen(str(row["session_id"]), _text(row.get("client")), _text(row.get("project")),
                                 str(row["data"]), float(row.get("time") or time.time()))
                continue
            category = str(row["category"])
            ev = NewEvent(type=str(row["type"]), category=category,
                          priority=int(row.get("priority") or PRIORITY.get(category, 4)),
                          data=redact_text(str(row["data"]), shapes=shapes),
                          created_at=float(row.get("time") or time.time()))
            client, project = row.get("client"), row.get("project")
            key = (str(row["session_id"]), str(client) if client else None, str(project) if project else None)
        except (KeyError, TypeError, ValueError):
            continue  # a malformed line must not block the rest
        by_session.setdefault(key, []).append(ev)
    kept: dict[str, int] = {}
    for (session_id, client, project), events in by_session.items():
        kept[session_id] = kept.get(session_id, 0) + repo.add(session_id, client, events, project_dir=project)
    return kept


def _text(value: Any) -> str | None:
    return str(value) if value else None


def event_chunks(rows: list[EventRow]) -> tuple[list[Chunk], str]:
    """A session's events as knowledge-base sections (one per event), and their text."""
    chunks = [Chunk(title=f"{r.category} / {r.type} @ {_when(r.created_at)}", content=r.data, kind="prose")
              for r in rows]
    return chunks, "\n".join(r.data for r in rows)


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def open_memory(home: Path) -> Memory:
    return Memory(engine=open_engine(database_path(home)), home=home)


def on_pre_compact(home: Path, client: str, session_id: str, project_dir: Path) -> HookAnswer:
    """PreCompact / PreCompress: ingest the spool and store the snapshot. Nothing to inject yet."""
    memory = open_memory(home)
    try:
        memory.ingest()
        memory.snapshot(client, session_id)
    finally:
        memory.engine.dispose()
    return HookAnswer()


def on_session_start(home: Path, client: str, session_id: str, source: str | None, project_dir: Path) -> HookAnswer:
    """startup/clear: the short routing guide; compact/resume: the snapshot and the session guide."""
    from .guide import routing_guide

    if source not in ("compact", "resume"):
        return HookAnswer(context=routing_guide())
    memory = open_memory(home)
    try:
        text = memory.resume_text(client, session_id)
    finally:
        memory.engine.dispose()
    return HookAnswer(context=text or routing_guide())
