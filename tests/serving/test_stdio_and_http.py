"""The real `context-kernel serve` process driven by the SDK's client over stdio and over HTTP."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from tests.helpers import server_command, text_of, wait_gone
from tests.serving.http_harness import HttpServer
from tests.serving.http_harness import http_server as running_http_server

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.kernels]


def server_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home")}


def stdio_params(tmp_path: Path, project: Path) -> StdioServerParameters:
    cmd = server_command("--project", str(project))
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=server_env(tmp_path))


async def test_stdio_server_runs_python_and_keeps_state(tmp_path: Path, project: Path) -> None:
    async with Client(stdio_params(tmp_path, project)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"ctx_execute", "ctx_execute_file"} <= names
        await client.call_tool("ctx_execute", {"language": "python", "code": "n = 20"})
        result = await client.call_tool("ctx_execute", {"language": "python", "code": "print(n + 1)"})
        assert (result.is_error, text_of(result)) == (False, "21")
        result = await client.call_tool("ctx_execute", {"language": "python", "code": "import os; print(os.getcwd())"})
        assert text_of(result) == str(await anyio.Path(project).resolve())


async def test_stdio_reports_progress_while_a_cell_runs(tmp_path: Path, project: Path) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    env = {**server_env(tmp_path), "CONTEXT_KERNEL_PROGRESS_S": "0.2"}
    cmd = server_command("--project", str(project))
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as client:
        result = await client.call_tool(
            "ctx_execute",
            {"language": "python", "code": "import time\nfor _ in range(10): time.sleep(0.1)\nprint('done')"},
            progress_callback=on_progress,
        )
    assert text_of(result) == "done"
    assert seen, "no progress notification arrived during a 1 s cell"


@pytest.fixture
def http_server(tmp_path: Path, project: Path) -> Iterator[HttpServer]:
    with running_http_server(tmp_path / "home", project) as server:
        yield server


async def test_http_clients_with_their_own_sessions_do_not_share_kernels(http_server: HttpServer) -> None:
    async with (http_server.http_client() as h1, http_server.http_client() as h2,
                Client(streamable_http_client(http_server.url, http_client=h1), mode="legacy") as first,
                Client(streamable_http_client(http_server.url, http_client=h2), mode="legacy") as second):
        await first.call_tool("ctx_execute", {"language": "python", "code": "who = 'first'"})
        mine = await first.call_tool("ctx_execute", {"language": "python", "code": "print(who)"})
        theirs = await second.call_tool("ctx_execute", {"language": "python", "code": "print(globals().get('who'))"})
    assert text_of(mine) == "first"
    assert text_of(theirs) == "None"


async def test_http_stateless_clients_name_their_session_with_a_header(http_server: HttpServer) -> None:
    async with (http_server.http_client(headers={"x-context-kernel-session": "alpha"}) as h1,
                http_server.http_client(headers={"x-context-kernel-session": "beta"}) as h2,
                Client(streamable_http_client(http_server.url, http_client=h1)) as alpha,
                Client(streamable_http_client(http_server.url, http_client=h2)) as beta):
        await alpha.call_tool("ctx_execute", {"language": "python", "code": "tag = 'alpha'"})
        h1.cookies.clear()  # the name alone keeps the session, whatever the cookie says
        again = await alpha.call_tool("ctx_execute", {"language": "python", "code": "print(tag)"})
        other = await beta.call_tool("ctx_execute", {"language": "python", "code": "print(globals().get('tag'))"})
    assert text_of(again) == "alpha"
    assert text_of(other) == "None"


CLIENT_SCRIPT = """
import os, sys, anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

async def main():
    # The SDK passes a server only a few safe variables unless told: CONTEXT_KERNEL_HOME must reach it.
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env=dict(os.environ))
    async with Client(params) as c:
        r1 = await c.call_tool("ctx_execute", {"language": "python",
                                               "code": "import os; print(os.environ['JPY_PARENT_PID'], os.getpid())"})
        print(r1.content[0].text, flush=True)
        await anyio.sleep_forever()

anyio.run(main)
"""


@pytest.mark.parametrize("victim", ["client", "server"])
def test_no_server_or_kernel_survives_a_killed_client_or_server(tmp_path: Path, project: Path, victim: str) -> None:
    cmd = server_command("--project", str(project))
    client = subprocess.Popen([sys.executable, "-c", CLIENT_SCRIPT, *cmd], env=server_env(tmp_path),
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        assert client.stdout is not None
        ready, _, _ = select.select([client.stdout], [], [], 60)
        assert ready, "the client did not report the kernel's pids"
        server_pid, kernel_pid = map(int, client.stdout.readline().split())
        os.kill(server_pid if victim == "server" else client.pid, signal.SIGKILL)
        assert wait_gone([server_pid, kernel_pid] if victim == "client" else [kernel_pid], timeout=15) == []
    finally:
        client.kill()
        client.wait(timeout=10)
        if client.stdout:
            client.stdout.close()


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM line")


async def test_server_memory_stays_bounded_during_a_print_flood(tmp_path: Path, project: Path) -> None:
    cap_mb = 200
    env = {**server_env(tmp_path), "CONTEXT_KERNEL_OUTPUT_CAP": str(cap_mb * 1024 * 1024)}
    cmd = server_command("--project", str(project))
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as client:
        # the pid of the process that launched the kernel (its parent is the kernel's supervisor)
        pid_text = text_of(await client.call_tool("ctx_execute", {
            "language": "python", "code": "import os; print(os.environ['JPY_PARENT_PID'])"}))
        server_pid = int(pid_text)
        before = _peak_rss_kb(server_pid)
        flood = "import sys\nline = 'y' * 4095 + '\\n'\nwhile True: sys.stdout.write(line)"
        result = await client.call_tool("ctx_execute", {"language": "python", "code": flood, "timeout": 100_000})
        after = _peak_rss_kb(server_pid)
    assert result.is_error and f"output passed the {cap_mb} MB cap" in text_of(result)
    # More than the cap went through the server; its peak memory grew by far less than that.
    assert (after - before) < cap_mb * 1024 // 2, f"peak RSS grew {after - before} KB"
    print(f"server peak RSS grew {(after - before) // 1024} MB while {cap_mb} MB of output passed through")
