"""A real HTTP(S) server on 127.0.0.1 for the fetch tests, with purpose-built misbehaving routes.

`http.server.ThreadingHTTPServer` in a thread: handlers are plain blocking code, so a route can
stall or drip bytes without touching the test's event loop. Every wait in a handler is bounded
and ends early when the server stops (`release`).
"""

from __future__ import annotations

import functools
import gzip
import json
import ssl
import threading
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

import brotli

PAGE = b"<html><head><title>Hello</title></head><body><h1>Hello, fetch</h1></body></html>"


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    requestline: str
    headers: dict[str, str]


class LocalServer:
    """Start with `with LocalServer() as server:`; `url(path, host=...)` builds URLs to it."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.seen: list[Seen] = []
        self.sni: list[str | None] = []
        self.release = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        if tls is not None:
            tls.sni_callback = lambda sslobj, name, ctx: self.sni.append(name)  # type: ignore[assignment]
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="local-http", daemon=True)

    def url(self, path: str = "/page", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release.set()  # wake stalled handlers first, so closing never waits on them
        self._httpd.shutdown()
        self._httpd.server_close()  # joins handler threads (block_on_close)
        self._thread.join(timeout=10)


class _Server(ThreadingHTTPServer):
    owner: LocalServer
    daemon_threads = False
    block_on_close = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The client hanging up mid-body is what the cap and timeout tests do on purpose.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # an idle keep-alive connection ends its thread within this

    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        pass

    def do_GET(self) -> None:
        owner = self.server.owner
        owner.seen.append(Seen(self.requestline, {k.lower(): v for k, v in self.headers.items()}))
        parts = urlsplit(self.path)  # absolute-form when we are used as a proxy
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        route = _ROUTES.get(parts.path)
        if route is None:
            self._send(404, b"not found")
        else:
            route(self, query)

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        headers = {"Content-Type": "text/html; charset=utf-8", **(headers or {})}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_chunked(self, chunks: Any, headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        for name, value in {"Content-Type": "application/octet-stream", **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")


def _page(h: _Handler, q: dict[str, str]) -> None:
    h._send(200, PAGE)


def _close(h: _Handler, q: dict[str, str]) -> None:
    h.close_connection = True
    h._send(200, PAGE, {"Connection": "close"})


def _encoded(h: _Handler, q: dict[str, str]) -> None:
    encoding = q["as"]
    body = PAGE * 50
    if encoding == "gzip":
        data = gzip.compress(body)
    elif encoding == "br":
        data = brotli.compress(body)
    elif encoding == "deflate":
        data = zlib.compress(body)
    else:  # raw deflate, which some servers send as "deflate"
        encoding, c = "deflate", zlib.compressobj(wbits=-zlib.MAX_WBITS)
        data = c.compress(body) + c.flush()
    h._send(200, data, {"Content-Encoding": encoding})


@functools.cache
def bomb(encoding: str) -> bytes:
    """10 MB of zeros, compressed: ~10 KB as gzip, a few bytes as brotli."""
    zeros = bytes(10 * 1024 * 1024)
    return gzip.compress(zeros, compresslevel=9) if encoding == "gzip" else brotli.compress(zeros)


def _bomb(h: _Handler, q: dict[str, str]) -> None:
    h._send(200, bomb(q["as"]), {"Content-Encoding": q["as"], "Content-Type": "text/plain"})


def _big(h: _Handler, q: dict[str, str]) -> None:
    size = int(q["n"])
    if q.get("length", "1") == "1":
        h._send(200, b"a" * size, {"Content-Type": "text/plain"})
    else:
        h._send_chunked(b"a" * min(16384, size - i) for i in range(0, size, 16384))


def _redirect(h: _Handler, q: dict[str, str]) -> None:
    left = int(q["n"])
    if left == 0:
        h._send(200, PAGE)
        return
    # Alternate relative and absolute Locations: both forms are re-checked.
    target = f"/redirect?n={left - 1}"
    if left % 2 == 0:
        target = f"http://{h.headers['Host']}{target}"
    h._send(302, b"", {"Location": target})


def _to(h: _Handler, q: dict[str, str]) -> None:
    h._send(302, b"", {"Location": q["location"]})


def _stall(h: _Handler, q: dict[str, str]) -> None:
    # Headers and a little body, then nothing until the server stops.
    h.send_response(200)
    h.send_header("Content-Length", "1000")
    h.end_headers()
    h.wfile.write(b"x" * 10)
    h.wfile.flush()
    h.server.owner.release.wait(30)


def _drip(h: _Handler, q: dict[str, str]) -> None:
    def chunks() -> Any:
        for _ in range(600):
            if h.server.owner.release.wait(0.05):
                return
            yield b"."
    h._send_chunked(chunks())


def _status(h: _Handler, q: dict[str, str]) -> None:
    h._send(int(q["code"]), b"error page")


def _echo(h: _Handler, q: dict[str, str]) -> None:
    h._send(200, json.dumps({k.lower(): v for k, v in h.headers.items()}).encode(),
            {"Content-Type": "application/json"})


def _set_cookie(h: _Handler, q: dict[str, str]) -> None:
    h._send(200, PAGE, {"Set-Cookie": "session=secret; Path=/"})


_ROUTES = {
    "/page": _page, "/close": _close, "/encoded": _encoded, "/bomb": _bomb, "/big": _big,
    "/redirect": _redirect, "/to": _to, "/stall": _stall, "/drip": _drip, "/status": _status,
    "/echo": _echo, "/set-cookie": _set_cookie,
}
