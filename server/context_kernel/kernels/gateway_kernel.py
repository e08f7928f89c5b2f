"""A kernel that runs on a kernel gateway: REST for its life cycle, one WebSocket for its messages.

The same surface as kernels/backend.py's JupyterKernel, so the pool and the runner do not know
where a kernel runs. The WebSocket carries every channel (the Jupyter Server `channels` protocol:
a JSON message with a `channel` field); it is read only when the runner asks for a message, so a
print flood waits in the socket and on the gateway, not in our memory (`max_queue` frames of at
most `max_size` bytes each is all we hold).

A remote kernel's death shows as `status: restarting` or `dead` on IOPub (the gateway's restarter
saw the process go), a closed socket, or the gateway not knowing the kernel any more.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import time
import uuid
from collections import deque
from datetime import UTC, datetime
from typing import Any

import anyio
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from ..errors import KernelRestartFailed, KernelStartFailed
from .gateway_client import Gateway, GatewayError
from .languages import language_for_kernel
from .quirks import setup_code

# What waits in our memory at most: frames the socket has read ahead, each at most MAX_FRAME bytes.
# ipykernel's stream messages are capped at ~64 KB (kernels/quirks.py); a frame is bigger only for a
# large image or table.
MAX_QUEUED_FRAMES = 16
MAX_FRAME = 64 * 1024 * 1024
# Messages of another channel read while waiting for one channel (e.g. IOPub while waiting for the
# execute_reply after `idle`): few in practice; bounded so a confused kernel cannot fill memory.
MAX_STASHED = 128
# How long a DELETE may take before we give up on the kernel (the gateway kills it on its side).
SHUTDOWN_WAIT_S = 10.0
# A cell interrupted after this much output (the cap, or a timeout during a flood) has more of it
# queued on the gateway than we want to read: Jupyter Server queues a kernel's IOPub for a slow
# WebSocket without bound (measured: ~110 MB behind a 24 MB cap, 10 s to read). Past this, the
# interrupt reconnects under a new session id, which makes the gateway drop that queue.
SKIP_BACKLOG_BYTES = 4 * 1024 * 1024
# Bytes read are a poor measure of the queue on a busy machine, where the server reads slowly while the
# kernel keeps printing: output of the interrupted cell still arriving this long after the interrupt is
# a backlog, which is skipped then too. (Longer than an interrupted cell's own last words take.)
BACKLOG_AFTER_INTERRUPT_S = 1.0
PROTOCOL_VERSION = "5.3"
QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only


class GatewayKernel:
    """One kernel on a gateway. Not safe for concurrent executes: the pool serialises them."""

    def __init__(self, kernel_name: str, gateway: Gateway, *, env: dict[str, str] | None = None) -> None:
        self.kernel_name = kernel_name
        self.language_name = kernel_name
        self.sees_server_files = False
        self.language_info: dict[str, Any] = {}
        self.gateway = gateway
        self.kernel_id: str | None = None
        self._local_id = uuid.uuid4().hex[:12]
        self._env = env or {}
        self._session = uuid.uuid4().hex
        self._ws: ClientConnection | None = None
        self._outbox: list[dict[str, Any]] = []
        self._iopub: deque[dict[str, Any]] = deque(maxlen=MAX_STASHED)
        self._shell: deque[dict[str, Any]] = deque(maxlen=MAX_STASHED)
        self._stdin: deque[dict[str, Any]] = deque(maxlen=MAX_STASHED)
        self._lost: str | None = None  # why we believe the kernel is gone
        self._cell: str | None = None  # msg_id of the last execute_request, and bytes read for it
        self._cell_bytes = 0
        self._probe: str | None = None  # kernel_info asked after skipping a backlog: its reply ends the cell
        self._interrupted_at: float | None = None  # while the interrupted cell's backlog may still be skipped

    @property
    def instance_id(self) -> str:
        """What the record keeps as the kernel instance: the remote kernel's id and the gateway that ran it."""
        if self.kernel_id is None:
            return self._local_id
        return f"{self.kernel_id}@{self.gateway.url}"

    @property
    def pid(self) -> int | None:
        return None  # not a process of this machine

    def cwd_replaced(self) -> bool:
        return False  # the working directory is the gateway's

    async def start(self, timeout: float) -> None:
        lang = language_for_kernel(self.kernel_name)
        spec = await self.gateway.spec(self.kernel_name, lang.name if lang else self.kernel_name)
        self.language_name = str(spec.get("language") or self.kernel_name)
        try:
            with anyio.fail_after(timeout):
                self.kernel_id = await self.gateway.start_kernel(self.kernel_name, self._env, timeout)
                # Tracked at once: a start cancelled from here on leaves the id with the reaper, which
                # ends it when the server exits.
                self.gateway.reaper.track(self.kernel_id)
                await self._connect()
                await self._wait_ready(timeout)
            setup = setup_code([str(a) for a in spec.get("argv", [])])
            if setup:
                reply = await self.run_silent(setup, timeout)
                if reply is None:
                    raise TimeoutError("the kernel did not answer its setup cell")
        except (TimeoutError, OSError, GatewayError, ConnectionClosed, InvalidHandshake) as exc:
            await self.shutdown(now=True)
            detail = exc.message if isinstance(exc, GatewayError) else (str(exc) or type(exc).__name__)
            raise KernelStartFailed(
                f"kernel {self.kernel_name!r} did not start on the kernel gateway at {self.gateway.url}: {detail}",
                kernel_name=self.kernel_name,
            ) from exc

    async def _connect(self) -> None:
        assert self.kernel_id is not None
        try:
            self._ws = await connect(
                self.gateway.channels_url(self.kernel_id, self._session), additional_headers=self.gateway.headers,
                max_size=MAX_FRAME, max_queue=MAX_QUEUED_FRAMES, open_timeout=self.gateway.config.connect_timeout_s,
                # Kernel messages are JSON: compression costs CPU on both sides for little.
                compression=None, ping_interval=20, ping_timeout=None,
            )
        except InvalidURI as exc:
            raise GatewayError(f"bad gateway URL {self.gateway.url}: {exc}") from exc

    def _quick_ack(self) -> None:
        """Acknowledge the gateway's segments at once. Jupyter Server leaves Nagle on for its WebSockets
        (tornado's default), so each small message after the first waits for our ACK, which Linux
        delays up to 40 ms: a warm round trip took 52 ms, 18.5 ms with this. Linux clears the flag
        by itself now and then, hence before every read."""
        sock = self._ws.transport.get_extra_info("socket") if self._ws is not None else None
        if sock is not None and QUICKACK is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, QUICKACK, 1)

    async def _wait_ready(self, timeout: float) -> None:
        """Ask kernel_info until it answers (a fresh kernel may drop the first request)."""
        with anyio.fail_after(timeout):
            while True:
                msg_id = self._queue("kernel_info_request", {}, "shell")
                if await self.shell_reply(msg_id, 1.0) is not None:
                    break
        self._iopub.clear()  # the busy/idle of kernel_info

    def _queue(self, msg_type: str, content: dict[str, Any], channel: str,
               metadata: dict[str, Any] | None = None) -> str:
        msg_id = uuid.uuid4().hex
        self._outbox.append({
            "header": {"msg_id": msg_id, "msg_type": msg_type, "username": "context-kernel",
                       "session": self._session, "date": datetime.now(UTC).isoformat(),
                       "version": PROTOCOL_VERSION},
            "parent_header": {}, "metadata": metadata or {}, "content": content, "channel": channel, "buffers": [],
        })
        return msg_id

    async def _send_pending(self) -> None:
        """`execute` and `input` are synchronous (the runner's contract): their messages go at the next await."""
        while self._outbox and self._ws is not None:
            msg = self._outbox.pop(0)
            try:
                await self._ws.send(json.dumps(msg))
            except ConnectionClosed:
                self._lost = self._lost or "the gateway closed the kernel's connection"
                self._outbox.clear()

    async def _receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message of any channel, None after `timeout`; statuses of death are noted here."""
        await self._send_pending()
        if self._ws is None:
            return None
        frame: str | bytes | None = None
        self._quick_ack()
        with anyio.move_on_after(timeout):  # cancelling recv() loses no data (websockets' promise)
            try:
                frame = await self._ws.recv()
            except ConnectionClosed:
                self._lost = self._lost or "the gateway closed the kernel's connection"
                return None
        if frame is None:
            return None
        self._cell_bytes += len(frame)
        msg = _decode(frame)
        if self._backlog_behind(msg):
            await self._skip_backlog()
            return await self._receive(timeout)
        if self._probe is not None and msg.get("parent_header", {}).get("msg_id") == self._probe:
            # Shell requests run in order: the interrupted cell is over. Its `idle` and execute_reply
            # went out on the connection we dropped, so the runner gets stand-ins: an interrupted cell.
            self._probe = None
            self._shell.append(_interrupted_reply_of(self._cell or ""))
            return _idle_of(self._cell or "")
        if msg.get("channel") == "iopub" and msg.get("header", {}).get("msg_type") == "status":
            state = msg.get("content", {}).get("execution_state")
            if state in ("restarting", "dead"):
                # The gateway saw the process exit: whatever restarted in its place has none of the state.
                self._lost = f"the gateway reported the kernel {state}"
        return msg

    async def _receive_until(self, channel: str, timeout: float, match: str | None = None) -> dict[str, Any] | None:
        """Read until a message of `channel` (answering `match`, when given); others are stashed."""
        stash = {"iopub": self._iopub, "shell": self._shell, "stdin": self._stdin}
        mine = stash[channel]

        def stashed() -> dict[str, Any] | None:
            for queued in list(mine):
                if match is None or queued.get("parent_header", {}).get("msg_id") == match:
                    mine.remove(queued)
                    return queued
            return None

        found = stashed()
        if found is not None:
            return found
        with anyio.move_on_after(timeout):
            while True:
                msg = await self._receive(timeout)
                if msg is None:
                    if self._ws is None or self._ws.close_code is not None:
                        return None  # nothing more will come
                    continue
                got = msg.get("channel")
                if got == channel and (match is None or msg.get("parent_header", {}).get("msg_id") == match):
                    return msg
                if got in stash:
                    stash[got].append(msg)
                found = stashed()  # a stand-in reply may have been stashed while reading (_skip_backlog)
                if found is not None:
                    return found
        return None

    async def run_silent(self, code: str, timeout: float) -> dict[str, Any] | None:
        msg_id = self._queue("execute_request", {
            "code": code, "silent": True, "store_history": False, "user_expressions": {}, "allow_stdin": False,
            "stop_on_error": False,
        }, "shell")
        return await self.shell_reply(msg_id, timeout)

    def log_tail(self, limit: int = 2000) -> str:
        return ""  # the kernel's own log is on the gateway's side; start errors carry its message

    async def files_touched(self, reply_content: dict[str, Any]) -> dict[str, str]:
        return {}  # files on the gateway's machine are not the reviewer's: not tracked there

    def execute(self, code: str, metadata: dict[str, Any] | None = None) -> str:
        self._cell_bytes, self._probe, self._interrupted_at = 0, None, None
        self._cell = self._queue("execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": True,
            "stop_on_error": False,
        }, "shell", metadata)
        return self._cell

    async def next_iopub(self, timeout: float) -> dict[str, Any] | None:
        return await self._receive_until("iopub", timeout)

    async def shell_reply(self, msg_id: str, timeout: float) -> dict[str, Any] | None:
        return await self._receive_until("shell", timeout, match=msg_id)

    async def answer_input_requests(self) -> int:
        answered = 0
        while self._stdin:
            msg = self._stdin.popleft()
            if msg.get("header", {}).get("msg_type") == "input_request":
                self._queue("input_reply", {"value": ""}, "stdin")
                answered += 1
        await self._send_pending()
        return answered

    async def is_alive(self) -> bool:
        if self.kernel_id is None:
            return False
        if self._lost is None and self._ws is not None and self._ws.close_code is None:
            return True
        # The socket went or the gateway said restarting/dead: ask the gateway what it knows.
        with contextlib.suppress(GatewayError):
            model = await self.gateway.kernel(self.kernel_id)
            if model is None or model.get("execution_state") == "dead":
                return False
        return self._lost is None

    async def exit_code(self) -> int | None:
        return None  # the gateway does not say

    async def interrupt(self) -> None:
        if self.kernel_id is not None:
            with contextlib.suppress(GatewayError):  # an interrupt that fails leads to a restart
                await self.gateway.interrupt(self.kernel_id)
            if self._cell_bytes > SKIP_BACKLOG_BYTES and self._lost is None:
                await self._skip_backlog()
            else:
                self._interrupted_at = time.monotonic()

    def _backlog_behind(self, msg: dict[str, Any]) -> bool:
        """True for the interrupted cell's output arriving BACKLOG_AFTER_INTERRUPT_S after the interrupt."""
        if self._interrupted_at is None or self._lost is not None:
            return False
        if msg.get("parent_header", {}).get("msg_id") != self._cell or msg.get("channel") != "iopub":
            return False
        if msg.get("header", {}).get("msg_type") != "stream":
            return False
        return time.monotonic() - self._interrupted_at > BACKLOG_AFTER_INTERRUPT_S

    async def _skip_backlog(self) -> None:
        """Reconnect under a new session (the gateway drops what it queued for the old one) and ask
        kernel_info: it is answered once the interrupted cell has ended."""
        self._interrupted_at = None
        await self._close_socket(abort=True)
        self._session = uuid.uuid4().hex
        self._iopub.clear()
        self._shell.clear()
        try:
            await self._connect()
        except (OSError, GatewayError, InvalidHandshake) as exc:
            self._lost = f"could not reconnect to the kernel: {exc}"
            return
        self._cell_bytes = 0
        self._probe = self._queue("kernel_info_request", {}, "shell")
        await self._send_pending()

    async def restart(self, timeout: float) -> None:
        assert self.kernel_id is not None
        try:
            with anyio.fail_after(timeout):
                await self.gateway.restart(self.kernel_id, timeout)
                await self._close_socket()
                self._lost = None
                self._iopub.clear()
                self._shell.clear()
                await self._connect()
                await self._wait_ready(timeout)
        except (TimeoutError, OSError, GatewayError, ConnectionClosed, InvalidHandshake) as exc:
            detail = exc.message if isinstance(exc, GatewayError) else (str(exc) or type(exc).__name__)
            raise KernelRestartFailed(
                f"kernel {self.kernel_name!r} on the gateway at {self.gateway.url} could not be restarted after an "
                f"interrupt: {detail}", kernel_name=self.kernel_name,
            ) from exc

    async def drain(self) -> None:
        self._iopub.clear()
        self._shell.clear()
        while await self._receive(0.05) is not None:
            pass
        self._iopub.clear()
        self._shell.clear()

    async def _close_socket(self, abort: bool = False) -> None:
        ws, self._ws = self._ws, None
        if ws is None:
            return
        if abort:  # a closing handshake would wait behind the very backlog we are leaving
            ws.transport.abort()
            return
        with contextlib.suppress(Exception), anyio.move_on_after(2):  # closing must always finish
            await ws.close()
        # A closing handshake cut short by that bound left the socket open (websockets aborts the transport
        # only when its own close_timeout expires), to be closed by the garbage collector with a
        # ResourceWarning; aborting a transport that closed is a no-op.
        ws.transport.abort()

    async def shutdown(self, now: bool = False) -> None:
        """Pool calls this on cull, discard and server exit. Never raises: the reaper has the id if this fails."""
        with anyio.CancelScope(shield=True):
            await self._close_socket()
            kernel_id, self.kernel_id = self.kernel_id, None
            if kernel_id is None:
                return
            gone = False
            with contextlib.suppress(GatewayError), anyio.move_on_after(SHUTDOWN_WAIT_S):
                gone = await self.gateway.delete(kernel_id, SHUTDOWN_WAIT_S)
            if gone:
                self.gateway.reaper.forget(kernel_id)


def _idle_of(parent: str) -> dict[str, Any]:
    return {"channel": "iopub", "header": {"msg_type": "status", "msg_id": uuid.uuid4().hex},
            "parent_header": {"msg_id": parent}, "metadata": {}, "content": {"execution_state": "idle"}}


def _interrupted_reply_of(parent: str) -> dict[str, Any]:
    return {"channel": "shell", "header": {"msg_type": "execute_reply", "msg_id": uuid.uuid4().hex},
            "parent_header": {"msg_id": parent}, "metadata": {},
            "content": {"status": "error", "ename": "KeyboardInterrupt", "evalue": "", "execution_count": None}}


def _decode(frame: str | bytes) -> dict[str, Any]:
    """A channels frame: JSON text, or Jupyter Server's binary form (offsets, JSON, buffers) when it has buffers."""
    if isinstance(frame, str):
        data: dict[str, Any] = json.loads(frame)
        return data
    (count,) = struct.unpack("!I", frame[:4])
    offsets = list(struct.unpack(f"!{count}I", frame[4:4 + 4 * count]))
    end = offsets[1] if count > 1 else len(frame)
    message: dict[str, Any] = json.loads(frame[offsets[0]:end])
    message["buffers"] = []  # binary buffers (widgets) are not recorded
    return message
