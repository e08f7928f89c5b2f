"""Session events (what hooks recorded), compaction snapshots and per-tool call accounting."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from sqlalchemy import Connection, Engine, text

from ..hooks.model import MAX_EVENTS_PER_SESSION, most_important
from .db import Writer, write

# The spec's limits: an event equal to one of the session's last five is a repeat (a hook fired
# twice, an agent re-reading a file in a loop); a session keeps at most 1,000 events.
DEDUP_WINDOW = 5
__all__ = ["DEDUP_WINDOW", "MAX_EVENTS_PER_SESSION", "EventRepository", "EventRow", "NewEvent", "ResumeRow",
           "ToolTotals"]


@dataclass(frozen=True)
class EventRow:
    id: int
    session_id: str
    client: str | None
    type: str
    category: str
    priority: int
    data: str
    created_at: float


@dataclass(frozen=True)
class NewEvent:
    type: str
    category: str
    priority: int
    data: str
    created_at: float


@dataclass(frozen=True)
class ResumeRow:
    session_id: str
    client: str | None
    snapshot: str
    event_count: int
    created_at: float
    consumed_at: float | None


@dataclass(frozen=True)
class ToolTotals:
    tool: str
    calls: int
    errors: int
    bytes_in: int
    bytes_indexed: int
    bytes_returned: int
    bytes_kept_out: int
    """net of `bytes_back` (records/stats.py)"""
    bytes_back: int = 0
    """search hits sent back from the sources this tool indexed"""


@dataclass(frozen=True)
class SourceTotals:
    source: str
    tool: str | None
    """the tool that first indexed it (None: never taken in by a tool, e.g. hook events)"""
    bytes_in: int
    bytes_back: int

    @property
    def bytes_kept_out(self) -> int:
        return max(0, self.bytes_in - self.bytes_back)


# The tool that first took a source in: what its searched-back bytes are netted from.
# The tool that took a source in first (its owner), looked up per source through the source index: a
# join with every source's owner as a subquery scanned it once per row, and ctx_stats took ~0.8 s of the
# store's thread with 7,000 indexed files (a ctx_stats a second then starved everything else).
_OWNER_OF = ("(SELECT o.tool FROM source_flows o WHERE o.source = {col} AND o.bytes_in > 0 "
             "ORDER BY o.id LIMIT 1)")

# Written after every tool call: built once (a text() parses its binds each time it is made).
_TOOL_CALL = text(
    "INSERT INTO tool_calls (session_id, tool, at, duration_ms, bytes_in, bytes_indexed, bytes_returned, "
    "is_error, bytes_kept_out, arguments, reply) VALUES (:s, :t, :at, :d, :i, :x, :r, :e, :k, :a, :re)")
_SOURCE_FLOW = text(
    "INSERT INTO source_flows (session_id, tool, source, bytes_in, bytes_back, at) VALUES (:s, :t, :src, :i, :b, :at)")


@dataclass(frozen=True)
class ConversationCall:
    id: int
    tool: str
    started_at: float
    arguments: str
    reply: str
    is_error: bool


class EventRepository:
    def __init__(self, engine: Engine, writer: Writer | None = None) -> None:
        """`writer`: how `record_call` opens its transaction (`Database.quick`'s on the loop)."""
        self.engine = engine
        self._write: Writer = writer or partial(write, engine)

    def add(self, session_id: str, client: str | None, events: Sequence[NewEvent],
            max_events: int = MAX_EVENTS_PER_SESSION, project_dir: str | None = None) -> int:
        """Store events not repeating one of the last five; evict beyond the cap. Returns how many were kept.

        Linear in the events given, and the SQL is bounded by the cap: of a batch larger than the
        cap only the events the cap would keep are inserted (one executemany), not 50,000 rows
        inserted to delete 49,000 of them.
        """
        with write(self.engine) as conn:
            rows = conn.execute(text(
                "SELECT type, data FROM session_events WHERE session_id = :s ORDER BY id DESC LIMIT :n"),
                {"s": session_id, "n": DEDUP_WINDOW}).all()
            recent: deque[tuple[str, str]] = deque(((r.type, r.data) for r in reversed(rows)), maxlen=DEDUP_WINDOW)
            fresh: list[NewEvent] = []
            for ev in events:
                key = (ev.type, ev.data)
                if key in recent:
                    continue
                recent.append(key)
                fresh.append(ev)
            chosen = [fresh[i] for i in most_important([ev.priority for ev in fresh], max_events)]
            if chosen:
                conn.execute(text(
                    "INSERT INTO session_events (session_id, client, type, category, priority, data, created_at, "
                    "project_dir) VALUES (:s, :c, :t, :cat, :p, :d, :at, :proj)"),
                    [{"s": session_id, "c": client, "t": ev.type, "cat": ev.category, "p": ev.priority,
                      "d": ev.data, "at": ev.created_at, "proj": project_dir} for ev in chosen])
            _evict(conn, session_id, max_events)
        return len(fresh)

    def events(self, session_id: str) -> list[EventRow]:
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT id, session_id, client, type, category, priority, data, created_at FROM session_events "
                "WHERE session_id = :s ORDER BY id"), {"s": session_id})
            return [EventRow(*r) for r in rows]

    def event_counts(self) -> dict[str, int]:
        with self.engine.connect() as conn:
            return {r[0]: r[1] for r in conn.execute(text(
                "SELECT session_id, count(*) FROM session_events GROUP BY session_id"))}

    def save_resume(self, session_id: str, client: str | None, snapshot: str, event_count: int) -> None:
        with write(self.engine) as conn:
            conn.execute(text(
                "INSERT INTO session_resume (session_id, client, snapshot, event_count, created_at, consumed_at) "
                "VALUES (:s, :c, :snap, :n, :at, NULL) ON CONFLICT(session_id) DO UPDATE SET "
                "client = excluded.client, snapshot = excluded.snapshot, event_count = excluded.event_count, "
                "created_at = excluded.created_at, consumed_at = NULL"),
                {"s": session_id, "c": client, "snap": snapshot, "n": event_count, "at": time.time()})

    def resume(self, session_id: str) -> ResumeRow | None:
        with self.engine.connect() as conn:
            row = conn.execute(text(
                "SELECT session_id, client, snapshot, event_count, created_at, consumed_at FROM session_resume "
                "WHERE session_id = :s"), {"s": session_id}).first()
        return ResumeRow(*row) if row else None

    def mark_consumed(self, session_id: str) -> None:
        with write(self.engine) as conn:
            conn.execute(text("UPDATE session_resume SET consumed_at = :t WHERE session_id = :s"),
                         {"t": time.time(), "s": session_id})

    def project_of(self, session_id: str) -> str | None:
        """The project of the session's latest event that names one."""
        with self.engine.connect() as conn:
            return conn.execute(text(
                "SELECT project_dir FROM session_events WHERE session_id = :s AND project_dir IS NOT NULL "
                "ORDER BY id DESC LIMIT 1"), {"s": session_id}).scalar()

    def purge_project(self, project_dir: str) -> int:
        """Delete the session memory (events, snapshots) of every client session of a project."""
        with write(self.engine) as conn:
            sessions = [r[0] for r in conn.execute(text(
                "SELECT DISTINCT session_id FROM session_events WHERE project_dir = :p"), {"p": project_dir})]
            removed = 0
            for sid in sessions:
                removed += conn.execute(text("DELETE FROM session_events WHERE session_id = :s"),
                                        {"s": sid}).rowcount or 0
                conn.execute(text("DELETE FROM session_resume WHERE session_id = :s"), {"s": sid})
            conn.execute(text("DELETE FROM transcripts WHERE project_dir = :p"), {"p": project_dir})
        return removed

    def delete_session(self, session_id: str) -> int:
        with write(self.engine) as conn:
            n = conn.execute(text("DELETE FROM session_events WHERE session_id = :s"), {"s": session_id}).rowcount
            conn.execute(text("DELETE FROM session_resume WHERE session_id = :s"), {"s": session_id})
            conn.execute(text("DELETE FROM transcripts WHERE session_id = :s"), {"s": session_id})
        return int(n or 0)

    # -- tool call accounting (ctx_stats) -------------------------------------------------------

    def record_call(self, session_id: str, tool: str, *, duration_ms: float, bytes_in: int, bytes_indexed: int,
                    bytes_returned: int, is_error: bool, bytes_kept_out: int | None = None,
                    sources_in: dict[str, int] | None = None, sources_back: dict[str, int] | None = None,
                    arguments: str | None = None, reply: str | None = None) -> None:
        now = time.time()
        with self._write() as conn:
            conn.execute(_TOOL_CALL, {
                "s": session_id, "t": tool, "at": now, "d": duration_ms, "i": bytes_in, "x": bytes_indexed,
                "r": bytes_returned, "e": int(is_error),
                "k": max(0, bytes_in - bytes_returned) if bytes_kept_out is None else bytes_kept_out,
                "a": arguments, "re": reply})
            flows = [{"src": label, "i": n, "b": 0} for label, n in (sources_in or {}).items()]
            flows += [{"src": label, "i": 0, "b": n} for label, n in (sources_back or {}).items()]
            if flows:
                conn.execute(_SOURCE_FLOW, [{"s": session_id, "t": tool, "at": now, **f} for f in flows])

    def conversation(self, session_id: str) -> list[ConversationCall]:
        """A session's searches, fetches, index and batch calls with what they were asked and answered, in order."""
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT id, tool, at - duration_ms / 1000.0, arguments, reply, is_error FROM tool_calls "
                "WHERE session_id = :s AND arguments IS NOT NULL ORDER BY id"), {"s": session_id}).all()
        return [ConversationCall(r[0], r[1], r[2], r[3], r[4] or "", bool(r[5])) for r in rows]

    def tool_totals(self, session_id: str | None = None) -> list[ToolTotals]:
        """Per tool; `bytes_kept_out` is net of what searches brought back from its sources (records/stats.py)."""
        where, params = ("WHERE session_id = :s", {"s": session_id}) if session_id else ("", {})
        flow_where = "AND f.session_id = :s" if session_id else ""
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                f"SELECT tool, count(*), sum(is_error), sum(bytes_in), sum(bytes_indexed), sum(bytes_returned), "
                f"sum(coalesce(bytes_kept_out, max(bytes_in - bytes_returned, 0))) "
                f"FROM tool_calls {where} GROUP BY tool ORDER BY tool"), params).all()
            back: dict[str, int] = dict(conn.execute(text(
                f"SELECT owner, sum(back) FROM (SELECT {_OWNER_OF.format(col='f.source')} AS owner, "
                f"f.bytes_back AS back FROM source_flows f WHERE f.bytes_back > 0 {flow_where}) "
                "WHERE owner IS NOT NULL GROUP BY owner"), params).all())
        totals = []
        for r in rows:
            came_back = int(back.get(r[0]) or 0)
            kept = max(0, int(r[6] or 0) - came_back)
            totals.append(ToolTotals(r[0], r[1], int(r[2] or 0), int(r[3] or 0), int(r[4] or 0), int(r[5] or 0),
                                     kept, came_back))
        return totals

    def source_totals(self, session_id: str | None = None, limit: int = 10) -> list[SourceTotals]:
        """The sources taken in or searched, most taken in first."""
        where, params = ("WHERE f.session_id = :s", {"s": session_id}) if session_id else ("", {})
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                f"SELECT t.source, {_OWNER_OF.format(col='t.source')}, t.taken, t.back FROM "
                f"(SELECT f.source AS source, sum(f.bytes_in) AS taken, sum(f.bytes_back) AS back "
                f"FROM source_flows f {where} GROUP BY f.source "
                "ORDER BY taken DESC, back DESC, f.source LIMIT :n) t ORDER BY t.taken DESC, t.back DESC, t.source"),
                {**params, "n": limit}).all()
        return [SourceTotals(r[0], r[1], int(r[2] or 0), int(r[3] or 0)) for r in rows]

    def session_count(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(text("SELECT count(DISTINCT session_id) FROM tool_calls")).scalar() or 0)


def _evict(conn: Connection, session_id: str, max_events: int) -> None:
    count = conn.execute(text("SELECT count(*) FROM session_events WHERE session_id = :s"),
                         {"s": session_id}).scalar() or 0
    if count <= max_events:
        return
    # Least important first (higher number = less important), then oldest.
    conn.execute(text(
        "DELETE FROM session_events WHERE id IN (SELECT id FROM session_events WHERE session_id = :s "
        "ORDER BY priority DESC, id ASC LIMIT :n)"), {"s": session_id, "n": count - max_events})
