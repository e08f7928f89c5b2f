"""Drives one cell on one kernel: send, collect until idle, and handle timeout, cap and death.

A Jupyter interrupt keeps the kernel's state, so on timeout we interrupt first and restart only
when the interrupt does not bring the kernel back — and the outcome says which happened. Our own
kernels may have had to replace their shell or node process to end the cell: their execute_reply
then says so (`context_kernel.state_lost`), and the outcome does too.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio

from ..errors import KernelRestartFailed
from ..kernels.backend import Kernel
from ..wording import size_text
from .collector import OutputCollector
from .requests import CellStatus

# How long to wait for a kernel to come back after SIGINT before restarting it.
INTERRUPT_GRACE_S = 5.0
# Output the kernel sent before the interrupt (its date says so) is a backlog the server has yet to read,
# not a kernel that failed to stop: while it comes, the grace starts again, up to this long in all. A busy
# machine reads a flood more slowly than the kernel prints it.
BACKLOG_GRACE_MAX_S = 60.0
# How long the execute_reply may lag the kernel's `idle` before the kernel counts as not replying.
REPLY_WAIT_S = 5.0
# How often a silent wait checks that the kernel process is still alive.
LIVENESS_SLICE_S = 0.5

Flush = Callable[[int, list[dict[str, Any]]], Awaitable[None]]
Progress = Callable[[float], Awaitable[None]]


@dataclass
class CellOutcome:
    status: CellStatus
    error_name: str | None = None
    error_value: str | None = None
    execution_count: int | None = None
    interrupted: bool = False
    restarted: bool = False
    exit_code: int | None = None
    note: str = ""
    replace_kernel: bool = False
    """The kernel cannot be trusted with another cell (it stopped replying): the pool replaces it."""
    files: dict[str, str] = field(default_factory=dict)
    """The files the cell opened, {path: "r" or "w"}, where the kernel reports them (kernels/file_access.py)."""
    cwd: str | None = None
    """Where the cell started, where the kernel says (our bash kernel): its command line's files are read
    from there (execution/shell_files.py)."""


class CellRun:
    """One cell in flight. `wait` may be called again after it returns unfinished (background)."""

    def __init__(
        self,
        kernel: Kernel,
        collector: OutputCollector,
        flush: Flush,
        progress: Progress | None = None,
        progress_interval: float = 5.0,
        *,
        final_flush: bool = True,
    ) -> None:
        self.kernel = kernel
        self.collector = collector
        self._flush = flush
        self._progress = progress
        self._progress_interval = progress_interval
        # False: the caller writes the outputs left at idle itself (an execution record writes them with
        # its end, one database hop instead of two)
        self._final_flush = final_flush
        self._msg_id = ""
        self._started = 0.0
        self._last_progress = 0.0
        self.finished = False
        self.died = False
        self._cap_interrupted = False
        self._reply: dict[str, Any] | None = None
        self.state_lost: str | None = None
        """The kernel's note, when it replaced its process to end the cell (set by `outcome`)."""

    def send(self, code: str, metadata: dict[str, Any] | None = None) -> None:
        self._started = self._last_progress = time.monotonic()
        self._msg_id = self.kernel.execute(code, metadata)

    async def wait(self, deadline: float, *, backlog_before: float | None = None) -> bool:
        """Collect outputs until idle (True) or until `deadline` (monotonic seconds, False).

        `backlog_before` (wall-clock seconds): a message of the cell the kernel sent before it moves the
        deadline to INTERRUPT_GRACE_S from now, until BACKLOG_GRACE_MAX_S have passed."""
        latest = time.monotonic() + BACKLOG_GRACE_MAX_S
        backlog = False  # the last message read was sent before `backlog_before`
        while not self.finished:
            now = time.monotonic()
            if now >= deadline and not backlog:
                return False
            # Past the deadline after a backlog message, one more already queued is still read: the time may
            # have gone on writing the backlog's outputs, not on a kernel that did not stop.
            msg = await self.kernel.next_iopub(max(0.0, min(deadline - now, LIVENESS_SLICE_S)))
            await self._tick()
            backlog = False
            if msg is None and now >= deadline:
                return False
            if msg is None:
                if await self.kernel.answer_input_requests():
                    self.collector.note("[the code asked for input; it was given an empty line]")
                if not await self.kernel.is_alive():
                    self.died = True
                    self.finished = True
                elif self._cap_interrupted and await self._replied():
                    # A flood past the cap can overrun the IOPub queues (the server reads more slowly than
                    # the kernel prints on a loaded machine), and ZMQ's PUB socket then drops messages: the
                    # cell's `idle` too. Its execute_reply comes on the shell channel, which drops nothing,
                    # and says as well that the cell ended; its output past the cap is dropped anyway.
                    self.finished = True
                elif self.collector.should_flush:  # a quiet cell's last lines reach the record too
                    await self.flush()
                continue
            if msg.get("parent_header", {}).get("msg_id") != self._msg_id:
                continue  # output of an earlier, abandoned cell
            msg_type = msg["header"]["msg_type"]
            if msg_type == "status" and msg["content"].get("execution_state") == "idle":
                self.finished = True
                break
            if backlog_before is not None and (sent := _sent_at(msg)) is not None and sent < backlog_before:
                backlog = time.monotonic() < latest
                deadline = max(deadline, min(time.monotonic() + INTERRUPT_GRACE_S, latest))
            self.collector.feed(msg)
            if self.collector.should_flush:
                await self.flush()
            if self.collector.capped and not self._cap_interrupted:
                self._cap_interrupted = True
                await self.kernel.interrupt()
        if self._final_flush:
            await self.flush()
        return True

    async def _replied(self) -> bool:
        """Whether the cell's execute_reply came (waits one liveness slice for it); kept for `outcome`."""
        if self._reply is None:
            self._reply = await self.kernel.shell_reply(self._msg_id, timeout=LIVENESS_SLICE_S)
        return self._reply is not None

    async def _tick(self) -> None:
        now = time.monotonic()
        if self._progress is not None and now - self._last_progress >= self._progress_interval:
            self._last_progress = now
            await self._progress(now - self._started)

    async def flush(self) -> None:
        first, batch = self.collector.take_pending()
        if batch:
            await self._flush(first, batch)

    async def outcome(self) -> CellOutcome:
        """After `wait` returned True: status, error and execution count from the execute_reply."""
        if self.died:
            code = await self.kernel.exit_code()
            return CellOutcome(
                status="died", error_name="KernelDied", exit_code=code,
                error_value=f"the kernel process exited (exit code {code}) while the cell ran",
            )
        reply = self._reply or await self.kernel.shell_reply(self._msg_id, timeout=REPLY_WAIT_S)
        if reply is None and not self._cap_interrupted:
            # Idle without an execute_reply: ipykernel's own machinery failed (`sys.stdout = None`
            # does it), and from here on it answers every cell with nothing.
            return CellOutcome(
                status="error", error_name="NoReply", replace_kernel=True,
                error_value=("the kernel went idle without replying to this cell, so whether its code ran is "
                             "unknown (something inside the kernel is broken, e.g. sys.stdout was replaced); "
                             "it is replaced by a new kernel and its state is lost: run the cell again"))
        content = reply["content"] if reply else {}
        files = await self.kernel.files_touched(content) if reply else {}
        err = self.collector.error or {}
        status: CellStatus = "error" if content.get("status") == "error" or err else "ok"
        self.state_lost = _state_lost(content)
        restarted = self.state_lost is not None
        if self._cap_interrupted:
            cap = f"output passed the {size_text(self.collector.hard_cap)} cap"
            return CellOutcome(status="error", error_name="OutputCapExceeded", interrupted=True, restarted=restarted,
                               error_value=f"{cap}; {self.state_lost}" if restarted else cap,
                               execution_count=content.get("execution_count"), files=files)
        return CellOutcome(
            status=status,
            error_name=content.get("ename") or err.get("ename"),
            error_value=content.get("evalue") or err.get("evalue"),
            execution_count=content.get("execution_count"),
            restarted=restarted,
            files=files,
            cwd=_reported_cwd(content),
        )

    async def stop_after_timeout(self, restart_timeout: float) -> CellOutcome:
        """Interrupt; if the kernel does not go idle within the grace time, restart it (state lost)."""
        interrupted_at = time.time()  # before the signal: what the kernel sent until then is backlog
        await self.kernel.interrupt()
        back = await self.wait(time.monotonic() + INTERRUPT_GRACE_S, backlog_before=interrupted_at)
        if back and not self.died:
            outcome = await self.outcome()
            if outcome.replace_kernel:  # back, but without a reply: as broken as any silent kernel
                return CellOutcome(status="timeout", interrupted=True, replace_kernel=True, error_name="Timeout",
                                   error_value=outcome.error_value)
            return CellOutcome(
                status="timeout", interrupted=True, restarted=outcome.restarted,
                execution_count=outcome.execution_count, error_name="Timeout",
                error_value=self.state_lost or "the cell was interrupted; the kernel kept its state",
                files=outcome.files, cwd=outcome.cwd,
            )
        if self.died:
            return CellOutcome(status="died", error_name="KernelDied",
                               error_value="the kernel died while being interrupted; it will be replaced")
        try:
            with anyio.CancelScope(shield=True):
                await self.kernel.restart(restart_timeout)
        except KernelRestartFailed as exc:
            self.finished = self.died = True  # the caller replaces a kernel that died
            return CellOutcome(status="died", error_name="KernelDied", interrupted=True,
                               error_value=f"{exc.message}; a new kernel starts with the next call (state lost)")
        self.finished = True
        return CellOutcome(
            status="timeout", interrupted=True, restarted=True, error_name="Timeout",
            error_value="the interrupt did not stop the cell, so the kernel was restarted: its state is lost",
        )


def _sent_at(msg: dict[str, Any]) -> float | None:
    """When the kernel sent a message (its header's date), as wall-clock seconds; None if it does not say."""
    date = msg.get("header", {}).get("date")
    try:
        when = date if isinstance(date, datetime) else datetime.fromisoformat(str(date))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _reported_cwd(content: dict[str, Any]) -> str | None:
    report = content.get("context_kernel")
    cwd = report.get("cwd") if isinstance(report, dict) else None
    return cwd if isinstance(cwd, str) else None


def _state_lost(content: dict[str, Any]) -> str | None:
    """What the kernel says it lost ending the cell, from its execute_reply (our kernels'), or None."""
    report = content.get("context_kernel")
    if not isinstance(report, dict) or not report.get("state_lost"):
        return None
    return str(report.get("note") or "the kernel replaced its process to end the cell: its state is lost")


async def run_quietly(kernel: Kernel, code: str, deadline: float) -> tuple[OutputCollector, CellOutcome | None]:
    """Run a cell whose output nobody records (a doctor check's line, the silent cell that defines a file's
    variables): what it printed, and how it ended (None when it had not by `deadline`)."""
    collector = OutputCollector(4096, 1 << 20)

    async def discard(_first: int, _batch: list[dict[str, Any]]) -> None:
        return None

    run = CellRun(kernel, collector, discard)
    run.send(code)
    return collector, (await run.outcome() if await run.wait(deadline) else None)

