"""A TCP proxy in front of a real HTTP server that can cut one response stream: a dropped connection."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import anyio
from anyio.abc import SocketStream, TaskGroup


@dataclass
class StreamDropper:
    """Forwards every connection; when armed, closes the connection of the next request whose body
    contains `armed_for` as soon as the server has sent an SSE event id on it (the priming event)."""

    upstream_host: str
    upstream_port: int
    url: str = ""
    armed_for: bytes | None = None
    dropped: anyio.Event = field(default_factory=anyio.Event)
    requests: list[bytes] = field(default_factory=list)
    """The head of every request that passed (request line and headers)."""

    async def _pump(self, source: SocketStream, sink: SocketStream, last: Callable[[bytes], bool]) -> None:
        try:
            async for chunk in source:
                await sink.send(chunk)
                if last(chunk):
                    return
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError):
            pass

    async def _serve(self, client: SocketStream) -> None:
        async with client, await anyio.connect_tcp(self.upstream_host, self.upstream_port) as server:
            marked = False

            def from_client(chunk: bytes) -> bool:
                nonlocal marked
                if b" HTTP/1.1\r\n" in chunk:
                    self.requests.append(chunk.split(b"\r\n\r\n", 1)[0])
                if self.armed_for is not None and self.armed_for in chunk:
                    marked = True
                return False

            def from_server(chunk: bytes) -> bool:
                if marked and self.armed_for is not None and b"\nid: " in chunk:  # an SSE event id line
                    self.armed_for = None
                    self.dropped.set()
                    return True  # cut after it: the client has the event id to resume from, and no reply
                return False

            async with anyio.create_task_group() as tg:
                async def both(source: SocketStream, sink: SocketStream, hook: Callable[[bytes], bool]) -> None:
                    await self._pump(source, sink, hook)
                    tg.cancel_scope.cancel()  # one side ended: the connection is over

                tg.start_soon(both, client, server, from_client)
                tg.start_soon(both, server, client, from_server)


@asynccontextmanager
async def stream_dropper(url: str) -> AsyncIterator[StreamDropper]:
    parts = urlsplit(url)
    assert parts.hostname and parts.port
    proxy = StreamDropper(parts.hostname, parts.port)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    proxy.url = urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}"))
    tg: TaskGroup
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, proxy._serve)
        yield proxy
        tg.cancel_scope.cancel()
