"""Database.run_quick: a short write runs on the event loop only when that keeps order and cannot wait."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from context_kernel.store.db import Database
from context_kernel.store.events import EventRepository
from context_kernel.store.executions import ExecutionEnd, ExecutionRepository, ExecutionStart

pytestmark = pytest.mark.anyio
START = ExecutionStart(session_id="s", tool="ctx_execute", code="print(1)", language="python",
                       kernel_name="python3")


def _repos(db: Database) -> tuple[ExecutionRepository, ExecutionRepository]:
    assert db.quick is not None
    repo = ExecutionRepository(db.engine)
    repo.touch_session("s", client=None, transport="stdio", project_dir="/p")
    return repo, ExecutionRepository(db.engine, db.quick.transaction)


Stored = tuple[Database, ExecutionRepository, ExecutionRepository]


@pytest.fixture
def stored(tmp_path: Path) -> Iterator[Stored]:
    """The database, its worker-path repository and its quick-path one."""
    db = Database.open(tmp_path / "db.sqlite3")
    try:
        yield (db, *_repos(db))
    finally:
        db.close()


def _noting_thread(quick: ExecutionRepository, threads: list[int]) -> Callable[[ExecutionStart], int]:
    """quick.start, noting the thread it ran on."""
    def start_here(start: ExecutionStart) -> int:
        threads.append(threading.get_ident())
        return quick.start(start)
    return start_here


async def test_an_idle_database_writes_on_the_loop_thread(stored: Stored) -> None:
    db, repo, quick = stored
    threads: list[int] = []
    start_here = _noting_thread(quick, threads)
    exec_id = await db.run_quick(repo.start, start_here, START)
    assert threads == [threading.get_ident()]
    assert repo.get(exec_id) is not None


async def test_a_write_queued_on_the_worker_keeps_its_place(stored: Stored) -> None:
    db, repo, quick = stored
    exec_id = repo.start(START)
    release, order = threading.Event(), []

    def slow_outputs() -> None:
        assert release.wait(10)
        repo.add_outputs(exec_id, 0, [{"output_type": "stream", "name": "stdout", "text": "1\n"}])
        order.append("outputs")

    def finish(*args: object) -> None:
        order.append("finish")
        repo.finish(exec_id, ExecutionEnd(status="ok"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(db.run, slow_outputs)
        await anyio.lowlevel.checkpoint()  # the outputs are on the worker before the end is written
        tg.start_soon(db.run_quick, finish, quick.finish, exec_id, ExecutionEnd(status="ok"))
        await anyio.lowlevel.checkpoint()
        assert order == []  # the end waits behind the queued outputs instead of overtaking them
        release.set()
    assert order == ["outputs", "finish"]


async def test_a_database_locked_by_another_process_never_blocks_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    db = Database.open(path)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        repo, quick = _repos(db)
        other.execute("BEGIN IMMEDIATE")  # another server or a hook in the middle of a write
        ticks = 0
        async with anyio.create_task_group() as tg:
            async def write() -> None:
                exec_id = await db.run_quick(repo.start, quick.start, START)
                assert repo.get(exec_id) is not None

            tg.start_soon(write)
            with anyio.fail_after(10):
                while ticks < 5:  # the loop keeps running while the write waits for the lock on the worker
                    await anyio.sleep(0.01)
                    ticks += 1
            other.execute("COMMIT")
        assert ticks == 5
    finally:
        other.close()
        db.close()


async def test_a_quick_write_that_fails_says_what_failed(tmp_path: Path) -> None:
    from context_kernel.errors import StoreError

    db = Database.open(tmp_path / "db.sqlite3")
    try:
        repo, quick = _repos(db)
        bad = ExecutionStart(session_id="no-such-session", tool="ctx_execute", code="x", language="python",
                             kernel_name="python3")
        with pytest.raises(StoreError, match=r"database error|FOREIGN KEY"):
            await db.run_quick(repo.start, quick.start, bad)
        # the failed transaction was rolled back: the connection takes the next write, on the loop
        threads: list[int] = []
        start_here = _noting_thread(quick, threads)
        exec_id = await db.run_quick(repo.start, start_here, START)
        assert threads == [threading.get_ident()]
        assert [r.id for r in repo.for_session("s")] == [exec_id]
    finally:
        db.close()


async def test_a_quick_write_records_what_the_worker_would(stored: Stored) -> None:
    # The quick connection runs the repositories' own statements on plain sqlite3: the rows must be
    # the ones SQLAlchemy writes (booleans, NULLs, outputs in order, the end's computed duration).
    _, repo, quick = stored
    start = ExecutionStart(session_id="s", tool="ctx_execute", code="echo 1", language="shell",
                           kernel_name="ck-bash", fresh=True, background=False, intent=None, timeout_ms=500)
    outputs = [{"output_type": "stream", "name": "stdout", "text": "1\n"},
               {"output_type": "stream", "name": "stderr", "text": "é\n"}]
    ids = []
    for start_fn, finish_fn in ((repo.start, repo.finish), (quick.start, quick.finish)):
        exec_id = start_fn(start)
        finish_fn(exec_id, ExecutionEnd(status="ok", execution_count=3, bytes_produced=4), (0, outputs))
        ids.append(exec_id)
    worker, loop = (repo.get(i) for i in ids)
    assert worker is not None and loop is not None
    differ = {k for k, v in worker.__dict__.items()
              if k not in ("id", "started_at", "ended_at", "duration_ms") and loop.__dict__[k] != v}
    assert differ == set()
    assert loop.fresh is True and loop.intent is None and loop.duration_ms is not None
    assert repo.outputs(ids[1]) == repo.outputs(ids[0]) == outputs


def test_a_quick_call_record_counts_what_the_worker_would(stored: Stored) -> None:
    # The third write of every call, the call's accounting: the same totals through either path.
    db, _, _ = stored
    assert db.quick is not None
    worker, loop = EventRepository(db.engine), EventRepository(db.engine, db.quick.transaction)
    for session, events in (("a", worker), ("b", loop)):
        events.record_call(session, "ctx_search", duration_ms=3.5, bytes_in=0, bytes_indexed=0, bytes_returned=900,
                           is_error=True, sources_in={"docs": 4000}, sources_back={"docs": 900, "api": 120})
    assert worker.tool_totals("b") == worker.tool_totals("a") != []
    assert worker.source_totals("b") == worker.source_totals("a") != []
