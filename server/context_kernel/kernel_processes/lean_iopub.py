"""The iopub socket of a lean kernel: published in order, never dropped, waiting for a slow reader.

The socket is an XPUB with XPUB_NODROP and a short send queue (SNDHWM; ipykernel's own XPUB drops
what its reader cannot take): once the reader's queue is full a send fails instead of discarding
the message, so a flood cannot lose the `status: idle` that ends a cell. An XPUB always reports
POLLOUT, so the event loop cannot wait for room on it; instead a message is sent from the loop at
once when the socket takes it (the usual case: no thread handoff), and otherwise joins a backlog
that a thread sends with blocking sends. While the backlog is not empty the thread owns the
socket and every new message joins the backlog behind it, which keeps the order.

`full` and `when_room` make the backlog an `OutputGate` (bash_shell.py): a kernel stops reading
its cell's pipes while a few messages wait, so the cell's writes block and output moves at the
reader's pace. Subscriptions are answered with an `iopub_welcome` message, as ipykernel 7 does.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, cast

import zmq

SEND_QUEUE_MESSAGES = 8  # messages the socket queues for its reader (zmq's default: 1000)
BACKLOG_MESSAGES = 4  # messages waiting for the socket before the gate reports full
LINGER_MS = 1000  # how long a closed socket may still deliver what it queued

Welcome = Callable[[bytes], list[bytes]]  # subscription topic -> the frames that answer it


def bind_iopub(context: zmq.Context[Any], address: str) -> zmq.Socket[Any]:
    """An XPUB socket bound at address, with the options set before the bind (a reader's pipe
    takes the options in force when it is made)."""
    socket: zmq.Socket[Any] = context.socket(zmq.XPUB)
    socket.setsockopt(zmq.XPUB_NODROP, 1)
    socket.setsockopt(zmq.SNDHWM, SEND_QUEUE_MESSAGES)
    socket.setsockopt(zmq.LINGER, LINGER_MS)
    socket.bind(address)
    return socket


class IOPubPublisher:
    """Sends on one XPUB socket from the loop, or from its thread when the reader is behind."""

    def __init__(self, socket: zmq.Socket[Any], loop: asyncio.AbstractEventLoop, welcome: Welcome,
                 limit: int = BACKLOG_MESSAGES) -> None:
        self._socket = socket
        self._loop = loop
        self._welcome = welcome
        self._limit = limit
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._backlog: deque[list[bytes]] = deque()  # the head is being sent by the thread
        self._waiting: list[Callable[[], None]] = []
        self._drained: list[asyncio.Future[None]] = []
        self._stopped = False
        self._thread = threading.Thread(target=self._send_backlog, name="iopub", daemon=True)
        self._thread.start()
        self._fd = cast(int, socket.getsockopt(zmq.FD))
        loop.add_reader(self._fd, self._read_subscriptions)
        self._read_subscriptions()  # a reader may have subscribed before the loop watched the fd

    # -- the loop's side ---------------------------------------------------------------

    def publish(self, frames: list[bytes]) -> None:
        """Send frames now if the socket takes them, else queue them behind the backlog."""
        with self._lock:
            if self._stopped:
                return
            if not self._backlog:
                try:
                    self._socket.send_multipart(frames, zmq.DONTWAIT)
                except zmq.Again:
                    pass
                else:
                    # zmq's fd is edge-triggered: a send can swallow the edge of a subscription
                    if self._readable:
                        self._loop.call_soon(self._read_subscriptions)
                    return
            self._backlog.append(frames)
            self._work.notify()

    @property
    def _readable(self) -> bool:
        return bool(cast(int, self._socket.getsockopt(zmq.EVENTS)) & zmq.POLLIN)

    @property
    def full(self) -> bool:
        return len(self._backlog) >= self._limit

    def when_room(self, callback: Callable[[], None]) -> None:
        """Call callback on the loop once the backlog has room (at once if it has now)."""
        with self._lock:
            if len(self._backlog) >= self._limit:
                self._waiting.append(callback)
                return
        callback()

    async def drained(self, timeout: float) -> bool:
        """Wait (at most timeout s) until everything published was handed to the socket."""
        with self._lock:
            if not self._backlog:
                return True
            done: asyncio.Future[None] = self._loop.create_future()
            self._drained.append(done)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done, timeout)
        return not self._backlog

    def close(self) -> None:
        """Stop publishing; the socket is closed by whoever owns it (the thread, if it is sending)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._loop.remove_reader(self._fd)
            self._work.notify()
            if not self._backlog:
                self._socket.close(linger=LINGER_MS)

    def _read_subscriptions(self) -> None:
        topics = []
        with self._lock:
            if self._backlog or self._stopped:
                return  # the thread owns the socket; it calls this again when it is done
            while self._readable:
                event: bytes = self._socket.recv(zmq.DONTWAIT)
                if event[:1] == b"\x01":  # b"\x00" + topic is an unsubscription
                    topics.append(event[1:])
        for topic in topics:
            self.publish(self._welcome(topic))

    def _room(self) -> None:
        with self._lock:
            if len(self._backlog) >= self._limit:
                return
            waiting, self._waiting = self._waiting, []
            drained, self._drained = (self._drained, []) if not self._backlog else ([], self._drained)
        for callback in waiting:
            callback()
        for done in drained:
            if not done.done():
                done.set_result(None)
        if drained:
            self._read_subscriptions()

    # -- the thread's side -------------------------------------------------------------

    def _send_backlog(self) -> None:
        while True:
            with self._lock:
                while not self._backlog and not self._stopped:
                    self._work.wait()
                if not self._backlog:
                    return  # stopped, and the loop closed the socket
                frames = self._backlog[0]
            try:
                self._socket.send_multipart(frames)  # blocks while the reader's queue is full
            except zmq.ZMQError:  # the context is being terminated at exit
                with self._lock:
                    self._backlog.clear()
                    self._socket.close(linger=0)
                return
            with self._lock:
                self._backlog.popleft()
                # wake the loop for a waiter, or to read subscriptions again once the socket is its own
                wake = not self._backlog or (len(self._backlog) < self._limit and bool(self._waiting))
                if self._stopped and not self._backlog:
                    self._socket.close(linger=LINGER_MS)
                    return
            if wake:
                with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                    self._loop.call_soon_threadsafe(self._room)
