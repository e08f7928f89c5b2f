"""The execution record: sessions, executions and their nbformat outputs.

Notebook export and statistics read this record, so it keeps everything a reader needs:
the code, every output as an nbformat output, status, timings, bytes produced and returned,
and exactly what the agent was shown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from sqlalchemy import Engine, text

from .db import Writer, Writes, write


@dataclass(frozen=True)
class ExecutionStart:
    session_id: str
    tool: str
    code: str
    language: str | None = None
    kernel_name: str | None = None
    fresh: bool = False
    background: bool = False
    intent: str | None = None
    file_path: str | None = None
    file_hash: str | None = None
    timeout_ms: int | None = None
    python: str | None = None
    """The interpreter of the python kernel (python cells) or of `python` on the shell's PATH (shell cells)."""
    python_env: str | None = None
    """That interpreter's environment directory (a venv, a conda env), when it has one."""


# Errors that mean a call never reached a kernel (recorded as `error`): export writes such a call
# as a note, and `context-kernel sessions` does not list its language as used.
NEVER_RAN_ERRORS = frozenset({"KernelUnavailable", "KernelStartFailed", "PoolExhausted"})

ExecutionStatus = Literal["pending", "ok", "error", "timeout", "interrupted", "died", "refused", "running"]
"""pending: recorded before the code runs (a killed server leaves it so); running: a background cell
still going; interrupted: the client or server went away mid-cell; the rest as the cell ended."""
ReturnedKind = Literal["full", "trimmed", "intent", "partial", "refused", "indexed"]
"""How the reply relates to the output: all of it, head and tail, the lines matching the intent, a
refusal (nothing ran), or indexed only (batch commands: the reply carries search results)."""


@dataclass(frozen=True)
class ExecutionEnd:
    status: ExecutionStatus
    error_name: str | None = None
    error_value: str | None = None
    execution_count: int | None = None
    kernel_instance: str | None = None
    bytes_produced: int = 0
    bytes_returned: int = 0
    returned_text: str | None = None
    returned_kind: ReturnedKind | None = None
    note: str | None = None
    files: str | None = None
    """The files the cell opened, a JSON list (execution/provenance.py); None where not tracked."""
    language_info: str | None = None
    """The kernel's language_info (JSON), on the first execution of each kernel instance."""


@dataclass(frozen=True)
class ExecutionRow:
    id: int
    session_id: str
    tool: str
    language: str | None
    kernel_name: str | None
    code: str
    status: ExecutionStatus
    started_at: float
    ended_at: float | None
    duration_ms: float | None
    bytes_produced: int
    bytes_returned: int
    returned_text: str | None
    returned_kind: ReturnedKind | None
    error_name: str | None
    error_value: str | None
    execution_count: int | None
    intent: str | None
    file_path: str | None
    file_hash: str | None
    fresh: bool
    background: bool
    kernel_instance: str | None
    timeout_ms: int | None
    note: str | None
    python: str | None = None
    python_env: str | None = None
    files: str | None = None
    language_info: str | None = None


@dataclass(frozen=True)
class SessionSummary:
    id: str
    client: str | None
    started_at: float
    project_dir: str | None
    executions: int
    languages: list[str]
    """The languages of calls that ran: not those refused or whose kernel could not be had."""
    bytes_produced: int
    bytes_returned: int
    not_run: int = 0
    """Calls that never reached a kernel (refused, or their kernel could not be had)."""
    kept: int | None = None
    """per execution, 0 when the reply showed the whole output, else max(0, produced − returned)"""

    @property
    def bytes_kept_out(self) -> int:
        """Output the session's code produced that never entered the conversation (a reply that
        showed all of it kept nothing out, whatever its length: ctx_stats' definition, records/stats.py)."""
        return max(0, self.bytes_produced - self.bytes_returned) if self.kept is None else self.kept

# The statements every cell runs, built once: a text() parses its binds each time it is made
# (~0.07 ms of the ~0.1 ms a statement costs).
_START = text(
    "INSERT INTO executions (session_id, tool, language, kernel_name, fresh, background, code, "
    "intent, file_path, file_hash, timeout_ms, python, python_env, status, started_at) VALUES "
    "(:session_id, :tool, :language, :kernel_name, :fresh, :background, :code, :intent, :file_path, "
    ":file_hash, :timeout_ms, :python, :python_env, 'pending', :now)"
)
_FINISH = text(
    "UPDATE executions SET status = :status, error_name = :error_name, error_value = :error_value, "
    "execution_count = :execution_count, kernel_instance = coalesce(:kernel_instance, kernel_instance), "
    "bytes_produced = :bytes_produced, bytes_returned = :bytes_returned, returned_text = :returned_text, "
    "returned_kind = :returned_kind, note = :note, files = :files, language_info = :language_info, ended_at = :now, "
    "duration_ms = (:now - started_at) * 1000.0 WHERE id = :id"
)
_OUTPUTS = text(
    "INSERT INTO outputs (execution_id, seq, output_type, name, size, data) "
    "VALUES (:eid, :seq, :type, :name, :size, :data)"
)


class ExecutionRepository:
    """Synchronous repository; call its methods through `Database.run` from async code."""

    def __init__(self, engine: Engine, writer: Writer | None = None) -> None:
        """`writer`: how `start` and `finish` open their transaction (`Database.quick`'s on the loop)."""
        self._engine = engine
        self._write: Writer = writer or partial(write, engine)

    def touch_session(self, session_id: str, *, client: str | None, transport: str, project_dir: str) -> None:
        now = time.time()
        with write(self._engine) as conn:
            conn.execute(
                text(
                    "INSERT INTO sessions (id, client, transport, project_dir, started_at, last_seen_at) "
                    "VALUES (:id, :client, :transport, :project, :now, :now) "
                    "ON CONFLICT(id) DO UPDATE SET last_seen_at = :now, client = coalesce(:client, client)"
                ),
                {"id": session_id, "client": client, "transport": transport, "project": project_dir, "now": now},
            )

    def start(self, start: ExecutionStart) -> int:
        with self._write() as conn:
            result = conn.execute(
                _START,
                {**start.__dict__, "now": time.time()},
            )
            return int(result.lastrowid)

    def add_outputs(self, execution_id: int, first_seq: int, outputs: list[dict[str, Any]]) -> None:
        """Append nbformat outputs; `first_seq` numbers them so order survives batching."""
        if not outputs:
            return
        with write(self._engine) as conn:
            _insert_outputs(conn, execution_id, first_seq, outputs)

    def finish(self, execution_id: int, end: ExecutionEnd,
               outputs: tuple[int, list[dict[str, Any]]] | None = None) -> None:
        """Write a call's end; with `outputs` (first sequence number, batch), its last outputs in the
        same transaction: one commit, and one hop to the database thread, per call."""
        now = time.time()
        with self._write() as conn:
            if outputs is not None and outputs[1]:
                _insert_outputs(conn, execution_id, *outputs)
            conn.execute(
                _FINISH,
                {**end.__dict__, "now": now, "id": execution_id},
            )

    def recent_languages(self, project_dir: str, limit: int) -> list[str]:
        """The languages this project's cells ran in (warm kernels, not refused), most recently used first."""
        with self._engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT e.language, max(e.started_at) AS last FROM executions e JOIN sessions s ON s.id = e.session_id "
                "WHERE s.project_dir = :project AND e.language IS NOT NULL AND e.fresh = 0 AND e.background = 0 "
                "AND e.status != 'refused' GROUP BY e.language ORDER BY last DESC LIMIT :limit"
            ), {"project": project_dir, "limit": limit}).all()
        return [r[0] for r in rows]

    def sessions(self) -> list[SessionSummary]:
        """Every recorded session, newest first, with what export and `context-kernel sessions` show."""
        with self._engine.connect() as conn:
            never = ", ".join(f"'{name}'" for name in sorted(NEVER_RAN_ERRORS))
            not_run = f"(e.status = 'refused' OR (e.status = 'error' AND e.error_name IN ({never})))"
            rows = conn.execute(text(
                "SELECT s.id, s.client, s.started_at, s.project_dir, count(e.id) AS executions, "
                f"group_concat(DISTINCT CASE WHEN NOT {not_run} THEN e.language END) AS languages, "
                f"coalesce(sum(CASE WHEN {not_run} THEN 1 ELSE 0 END), 0) AS not_run, "
                "coalesce(sum(e.bytes_produced), 0) AS produced, "
                "coalesce(sum(e.bytes_returned), 0) AS returned, "
                "coalesce(sum(CASE WHEN e.returned_kind = 'full' THEN 0 "
                "ELSE max(e.bytes_produced - e.bytes_returned, 0) END), 0) AS kept FROM sessions s "
                "LEFT JOIN executions e ON e.session_id = s.id GROUP BY s.id ORDER BY s.started_at DESC"
            )).mappings().all()
        return [SessionSummary(id=r["id"], client=r["client"], started_at=r["started_at"],
                               project_dir=r["project_dir"], executions=r["executions"],
                               languages=sorted(filter(None, (r["languages"] or "").split(","))),
                               bytes_produced=r["produced"], bytes_returned=r["returned"], not_run=r["not_run"],
                               kept=r["kept"])
                for r in rows]

    def get(self, execution_id: int) -> ExecutionRow | None:
        with self._engine.connect() as conn:
            row = conn.execute(text("SELECT * FROM executions WHERE id = :id"), {"id": execution_id}).mappings().first()
        return _row(row) if row else None

    def for_session(self, session_id: str) -> list[ExecutionRow]:
        with self._engine.connect() as conn:
            rows = conn.execute(
                text("SELECT * FROM executions WHERE session_id = :s ORDER BY id"), {"s": session_id}
            ).mappings().all()
        return [_row(r) for r in rows]

    def outputs(self, execution_id: int) -> list[dict[str, Any]]:
        return list(self.iter_outputs(execution_id))

    def iter_outputs(self, execution_id: int) -> Iterator[dict[str, Any]]:
        """Stream the recorded outputs in order without loading them all at once."""
        with self._engine.connect() as conn:
            result = conn.execution_options(yield_per=64).execute(
                text("SELECT data FROM outputs WHERE execution_id = :id ORDER BY seq"), {"id": execution_id}
            )
            for (data,) in result:
                yield json.loads(data)


def delete_session_records(conn: Writes, session_ids: list[str]) -> int:
    """Delete sessions with their executions (their outputs go with them: ON DELETE CASCADE) and what
    search sent them, inside the caller's write transaction; how many executions went. Used by ctx_purge
    (store/knowledge.py) and by retention (store/retention.py), which delete their indexed sources themselves."""
    executions = 0
    for sid in session_ids:
        conn.execute(text("DELETE FROM sent_chunks WHERE session_id = :s"), {"s": sid})
        executions += conn.execute(text("DELETE FROM executions WHERE session_id = :s"), {"s": sid}).rowcount or 0
        conn.execute(text("DELETE FROM sessions WHERE id = :s"), {"s": sid})
    return executions


def _row(row: Any) -> ExecutionRow:
    fields = ExecutionRow.__dataclass_fields__
    values = {name: row[name] for name in fields}
    values["fresh"] = bool(values["fresh"])
    values["background"] = bool(values["background"])
    return ExecutionRow(**values)


def recorded_stdout(repo: ExecutionRepository, execution_id: int, limit: int) -> tuple[str, bool]:
    """What the agent would read in full: stdout plus text results, up to `limit` bytes (clipped?)."""
    parts: list[str] = []
    size = 0
    for out in repo.iter_outputs(execution_id):
        if out["output_type"] == "stream" and out.get("name") == "stdout":
            piece = out.get("text", "")
        elif out["output_type"] in ("execute_result", "display_data"):
            plain = out.get("data", {}).get("text/plain", "")
            piece = ("".join(plain) if isinstance(plain, list) else plain) + "\n"
        else:
            continue
        parts.append(piece)
        size += len(piece)
        if size >= limit:
            return "".join(parts)[:limit], True
    return "".join(parts), False


def _insert_outputs(conn: Writes, execution_id: int, first_seq: int, outputs: list[dict[str, Any]]) -> None:
    rows = []
    for offset, out in enumerate(outputs):
        data = json.dumps(out, ensure_ascii=False)
        rows.append({
            "eid": execution_id, "seq": first_seq + offset, "type": out["output_type"],
            "name": out.get("name"), "size": len(data), "data": data,
        })
    conn.execute(
        _OUTPUTS,
        rows,
    )
