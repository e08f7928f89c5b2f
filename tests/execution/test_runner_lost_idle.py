"""A print flood stopped at the output cap ends when the kernel replies, even if its `idle` never arrives.

On a loaded machine the server reads IOPub more slowly than a flooding kernel prints; past the queues'
high-water marks ZMQ's PUB socket drops messages, the cell's `status: idle` among them (seen as a cell
that hung until its timeout after the cap's interrupt had stopped it). The execute_reply travels on the
shell channel, which drops nothing. The kernel here is a double that loses the idle that way; the real
kernel's flood is tests/e2e/test_misbehaving_code.py's.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from context_kernel.execution.collector import OutputCollector
from context_kernel.execution.runner import CellRun

pytestmark = pytest.mark.anyio

LINE = "x" * 1000 + "\n"
DEADLINE_S = 60.0  # a bound, never reached when the reply ends the cell


class FloodThatLosesItsIdle:
    """Prints until interrupted, then replies on the shell channel; its `idle` is dropped on the way."""

    def __init__(self) -> None:
        self.msg_id = "cell-1"
        self.interrupted = anyio.Event()
        self.interrupts = 0
        self.queued_after_interrupt = 50  # what was already in the queues when the interrupt came

    def execute(self, code: str, metadata: dict[str, Any] | None = None) -> str:
        return self.msg_id

    def _stream(self) -> dict[str, Any]:
        return {"header": {"msg_type": "stream"}, "parent_header": {"msg_id": self.msg_id},
                "content": {"name": "stdout", "text": LINE * 64}}

    async def next_iopub(self, timeout: float) -> dict[str, Any] | None:
        if not self.interrupted.is_set():
            return self._stream()
        if self.queued_after_interrupt:
            self.queued_after_interrupt -= 1
            return self._stream()
        await anyio.sleep(timeout)  # the idle was dropped: nothing more comes
        return None

    async def shell_reply(self, msg_id: str, timeout: float) -> dict[str, Any] | None:
        with anyio.move_on_after(timeout):
            await self.interrupted.wait()
            return {"parent_header": {"msg_id": msg_id},
                    "content": {"status": "error", "ename": "KeyboardInterrupt", "execution_count": 1}}
        return None

    async def interrupt(self) -> None:
        self.interrupts += 1
        self.interrupted.set()

    async def answer_input_requests(self) -> int:
        return 0

    async def files_touched(self, reply_content: dict[str, Any]) -> dict[str, str]:
        return {}

    async def is_alive(self) -> bool:
        return True


async def test_a_capped_flood_whose_idle_was_dropped_ends_with_its_execute_reply() -> None:
    kernel = FloodThatLosesItsIdle()
    flushed: list[int] = []

    async def flush(first: int, batch: list[dict[str, Any]]) -> None:
        flushed.append(len(batch))

    run = CellRun(kernel, OutputCollector(return_budget=4096, hard_cap=2 * 1024 * 1024), flush)
    run.send("import sys\nwhile True: sys.stdout.write('x' * 1000 + '\\n')")
    assert await run.wait(time.monotonic() + DEADLINE_S)  # True: it ended, not the deadline
    outcome = await run.outcome()
    assert kernel.interrupts == 1 and kernel.queued_after_interrupt == 0
    assert (outcome.status, outcome.error_name, outcome.interrupted) == ("error", "OutputCapExceeded", True)
    assert outcome.execution_count == 1 and flushed
