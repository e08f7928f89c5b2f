"""Background cells: `ctx_execute(background=true)` answers after its timeout with what the cell printed so far and
leaves it running in a kernel of its own (the session's kernel keeps serving its other calls); `ctx_follow` then
tells its status, what it printed since the last look (bounded; filtered by an intent), its end, and cancels it.

Each look reads the cell's record (every output is recorded as it arrives), so what a look shows is what the
export holds; the looks are conversation calls (records/conversation.py), so the export shows each one where it
happened. The whole output is indexed under the cell's `exec-N` source at each look and at its end, so a search
finds what it printed. A cancelled cell's kernel is shut down: nothing it started keeps running.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ..errors import InvalidRequest
from ..kernels.pool import KernelPool
from ..knowledge.intent import intent_excerpt
from ..knowledge.service import KnowledgeService
from ..store.db import Database
from ..store.executions import ExecutionRepository
from ..wording import counted
from .provenance import FileHashes
from .recording import CellRecord
from .reply import ShapedReply, sent_text
from .requests import ExecuteReply, ExecuteRequest
from .runner import CellOutcome, CellRun
from .text import HeadTail

# A look's reply stays within this (the intent reply's budget): the rest is in the record and the index.
LOOK_BUDGET = 3800
# How long one look may wait for the cell to end (`wait`).
MAX_WAIT_S = 60.0
# Finished cells whose last look is remembered (their offset: "since the last look").
KEEP_FINISHED = 256
# What a look reads of the record at most.
MAX_READ_CHARS = 16 * 1024 * 1024
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]


@dataclass
class _Cell:
    exec_id: int
    session_id: str
    started: float
    """monotonic"""
    seen: int = 0
    """Characters of the recorded output the agent has been shown."""
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    outcome: CellOutcome | None = None
    cancelled: bool = False
    ended: float | None = None


class BackgroundCells:
    def __init__(self, *, db: Database, executions: ExecutionRepository, pool: KernelPool, hashes: FileHashes,
                 project_dir: Path, spawn: Spawn, max_timeout_s: float, knowledge: KnowledgeService | None,
                 restart_timeout_s: float = 60.0) -> None:
        self._db = db
        self._executions = executions
        self._pool = pool
        self._hashes = hashes
        self._project_dir = project_dir
        self._spawn = spawn
        self._max_timeout_s = max_timeout_s
        self._restart_timeout_s = restart_timeout_s
        self._knowledge = knowledge
        self._cells: OrderedDict[int, _Cell] = OrderedDict()

    async def start(self, run: CellRun, stack: AsyncExitStack, record: CellRecord, req: ExecuteRequest,
                    session_id: str, reply: ShapedReply) -> ExecuteReply:
        """Answer with `reply` (what the cell printed until its timeout) and let the cell run on."""
        exec_id = record.exec_id
        await record.running(run.kernel.instance_id, run.collector.bytes_produced, reply)
        cell = self._cells[exec_id] = _Cell(exec_id, session_id, time.monotonic())
        await record.flush()
        cell.seen = shown = len(await self._recorded(exec_id))  # the reply showed what was printed until now
        self._forget_old()

        async def finish_later() -> None:
            try:
                outcome: CellOutcome
                try:
                    with cell.scope:
                        finished = await run.wait(time.monotonic() + self._max_timeout_s)
                    if cell.cancelled:
                        outcome = CellOutcome(status="interrupted", error_name="Cancelled", error_value=(
                            f"cancelled with ctx_follow after {time.monotonic() - cell.started:.1f} s; its kernel "
                            "was shut down"))
                    elif finished:
                        outcome = await run.outcome()
                    else:
                        outcome = await run.stop_after_timeout(self._restart_timeout_s)
                except Exception as exc:  # noqa: BLE001 - the server shut the kernel down under us
                    outcome = CellOutcome(status="interrupted", error_name=type(exc).__name__,
                                          error_value="the server stopped before the background cell finished")
                with anyio.CancelScope(shield=True):
                    await run.flush()
                    await record.flush()
                    printed = len(await self._recorded(exec_id))
                    await record.background_done(outcome, run.collector.bytes_produced, reply,
                                                 await self._hashes.of(outcome.files, self._project_dir, req.code,
                                                                       outcome.cwd), printed_later=printed > shown)
                    cell.outcome, cell.ended = outcome, time.monotonic()
                    await self._index(cell)
            finally:
                with anyio.CancelScope(shield=True):
                    await self._pool.release_extra(run.kernel)
                    await stack.aclose()
                cell.done.set()

        self._spawn(finish_later)
        text = sent_text(reply.text, record.reply_note(), exec_id)
        return ExecuteReply(text, False, "running", exec_id, run.collector.bytes_produced, len(text.encode()))

    async def wait(self, exec_id: int, timeout: float) -> bool:
        """Wait until background cell `exec_id` has finished and been recorded; False on timeout."""
        cell = self._cells.get(exec_id)
        if cell is None:
            return True
        with anyio.move_on_after(timeout):
            await cell.done.wait()
            return True
        return False

    async def follow(self, exec_id: int, session_id: str, *, intent: str | None = None, wait_s: float = 0.0,
                     cancel: bool = False) -> ExecuteReply:
        """ctx_follow: the cell's status and what it printed since the last look; `wait_s`: first wait up to that
        long for it to end; `cancel`: stop it (its kernel is shut down)."""
        cell = self._cells.get(exec_id)
        if cell is None or cell.session_id != session_id:
            raise InvalidRequest(
                f"#{exec_id} is not a background cell of this session",
                hint="ctx_follow takes the id a ctx_execute(background=true) reply cites, e.g. 42 for [#42]")
        if cancel and not cell.done.is_set():
            cell.cancelled = True
            cell.scope.cancel()
            with anyio.move_on_after(MAX_WAIT_S):
                await cell.done.wait()
        elif wait_s > 0 and not cell.done.is_set():
            with anyio.move_on_after(min(wait_s, MAX_WAIT_S)):
                await cell.done.wait()
        text = await self._recorded(exec_id)
        new, cell.seen = text[cell.seen:], len(text)
        if not cell.done.is_set():
            await self._index(cell, text)
        body = _shaped(new, intent, exec_id)
        head = _status_line(cell, new)
        reply = sent_text(head + ("\n" + body if body else ""), None, exec_id)
        failed = cell.outcome is not None and cell.outcome.status != "ok"
        status = cell.outcome.status if cell.outcome is not None else "running"
        return ExecuteReply(reply, failed, status, exec_id, len(new.encode()), len(reply.encode()))

    async def _recorded(self, exec_id: int) -> str:
        """The cell's recorded stdout and stderr, in order."""
        return await self._db.run(_recorded_text, self._executions, exec_id)

    async def _index(self, cell: _Cell, text: str | None = None) -> None:
        """The whole output so far under `exec-N`, so a search finds it (replaced at each look and at the end)."""
        if self._knowledge is None:
            return
        text = await self._recorded(cell.exec_id) if text is None else text
        if text.strip():
            await self._knowledge.index_text(label=f"exec-{cell.exec_id}", text=text, name="output.txt",
                                             kind="execution", origin=f"execution #{cell.exec_id}",
                                             session_id=cell.session_id)

    def _forget_old(self) -> None:
        finished = [k for k, c in self._cells.items() if c.done.is_set()]
        for k in finished[:max(0, len(finished) - KEEP_FINISHED)]:
            del self._cells[k]


def _recorded_text(repo: ExecutionRepository, exec_id: int) -> str:
    parts: list[str] = []
    size = 0
    for out in repo.iter_outputs(exec_id):
        if out.get("output_type") == "stream":
            piece = "".join(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            plain = out.get("data", {}).get("text/plain", "")
            piece = ("".join(plain) if isinstance(plain, list) else plain) + "\n"
        else:
            continue
        parts.append(piece)
        size += len(piece)
        if size >= MAX_READ_CHARS:
            break
    return "".join(parts)


def _status_line(cell: _Cell, new: str) -> str:
    lines = counted(new.count("\n") + (1 if new and not new.endswith("\n") else 0), "new line")
    if cell.outcome is None:
        return f"[#{cell.exec_id} running for {time.monotonic() - cell.started:.0f} s; {lines} since the last look]"
    took = f"after {(cell.ended or time.monotonic()) - cell.started:.1f} s"
    end = cell.outcome.status if cell.outcome.status != "interrupted" else "cancelled"
    error = f": {cell.outcome.error_name}: {cell.outcome.error_value}" if cell.outcome.error_name else ""
    return f"[#{cell.exec_id} finished ({end}) {took}{error}; {lines} since the last look]"


def _shaped(new: str, intent: str | None, exec_id: int) -> str:
    """What the look shows of the new output: all of it when it fits, else the lines matching `intent`, else its
    head and tail."""
    if len(new.encode()) <= LOOK_BUDGET:
        return new.rstrip("\n")
    if intent:
        excerpt = intent_excerpt(new, intent, LOOK_BUDGET)
        return (f"[{excerpt.matched_lines} of {excerpt.total_lines} new lines match the intent; all of it: "
                f"ctx_search(source=\"exec-{exec_id}\")]\n{excerpt.text}")
    kept = HeadTail(LOOK_BUDGET)
    kept.feed(new if new.endswith("\n") else new + "\n")
    return kept.render().rstrip("\n") + f"\n[the whole output: ctx_search(source=\"exec-{exec_id}\")]"
