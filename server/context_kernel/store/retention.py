"""Retention: what the store and the logs keep, and how big the database is (doctor asks).

Records are removed a whole session at a time, so an export of any session that is kept is
complete: a session idle for longer than `days` goes with its executions, their outputs, what it
was sent, and the sources indexed from its output (kinds `execution` and `batch`). What was
indexed on purpose (texts, files, fetched pages) stays: a fetched page has its own 14 days, and the
rest is the user's. Hook memory of a client session goes once its newest event is older than
`days`; tool-call rows (ctx_stats) older than `days` go too. When the database is still bigger
than `max_db_mb`, the least recently active sessions go next — never one active in the last day.
Log files follow the same days (log_files.py): any in `logs/` last written longer ago goes, and of
the kernel logs only the newest `max_kernel_logs` stay (checked again each time a kernel starts).

Freed pages go back to the file system by incremental vacuum. A database made before auto-vacuum
was switched on is converted once, by one VACUUM (it rewrites the file: seconds for 100 MB).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from sqlalchemy import Connection, Engine, text

from ..log_files import DAY_S, prune_logs
from ..wording import counted
from .db import Database, write
from .executions import delete_session_records
from .knowledge import delete_sources_where

# Sessions active this recently are never removed to make room.
PROTECTED_S = DAY_S
# Sessions removed per write transaction: other processes wait for the write lock meanwhile.
SESSIONS_PER_TRANSACTION = 20
EVENTS_SOURCE_PREFIX = "session-events:"


@dataclass(frozen=True)
class RetentionPolicy:
    days: float = 30.0
    """Records of sessions idle longer than this are removed; 0 keeps everything."""
    max_db_mb: int = 512
    """Beyond this, the least recently active sessions' records go (0: no size cap)."""
    max_kernel_logs: int = 100
    """Kernel log files kept, newest first (0: no cap); logs older than `days` go in any case."""


@dataclass
class Pruned:
    sessions: int = 0
    executions: int = 0
    sources: int = 0
    tool_calls: int = 0
    event_sessions: int = 0
    kernel_logs: int = 0
    """Log files deleted: kernel logs, and the hooks' when older than `days`."""
    converted: bool = False
    """The database was switched to incremental auto-vacuum (one VACUUM)."""
    freed_bytes: int = 0
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"retention: removed {counted(self.sessions, 'session')} ({counted(self.executions, 'execution')}, "
                f"{counted(self.sources, 'source')}), {counted(self.tool_calls, 'tool-call row')}, hook memory of "
                f"{counted(self.event_sessions, 'client session')}, {counted(self.kernel_logs, 'log file')}; "
                f"freed {self.freed_bytes / 1e6:.1f} MB"
                + ("; converted to incremental vacuum" if self.converted else "")
                + (f"; errors: {'; '.join(self.errors)}" if self.errors else ""))


async def run_retention(db: Database, log_dir: Path, policy: RetentionPolicy) -> Pruned:
    """One pass: the database on the store's thread, then the log files."""
    done = await db.run(prune_records, db.engine, policy)
    done.kernel_logs = await anyio.to_thread.run_sync(prune_kernel_logs, log_dir, policy)
    return done


def prune_records(engine: Engine, policy: RetentionPolicy, now: float | None = None) -> Pruned:
    """Apply the policy to the database (blocking; run it on the store's thread)."""
    now = time.time() if now is None else now
    done = Pruned()
    before = file_bytes(engine)
    if policy.days > 0:
        cutoff = now - policy.days * DAY_S
        _remove_sessions(engine, _idle_sessions(engine, cutoff), done)
        with write(engine) as conn:
            done.tool_calls = conn.execute(text("DELETE FROM tool_calls WHERE at < :c"), {"c": cutoff}).rowcount or 0
            conn.execute(text("DELETE FROM sent_chunks WHERE sent_at < :c"), {"c": cutoff})
            conn.execute(text("DELETE FROM source_flows WHERE at < :c"), {"c": cutoff})
            done.event_sessions = _remove_hook_memory(conn, cutoff, done)
    if policy.max_db_mb > 0:
        limit = policy.max_db_mb * 1024 * 1024
        while used_bytes(engine) > limit:
            oldest = _idle_sessions(engine, now - PROTECTED_S, limit=SESSIONS_PER_TRANSACTION)
            if not oldest:
                break
            _remove_sessions(engine, oldest[:1], done)
    done.converted = _vacuum(engine)
    done.freed_bytes = max(0, before - file_bytes(engine))
    return done


def _idle_sessions(engine: Engine, cutoff: float, limit: int = -1) -> list[str]:
    """Sessions with no sign of life since `cutoff`, least recently active first."""
    with engine.connect() as conn:
        return [r[0] for r in conn.execute(text(
            "SELECT s.id, max(s.last_seen_at, coalesce((SELECT max(e.started_at) FROM executions e "
            "WHERE e.session_id = s.id), 0)) AS active FROM sessions s WHERE active < :c "
            "ORDER BY active LIMIT :n"), {"c": cutoff, "n": limit})]


def _remove_sessions(engine: Engine, sessions: list[str], done: Pruned) -> None:
    for start in range(0, len(sessions), SESSIONS_PER_TRANSACTION):
        with write(engine) as conn:
            for sid in sessions[start:start + SESSIONS_PER_TRANSACTION]:
                done.sources += delete_sources_where(
                    conn, "session_id = :s AND kind IN ('execution', 'batch')", {"s": sid})
                done.executions += delete_session_records(conn, [sid])
                done.sessions += 1


def _remove_hook_memory(conn: Connection, cutoff: float, done: Pruned) -> int:
    stale = [r[0] for r in conn.execute(text(
        "SELECT session_id FROM session_events GROUP BY session_id HAVING max(created_at) < :c"), {"c": cutoff})]
    for sid in stale:
        conn.execute(text("DELETE FROM session_events WHERE session_id = :s"), {"s": sid})
        conn.execute(text("DELETE FROM session_resume WHERE session_id = :s"), {"s": sid})
        done.sources += delete_sources_where(conn, "label = :l", {"l": EVENTS_SOURCE_PREFIX + sid})
    conn.execute(text(
        "DELETE FROM session_resume WHERE created_at < :c AND session_id NOT IN "
        "(SELECT DISTINCT session_id FROM session_events)"), {"c": cutoff})
    return len(stale)


def _vacuum(engine: Engine) -> bool:
    """Give freed pages back; convert a database without auto-vacuum once. True when converted."""
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert isinstance(raw, sqlite3.Connection)
        # The driver is in autocommit (db._on_connect): VACUUM runs outside any transaction.
        mode = raw.execute("PRAGMA auto_vacuum").fetchone()[0]
        converted = False
        if mode != 2:
            raw.execute("PRAGMA auto_vacuum = INCREMENTAL")
            raw.execute("VACUUM")
            converted = True
        raw.execute("PRAGMA incremental_vacuum").fetchall()
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return converted


def used_bytes(engine: Engine) -> int:
    """Bytes of the database's pages in use (free pages excluded)."""
    with engine.connect() as conn:
        pages = int(conn.execute(text("PRAGMA page_count")).scalar() or 0)
        free = int(conn.execute(text("PRAGMA freelist_count")).scalar() or 0)
        size = int(conn.execute(text("PRAGMA page_size")).scalar() or 0)
    return (pages - free) * size


def file_bytes(engine: Engine) -> int:
    path = engine.url.database
    return sum(file_size(Path(f"{path}{suffix}")) for suffix in ("", "-wal")) if path else 0


def prune_kernel_logs(log_dir: Path, policy: RetentionPolicy, now: float | None = None) -> int:
    """Delete the log files the policy no longer keeps (log_files.prune_logs); returns how many."""
    return prune_logs(log_dir, policy.days, policy.max_kernel_logs, now)


@dataclass(frozen=True)
class DatabaseReport:
    """What doctor says about the database file: does it open, does it pass quick_check, how big."""

    path: Path
    exists: bool
    problem: str | None = None
    """None when it opens and quick_check says ok; else what is wrong (and what to do)."""
    bytes: int = 0
    wal_bytes: int = 0
    free_bytes: int = 0
    incremental_vacuum: bool = False


def inspect_database(path: Path) -> DatabaseReport:
    """Open the file and run `PRAGMA quick_check`, changing nothing (stdlib sqlite3: doctor needs no engine)."""
    from .db import BUSY_TIMEOUT_MS, store_error

    if not path.exists():
        return DatabaseReport(path, exists=False)
    size, wal = file_size(path), file_size(Path(f"{path}-wal"))
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            verdict = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
            incremental = conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        finally:
            conn.close()
    except sqlite3.Error as exc:
        err = store_error(exc, path)
        return DatabaseReport(path, exists=True, problem=f"{err.message} — {err.hint}", bytes=size, wal_bytes=wal)
    if verdict != ["ok"]:
        err = store_error(sqlite3.DatabaseError("database disk image is malformed"), path)
        return DatabaseReport(path, exists=True, problem=f"quick_check: {'; '.join(verdict)} — {err.hint}",
                              bytes=size, wal_bytes=wal)
    return DatabaseReport(path, exists=True, free_bytes=free, incremental_vacuum=incremental,
                          bytes=size, wal_bytes=wal)


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
