"""The SQLite database: one engine per server, blocking work run off the event loop on one thread.

Why one thread: SQLite serialises writers anyway, and a single worker keeps every statement of
this process in order (an execution is recorded `pending` before its outputs arrive) without
locks of our own. Other processes sharing the file (more servers, hooks) are handled by WAL, a
busy timeout, and write transactions that take the write lock when they begin (`write`).

Every SQLite failure reaches callers as a `StoreError` that says what failed and what to do
(`store_error`): a full disk, a file that is not a database, a read-only file, one that cannot be
opened.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any, ParamSpec, Protocol, TypeVar

# create_engine imports the dialect at the first open; imported here, it comes with the app's imports on
# their worker thread, not on the first call's path (10-70 ms).
import sqlalchemy.dialects.sqlite  # noqa: F401
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.sql.elements import TextClause

from ..datadir import keep_private, open_private, private_dir
from ..errors import StoreError
from .migrations import MIGRATIONS, migrate

T = TypeVar("T")
P = ParamSpec("P")

__all__ = ["BUSY_TIMEOUT_MS", "Database", "Engine", "QuickConnection", "Writer", "Writes", "fts5_trigram_support",
           "open_engine", "sqlite_version", "store_error", "write"]

BUSY_TIMEOUT_MS = 10_000
_IMMEDIATE = "context_kernel_begin_immediate"


def _on_connect(dbapi_conn: sqlite3.Connection, _record: Any, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
    # WAL lets readers and one writer work at once across processes; NORMAL sync is durable
    # across application crashes (only an OS crash can lose the last commits).
    # isolation_level None: the driver emits no BEGIN of its own (its legacy mode begins only
    # before INSERT/UPDATE/DELETE, so a read-then-write or DDL ran outside any transaction);
    # `_on_begin` emits ours. auto_vacuum takes effect only on a new file (before its first table);
    # an existing one is converted once by retention (store/retention.py).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
    cur.execute("PRAGMA auto_vacuum = INCREMENTAL")
    cur.execute("PRAGMA journal_mode = WAL")
    cur.execute("PRAGMA synchronous = NORMAL")
    cur.execute("PRAGMA foreign_keys = ON")
    cur.close()


def _on_begin(conn: Connection) -> None:
    # A write transaction takes the write lock at once (waiting the busy timeout for it): two
    # processes can then never both read "no such row / table" and both try to create it. Reads
    # (`engine.connect()`) get a deferred BEGIN: a consistent snapshot that blocks no writer.
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_IMMEDIATE) else "BEGIN")


@contextmanager
def write(engine: Engine, *, foreign_keys: bool = True) -> Iterator[Connection]:
    """A write transaction (`BEGIN IMMEDIATE`), committed on exit; every store write goes through it.

    `foreign_keys=False`: for a migration that rebuilds a referenced table (the pragma is set before
    the transaction begins, where SQLite honours it, and set back after)."""
    with engine.connect() as conn:
        conn.execution_options(**{_IMMEDIATE: True})
        raw = conn.connection.driver_connection
        assert raw is not None  # a checked-out connection always has its driver's
        if not foreign_keys:
            raw.execute("PRAGMA foreign_keys = OFF")
        try:
            with conn.begin():
                yield conn
        finally:
            if not foreign_keys:
                raw.execute("PRAGMA foreign_keys = ON")


def open_engine(path: Path) -> Engine:
    """Create the engine for a database file (created if missing) and bring its schema up to date."""
    try:
        private_dir(path.parent)
    except OSError as exc:
        raise StoreError(f"cannot create the data dir {path.parent}: {exc.strerror or exc}",
                         hint=_HINT_WRITABLE) from exc
    try:
        # Made 0600 here, not 0644 by SQLite: a -wal or -shm it makes takes the database's mode. Those of
        # a database made by an older version lose their group and other bits.
        os.close(open_private(path, os.O_RDWR))
        for existing in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            keep_private(existing)
    except OSError as exc:
        raise StoreError(f"the database file cannot be opened or created ({path}): {exc.strerror or exc}",
                         hint=_HINT_WRITABLE) from exc
    engine = create_engine(f"sqlite:///{path}", connect_args={"check_same_thread": False})
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    try:
        with write(engine) as conn:
            reached = migrate(conn)
        if reached < len(MIGRATIONS):
            with write(engine, foreign_keys=False) as conn:
                migrate(conn, foreign_keys_off=True)
    except SQLAlchemyError as exc:
        engine.dispose()
        raise store_error(exc, path) from exc
    return engine


class Writes(Protocol):
    """What the per-call writes need of a connection: a SQLAlchemy `Connection` or a `QuickConnection`."""

    def execute(self, statement: TextClause, parameters: Any = None) -> Any: ...


Writer = Callable[[], AbstractContextManager[Writes]]
"""A write transaction's opener: `partial(write, engine)` or `QuickConnection.transaction`."""


class QuickConnection:
    """The short writes made on the event loop itself (`Database.run_quick`), on one plain sqlite3
    connection to the same file: SQLAlchemy's checkout, events and execution context were ~80 µs of
    the ~100 µs such a write took, three times a call. The engine's pragmas, but a busy timeout of 0:
    a locked database sends the write to the worker instead, which waits. Opened at the first write;
    used on the loop's thread only."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            _on_connect(conn, None, busy_timeout_ms=0)
            self._conn = conn
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[Writes]:
        """`BEGIN IMMEDIATE`, committed on exit, rolled back on any error (a failed COMMIT included)."""
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def execute(self, statement: TextClause, parameters: Any = None) -> sqlite3.Cursor:
        """The statement's SQL with its `:name` binds, which sqlite3 takes as they are; a list runs it per row."""
        conn = self._connection()
        if isinstance(parameters, list):
            return conn.executemany(statement.text, parameters)
        return conn.execute(statement.text, parameters or {})

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class Database:
    """The engine plus the one worker thread every statement of this process runs on.

    Statements run on the worker, in order, so the event loop never waits for SQLite. The exception is
    `run_quick`: the writes every call makes (a cell's `pending` row, its end, the call's accounting) take
    ~0.02 ms each on `quick` (a plain sqlite3 connection), far less than
    handing them to the worker and back on a loaded 2-core machine (0.5-1 ms), so they run on the loop
    when nothing of this process is queued on the worker before them (order is kept) and no other process
    holds the write lock (they never wait on the loop).
    """

    def __init__(self, engine: Engine, quick: QuickConnection | None = None) -> None:
        self.engine = engine
        self.quick = quick
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ck-sqlite")
        self._queued = 0  # statements submitted to the worker and not finished
        self._queued_lock = threading.Lock()  # run_sync submits from other threads

    @classmethod
    def open(cls, path: Path) -> Database:
        return cls(open_engine(path), QuickConnection(path))

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a blocking store function on the worker thread and await its result.

        One thread hop: the worker's future is awaited on the loop (not waited for on a second thread,
        ~0.1-1 ms a call on 2 cores). Shielded: a cancelled caller stops waiting, but a statement
        already queued still runs, in order, like every other (a record write is never half-dropped).
        """
        return await asyncio.shield(asyncio.wrap_future(self._submit(partial(fn, *args, **kwargs))))

    async def run_quick(self, fn: Callable[P, T], quick: Callable[P, T] | None, *args: P.args,
                        **kwargs: P.kwargs) -> T:
        """Run a short write: `quick` (the same function writing through `self.quick`) on the event loop
        when the worker is idle, else — or when the database is locked by another process — `fn` on the worker."""
        if quick is not None and self.quick is not None and self._idle():
            try:
                return quick(*args, **kwargs)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc):
                    raise store_error(exc, self.path) from exc
            except (SQLAlchemyError, sqlite3.Error) as exc:
                raise store_error(exc, self.path) from exc
        return await self.run(fn, *args, **kwargs)

    def run_sync(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Same, for callers on another thread than the event loop's (export writing notebooks)."""
        return self._submit(partial(fn, *args, **kwargs)).result()

    def _submit(self, fn: Callable[[], T]) -> Future[T]:
        with self._queued_lock:
            self._queued += 1
        future = self._worker.submit(_guarded, fn, self.path)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future: Future[Any]) -> None:
        with self._queued_lock:
            self._queued -= 1

    def _idle(self) -> bool:
        with self._queued_lock:
            return self._queued == 0

    @property
    def path(self) -> Path | None:
        return Path(self.engine.url.database) if self.engine.url.database else None

    def close(self) -> None:
        self._worker.shutdown(wait=True)
        self.engine.dispose()
        if self.quick is not None:
            self.quick.close()


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


def _guarded(fn: Callable[[], T], path: Path | None) -> T:
    # The busy timeout already waits for other processes' writes; a write that still finds the
    # database locked (a checkpoint, a long writer elsewhere) is tried again before giving up.
    for attempt in range(LOCK_RETRIES + 1):
        try:
            return fn()
        except OperationalError as exc:
            if "locked" in str(exc.orig) and attempt < LOCK_RETRIES:
                continue
            raise store_error(exc, path) from exc
        except (SQLAlchemyError, sqlite3.Error) as exc:  # sqlite3's own: statements on the raw connection
            raise store_error(exc, path) from exc
    raise AssertionError("unreachable")


_HINT_WRITABLE = ("make the data dir and its files writable by this user, or point CONTEXT_KERNEL_HOME at a "
                  "writable directory; `context-kernel doctor` checks it")
# SQLite's own message (lower case) → what failed, what to do. `{path}` is the database file.
_KNOWN_FAILURES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("database or disk is full",), "the disk holding the database is full ({path})",
     "free space on that disk (or point CONTEXT_KERNEL_HOME at another one), then call again; "
     "`context-kernel doctor` shows how big the database and the logs are"),
    (("file is not a database", "database disk image is malformed"),
     "the database file is damaged: corrupted, or not an SQLite database ({path})",
     "move it aside (`mv {path} {path}.broken`) and call again: a new, empty database is created "
     "(`sqlite3 {path}.broken .recover` may save the old records); `context-kernel doctor` checks it"),
    (("attempt to write a readonly database",), "the database is read-only ({path})", _HINT_WRITABLE),
    (("unable to open database file",), "the database file cannot be opened or created ({path})", _HINT_WRITABLE),
    (("disk i/o error",), "the disk failed a read or write of the database ({path})",
     "check that the disk has free space and is healthy, then call again; `context-kernel doctor` checks it"),
    (("database is locked", "database table is locked"),
     "the database stayed locked by another process beyond the busy timeout ({path})",
     "another context-kernel process (a server or a hook) holds a long write: call again"),
)


def store_error(exc: BaseException, path: Path | str | None) -> StoreError:
    """The StoreError for a failed statement: what failed (SQLite's words in parentheses), what to do."""
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    detail = str(orig).strip() or type(orig).__name__
    lowered = detail.lower()
    where = str(path) if path else "the database"
    for needles, what, hint in _KNOWN_FAILURES:
        if any(n in lowered for n in needles):
            return StoreError(f"{what.format(path=where)} (SQLite: {detail})", hint=hint.format(path=where))
    return StoreError(f"database error on {where}: {detail}")
