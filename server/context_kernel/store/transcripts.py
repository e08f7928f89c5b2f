"""Where each client session's transcript is (the `transcript_path` its hooks report), so that an export can tell
the agent's own words between its cells (notebooks/narration.py). Only the path is kept: the transcript stays the
client's file, read when a session is exported."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, text

from .db import write


@dataclass(frozen=True)
class TranscriptRow:
    session_id: str
    """The client's session (its hooks'), not ours: an MCP session is matched by project and time."""
    client: str | None
    project_dir: str | None
    path: str
    first_seen: float
    last_seen: float


class TranscriptRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def seen(self, session_id: str, client: str | None, project_dir: str | None, path: str, at: float) -> None:
        """A hook of `session_id` reported `path` at `at` (the same pair again widens its time span)."""
        with write(self.engine) as conn:
            conn.execute(text(
                "INSERT INTO transcripts (session_id, client, project_dir, path, first_seen, last_seen) "
                "VALUES (:s, :c, :p, :path, :t, :t) ON CONFLICT(session_id, path) DO UPDATE SET "
                "first_seen = min(first_seen, :t), last_seen = max(last_seen, :t), "
                "project_dir = coalesce(:p, project_dir)"),
                {"s": session_id, "c": client, "p": project_dir, "path": path, "t": at})

    def of_project(self, project_dir: str) -> list[TranscriptRow]:
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT session_id, client, project_dir, path, first_seen, last_seen FROM transcripts "
                "WHERE project_dir = :p ORDER BY first_seen"), {"p": project_dir}).all()
        return [TranscriptRow(r.session_id, r.client, r.project_dir, r.path, r.first_seen, r.last_seen) for r in rows]
