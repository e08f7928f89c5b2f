"""A real HTTP/2 server over TLS on 127.0.0.1 for the fetch tests: hypercorn serving a small ASGI app.

Hypercorn (https://hypercorn.readthedocs.io) picks the protocol by ALPN as public servers do
("h2" first, then "http/1.1", its `alpn_protocols` setting), and the ASGI scope of every request
says which protocol it arrived over (`http_version`: "2" or "1.1", per the ASGI HTTP spec:
https://asgi.readthedocs.io/en/latest/specs/www.html#http-connection-scope). The server records
that with the request, so tests observe the negotiated protocol where it is decided.

Hypercorn runs on its own event loop in a thread, so a route can hold a stream open without
touching the test's loop. The listening socket is bound and listening before the thread starts
(and handed over as `fd://N`, hypercorn's documented bind form), so a client can connect at once:
the kernel queues the connection until the server accepts it, and no test waits for readiness.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import queue
import socket
import ssl
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self, cast
from urllib.parse import parse_qs

import trustme
from hypercorn.asyncio import serve
from hypercorn.config import Config
from hypercorn.typing import ASGIFramework
from local_http import PAGE

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

CHUNK = 16384  # one HTTP/2 DATA frame at the default SETTINGS_MAX_FRAME_SIZE


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    path: str  # with the query string
    http_version: str  # "2" or "1.1", from the ASGI scope
    host: str  # the Host header (HTTP/2's :authority, which hypercorn hands on as Host)
    client_port: int  # tells the client's connections apart
    headers: dict[str, str]


@dataclass(frozen=True)
class Streamed:
    """How a `/stream` response ended on the server side."""

    sent: int  # bytes the app handed to hypercorn: at most what it would have sent
    total: int  # bytes it would have sent had the client read everything
    completed: bool  # False when the client went away first


class H2Server:
    """`with H2Server(ca, ["site.test"], tmp_path) as server:`; `url(path, host=...)` builds URLs.

    `alpn` is what the server offers; `("http/1.1",)` makes a server that cannot speak HTTP/2.
    """

    def __init__(self, ca: trustme.CA, names: Sequence[str], directory: Path, *,
                 alpn: Sequence[str] = ("h2", "http/1.1")) -> None:
        self.seen: list[Seen] = []
        self.sni: list[str | None] = []
        self.streamed: queue.SimpleQueue[Streamed] = queue.SimpleQueue()  # each /stream response's end
        self.gate_reached = threading.Event()  # a /gate response is waiting for open_gate()
        self.errors: list[str] = []  # what hypercorn logged at WARNING or above
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(100)
        self.port: int = listener.getsockname()[1]
        self._config = _recording_config(self, ca.issue_cert(*names), directory, alpn)
        # Ownership of the descriptor passes to hypercorn, which wraps and closes it.
        self._config.bind = [f"fd://{listener.detach()}"]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._gate: asyncio.Event | None = None
        self._started = threading.Event()
        self._failure: Exception | None = None
        self._thread = threading.Thread(target=self._run, name="local-h2", daemon=True)

    def url(self, path: str = "/page", host: str = "site.test") -> str:
        return f"https://{host}:{self.port}{path}"

    def __enter__(self) -> Self:
        self._thread.start()
        if not self._started.wait(10):
            raise RuntimeError("the HTTP/2 server's event loop did not start within 10 s")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._loop is not None and self._stop is not None:
            self.open_gate()  # a held /gate response must not hold up the shutdown
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=15)
        if self._thread.is_alive():
            raise RuntimeError("the HTTP/2 server did not stop within 15 s")
        if self._failure is not None:
            raise RuntimeError("the HTTP/2 server failed") from self._failure

    def open_gate(self) -> None:
        """Lets /gate responses send the rest of their body."""
        assert self._loop is not None and self._gate is not None
        self._loop.call_soon_threadsafe(self._gate.set)

    def wait_stream_end(self, timeout: float) -> Streamed | None:
        """The next /stream outcome, or None if no /stream response ends within `timeout` seconds."""
        try:
            return self.streamed.get(timeout=timeout)
        except queue.Empty:
            return None

    async def gate_opened(self) -> None:
        """Returns once open_gate() was called; /gate waits on it."""
        assert self._gate is not None
        await self._gate.wait()

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except Exception as exc:  # noqa: BLE001 - any failure of the server thread is surfaced by __exit__
            self._failure = exc
        finally:
            self._started.set()  # never leave __enter__ waiting on a server that died

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._gate = asyncio.Event()
        self._started.set()
        # The app speaks ASGI with plain dicts, not hypercorn's TypedDicts.
        app = cast("ASGIFramework", self._app)
        await serve(app, self._config, shutdown_trigger=self._stop.wait, mode="asgi")

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode("ascii")).items()}
        target = scope["path"] + (f"?{scope['query_string'].decode('ascii')}" if scope["query_string"] else "")
        self.seen.append(Seen(target, scope["http_version"], headers.get("host", ""), scope["client"][1], headers))
        route = _ROUTES.get(scope["path"])
        if route is None:
            await _respond(send, 404, b"not found")
        else:
            await route(self, query, headers, receive, send)


def _recording_config(server: H2Server, cert: trustme.LeafCert, directory: Path,
                      alpn: Sequence[str]) -> Config:
    """Hypercorn's config, with its own TLS settings plus an SNI recorder, and quiet logs."""

    class RecordingConfig(Config):
        def create_ssl_context(self) -> ssl.SSLContext | None:
            # Hypercorn's context (TLS >= 1.2, its ciphers, our ALPN list), plus a record of SNI.
            context = super().create_ssl_context()
            assert context is not None
            context.sni_callback = lambda sslobj, name, ctx: server.sni.append(name)  # type: ignore[assignment]
            return context

    directory.mkdir(parents=True, exist_ok=True)
    certfile, keyfile = directory / "h2-cert.pem", directory / "h2-key.pem"
    certfile.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    cert.private_key_pem.write_to_path(str(keyfile))
    config = RecordingConfig()
    config.certfile, config.keyfile = str(certfile), str(keyfile)
    config.alpn_protocols = list(alpn)
    config.graceful_timeout = 5.0  # bounds shutdown if a client left a connection open
    config.errorlog = _recording_logger(server.errors, server.port)
    config.accesslog = None
    return config


def _recording_logger(into: list[str], port: int) -> logging.Logger:
    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            into.append(record.getMessage())

    logger = logging.getLogger(f"tests.local_h2.{port}")
    logger.handlers = [Recorder(level=logging.WARNING)]  # replaces those of an earlier server on this port
    logger.propagate = False
    return logger


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _respond(send: Send, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    fields = {"content-type": "text/html; charset=utf-8", **(headers or {}), "content-length": str(len(body))}
    await send({"type": "http.response.start", "status": status,
                "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in fields.items()]})
    await send({"type": "http.response.body", "body": body})


Route = Callable[[H2Server, dict[str, str], dict[str, str], Receive, Send], Awaitable[None]]


async def _page(server: H2Server, q: dict[str, str], h: dict[str, str], receive: Receive, send: Send) -> None:
    await _respond(send, 200, PAGE)


async def _gzip(server: H2Server, q: dict[str, str], h: dict[str, str], receive: Receive, send: Send) -> None:
    await _respond(send, 200, gzip.compress(PAGE * 50), {"content-encoding": "gzip"})


async def _redirect(server: H2Server, q: dict[str, str], h: dict[str, str], receive: Receive, send: Send) -> None:
    left = int(q["n"])
    if left == 0:
        await _respond(send, 200, PAGE)
        return
    # Alternate relative and absolute Locations, as the HTTP/1.1 helper does.
    target = f"/redirect?n={left - 1}"
    if left % 2 == 0:
        target = f"https://{h['host']}{target}"
    await _respond(send, 302, b"", {"location": target})


async def _to(server: H2Server, q: dict[str, str], h: dict[str, str], receive: Receive, send: Send) -> None:
    await _respond(send, 302, b"", {"location": q["location"]})


async def _status(server: H2Server, q: dict[str, str], h: dict[str, str], receive: Receive, send: Send) -> None:
    await _respond(send, int(q["code"]), b"e" * int(q.get("n", "10")))


async def _gate(server: H2Server, q: dict[str, str], h: dict[str, str], receive: Receive, send: Send) -> None:
    """Half of PAGE, then the rest once the test calls open_gate() (at most 30 s later)."""
    half = len(PAGE) // 2
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", b"%d" % len(PAGE))]})
    await send({"type": "http.response.body", "body": PAGE[:half], "more_body": True})
    server.gate_reached.set()
    await asyncio.wait_for(server.gate_opened(), 30)
    await send({"type": "http.response.body", "body": PAGE[half:]})


async def _stream(server: H2Server, q: dict[str, str], h: dict[str, str], receive: Receive, send: Send) -> None:
    """`n` bytes in DATA-frame-sized chunks until done or the client goes away.

    Content-Length is sent only with `length=1`. With `hold=1` the response never ends on its
    own: after the last byte it waits (at most 30 s) for the client to go away.
    """
    total = int(q["n"])
    ended = False  # the last DATA frame (END_STREAM) was handed over
    headers = [(b"content-type", b"application/octet-stream")]
    if q.get("length") == "1":
        headers.append((b"content-length", b"%d" % total))
    sent = 0
    gone = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    async def produce() -> None:
        nonlocal sent, ended
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        while sent < total and not gone.is_set():
            chunk = b"a" * min(CHUNK, total - sent)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            sent += len(chunk)
            # Once the client is gone hypercorn drops what is sent without suspending, so yield
            # a turn to the watcher; otherwise this loop would "send" the rest in one go.
            await asyncio.sleep(0)
        if q.get("hold") == "1":
            await asyncio.wait_for(gone.wait(), 30)
        elif not gone.is_set():
            await send({"type": "http.response.body", "body": b""})
            ended = True

    producer, watcher = asyncio.ensure_future(produce()), asyncio.ensure_future(watch())
    try:
        # A send blocked on flow control is not woken when the connection drops, so the
        # client going away (the watcher) ends the producer rather than waiting for it.
        await asyncio.wait({producer, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (producer, watcher):
            task.cancel()
        await asyncio.gather(producer, watcher, return_exceptions=True)
        server.streamed.put(Streamed(sent=sent, total=total, completed=ended and sent == total))


_ROUTES: dict[str, Route] = {
    "/page": _page, "/gzip": _gzip, "/redirect": _redirect, "/to": _to, "/status": _status,
    "/stream": _stream, "/gate": _gate,
}
