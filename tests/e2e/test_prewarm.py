"""Warm from the first call: once a client connects, the server starts the python kernel and the
project's most recent languages, and the first ctx_execute runs in the kernel already started.

Driven through the real `context-kernel serve` over stdio with the SDK's default client (which
speaks the stateless protocol: no initialize, so the first tools/list is what starts the warm-up).
Kernel processes are found by their connection files, which live in the data dir's runtime/.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.helpers import make_settings, server_command, text_of

from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


def params(home: Path, project: Path, **env: str) -> StdioServerParameters:
    cmd = server_command("--project", str(project))
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env={
        **os.environ, "CONTEXT_KERNEL_HOME": str(home), "CONTEXT_KERNEL_PREWARM": "3", **env})


def kernel_pids(home: Path) -> set[int]:
    """Every kernel process (not its supervisor) whose connection file is in `home`."""
    runtime = str(home / "runtime")
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            text = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if runtime in text and "context_kernel.kernels.supervisor" not in text:
            found.add(int(name))
    return found


def connection_file(pid: int) -> str | None:
    """The kernel connection file a process was started with (None once it is gone): which kernel it is.
    A pid alone can mislead: a process seen while a kernel starts may be gone once it has started."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return None
    return next((a for a in argv if a.endswith(".json") and "/runtime/kernel-" in a), None)


def _cmdline_tail(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()[-80:].decode(errors="replace")
    except OSError:
        return "gone"


async def wait_for_kernels(home: Path, count: int, timeout: float = 90) -> set[int]:
    """The kernel processes, once there are exactly `count` of them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = kernel_pids(home)
        if len(found) == count:
            return found
        await anyio.sleep(0.05)  # a bounded poll: the server starts (or stops) them in the background
    raise AssertionError(f"not {count} kernels within {timeout} s: {kernel_pids(home)}")


async def test_the_first_python_call_runs_in_the_kernel_started_when_the_client_connected(
        tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    async with Client(params(home, project)) as client:
        await client.list_tools()
        before = await wait_for_kernels(home, 1)
        result = await client.call_tool("ctx_execute", {"language": "python", "code": "import os; print(os.getpid())"})
        assert not result.is_error, text_of(result)
        assert int(text_of(result).split()[-1]) in before


async def test_the_projects_recent_languages_are_warm_too_and_prewarm_can_be_turned_off(
        tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home"
    async with Client(params(home, project, CONTEXT_KERNEL_PREWARM="0")) as client:
        await client.call_tool("ctx_execute", {"language": "shell", "code": "echo used"})
        assert len(kernel_pids(home)) == 1  # off: only the shell the call asked for
    await wait_for_kernels(home, 0)  # that server's kernels are gone
    async with Client(params(home, project)) as client:
        await client.list_tools()
        before = await wait_for_kernels(home, 2)  # python, and the shell this project used
        # The kernels' connection files, written before each started: a pid seen while a kernel starts may
        # be gone once it has (seen under load: the shell's first pid vanished, its kernel ran on).
        started = {str(path) for path in (home / "runtime").glob("kernel-*.json")}
        shell = await client.call_tool("ctx_execute", {"language": "shell", "code": "echo $PPID"})
        # Which kernel is which, and which still run: what a failure needs to be understood.
        seen = {pid: _cmdline_tail(pid) for pid in before | {int(text_of(shell).split()[-1])}}
        # The call ran in a kernel started before it (the same connection file), not in a new one.
        assert connection_file(int(text_of(shell).split()[-1])) in started, (text_of(shell), seen, started)


async def _until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        await anyio.sleep(0.02)  # a bounded poll: the server does it in the background
    raise AssertionError(f"{what} not within {timeout} s")


async def test_once_connected_the_tools_and_the_store_are_made_ready_before_any_call_even_with_prewarm_off(
        tmp_path: Path, project: Path) -> None:
    # The first call of a new server paid for registering the tools (~40 ms) and for importing the App's
    # modules and opening the store (~0.3 s before a search could start): now done once the client has
    # connected. Kernels are still started only with prewarm on.
    settings = make_settings(tmp_path, project, prewarm_kernels=0)
    server = create_server(settings)
    assert not server.tools_registered
    async with Client(server):
        await _until(lambda: server.tools_registered, "the tools registered")
        await _until(settings.db_path.exists, "the store opened")
        assert kernel_pids(settings.home) == set()
