"""Back-pressure on iopub for our kernels: a flood waits for its reader instead of piling up or being dropped.

ipykernel publishes on an XPUB socket that, once its reader's queue is full, drops messages: a
flood printed faster than the server reads it loses output, and can lose the `status: idle` that
ends the cell, so the server waits out its grace time and restarts the kernel. Between the
kernel's loop and that socket sits the IOPub thread's unbounded queue, and behind a full socket
the output of an interrupted cell could take seconds to drain.

`FlowControlledApp` makes the socket block instead of dropping (XPUB_NODROP) and keeps its queue
short; `StreamWindow` lets only a few stream messages wait for the IOPub thread. A kernel stops
reading its cell's pipes while the window is full, so the cell's writes block: output moves at
the reader's pace, and an interrupt has at most a few messages to wait behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import zmq
from ipykernel.iostream import IOPubThread
from ipykernel.kernelapp import IPKernelApp

SEND_QUEUE_MESSAGES = 8  # iopub messages the socket queues for its reader (zmq's default: 1000)
WINDOW_MESSAGES = 4  # stream messages handed to the IOPub thread and not yet on the socket


class FlowControlledApp(IPKernelApp):
    """IPKernelApp whose iopub socket blocks, with a short queue, when its reader falls behind."""

    def _bind_socket(self, s: zmq.Socket[Any], port: int) -> Any:
        # before the bind: a pipe to a reader takes the options in force when it is made
        if s.socket_type == zmq.XPUB:
            s.setsockopt(zmq.XPUB_NODROP, 1)
            s.setsockopt(zmq.SNDHWM, SEND_QUEUE_MESSAGES)
        return super()._bind_socket(s, port)


class StreamWindow:
    """Counts stream messages on their way to the iopub socket; says when a few more may go.

    Used on the kernel's event loop only: the IOPub thread reports each message it has sent
    back to that loop.
    """

    def __init__(self, iopub_thread: IOPubThread, limit: int = WINDOW_MESSAGES) -> None:
        self._thread = iopub_thread
        self._limit = limit
        self._in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: list[Callable[[], None]] = []

    def queued(self) -> None:
        """Call right after handing a stream message to the IOPub thread."""
        self._loop = self._loop or asyncio.get_running_loop()
        self._in_flight += 1
        loop = self._loop
        # runs on the IOPub thread after the message's send, which blocks while the reader's queue is full
        self._thread.schedule(lambda: loop.call_soon_threadsafe(self._sent))

    def _sent(self) -> None:
        self._in_flight -= 1
        if not self.full:
            waiting, self._waiting = self._waiting, []
            for callback in waiting:
                callback()

    @property
    def full(self) -> bool:
        return self._in_flight >= self._limit

    def when_room(self, callback: Callable[[], None]) -> None:
        """Call callback on the loop once the window has room (at once if it has now)."""
        if self.full:
            self._waiting.append(callback)
        else:
            callback()

    async def room(self) -> None:
        """Return once the window has room."""
        if not self.full:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not done.done():
                done.set_result(None)

        self._waiting.append(wake)
        await done
