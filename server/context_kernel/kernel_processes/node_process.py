"""The node child behind the ck-javascript / ck-typescript kernels (see ``node.py``).

``NodeProcess`` starts ``node node_driver.js``, sends it cells over a socketpair and
reads its stdout/stderr. After each cell the driver writes an end marker to both
pipes, through the same streams as the cell's output, before it replies; so once
both markers are read, every byte the cell printed has been forwarded, and text
after a marker belongs to whatever runs next.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import secrets
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from subprocess import DEVNULL
from typing import Any

from context_kernel.lifeline import cell_child_setup

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_driver.js")
FLUSH_DELAY = 0.05  # seconds output may wait to be coalesced with more
FLUSH_SIZE = 32 * 1024  # characters that force an immediate stream message
MARK_WAIT = 2.0  # seconds to wait for a cell's end markers once node has replied
START_TIMEOUT = 30.0
CONTROL_LINE_LIMIT = 16 * 1024 * 1024  # bytes of one reply line (a big last value, a long error)
IDLE_OUTPUT_CAP = 256 * 1024  # characters kept from output printed between cells


def typescript_dir() -> str:
    """Where kernels/install.d/20-javascript.sh puts the npm `typescript` package."""
    return os.path.join(sys.prefix, "share", "context-kernel", "npm", "node_modules", "typescript")


def killpg(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


class Output:
    """Turns node's stdout/stderr text into coalesced iopub stream messages.

    Text a cell printed goes out while the cell runs. Text printed after a cell's end
    marker (timers that fire late) is kept, up to a cap, and sent at the start of the
    next cell: sent at once it would arrive after that cell's `idle`, and the server
    would drop it. `room` returns once sent text may be read on (see lean_iopub).
    """

    def __init__(self, send: Callable[[str, str], None], room: Callable[[], Awaitable[None]]) -> None:
        self._send = send
        self.room = room
        self._live: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._idle: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._live_size = 0
        self._idle_size = 0
        self._dropped = 0
        self._timer: asyncio.TimerHandle | None = None

    def add(self, name: str, text: str, live: bool) -> None:
        if not text:
            return
        if not live:
            if self._idle_size >= IDLE_OUTPUT_CAP:
                self._dropped += len(text)
            else:
                self._idle[name].append(text)
                self._idle_size += len(text)
            return
        self._live[name].append(text)
        self._live_size += len(text)
        if self._live_size >= FLUSH_SIZE:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_DELAY, self.flush)

    def begin_cell(self) -> None:
        """Send what was printed between cells, as the new cell's first output."""
        if self._dropped:
            self._idle["stderr"].append(
                f"[{self._dropped} characters printed between cells dropped]\n"
            )
            self._dropped = 0
        for name, parts in self._idle.items():
            self._live[name][:0] = parts
            self._live_size += sum(map(len, parts))
            parts.clear()
        self._idle_size = 0
        self.flush()

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for name, parts in self._live.items():
            if parts:
                text = "".join(parts)
                parts.clear()
                self._send(name, text)
        self._live_size = 0


class NodeProcess:
    """One node child: its pipes, the control socket and the end-of-cell markers."""

    def __init__(self, output: Output) -> None:
        self._output = output
        self._token = secrets.token_hex(8)
        self._mark = f"\0ck-end:{self._token}\0".encode()
        self._marks = {"stdout": 0, "stderr": 0}
        self._mark_event = asyncio.Event()
        self._cells = 0
        self._pumps: list[asyncio.Task[None]] = []
        self.proc: asyncio.subprocess.Process | None = None
        self.info: dict[str, Any] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop node's pipes belong to; `stop` must run on it."""

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        env = dict(
            os.environ,
            CK_NODE_MARK=self._token,
            CK_NODE_CTL_FD=str(theirs.fileno()),
            CK_NODE_TYPESCRIPT=typescript_dir(),
        )
        try:
            self.proc = await asyncio.create_subprocess_exec(
                "node",
                DRIVER,
                stdin=DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=[theirs.fileno()],
                env=env,
                start_new_session=True,
                preexec_fn=cell_child_setup,
            )
        finally:
            theirs.close()
        self._reader, self._writer = await asyncio.open_unix_connection(
            sock=ours, limit=CONTROL_LINE_LIMIT
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._pumps = [
            asyncio.ensure_future(self._pump("stdout", self.proc.stdout)),
            asyncio.ensure_future(self._pump("stderr", self.proc.stderr)),
        ]
        line = await asyncio.wait_for(self._reader.readline(), START_TIMEOUT)
        if not line:
            raise RuntimeError("node exited while starting: see the kernel's stderr")
        self.info = json.loads(line)

    async def _pump(self, name: str, reader: asyncio.StreamReader) -> None:
        """Forward one pipe, counting end markers; text after a marker belongs to later."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = b""
        while True:
            await self._output.room()  # until it has room, node's writes wait (its stdout blocks)
            if not (chunk := await reader.read(65536)):
                break
            pending += chunk
            while (at := pending.find(self._mark)) >= 0:
                self._output.add(name, decoder.decode(pending[:at]), self._live(name))
                pending = pending[at + len(self._mark) :]
                self._marks[name] += 1
                self._mark_event.set()
            keep = _marker_prefix_len(pending, self._mark)
            self._output.add(name, decoder.decode(pending[: len(pending) - keep]), self._live(name))
            pending = pending[len(pending) - keep :]
        self._output.add(name, decoder.decode(pending, final=True), self._live(name))
        self._marks[name] = sys.maxsize  # EOF: nothing more will come
        self._mark_event.set()

    def _live(self, name: str) -> bool:
        """Text on this stream belongs to the running cell (its end marker is not yet seen)."""
        return self._marks[name] < self._cells

    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one cell; return node's reply once all of the cell's output has been read.

        The reply is {"status": "exited"} when node went away during the cell.
        """
        self._cells += 1
        self._writer.write(json.dumps(request).encode() + b"\n")
        await self._writer.drain()
        line = await self._reader.readline()
        if not line:
            await self._wait_marks(sys.maxsize)
            return {"status": "exited"}
        await self._wait_marks(self._cells)
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def _wait_marks(self, count: int) -> None:
        deadline = time.monotonic() + MARK_WAIT
        while min(self._marks.values()) < count and (left := deadline - time.monotonic()) > 0:
            self._mark_event.clear()
            try:
                await asyncio.wait_for(self._mark_event.wait(), left)
            except TimeoutError:
                break

    def signal(self, signum: int) -> None:
        """Send a signal to node's process group (node and anything the cell started)."""
        if self.proc is not None and self.proc.returncode is None:
            killpg(self.proc.pid, signum)

    async def stop(self, grace: float = 0.0) -> int | None:
        """Kill node and its group (after `grace` seconds to exit by itself); return its status."""
        if self.proc is None:
            return None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), grace)
        killpg(self.proc.pid, signal.SIGKILL)  # the group too: what the cell started dies with it
        status = await asyncio.wait_for(self.proc.wait(), START_TIMEOUT)
        await asyncio.wait(self._pumps, timeout=MARK_WAIT)
        for task in self._pumps:
            task.cancel()
        self._writer.close()
        return status


def _marker_prefix_len(data: bytes, mark: bytes) -> int:
    """Length of the longest tail of data that could be the start of a marker."""
    for size in range(min(len(data), len(mark) - 1), 0, -1):
        if mark.startswith(data[-size:]):
            return size
    return 0
