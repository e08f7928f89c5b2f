"""The hot path of a cell's messages: execute_request out, iopub and the reply in, without Session.

jupyter_client's channel `get_msg` costs ~0.18 ms a message even when it is already queued (a poll
future, then Session.deserialize with its date parsing and protocol adapter), and a trivial cell
brings five: about 1 ms of every warm call. Here a queued message is read straight from the socket
(non-blocking, through a synchronous shadow of the same zmq socket) and parsed by jupyter_wire,
which checks the HMAC signature and refuses replays as Session does. Only when nothing is queued
does it wait, on the asyncio socket's poll. Other messages (kernel_info, interrupts, input replies)
stay with jupyter_client's channels, which share these sockets.
"""

from __future__ import annotations

from typing import Any

import zmq

from ..kernel_processes.jupyter_wire import Wire


class WireChannels:
    """Sends execute requests on a started client's shell channel; reads its shell and iopub sockets."""

    def __init__(self, client: Any) -> None:
        session = client.session
        self._wire = Wire(session.key, session.signature_scheme, username=session.username)
        self._shell_async = client.shell_channel.socket
        self._iopub_async = client.iopub_channel.socket
        # the same zmq sockets, driven synchronously: a queued message costs one C call to read
        self._shell: zmq.Socket[bytes] = zmq.Socket.shadow(self._shell_async.underlying)
        self._iopub: zmq.Socket[bytes] = zmq.Socket.shadow(self._iopub_async.underlying)

    def execute(self, content: dict[str, Any], metadata: dict[str, Any] | None) -> str:
        frames = self._wire.serialize("execute_request", content, metadata=metadata)
        self._shell.send_multipart(frames, copy=True)
        return str(self._wire.last_msg_id)

    async def next_iopub(self, timeout: float) -> dict[str, Any] | None:
        return await self._next(self._iopub, self._iopub_async, timeout)

    async def next_shell(self, timeout: float) -> dict[str, Any] | None:
        return await self._next(self._shell, self._shell_async, timeout)

    async def _next(self, sync: zmq.Socket[bytes], poller: Any, timeout: float) -> dict[str, Any] | None:
        raw = _recv_now(sync)
        if raw is None:
            if not await poller.poll(max(0, int(timeout * 1000))):
                return None
            raw = _recv_now(sync)
            if raw is None:
                return None  # woken, but another reader (a jupyter_client channel) took it
        msg = self._wire.parse(raw)
        header = msg.header
        return {"header": header, "msg_id": header.get("msg_id"), "msg_type": header.get("msg_type"),
                "parent_header": msg.parent_header, "metadata": msg.metadata, "content": msg.content,
                "buffers": msg.buffers}


def _recv_now(sock: zmq.Socket[bytes]) -> list[bytes] | None:
    try:
        return sock.recv_multipart(zmq.NOBLOCK)
    except zmq.Again:
        return None
