"""The export service behind ctx_export and `context-kernel export`."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio

from ..activity import doing
from ..errors import InvalidRequest
from ..kernels.specs import find_spec
from ..paths import resolve_in_project
from ..security.record_redaction import redacted_output, redacted_row
from ..store.db import Database
from ..store.events import ConversationCall, EventRepository
from ..store.executions import ExecutionRepository, ExecutionRow, SessionSummary
from ..store.transcripts import TranscriptRepository
from .export import Export, export_session
from .narration import Narration, narration

# The agent's last words come after its last call: what the transcript says this long after the session's last
# call still belongs to it (unless another session of the project started meanwhile).
NARRATION_TAIL_S = 600.0


class ExportService:
    def __init__(self, *, db: Database, executions: ExecutionRepository, project_dir: Path, export_dir: Path,
                 kernels_dir: Path | None = None, events: EventRepository | None = None,
                 ingest: Callable[[], Awaitable[object]] | None = None) -> None:
        """`ingest`: moves what hooks spooled into the store (hooks/ingestion.py), so the transcripts they
        reported are known before the export reads them."""
        self._db = db
        self._ingest = ingest
        self._events = events  # the searches, fetches and index calls between the cells
        self._kernels_dir = kernels_dir
        self._executions = executions
        self._project_dir = project_dir
        self._export_dir = export_dir

    async def sessions(self) -> list[SessionSummary]:
        """Every recorded session, its "kept out" by ctx_stats' definition (records/stats.py: what its tool calls
        kept out, net of what searches brought back), so `sessions`, ctx_stats and the insight page agree."""
        return await self._db.run(self._sessions_with_totals)

    def _sessions_with_totals(self) -> list[SessionSummary]:
        return session_summaries(self._executions, self._events)


    async def execution(self, execution_id: int) -> tuple[ExecutionRow, list[dict[str, Any]]]:
        """One execution and its outputs (`context-kernel show`), any project's: a person at the CLI reads them."""
        row, outputs = await self._db.run(
            lambda: (self._executions.get(execution_id), self._executions.outputs(execution_id)))
        if row is None:
            raise InvalidRequest(f"no execution #{execution_id} is recorded in this data dir",
                                 hint="`context-kernel sessions` lists the sessions; each reply cites its id as [#N]")
        return row, outputs

    async def export(self, session_id: str, path: str | None = None, *, confined: bool = True,
                     html: bool = False, redact: bool = False, with_inputs: bool = False) -> Export:
        """Write the session's notebooks into `path` or the data dir.

        `confined`: the agent (ctx_export) may only write inside the project; a person at the CLI
        may write anywhere. `redact`: secrets are taken out of code and outputs (the record keeps them).
        `with_inputs`: the files the cells read are copied next to the notebooks (notebooks/inputs.py).
        """
        if with_inputs and redact:
            raise InvalidRequest("with_inputs copies the files the cells read as they are, so the export could not be "
                                 "free of secrets", hint="export with redact, or with with_inputs, not both")
        directory = await anyio.to_thread.run_sync(self._directory, path, confined)
        rows, sessions, calls = await self._db.run(lambda: (
            self._executions.for_session(session_id), self._executions.sessions(),
            self._events.conversation(session_id) if self._events is not None else []))
        # Where the session's code ran, so replay reaches the same relative paths.
        recorded = next((s.project_dir for s in sessions if s.id == session_id), None)
        if confined:
            # The agent exports this project's sessions only: another project's records (and their ids)
            # are not this project's to read. A person at the CLI may export any.
            if recorded is not None and recorded != str(self._project_dir):
                raise InvalidRequest(f"session {session_id!r} was recorded in another project; nothing written",
                                     hint=f"export it from that project, or at the command line: "
                                          f"context-kernel export {session_id}")
            sessions = [s for s in sessions if s.project_dir == str(self._project_dir)]
        if not rows:
            known = [s.id for s in sessions][:5]
            raise InvalidRequest(f"session {session_id!r} has no recorded executions",
                                 hint="recent sessions: " + (", ".join(known) or "none yet"))

        def outputs(execution_id: int) -> list[dict[str, Any]]:
            # Called from the writing thread: each cell's outputs come from the database thread.
            got = self._db.run_sync(self._executions.outputs, execution_id)
            return [redacted_output(o) for o in got] if redact else got

        if redact:
            rows = await anyio.to_thread.run_sync(lambda: [redacted_row(r) for r in rows])

        doing(f"writing the notebooks of {len(rows)} executions")
        said = await self._said(session_id, rows, calls, sessions, recorded or str(self._project_dir))
        # Building and writing notebooks is file work: a worker thread, not the database's.
        done = await anyio.to_thread.run_sync(lambda: export_session(
            session_id, rows, outputs, directory, self._kernelspec, project_dir=recorded or str(self._project_dir),
            calls=calls, said=said, with_inputs=with_inputs))
        if html:
            from .html import to_html  # nbconvert costs ~150 ms to import: only when HTML is asked for

            for i, nb in enumerate(done.notebooks, 1):
                doing(f"writing HTML: notebook {i} of {len(done.notebooks)}")
                nb.path = await anyio.to_thread.run_sync(to_html, nb.path)
        return done

    async def _said(self, session_id: str, rows: list[ExecutionRow], calls: Sequence[ConversationCall],
                    sessions: list[SessionSummary], project: str) -> list[Narration]:
        """The user's prompts and the agent's words while the session ran, from the transcripts the project's
        hooks reported (notebooks/narration.py); none without them."""
        me = next((s for s in sessions if s.id == session_id), None)
        if self._events is None or me is None:
            return []
        if self._ingest is not None:
            await self._ingest()
        transcripts = await self._db.run(TranscriptRepository(self._events.engine).of_project, project)
        if not transcripts:
            return []
        first = min([r.started_at for r in rows] + [c.started_at for c in calls])
        last = max([r.ended_at or r.started_at for r in rows] + [c.started_at for c in calls])
        later = [s.started_at for s in sessions if s.project_dir == project and s.started_at > last]
        until = min([last + NARRATION_TAIL_S, *later, time.time()])
        return await anyio.to_thread.run_sync(narration, transcripts, first, until, {r.id for r in rows})

    def _directory(self, path: str | None, confined: bool) -> Path:
        """Where to write (blocking: resolving follows symlinks on disk)."""
        if not path:
            return self._export_dir
        if not confined:
            return Path(path).expanduser().resolve()
        # The directory, and any of its parents, may not exist yet: export_session makes them.
        return resolve_in_project(self._project_dir, path, want="new-dir", tool="ctx_export")

    def _kernelspec(self, name: str) -> dict[str, Any] | None:
        spec = find_spec(name, self._kernels_dir)
        return {"display_name": spec.display_name, "language": spec.language} if spec else None


def session_summaries(executions: ExecutionRepository, events: EventRepository | None) -> list[SessionSummary]:
    """Every recorded session, its "kept out" that of its tool calls (blocking SQL): `sessions` reads it with no
    server around it."""
    rows = executions.sessions()
    if events is None:
        return rows
    return [replace(s, kept=sum(t.bytes_kept_out for t in events.tool_totals(s.id))) for s in rows]
