"""The SQLite database: one engine per server, blocking work run off the event loop on one thread.

Why one thread: SQLite serialises writers anyway, and a single worker keeps every statement of
this process in order (an execution is recorded `pending` before its outputs arrive) without
locks of our own. Other processes sharing the file are handled by WAL plus a busy timeout.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import anyio
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from ..errors import StoreError
from .migrations import migrate

T = TypeVar("T")
P = ParamSpec("P")

__all__ = ["BUSY_TIMEOUT_MS", "Database", "Engine", "fts5_trigram_support", "open_engine", "sqlite_version"]

BUSY_TIMEOUT_MS = 10_000


def _on_connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
    # WAL lets readers and one writer work at once across processes; NORMAL sync is durable
    # across application crashes (only an OS crash can lose the last commits).
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA journal_mode = WAL")
    cur.execute("PRAGMA synchronous = NORMAL")
    cur.execute("PRAGMA foreign_keys = ON")
    cur.close()


def open_engine(path: Path) -> Engine:
    """Create the engine for a database file (created if missing) and bring its schema up to date."""
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{path}", connect_args={"check_same_thread": False})
    event.listen(engine, "connect", _on_connect)
    try:
        with engine.begin() as conn:
            migrate(conn)
    except SQLAlchemyError as exc:
        engine.dispose()
        raise StoreError(f"cannot open the database at {path}: {exc}") from exc
    return engine


class Database:
    """The engine plus the one worker thread every statement of this process runs on."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ck-sqlite")

    @classmethod
    def open(cls, path: Path) -> Database:
        return cls(open_engine(path))

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking store function on the worker thread and await its result."""
        future = self._worker.submit(_guarded, partial(fn, *args, **kwargs))
        return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)

    def run_sync(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Same, for callers on another thread than the event loop's (export writing notebooks)."""
        return self._worker.submit(_guarded, partial(fn, *args, **kwargs)).result()

    def close(self) -> None:
        self._worker.shutdown(wait=True)
        self.engine.dispose()


def fts5_trigram_support() -> str | None:
    """None when this SQLite has FTS5 with the trigram tokenizer, else why not (doctor asks)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        return None
    except sqlite3.OperationalError as exc:
        return str(exc)
    finally:
        conn.close()


def sqlite_version() -> str:
    return sqlite3.sqlite_version


LOCK_RETRIES = 3


def _guarded(fn: Callable[[], T]) -> T:
    # The busy timeout already waits for other processes' writes; a write that still finds the
    # database locked (a checkpoint, a long writer elsewhere) is tried again before giving up.
    for attempt in range(LOCK_RETRIES + 1):
        try:
            return fn()
        except OperationalError as exc:
            if "locked" in str(exc.orig) and attempt < LOCK_RETRIES:
                continue
            raise StoreError(f"database error: {exc.orig}") from exc
        except SQLAlchemyError as exc:
            raise StoreError(f"database error: {exc}") from exc
    raise AssertionError("unreachable")
