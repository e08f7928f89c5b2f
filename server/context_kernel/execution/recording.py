"""Writing one cell's execution record when the store may fail (a full disk, a read-only file).

A cell that ran is never reported as lost because its record could not be written: a failed
output flush drops that batch from the record (the reply still has its head and tail) and the cell
goes on; a failed final write is kept and tried again before this server's next recorded call, so
once the disk has room the record says how the cell really ended — never `interrupted`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from ..errors import StoreError
from ..store.db import Database
from ..store.executions import ExecutionEnd, ExecutionRepository, ExecutionStart

log = logging.getLogger(__name__)

# Final writes kept for a later try; beyond this the oldest are given up (logged).
MAX_DEFERRED = 256


class Recorder:
    """One server's execution records: starts, output batches and final writes, with retries."""

    def __init__(self, db: Database, executions: ExecutionRepository) -> None:
        self._db = db
        self._executions = executions
        self._deferred: dict[int, ExecutionEnd] = {}

    async def start(self, start: ExecutionStart) -> CellRecord:
        """Record a call as `pending` before it runs; a StoreError here means nothing ran."""
        await self.retry_deferred()
        return CellRecord(self, await self._db.run(self._executions.start, start))

    async def write_outputs(self, exec_id: int, first: int, batch: list[dict[str, Any]]) -> None:
        await self._db.run(self._executions.add_outputs, exec_id, first, batch)

    async def retry_deferred(self) -> None:
        """Write the final records that failed before (the disk has room again, say)."""
        for exec_id, end in list(self._deferred.items()):
            try:
                await self._db.run(self._executions.finish, exec_id, end)
            except StoreError:
                return  # still failing: keep them all for the next call
            self._deferred.pop(exec_id, None)

    async def finish(self, exec_id: int, end: ExecutionEnd) -> StoreError | None:
        """Write a call's final record; on failure a smaller one, else keep it for a later try."""
        # A newer end replaces an older one still waiting (a background cell's `running`).
        self._deferred.pop(exec_id, None)
        try:
            await self._db.run(self._executions.finish, exec_id, end)
            return None
        except StoreError as exc:
            problem = exc
        # The full end carries the reply text; the bare outcome is smaller and may still fit.
        bare = replace(end, returned_text=None, note=_join(end.note, "the reply text could not be recorded"))
        try:
            await self._db.run(self._executions.finish, exec_id, bare)
            return problem
        except StoreError:
            pass
        self._deferred[exec_id] = bare
        while len(self._deferred) > MAX_DEFERRED:
            lost = next(iter(self._deferred))
            del self._deferred[lost]
            log.warning("execution #%d: its final record could not be written and is given up", lost)
        return problem


@dataclass
class CellRecord:
    """The record of one call: its id, and the first write that failed (None while all succeed)."""

    recorder: Recorder
    exec_id: int
    problem: StoreError | None = None
    lost_outputs: int = 0

    async def add_outputs(self, first: int, batch: list[dict[str, Any]]) -> None:
        """A flush callback (runner.Flush) that never fails the cell."""
        try:
            await self.recorder.write_outputs(self.exec_id, first, batch)
        except StoreError as exc:
            self.problem = self.problem or exc
            self.lost_outputs += len(batch)
            log.warning("execution #%d: %d outputs not recorded: %s", self.exec_id, len(batch), exc.message)

    async def finish(self, end: ExecutionEnd) -> None:
        if self.lost_outputs:
            end = replace(end, note=_join(end.note, f"{self.lost_outputs} outputs could not be recorded "
                                                    f"({self.problem.message if self.problem else 'store error'})"))
        problem = await self.recorder.finish(self.exec_id, end)
        self.problem = self.problem or problem

    def reply_note(self) -> str | None:
        """What the agent is told when the record is incomplete (None when every write succeeded)."""
        if self.problem is None:
            return None
        what = "the output was not all saved" if self.lost_outputs else "the final record was not saved"
        return (f"[context-kernel: recording failed, {what} (execution #{self.exec_id}); the cell itself ran as "
                f"shown above. {self.problem.message}. {self.problem.hint}]")


def _join(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None
