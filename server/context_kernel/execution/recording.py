"""Writing one cell's execution record when the store may fail (a full disk, a read-only file).

A cell that ran is never reported as lost because its record could not be written: a failed
output flush drops that batch from the record (the reply still has its head and tail) and the cell
goes on; a failed final write is kept and tried again before this server's next recorded call, so
once the disk has room the record says how the cell really ended — never `interrupted`.

A cell's last outputs (what arrived since the collector's last periodic flush: for a quick cell, all
of them) are written with its end, in one transaction: a warm call costs two database hops, the
`pending` row before the code runs and the end after it.

Nothing is written with its secrets: the code, the outputs and the end go through
`security/record_redaction.py` first — on the loop when they are a few KB (under a millisecond),
on a worker thread when larger.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

import anyio

from ..errors import ContextKernelError, StoreError
from ..security.record_redaction import redacted_end, redacted_outputs, redacted_start, text_size
from ..store.db import Database
from ..store.executions import ExecutionEnd, ExecutionRepository, ExecutionStart
from .reply import ShapedReply
from .runner import CellOutcome

log = logging.getLogger(__name__)

# Final writes kept for a later try; beyond this the oldest are given up (logged).
MAX_DEFERRED = 256
INLINE_REDACTION_BYTES = 2048
"""Text up to this size is redacted on the loop: a worker thread's round trip would cost more."""
T = TypeVar("T")

Outputs = tuple[int, list[dict[str, Any]]]


class PendingOutputs(Protocol):
    """What a record takes its unwritten outputs from (execution/collector.py's OutputCollector)."""

    def take_pending(self) -> Outputs: ...


class Recorder:
    """One server's execution records: starts, output batches and final writes, with retries."""

    def __init__(self, db: Database, executions: ExecutionRepository) -> None:
        self._db = db
        self._executions = executions
        # the same statements through the database's quick connection: written on the loop when they can be
        self._quick = ExecutionRepository(db.engine, db.quick.transaction) if db.quick is not None else None
        self._deferred: dict[int, ExecutionEnd] = {}
        self._described: set[str] = set()  # kernel instances whose language_info a record carries

    def first_description(self, kernel_instance: str | None, language_info: dict[str, Any]) -> str | None:
        """The kernel's language_info as JSON the first time a record of this kernel instance asks, else None."""
        if not language_info or kernel_instance is None or kernel_instance in self._described:
            return None
        self._described.add(kernel_instance)
        return json.dumps(language_info, sort_keys=True)

    async def start(self, start: ExecutionStart) -> CellRecord:
        """Record a call as `pending` before it runs; a StoreError here means nothing ran."""
        await self.retry_deferred()
        start = await _redacted(redacted_start, start, len(start.code) + len(start.intent or ""))
        quick = self._quick.start if self._quick else None
        return CellRecord(self, await self._db.run_quick(self._executions.start, quick, start))

    async def write_outputs(self, exec_id: int, first: int, batch: list[dict[str, Any]]) -> None:
        batch = await _redacted(redacted_outputs, batch, text_size(batch))
        await self._db.run(self._executions.add_outputs, exec_id, first, batch)

    async def retry_deferred(self) -> None:
        """Write the final records that failed before (the disk has room again, say)."""
        for exec_id, end in list(self._deferred.items()):
            try:
                await self._db.run(self._executions.finish, exec_id, end)
            except StoreError:
                return  # still failing: keep them all for the next call
            self._deferred.pop(exec_id, None)

    async def finish(self, exec_id: int, end: ExecutionEnd, outputs: Outputs | None = None,
                     ) -> tuple[StoreError | None, int]:
        """Write a call's final record with its last outputs; on failure the outputs alone and a smaller
        end, else keep the end for a later try. Returns the first failure and how many outputs were lost."""
        # A newer end replaces an older one still waiting (a background cell's `running`).
        self._deferred.pop(exec_id, None)
        end = await _redacted(redacted_end, end, len(end.returned_text or "") + len(end.error_value or ""))
        if outputs is not None:
            outputs = (outputs[0], await _redacted(redacted_outputs, outputs[1], text_size(outputs[1])))
        try:
            quick = self._quick.finish if self._quick else None
            await self._db.run_quick(self._executions.finish, quick, exec_id, end, outputs)
            return None, 0
        except StoreError as exc:
            problem = exc
        lost = 0
        if outputs is not None and outputs[1]:
            try:
                await self._db.run(self._executions.add_outputs, exec_id, *outputs)  # redacted above
            except StoreError:
                lost = len(outputs[1])
                end = replace(end, note=_join(end.note, f"{lost} outputs could not be recorded ({problem.message})"))
        # The full end carries the reply text; the bare outcome is smaller and may still fit.
        bare = replace(end, returned_text=None, note=_join(end.note, "the reply text could not be recorded"))
        try:
            await self._db.run(self._executions.finish, exec_id, bare)
            return problem, lost
        except StoreError:
            pass
        self._deferred[exec_id] = bare
        while len(self._deferred) > MAX_DEFERRED:
            gone = next(iter(self._deferred))
            del self._deferred[gone]
            log.warning("execution #%d: its final record could not be written and is given up", gone)
        return problem, lost


@dataclass
class CellRecord:
    """The record of one call: its id, and the first write that failed (None while all succeed)."""

    recorder: Recorder
    exec_id: int
    problem: StoreError | None = None
    lost_outputs: int = 0
    outputs: PendingOutputs | None = None
    """The cell's collector: its outputs not yet flushed are written with the end."""

    async def add_outputs(self, first: int, batch: list[dict[str, Any]]) -> None:
        """A flush callback (runner.Flush) that never fails the cell."""
        try:
            await self.recorder.write_outputs(self.exec_id, first, batch)
        except StoreError as exc:
            self.problem = self.problem or exc
            self.lost_outputs += len(batch)
            log.warning("execution #%d: %d outputs not recorded: %s", self.exec_id, len(batch), exc.message)

    async def finish(self, end: ExecutionEnd) -> None:
        """Write the end, with the outputs still pending in the attached collector."""
        if self.lost_outputs:
            end = replace(end, note=_join(end.note, f"{self.lost_outputs} outputs could not be recorded "
                                                    f"({self.problem.message if self.problem else 'store error'})"))
        outputs = self.outputs.take_pending() if self.outputs is not None else None
        problem, lost = await self.recorder.finish(self.exec_id, end, outputs)
        self.problem = self.problem or problem
        self.lost_outputs += lost

    # -- how a call ends: every path of execution/service.py ends in one of these -------------------

    async def refused(self, exc: ContextKernelError, text: str) -> None:
        """Refused before it ran (a denied command, a path outside the project); `text` is the agent's reply."""
        await self.finish(ExecutionEnd(status="refused", error_name=type(exc).__name__, error_value=exc.message,
                                       returned_text=text, returned_kind="refused", bytes_returned=len(text.encode()),
                                       note=text))

    async def kernel_failed(self, exc: ContextKernelError, text: str) -> None:
        """No kernel could be had (it would not start, the runtime is missing); `text` is the agent's reply."""
        await self.finish(ExecutionEnd(status="error", error_name=type(exc).__name__, error_value=exc.message,
                                       returned_text=text, returned_kind="full", bytes_returned=len(text.encode())))

    async def cancelled(self, bytes_produced: int) -> None:
        """The call was cancelled while the cell ran (the client went away, the server stopped)."""
        await self.finish(ExecutionEnd(status="interrupted", bytes_produced=bytes_produced,
                                       note="cancelled while it ran (the client went away or the server stopped)"))

    async def running(self, kernel_instance: str | None, bytes_produced: int, reply: ShapedReply) -> None:
        """A background cell, answered while it runs on (background_done ends it)."""
        await self.finish(ExecutionEnd(status="running", kernel_instance=kernel_instance, bytes_produced=bytes_produced,
                                       bytes_returned=len(reply.text.encode()), returned_text=reply.text,
                                       returned_kind=reply.kind))

    async def background_done(self, outcome: CellOutcome, bytes_produced: int, reply: ShapedReply,
                              files: list[dict[str, Any]] | None = None, printed_later: bool = False) -> None:
        """A background cell's end; the reply it records is the one sent when it started. `printed_later`: the cell
        printed more after that reply, which the agent saw only through its ctx_follow looks (if any)."""
        await self.finish(ExecutionEnd(
            status=outcome.status, error_name=outcome.error_name, error_value=outcome.error_value,
            execution_count=outcome.execution_count, bytes_produced=bytes_produced,
            bytes_returned=len(reply.text.encode()), returned_text=reply.text,
            returned_kind="partial" if printed_later else reply.kind,
            note="background cell; the reply was sent before it finished" + (
                ", with what it had printed until then; what it printed later reached the agent only through its "
                "ctx_follow looks" if printed_later else ""), files=_json(files)))

    async def completed(self, outcome: CellOutcome, kernel_instance: str | None, bytes_produced: int,
                        reply: ShapedReply, note: str | None, files: list[dict[str, Any]] | None = None,
                        language_info: dict[str, Any] | None = None) -> None:
        """A cell that ran to its end (ok, error, timeout, died) and the reply the agent got; `files`: those it
        opened (execution/provenance.py); `language_info`: its kernel's (kept on the kernel's first record)."""
        await self.finish(ExecutionEnd(
            status=outcome.status, error_name=outcome.error_name, error_value=outcome.error_value,
            execution_count=outcome.execution_count, kernel_instance=kernel_instance, bytes_produced=bytes_produced,
            bytes_returned=len(reply.text.encode()), returned_text=reply.text, returned_kind=reply.kind, note=note,
            files=_json(files), language_info=self.recorder.first_description(kernel_instance, language_info or {})))

    async def batch_done(self, outcome: CellOutcome, kernel_instance: str | None, bytes_produced: int,
                         note: str) -> None:
        """A batch command: its output was indexed and the batch's reply carries search results."""
        await self.finish(ExecutionEnd(
            status=outcome.status, error_name=outcome.error_name, error_value=outcome.error_value,
            execution_count=outcome.execution_count, kernel_instance=kernel_instance, bytes_produced=bytes_produced,
            returned_kind="indexed", note=note))

    async def flush(self) -> None:
        """Write the pending outputs now (before reading the record's output back)."""
        if self.outputs is not None:
            first, batch = self.outputs.take_pending()
            if batch:
                await self.add_outputs(first, batch)

    def reply_note(self) -> str | None:
        """What the agent is told when the record is incomplete (None when every write succeeded)."""
        if self.problem is None:
            return None
        what = "the output was not all saved" if self.lost_outputs else "the final record was not saved"
        return (f"[context-kernel: recording failed, {what} (execution #{self.exec_id}); the cell itself ran as "
                f"shown above. {self.problem.message}. {self.problem.hint}]")


def _join(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


async def _redacted(redact: Callable[[T], T], value: T, size: int) -> T:
    if size <= INLINE_REDACTION_BYTES:
        return redact(value)
    return await anyio.to_thread.run_sync(redact, value)


def _json(files: list[dict[str, Any]] | None) -> str | None:
    return json.dumps(files) if files else None
