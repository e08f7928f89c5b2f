"""A small Jupyter kernel base: the messaging protocol 5.3 over pyzmq on one asyncio loop.

ipykernel's machinery costs a cell 2-4 ms (its shell-channel and iopub threads, traitlets,
Session) and a start ~0.3 s of imports, where a bash cell costs 0.4 ms. This base answers what
context-kernel's clients (jupyter_client, nbclient) send: kernel_info (shell and control),
execute (busy/idle with the request as parent, execute_input, execution_count, silent,
stop_on_error aborting the execute requests queued behind an error), is_complete, complete,
inspect, history, comm_info, shutdown (shell and control), interrupt (control; SIGINT as
well); other types are logged and ignored. Heartbeat is a zmq proxy echo in a daemon thread;
iopub is `lean_iopub.IOPubPublisher`.

A subclass sets the kernel_info class attributes and implements `execute` (and may override
`is_complete`, `interrupt`, `release`, `shutdown`); it publishes with `publish`. `launch(cls)` runs it from
``-f connection_file``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

import zmq
import zmq.asyncio

from context_kernel.kernel_processes.jupyter_wire import PROTOCOL_VERSION, Message, Wire, WireError, now_iso
from context_kernel.kernel_processes.lean_iopub import LINGER_MS, IOPubPublisher, bind_iopub

log = logging.getLogger("context_kernel.lean_kernel")
PARENT_POLL = 1.0  # s between checks that the process that started us is still there (as ipykernel)
DRAIN_TIMEOUT = 2.0  # s a shutdown waits for iopub's reader to take what is queued


@dataclass
class Request:
    """The execute_request being handled, as a subclass's `execute` sees it."""

    message: Message
    code: str
    silent: bool
    store_history: bool

    @property
    def metadata(self) -> dict[str, Any]:
        return self.message.metadata


def _address(info: dict[str, Any], port: str) -> str:
    if info.get("transport", "tcp") == "ipc":
        return f"ipc://{info['ip']}-{info[port]}"
    return f"tcp://{info['ip']}:{info[port]}"


def _heartbeat(socket: zmq.Socket[Any]) -> None:
    """Echo every ping back to its sender until the context is terminated."""
    with contextlib.suppress(zmq.ZMQError):
        zmq.proxy(socket, socket)
    socket.close(linger=0)


class LeanKernel:
    implementation: ClassVar[str] = "lean"
    implementation_version: ClassVar[str] = "0.1.0"
    banner: ClassVar[str] = ""
    language_info: ClassVar[dict[str, Any]] = {}

    def __init__(self, connection: dict[str, Any]) -> None:
        self.wire = Wire(connection.get("key", "").encode(), connection.get("signature_scheme", "hmac-sha256"))
        self.execution_count = 0
        self._context: zmq.asyncio.Context = zmq.asyncio.Context()
        self._connection = connection
        self._shell_socket = self._router("shell_port")
        self._control_socket = self._router("control_port")
        self._stdin_socket = self._router("stdin_port")  # bound for clients that connect it; never read
        # the same context, for the sockets that threads use
        plain: zmq.Context[zmq.Socket[Any]] = zmq.Context.shadow(self._context)
        self._iopub_socket = bind_iopub(plain, _address(connection, "iopub_port"))
        hb = plain.socket(zmq.ROUTER)
        hb.bind(_address(connection, "hb_port"))
        threading.Thread(target=_heartbeat, args=(hb,), name="heartbeat", daemon=True).start()
        self._iopub: IOPubPublisher | None = None
        self._parent: Message | None = None  # of the execute_request running, for `publish`
        self._aborting = False
        self._stop: asyncio.Event | None = None

    def _router(self, port: str) -> zmq.asyncio.Socket:
        socket = self._context.socket(zmq.ROUTER)
        socket.setsockopt(zmq.LINGER, LINGER_MS)
        socket.bind(_address(self._connection, port))
        return socket

    # -- for subclasses ----------------------------------------------------------------

    @property
    def iopub(self) -> IOPubPublisher:
        assert self._iopub is not None, "the kernel is not running"
        return self._iopub

    def kernel_info(self) -> dict[str, Any]:
        return {
            "protocol_version": PROTOCOL_VERSION,
            "implementation": self.implementation,
            "implementation_version": self.implementation_version,
            "language_info": self.language_info,
            "banner": self.banner,
            "help_links": [],
            "supported_features": [],
        }

    def publish(self, msg_type: str, content: dict[str, Any], parent: Message | None = None) -> None:
        """Publish on iopub, by default as output of the request being executed."""
        parent = parent or self._parent
        header = parent.header if parent is not None else {}
        topic = f"kernel.{self.wire.session}.{msg_type}".encode()
        self.iopub.publish(self.wire.serialize(msg_type, content, header, idents=[topic]))

    async def execute(self, request: Request) -> dict[str, Any]:
        """The execute_reply's content (status, and ename/evalue/traceback for an error)."""
        raise NotImplementedError

    def is_complete(self, code: str) -> dict[str, Any]:
        return {"status": "unknown"}

    def interrupt(self) -> None:
        """SIGINT or an interrupt_request arrived while a request was being handled."""

    async def release(self, restart: bool) -> None:
        """A shutdown_request is being answered: release what needs the loop (awaited before the
        reply; `shutdown` follows)."""

    def shutdown(self, restart: bool) -> None:
        """The kernel is about to exit: release what it holds (also at exit, without a loop)."""

    # -- running -----------------------------------------------------------------------

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._iopub = IOPubPublisher(self._iopub_socket, loop, self._welcome)
        self.publish("status", {"execution_state": "starting"})
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # children start without it (see lifeline)
        loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        self._watch_parent(loop)
        tasks = [asyncio.create_task(self._serve(s)) for s in (self._shell_socket, self._control_socket)]
        try:
            await self._stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.iopub.drained(DRAIN_TIMEOUT)
            self.shutdown(False)
            self._close(loop)

    def _close(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.remove_signal_handler(signal.SIGINT)
        self.iopub.close()
        for socket in (self._shell_socket, self._control_socket, self._stdin_socket):
            socket.close(linger=LINGER_MS)
        # what is still queued (the shutdown_reply) is delivered, for at most LINGER_MS
        self._context.term()

    def _welcome(self, topic: bytes) -> list[bytes]:
        frames = self.wire.serialize("iopub_welcome", {"subscription": topic.decode("utf-8", "replace")})
        return [topic, *frames] if topic else frames

    def _watch_parent(self, loop: asyncio.AbstractEventLoop) -> None:
        """Exit when the process that launched us is gone, as ipykernel's parent poller does."""
        parent = int(os.environ.get("JPY_PARENT_PID") or 0)
        if parent <= 1 or os.getppid() != parent:
            return

        def check() -> None:
            if os.getppid() != parent:
                log.warning("the parent process %d is gone: exiting", parent)
                self.shutdown(False)
                os._exit(1)
            loop.call_later(PARENT_POLL, check)

        loop.call_later(PARENT_POLL, check)

    def _on_sigint(self) -> None:
        if self._parent is not None:  # between cells SIGINT is ignored, as by ipykernel
            self.interrupt()

    async def _serve(self, socket: zmq.asyncio.Socket) -> None:
        while True:
            raw = await socket.recv_multipart()
            queued = await self._handle(socket, raw)
            if not queued:
                continue
            # stop_on_error: the execute requests that were queued when the cell failed are aborted
            # (as ipykernel aborts those it has received when the error is sent)
            self._aborting = True
            try:
                for raw in queued:
                    await self._handle(socket, raw)
            finally:
                self._aborting = False

    async def _handle(self, socket: zmq.asyncio.Socket, raw: list[bytes]) -> list[list[bytes]]:
        """Handle one message; for a cell that failed and stops what follows it, what was queued."""
        try:
            msg = self.wire.parse(raw)
        except WireError as exc:
            log.error("ignoring a message: %s", exc)
            return []
        self.publish("status", {"execution_state": "busy"}, msg)
        try:
            return await self._dispatch(socket, msg)
        except Exception:  # one bad request must not end the kernel
            log.exception("handling %s failed", msg.msg_type)
            return []
        finally:
            self.publish("status", {"execution_state": "idle"}, msg)

    def _reply(self, socket: zmq.asyncio.Socket, msg: Message, content: dict[str, Any],
               metadata: dict[str, Any] | None = None) -> None:
        reply_type = msg.msg_type.rsplit("_", 1)[0] + "_reply"
        frames = self.wire.serialize(reply_type, content, msg.header, metadata, idents=msg.idents)
        # a ROUTER send never waits: it is queued or, for a vanished peer, dropped
        socket.send_multipart(frames, zmq.DONTWAIT)

    async def _dispatch(self, socket: zmq.asyncio.Socket, msg: Message) -> list[list[bytes]]:
        kind, content = msg.msg_type, msg.content
        if kind == "execute_request":
            return await self._execute(socket, msg)
        if kind == "kernel_info_request":
            self._reply(socket, msg, {"status": "ok", **self.kernel_info()})
        elif kind == "is_complete_request":
            self._reply(socket, msg, self.is_complete(str(content.get("code", ""))))
        elif kind == "complete_request":
            pos = content.get("cursor_pos", 0)
            self._reply(socket, msg, {"status": "ok", "matches": [], "cursor_start": pos, "cursor_end": pos,
                                      "metadata": {}})
        elif kind == "inspect_request":
            self._reply(socket, msg, {"status": "ok", "found": False, "data": {}, "metadata": {}})
        elif kind == "history_request":
            self._reply(socket, msg, {"status": "ok", "history": []})
        elif kind == "comm_info_request":
            self._reply(socket, msg, {"status": "ok", "comms": {}})
        elif kind == "interrupt_request":
            self._reply(socket, msg, self._signal_group())
        elif kind == "shutdown_request":
            restart = bool(content.get("restart", False))
            await self.release(restart)
            self.shutdown(restart)
            self._reply(socket, msg, {"status": "ok", "restart": restart})
            self.publish("shutdown_reply", {"status": "ok", "restart": restart}, msg)
            assert self._stop is not None
            self._stop.set()
        else:
            log.warning("ignoring a %r message: this kernel does not handle it", kind)
        return []

    def _signal_group(self) -> dict[str, Any]:
        """SIGINT to our process group, as ipykernel answers interrupt_request and jupyter_client signals."""
        try:
            pid = os.getpid()
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGINT)
            else:
                os.kill(pid, signal.SIGINT)
        except OSError as exc:
            return {"status": "error", "ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
        return {"status": "ok"}

    async def _execute(self, socket: zmq.asyncio.Socket, msg: Message) -> list[list[bytes]]:
        """Run one cell; if it failed and asked to stop_on_error, the requests queued behind it."""
        if self._aborting:
            log.info("aborting %s: an earlier cell failed", msg.header.get("msg_id"))
            self._reply(socket, msg, {"status": "aborted"}, {"status": "aborted"})
            return []
        content = msg.content
        silent = bool(content.get("silent", False))
        request = Request(msg, str(content.get("code", "")), silent,
                          bool(content.get("store_history", not silent)))
        started = now_iso()
        if not silent:
            self.execution_count += 1
            self.publish("execute_input", {"code": request.code, "execution_count": self.execution_count}, msg)
        self._parent = msg
        try:
            reply = await self.execute(request)
        finally:
            self._parent = None
        failed = reply.get("status") == "error" and not silent and bool(content.get("stop_on_error", True))
        # taken before the reply and the idle go out: a client that sends its next cell once it
        # has them must not find that cell aborted
        queued = await _take_queued(socket) if failed else []
        self._reply(socket, msg, reply, {"started": started})
        return queued


async def _take_queued(socket: zmq.asyncio.Socket) -> list[list[bytes]]:
    """The messages waiting on socket now (a DONTWAIT receive completes without yielding)."""
    queued = []
    while True:
        try:
            queued.append(await socket.recv_multipart(zmq.DONTWAIT))
        except zmq.Again:
            return queued


def launch(kernel_class: type[LeanKernel], argv: list[str] | None = None) -> None:
    """Run kernel_class on the connection file given with -f, until a shutdown_request."""
    parser = argparse.ArgumentParser(description=kernel_class.banner)
    parser.add_argument("-f", dest="connection_file", required=True)
    args, _unknown = parser.parse_known_args(argv)  # ipykernel's options, e.g. --debug, are not ours
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[%(name)s] %(message)s")
    with open(args.connection_file, encoding="utf-8") as f:
        connection = json.load(f)
    kernel = kernel_class(connection)
    asyncio.run(kernel.run())
