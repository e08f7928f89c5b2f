"""Retention's size cap on a real SQLite file: the least recently active sessions go first, whole,
and a session active in the last day is never removed to make room."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine

from context_kernel.store.db import open_engine
from context_kernel.store.executions import ExecutionEnd, ExecutionRepository, ExecutionStart
from context_kernel.store.retention import RetentionPolicy, prune_kernel_logs, prune_records, used_bytes

DAY = 86_400.0
MB = 1024 * 1024


def _session(repo: ExecutionRepository, sid: str, megabytes: int) -> None:
    repo.touch_session(sid, client="test", transport="stdio", project_dir="/project")
    exec_id = repo.start(ExecutionStart(session_id=sid, tool="ctx_execute", code=f"print('{sid}')"))
    line = sid + " " + "y" * 1000 + "\n"
    for first in range(0, megabytes * 1000, 100):
        repo.add_outputs(exec_id, first, [{"output_type": "stream", "name": "stdout", "text": line}] * 100)
    repo.finish(exec_id, ExecutionEnd(status="ok"))


def _active(db_path: Path, sid: str, days_ago: float) -> None:
    at = time.time() - days_ago * DAY
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE sessions SET started_at = ?, last_seen_at = ? WHERE id = ?", (at, at, sid))
        db.execute("UPDATE executions SET started_at = ? WHERE session_id = ?", (at, sid))


@pytest.fixture
def three_sessions(tmp_path: Path) -> tuple[Engine, Path]:
    path = tmp_path / "db.sqlite3"
    engine = open_engine(path)
    repo = ExecutionRepository(engine)
    for sid, days_ago in (("oldest", 3.0), ("older", 2.0), ("today", 0.1)):
        _session(repo, sid, megabytes=2)
        _active(path, sid, days_ago)
    return engine, path


def _sessions(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return sorted(r[0] for r in db.execute("SELECT id FROM sessions"))


def test_a_database_over_its_size_cap_loses_its_least_recently_active_sessions_first(
        three_sessions: tuple[Engine, Path]) -> None:
    engine, path = three_sessions
    assert used_bytes(engine) > 6 * MB  # three sessions of about 2.6 MB each
    done = prune_records(engine, RetentionPolicy(days=30, max_db_mb=6))
    assert _sessions(path) == ["older", "today"]
    assert (done.sessions, done.executions) == (1, 1)
    assert used_bytes(engine) <= 6 * MB
    with sqlite3.connect(path) as db:  # the removed session's outputs went with it
        assert db.execute("SELECT count(*) FROM outputs WHERE data LIKE '%oldest%'").fetchone() == (0,)
    engine.dispose()


def test_a_session_active_in_the_last_day_is_kept_whatever_the_cap(three_sessions: tuple[Engine, Path]) -> None:
    engine, path = three_sessions
    prune_records(engine, RetentionPolicy(days=30, max_db_mb=1))
    assert _sessions(path) == ["today"]
    engine.dispose()


def test_sessions_idle_longer_than_the_retention_days_go_and_zero_days_keeps_everything(
        three_sessions: tuple[Engine, Path]) -> None:
    engine, path = three_sessions
    prune_records(engine, RetentionPolicy(days=0, max_db_mb=0))
    assert _sessions(path) == ["older", "oldest", "today"]
    prune_records(engine, RetentionPolicy(days=2.5, max_db_mb=0))
    assert _sessions(path) == ["older", "today"]
    engine.dispose()


def test_kernel_logs_beyond_the_newest_n_or_older_than_the_retention_days_are_deleted(tmp_path: Path) -> None:
    now = time.time()
    for n in range(8):
        log = tmp_path / f"kernel-python3-{n}.log"
        log.write_text("x")
        age = (40 * DAY) if n == 1 else n * 60.0
        os.utime(log, (now - age, now - age))
    (tmp_path / "hooks.log").write_text("not a kernel log")
    assert prune_kernel_logs(tmp_path, RetentionPolicy(days=30, max_kernel_logs=4), now=now) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "hooks.log", "kernel-python3-0.log", "kernel-python3-2.log", "kernel-python3-3.log", "kernel-python3-4.log"]
