"""A program a kernel runs for one cell: spawned, streamed, reaped, never outliving the cell.

The program gets its own session (process group) so the kernel's SIGINT never reaches it
and the whole group can be killed at once, and PR_SET_PDEATHSIG so it dies with the kernel.
Output is read on the event loop with add_reader and handed on in coalesced chunks.
Exit is watched with a pidfd, not pipe EOF: a background grandchild holding the pipes
must not keep the cell running.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable

from context_kernel.lifeline import die_with_parent

FLUSH_DELAY = 0.05  # seconds output may wait to be coalesced with more
FLUSH_SIZE = 32 * 1024  # characters that force an immediate message
DRAIN_GRACE = 0.5  # seconds to keep reading after the program exited
POLL_INTERVAL = 0.05  # exit polling where pidfd_open is unavailable

Sink = Callable[[str], None]


class _Pipe:
    """Reads one pipe on the event loop, forwarding decoded text in coalesced chunks."""

    def __init__(self, fd: int, sink: Sink, loop: asyncio.AbstractEventLoop) -> None:
        self._fd, self._sink, self._loop = fd, sink, loop
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer: list[str] = []
        self._size = 0
        self._timer: asyncio.TimerHandle | None = None
        self.closed = loop.create_future()
        os.set_blocking(fd, False)
        loop.add_reader(fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.close()
            return
        self._add(self._decoder.decode(data))
        if self._size >= FLUSH_SIZE:
            self.flush()
        elif self._timer is None and self._size:
            self._timer = self._loop.call_later(FLUSH_DELAY, self.flush)

    def _add(self, text: str) -> None:
        if text:
            self._buffer.append(text)
            self._size += len(text)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._buffer:
            text = "".join(self._buffer)
            self._buffer.clear()
            self._size = 0
            self._sink(text)

    def close(self) -> None:
        """Stop reading (EOF, or giving up on a pipe a stray process holds) and flush."""
        if self.closed.done():
            return
        self._loop.remove_reader(self._fd)
        os.close(self._fd)
        self._add(self._decoder.decode(b"", final=True))
        self.flush()
        self.closed.set_result(None)


class Child:
    """One running program; ``finish()`` streams it to the end and returns its exit status."""

    def __init__(
        self, argv: list[str], cwd: str, env: dict[str, str], out: Sink, err: Sink
    ) -> None:
        self._loop = asyncio.get_running_loop()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                cwd=cwd,
                env=env,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        except BaseException:
            os.close(out_r)
            os.close(err_r)
            raise
        finally:  # the child has its copies; ours would hide EOF
            os.close(out_w)
            os.close(err_w)
        self._pipes = [_Pipe(out_r, out, self._loop), _Pipe(err_r, err, self._loop)]
        self._reaped = False

    def kill(self) -> None:
        """SIGKILL the program's whole process group; safe to call from a signal handler.

        Until reaped the program is at least a zombie, so its pid (= the group id)
        cannot have been reused by an unrelated process.
        """
        if self._reaped:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)

    async def finish(self) -> int:
        try:
            await self._exited()
            # stragglers in the group may hold the pipes: a short drain, then end the group
            # (cells are stateless: nothing started by a cell outlives it)
            closed = [pipe.closed for pipe in self._pipes]
            await asyncio.wait(closed, timeout=DRAIN_GRACE)
            self.kill()
            await asyncio.wait(closed, timeout=DRAIN_GRACE)  # escaped setsid(): give up on them
        finally:
            self.kill()
            for pipe in self._pipes:
                pipe.close()
            self._reaped = True
        return self._proc.wait()

    async def _exited(self) -> None:
        try:
            pidfd = os.pidfd_open(self._proc.pid)
        except (AttributeError, OSError):  # old kernel or Python: poll instead
            while self._proc.poll() is None:  # noqa: ASYNC110 - a process exit offers no event to wait on
                await asyncio.sleep(POLL_INTERVAL)
            return
        exited = self._loop.create_future()
        def on_exit() -> None:
            if not exited.done():
                exited.set_result(None)

        self._loop.add_reader(pidfd, on_exit)
        try:
            await exited
        finally:
            self._loop.remove_reader(pidfd)
            os.close(pidfd)
