"""Fetch-and-index throughput for 50 local pages at concurrency 1 and 8, and bytes returned vs fetched.

    python bench/fetch_speed.py

A real HTTP server on 127.0.0.1 serves 50 generated documentation pages (sections, prose, code
blocks; ~14 KB of HTML each). The server under test is driven through the MCP in-memory client:
one `ctx_fetch_and_index` batch per concurrency level (force=true so every page is fetched), and
50 single-URL calls, whose replies carry a preview. No number here is a threshold.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from mcp.client.client import Client

from context_kernel.settings import Settings
from context_kernel.tools.server import create_server

PAGES = 50


def page(i: int) -> str:
    sections = []
    for s in range(12):
        sections.append(
            f"<h2>Topic {i}.{s}: configuring the frobnicator</h2>"
            + f"<p>{'The frobnicator accepts options that tune its behaviour under load. ' * 12}</p>"
            + f'<pre><code class="language-python">client = Frob(pool={s}, retries={i})\n'
            + "for item in client.stream():\n    print(item.id, item.state)</code></pre>"
        )
    nav = "<nav>" + " | ".join(f'<a href="/p{j}.html">Page {j}</a>' for j in range(40)) + "</nav>"
    return (f"<!doctype html><html><head><title>Frobnicator guide {i}</title></head><body>{nav}<main>"
            f"<h1>Frobnicator guide {i}</h1>{''.join(sections)}</main><footer>footer</footer></body></html>")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


async def run(site: str, home: Path) -> None:
    settings = Settings(home=home / "home", project_dir=home, base_env=dict(os.environ))
    urls = [f"{site}/p{i}.html" for i in range(PAGES)]
    fetched = sum(len(page(i).encode()) for i in range(PAGES))
    print(f"# Fetch and index: {PAGES} local pages, {fetched / 1e6:.2f} MB of HTML\n")
    print("| run | seconds | pages/s | MB/s fetched | bytes returned to the agent | returned / fetched |")
    print("|---|---:|---:|---:|---:|---:|")
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_fetch_and_index", {"url": urls[0]})  # warm up: builds the app
        for concurrency in (1, 8):
            began = time.perf_counter()
            result = await client.call_tool("ctx_fetch_and_index", {
                "requests": [{"url": u} for u in urls], "concurrency": concurrency, "force": True})
            elapsed = time.perf_counter() - began
            returned = sum(len(getattr(b, "text", "").encode()) for b in result.content)
            print(f"| batch, concurrency {concurrency} | {elapsed:.2f} | {PAGES / elapsed:.1f} | "
                  f"{fetched / 1e6 / elapsed:.2f} | {returned:,} | {returned / fetched:.2%} |")
        began = time.perf_counter()
        returned = 0
        for u in urls:
            result = await client.call_tool("ctx_fetch_and_index", {"url": u, "force": True})
            returned += sum(len(getattr(b, "text", "").encode()) for b in result.content)
        elapsed = time.perf_counter() - began
        print(f"| {PAGES} single calls (reply with preview) | {elapsed:.2f} | {PAGES / elapsed:.1f} | "
              f"{fetched / 1e6 / elapsed:.2f} | {returned:,} | {returned / fetched:.2%} |")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="context-kernel-fetch-bench-") as tmp:
        root = Path(tmp) / "site"
        root.mkdir()
        for i in range(PAGES):
            (root / f"p{i}.html").write_text(page(i))
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            anyio.run(run, f"http://127.0.0.1:{server.server_address[1]}", Path(tmp))
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    main()
