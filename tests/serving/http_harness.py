"""A real `context-kernel serve --transport http` process on a free port, and clients for it."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from tests.helpers import server_command

MODERN = "2026-07-28"
# Every HTTP client of these tests waits this long for a reply: httpx's default of 5 s fails a call whose
# kernel starts slowly on a loaded machine (the suite runs on several workers, beside other work), which is
# not what any of them checks. The SDK's own client (create_mcp_http_client) waits longer still.
HTTP_TIMEOUT = 60.0


@dataclass
class HttpServer:
    proc: subprocess.Popen[bytes]
    url: str
    home: Path
    announced: str
    """What the server printed on stderr up to and including its address."""

    @property
    def token_file(self) -> Path:
        return self.home / "http-token"

    def token(self) -> str:
        return self.token_file.read_text().strip()

    def auth(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token()}"}

    def http_client(self, token: str | None = None, headers: dict[str, str] | None = None) -> httpx2.AsyncClient:
        """An httpx2 client carrying the token, as a user passes one to `streamable_http_client`."""
        return httpx2.AsyncClient(headers={**self.auth(token), **(headers or {})}, timeout=HTTP_TIMEOUT)


def server_env(home: Path) -> dict[str, str]:
    return {**os.environ, "CONTEXT_KERNEL_HOME": str(home)}


@contextmanager
def http_server(home: Path, project: Path, *flags: str) -> Iterator[HttpServer]:
    proc = subprocess.Popen(
        server_command("--transport", "http", "--port", "0", "--project", str(project), *flags),
        env=server_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )
    try:
        url, announced = read_listening_url(proc, timeout=30)
        yield HttpServer(proc, url, home, announced)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        assert proc.stderr is not None
        proc.stderr.close()


def read_listening_url(proc: subprocess.Popen[bytes], timeout: float) -> tuple[str, str]:
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    buf = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(proc.stderr.fileno(), 4096)
        if not chunk:
            break
        buf += chunk
        match = re.search(rb"listening on (http://\S+)", buf)
        if match:
            return match.group(1).decode(), buf.decode(errors="replace")
    raise AssertionError(f"server did not announce its address: {buf.decode(errors='replace')}")


def tools_call(name: str, arguments: dict[str, Any],
               meta: dict[str, Any] | None = None) -> tuple[dict[str, str], bytes]:
    """Headers and body of one 2026-07-28 tools/call POST, written by hand (what any HTTP client can send)."""
    envelope = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
                **(meta or {})}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": envelope}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
    return headers, json.dumps(body).encode()
