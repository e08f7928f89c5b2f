"""The stdio transport on the event loop itself: stdin read and stdout written by the loop's own
pipe transports, not by worker threads.

The SDK's `stdio_server` reads each line and writes each reply through `anyio.wrap_file`, which is a
worker-thread hop per line read and two per reply (write, flush): on two busy cores each hop is a
wake-up of another thread, ~0.1–0.3 ms of every call (docs/benchmarks.md, "stdio transport").
Here the same `stdio_server` runs on streams the loop serves, and its contract is kept: while
serving, fd 0 reads the null device and fd 1 writes to stderr, so a kernel or a child that inherits
them can neither eat a request nor tear a frame; both are restored on exit.

Only pipes and sockets are served this way (what a client spawning a server gives it). A terminal
or a file (a person trying the server by hand, a redirect) goes to the SDK's own transport:
making a terminal non-blocking would change it for the shell too, and the loop cannot poll files.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

READ_CHUNK = 1 << 16
# How long the requests in flight when stdin ends may take to be answered (a cell's own timeout ends most).
DRAIN_S = 600.0


class _Lines:
    """stdin as the text lines `stdio_server` iterates over; a line may be any length."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._pending = bytearray()
        self._lines: list[bytes] = []

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            chunk = await self._reader.read(READ_CHUNK)
            if not chunk:
                if not self._pending:
                    raise StopAsyncIteration
                # A last line without its newline is still a message, as for a file's iterator.
                self._lines.append(bytes(self._pending))
                self._pending.clear()
                break
            self._pending += chunk
            if b"\n" in chunk:
                *whole, rest = bytes(self._pending).split(b"\n")
                self._lines = [line + b"\n" for line in whole]
                self._pending = bytearray(rest)
        # Decoded whole, so a character split across two reads is never replaced.
        return self._lines.pop(0).decode("utf-8", errors="replace")


class _Writer:
    """stdout as the `write` + `flush` that `stdio_server` calls; flush waits while the pipe is full."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, data: str) -> None:
        self._writer.write(data.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def serve_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of `stdio_server`, served by the loop when stdin and stdout are pipes;
    stdin's end reaches the server only once every request read before it has its reply."""
    async with _transport() as (read, write), _answered_before_eof(read, write) as streams:
        yield streams


@asynccontextmanager
async def _answered_before_eof(read: Any, write: Any) -> AsyncIterator[tuple[Any, Any]]:
    """Hold back stdin's end until the requests read before it are answered (bounded by DRAIN_S).

    The SDK's server stops at the end of its input and cancels what is still running, so a client
    that writes its requests and closes stdin (`server < requests > replies`) lost the replies still
    being computed (a one-second cell: always; a first tools/list: one run in eight). A client that
    dies takes the server with it whatever stdin does (lifeline.die_with_parent).
    """
    pending: set[Any] = set()
    changed = anyio.Event()
    to_server, from_client = create_context_streams[SessionMessage | Exception](0)
    to_client, from_server = create_context_streams[SessionMessage](0)

    async def inbound() -> None:
        nonlocal changed
        async with to_server:
            async for item in read:
                if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCRequest):
                    pending.add(item.message.id)
                await to_server.send(item)
            with anyio.move_on_after(DRAIN_S):
                while pending:
                    await changed.wait()
                    changed = anyio.Event()

    async def outbound() -> None:
        async with from_server, write:  # the transport's writer stops when its stream closes
            async for item in from_server:
                # Handed to the transport's writer first, then counted as answered: counted before, the
                # end of input could cancel this send and lose the last reply (stdout a file, loaded machine).
                await write.send(item)
                if isinstance(item.message, JSONRPCResponse | JSONRPCError):
                    pending.discard(item.message.id)
                    changed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(inbound)
        tg.start_soon(outbound)
        try:
            yield from_client, to_client
        finally:
            tg.cancel_scope.cancel()
    await write.aclose()


@asynccontextmanager
async def _transport() -> AsyncIterator[tuple[Any, Any]]:
    if not (_is_pipe(0) and _is_pipe(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    # Private duplicates carry the wire; close-on-exec, so no child ever holds them.
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = asyncio.StreamReader()
    in_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                   os.fdopen(wire_in, "rb", buffering=0, closefd=False))
    out_transport, out_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0, closefd=False))
    # No high-water mark: drain (the SDK's flush) returns only once the reply is all in the pipe, as
    # a blocking flush would, so nothing is left in a buffer at exit.
    out_transport.set_write_buffer_limits(high=0)
    writer = asyncio.StreamWriter(out_transport, out_protocol, None, loop)
    try:
        async with stdio_server(stdin=cast(Any, _Lines(reader)), stdout=cast(Any, _Writer(writer))) as streams:
            yield streams
    finally:
        in_transport.close()
        out_transport.close()
        for wire, fd in ((wire_in, 0), (wire_out, 1)):
            os.set_blocking(wire, True)  # the loop made the pipe non-blocking; whoever reads it next expects not
            os.dup2(wire, fd)
            os.close(wire)
