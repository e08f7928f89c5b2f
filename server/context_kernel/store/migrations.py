"""Numbered schema migrations. Each runs once, in order, inside the caller's transaction.

Add a migration by appending a function to MIGRATIONS; never edit one that has shipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Connection, text


def _m001_executions(conn: Connection) -> None:
    conn.execute(text("""
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            client TEXT,
            transport TEXT,
            project_dir TEXT,
            started_at REAL NOT NULL,
            last_seen_at REAL NOT NULL
        )"""))
    # One row per tool call that ran (or was refused before running) code. Written `pending`
    # before the code runs, completed after, so a killed server still leaves the trail.
    conn.execute(text("""
        CREATE TABLE executions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            tool TEXT NOT NULL,
            language TEXT,
            kernel_name TEXT,
            kernel_instance TEXT,
            fresh INTEGER NOT NULL DEFAULT 0,
            background INTEGER NOT NULL DEFAULT 0,
            code TEXT NOT NULL,
            intent TEXT,
            file_path TEXT,
            file_hash TEXT,
            status TEXT NOT NULL,
            error_name TEXT,
            error_value TEXT,
            execution_count INTEGER,
            timeout_ms INTEGER,
            started_at REAL NOT NULL,
            ended_at REAL,
            duration_ms REAL,
            bytes_produced INTEGER NOT NULL DEFAULT 0,
            bytes_returned INTEGER NOT NULL DEFAULT 0,
            returned_text TEXT,
            returned_kind TEXT,
            note TEXT
        )"""))
    conn.execute(text("CREATE INDEX executions_session ON executions(session_id, id)"))
    # Every IOPub output as an nbformat v4 output (JSON). Consecutive stream text is coalesced
    # into rows of bounded size so a flood never has to be held in memory.
    conn.execute(text("""
        CREATE TABLE outputs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            execution_id INTEGER NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            output_type TEXT NOT NULL,
            name TEXT,
            size INTEGER NOT NULL,
            data TEXT NOT NULL
        )"""))
    conn.execute(text("CREATE INDEX outputs_execution ON outputs(execution_id, seq)"))


MIGRATIONS: list[Callable[[Connection], None]] = [_m001_executions]


def migrate(conn: Connection) -> int:
    """Apply the migrations this database has not seen; return the schema version reached."""
    conn.execute(text("CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at REAL)"))
    done = {row[0] for row in conn.execute(text("SELECT version FROM _migrations"))}
    for version, step in enumerate(MIGRATIONS, start=1):
        if version in done:
            continue
        step(conn)
        conn.execute(
            text("INSERT INTO _migrations (version, name, applied_at) VALUES (:v, :n, :t)"),
            {"v": version, "n": step.__name__, "t": time.time()},
        )
    return len(MIGRATIONS)
