"""What the HTTP transport's owner check costs per request: the same round trips with and without it.

Starts two real `context-kernel serve --transport http` processes in one run, one with the token
(the default) and one with `--no-auth`, and alternates identical requests between them so that
drift on a shared machine hits both alike:
  1. `ctx_stats` (no kernel: the MCP path, the store, and our middleware) as raw 2026-07-28 POSTs
     from one keep-alive httpx2 client per server (the session cookie is minted once, then sent);
  2. `ctx_execute` of `pass` in the session's warm python kernel;
and, in this process, the token check alone (`TokenFile.check`: one stat, two SHA-256, one
constant-time compare). Nothing is asserted: this only prints a Markdown table.

Usage (from the repo root, venv active):
    python bench/http_auth.py              # 300 calls of each kind per server
    python bench/http_auth.py --calls 100
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

from context_kernel.security.http_token import TokenFile, write_token

MODERN = "2026-07-28"


def start(home: Path, project: Path, *flags: str) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen([sys.executable, "-m", "context_kernel", "serve", "--transport", "http", "--port", "0",
                             "--project", str(project), *flags],
                            env={**os.environ, "CONTEXT_KERNEL_HOME": str(home)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stderr is not None
    buf, deadline = b"", time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(proc.stderr.fileno(), 4096) if ready else b""
        if not chunk:
            break
        buf += chunk
        if match := re.search(rb"listening on (http://\S+)", buf):
            return proc, match.group(1).decode()
    proc.kill()
    raise SystemExit(f"server did not start: {buf.decode(errors='replace')}")


def request(name: str, arguments: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
    return headers, json.dumps(body).encode()


def ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{statistics.median(ordered) * 1000:.2f} / {p95 * 1000:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ck-bench-http-") as tmp:
        root = Path(tmp)
        (root / "project").mkdir()
        servers = {"token": start(root / "a", root / "project"),
                   "--no-auth": start(root / "b", root / "project", "--no-auth")}
        token = (root / "a" / "http-token").read_text().strip()
        clients = {"token": httpx2.Client(headers={"Authorization": f"Bearer {token}"}), "--no-auth": httpx2.Client()}
        times: dict[tuple[str, str], list[float]] = {}
        try:
            for kind, (name, arguments) in {"ctx_stats": ("ctx_stats", {}),
                                            "ctx_execute `pass`": ("ctx_execute",
                                                                   {"language": "python", "code": "pass"})}.items():
                headers, body = request(name, arguments)
                for label, (_proc, url) in servers.items():  # warm up: store, kernel, cookie
                    for _ in range(5):
                        assert clients[label].post(url, headers=headers, content=body).status_code == 200
                for _ in range(args.calls):
                    for label, (_proc, url) in servers.items():
                        began = time.perf_counter()
                        response = clients[label].post(url, headers=headers, content=body)
                        times.setdefault((kind, label), []).append(time.perf_counter() - began)
                        assert response.status_code == 200, response.text
                print(f"{kind}: done", file=sys.stderr)
        finally:
            for proc, _url in servers.values():
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=20)
            for client in clients.values():
                client.close()
        path = root / "check-token"
        secret = write_token(path)
        check = TokenFile(path)
        check.check(secret)
        began = time.perf_counter()
        for _ in range(10_000):
            check.check(secret)
        per_check_us = (time.perf_counter() - began) / 10_000 * 1e6
    print(f"| round trip ({args.calls} calls, median / p95 ms) | with the token | `--no-auth` | difference (median) |")
    print("|---|---|---|---|")
    for kind in ("ctx_stats", "ctx_execute `pass`"):
        with_token, without = times[(kind, "token")], times[(kind, "--no-auth")]
        diff = (statistics.median(with_token) - statistics.median(without)) * 1000
        print(f"| {kind} | {ms(with_token)} | {ms(without)} | {diff:+.2f} ms |")
    print(f"\nThe token check alone (`TokenFile.check`, file unchanged): {per_check_us:.1f} µs per request.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
