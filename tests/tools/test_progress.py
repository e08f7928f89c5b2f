"""Progress for every tool that can take a while, through the SDK client: a notification at least every interval
(here 0.2 s) saying what is being done, and for cells and batch commands the last line printed (redacted, at most
200 bytes)."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from tests.helpers import make_settings
from tests.security.secret_probe import GHP

from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


class _Slow(BaseHTTPRequestHandler):
    """A page that takes about a second to arrive, in 20 pieces."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(20 * 1024))
        self.end_headers()
        for _ in range(20):
            self.wfile.write(b"x" * 1023 + b"\n")
            self.wfile.flush()
            time.sleep(0.05)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def slow_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/page.txt"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
async def client(tmp_path: Path, project: Path) -> AsyncIterator[Client]:
    async with Client(create_server(make_settings(tmp_path, project, progress_interval_s=0.2))) as c:
        yield c


async def messages(client: Client, tool: str, args: dict[str, Any]) -> list[str]:
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    result = await client.call_tool(tool, args, progress_callback=on_progress)
    assert not result.is_error, result.content
    return seen


async def test_a_cell_says_it_runs_and_its_last_line_redacted_and_capped(client: Client) -> None:
    code = (f"import time\nprint('token {GHP}', flush=True)\nfor i in range(8):\n    print('epoch', i, 'loss', "
            "0.5 / (i + 1), flush=True)\n    time.sleep(0.15)\nprint('y' * 1000, flush=True)\ntime.sleep(0.5)")
    seen = await messages(client, "ctx_execute", {"language": "python", "code": code})
    # until the call reaches its kernel, the tool's name; then what it does
    assert seen and all(m.startswith(("ctx_execute (", "running python", "starting the python kernel"))
                        for m in seen), seen
    assert any(m.startswith("running python") for m in seen), seen
    assert any("last line: epoch" in m for m in seen), seen
    assert not any(GHP in m for m in seen)
    long = [m for m in seen if "yyy" in m]
    assert long and all(len(m.split("last line: ", 1)[1].encode()) <= 200 for m in long), long


async def test_batch_commands_index_fetch_export_and_doctor_say_what_they_do(
        client: Client, project: Path, slow_site: str) -> None:
    seen = await messages(client, "ctx_batch_execute", {
        "commands": [{"label": "first", "command": "echo step-a; sleep 0.6"},
                     {"label": "second", "command": "echo step-b; sleep 0.6"}], "queries": ["step"]})
    assert any(m.startswith("batch command 1 of 2: first") and "last line: step-a" in m for m in seen), seen
    assert any(m.startswith("batch command 2 of 2: second") and "last line: step-b" in m for m in seen), seen

    seen = await messages(client, "ctx_fetch_and_index", {"url": slow_site})
    assert any(m.startswith(f"fetching {slow_site}") and "KB received" in m for m in seen), seen

    docs = project / "docs"
    docs.mkdir()
    for i in range(400):
        (docs / f"page{i}.md").write_text(f"# Page {i}\n\n" + f"word{i} text about topic {i}.\n" * 600)
    seen = await messages(client, "ctx_index", {"path": "docs"})
    assert any(m.startswith(("indexing docs", "listing the files under docs")) for m in seen), seen

    await client.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
    seen = await messages(client, "ctx_export", {"format": "html"})
    assert any(m.startswith(("writing HTML", "writing the notebooks")) for m in seen), seen

    seen = await messages(client, "ctx_doctor", {})
    assert any(m.startswith("doctor: ") for m in seen), seen
