"""Stream resumption for 2025-protocol HTTP sessions: a dropped stream does not lose a long call's reply.

On the 2025 protocol each request is answered on its own SSE stream. With an event store the SDK
sends a priming event (an id, no data) first and stores every message of the stream; a client
whose stream breaks reconnects with `GET` and `Last-Event-ID` and gets the rest, the reply
included, even when it was sent while nobody listened. The SDK's client does this by itself.

The SDK gives one store to every session and names a stream by its JSON-RPC request id, which
every client counts from the same small numbers; so a store must keep sessions apart, or one
client's resumption could replay another's reply. `SessionBinding` (ASGI middleware) gives each
HTTP exchange a tag holding its `Mcp-Session-Id` — for the initialize request, the one its
response assigns. The session's message router runs in a task the SDK starts while serving that
initialize request, so it sees that request's tag: events are filed under the session that
produced them, and a `Last-Event-ID` replays only events of the session the GET comes from.
Event ids are unguessable besides.

The 2026-07-28 protocol has no sessions and no resumption: a request is one exchange, and closing
its response stream is how a client cancels it (the cell is interrupted and recorded so). What it
offers for long work is keep-alive pings on the open stream, and `background: true`.

The store is in memory and bounded (the least recently used streams go first): a restarted
server has lost its kernels too, so nothing would be worth replaying.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from contextvars import ContextVar
from dataclasses import dataclass, field

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_STREAMS = 512
MAX_EVENTS_PER_STREAM = 256
RETRY_INTERVAL_MS = 500
"""What the priming event tells a client to wait before it reconnects (the SDK's default is 1 s)."""


@dataclass
class _Exchange:
    session: str | None
    unbound: str = field(default_factory=lambda: secrets.token_hex(8))

    @property
    def owner(self) -> str:
        """Whose events these are: the session, or (before it has one) nobody else's."""
        return f"session:{self.session}" if self.session else f"unbound:{self.unbound}"


_exchange: ContextVar[_Exchange | None] = ContextVar("context_kernel_http_exchange", default=None)


class SessionBinding:
    """ASGI middleware: tags each HTTP exchange with its 2025-protocol session (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = _Exchange(Headers(scope=scope).get(MCP_SESSION_ID_HEADER))

        async def send_noting_session(message: Message) -> None:
            if exchange.session is None and message["type"] == "http.response.start":
                exchange.session = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
            await send(message)

        reset = _exchange.set(exchange)
        try:
            await self.app(scope, receive, send_noting_session)
        finally:
            _exchange.reset(reset)


@dataclass
class _Stream:
    stream_id: StreamId
    events: list[tuple[EventId, JSONRPCMessage | None]] = field(default_factory=list)


class SessionEventStore(EventStore):
    """Bounded in-memory events, filed per session and stream; replays only to the session they belong to."""

    def __init__(self, *, max_streams: int = MAX_STREAMS, max_events: int = MAX_EVENTS_PER_STREAM) -> None:
        self._streams: OrderedDict[tuple[str, StreamId], _Stream] = OrderedDict()
        self._where: dict[EventId, tuple[str, StreamId]] = {}
        self._max_streams = max_streams
        self._max_events = max_events

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        exchange = _exchange.get() or _Exchange(None)
        key = (exchange.owner, stream_id)
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = _Stream(stream_id)
            while len(self._streams) > self._max_streams:
                _, dropped = self._streams.popitem(last=False)
                for event_id, _message in dropped.events:
                    self._where.pop(event_id, None)
        self._streams.move_to_end(key)
        event_id = secrets.token_urlsafe(16)
        stream.events.append((event_id, message))
        self._where[event_id] = key
        if len(stream.events) > self._max_events:
            old, _message = stream.events.pop(0)
            self._where.pop(old, None)
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        key = self._where.get(last_event_id)
        exchange = _exchange.get()
        if key is None or exchange is None or key[0] != exchange.owner:
            return None  # unknown, evicted, or another session's: nothing to replay here
        stream = self._streams[key]
        ids = [event_id for event_id, _message in stream.events]
        for event_id, message in stream.events[ids.index(last_event_id) + 1:]:
            if message is not None:  # priming events carry no message
                await send_callback(EventMessage(message, event_id))
        return stream.stream_id
