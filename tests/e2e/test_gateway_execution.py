"""ctx_execute through a real Jupyter Enterprise Gateway: the local pool's guarantees, one by one, there.

Every kernel here is a process of the gateway (tests/gateway_harness.py), not of the server: the
gateway's own `/api/kernels` is what says whether a kernel was started, replaced or ended.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.e2e.conftest import gateway_settings
from tests.gateway_harness import RunningGateway, start_gateway
from tests.helpers import make_settings, server_command, text_of, wait_gone

from context_kernel.app import AppHolder
from context_kernel.execution.requests import ExecuteRequest, SessionRef
from context_kernel.kernels import gateway_kernel
from context_kernel.settings import GatewaySettings
from context_kernel.store.db import open_engine
from context_kernel.store.executions import ExecutionRepository
from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


async def run(client: Client, code: str, language: str = "python", **extra: object) -> tuple[bool, str]:
    result = await client.call_tool("ctx_execute", {"language": language, "code": code, **extra})
    return bool(result.is_error), text_of(result)


async def test_python_keeps_state_across_calls_in_a_kernel_the_gateway_runs(
        gateway_client: Client, gateway: RunningGateway) -> None:
    before = gateway.kernel_ids()
    # The kernel is the gateway's child (its LocalProcessProxy), not ours.
    assert await run(gateway_client, "import os\nx = 41\nprint(os.getppid())") == (False, str(gateway.process.pid))
    assert await run(gateway_client, "print(x + 1)") == (False, "42")
    assert len(gateway.kernel_ids() - before) == 1  # one warm kernel for the session, on the gateway


async def test_kernel_variables_given_to_the_server_reach_the_remote_kernel(
        tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    remote = GatewaySettings(url=gateway.url, auth_header=gateway.auth_header,
                             kernel_env={"KERNEL_PROJECT_TAG": "demo-42"})
    async with Client(create_server(make_settings(tmp_path, project, gateway=remote))) as client:
        assert await run(client, "import os\nprint(os.environ.get('KERNEL_PROJECT_TAG'))") == (False, "demo-42")


async def test_a_gateway_that_wants_kernel_username_says_which_server_flag_sets_it(
        tmp_path: Path, project: Path) -> None:
    # Enterprise Gateway with authorized users refuses a kernel whose KERNEL_USERNAME is not one of them:
    # its 403 says "Ensure KERNEL_USERNAME is set", which an agent cannot act on; the server's flag can.
    strict = start_gateway(tmp_path / "strict", extra_args=["--EnterpriseGatewayApp.authorized_users=alice"])
    try:
        remote = GatewaySettings(url=strict.url, auth_header=strict.auth_header, request_timeout_s=30.0)
        async with Client(create_server(make_settings(tmp_path, project, gateway=remote))) as client:
            is_error, text = await run(client, "print('hi')")
            doctor = text_of(await client.call_tool("ctx_doctor", {}))
        python = next(line for line in doctor.splitlines() if "kernel python3 (gateway)" in line)
        assert python.startswith("[FAIL]") and "--gateway-kernel-env KERNEL_USERNAME=" in python
        assert is_error and "HTTP 403" in text and "Ensure KERNEL_USERNAME is set" in text  # the gateway's words
        assert text.splitlines()[-1] == (
            "the gateway starts kernels only for the users it authorizes: restart context-kernel with "
            "--gateway-kernel-env KERNEL_USERNAME=<your user on the gateway> (a setting of the server: whoever "
            "started it adds the flag)")
        remote = GatewaySettings(url=strict.url, auth_header=strict.auth_header, request_timeout_s=30.0,
                                 kernel_env={"KERNEL_USERNAME": "alice"})
        async with Client(create_server(make_settings(tmp_path, project, gateway=remote))) as client:
            assert await run(client, "print('hi')") == (False, "hi")  # the advice works
    finally:
        strict.stop()


async def test_the_shell_keeps_its_directory_and_variables_on_the_gateway(gateway_client: Client) -> None:
    assert await run(gateway_client, "cd /tmp && name=remote", "shell") == (False, "(no output)")
    assert await run(gateway_client, 'echo "$name in $PWD"', "shell") == (False, "remote in /tmp")


async def test_a_language_the_gateway_lacks_is_a_clear_error_naming_the_gateway(
        gateway_client: Client, gateway: RunningGateway) -> None:
    is_error, text = await run(gateway_client, "puts 1", "ruby")
    assert is_error and f"the kernel gateway at {gateway.url} has no kernel named 'ck-ruby'" in text
    assert "ck-bash" in text and "python3" in text  # what it does offer


async def test_kernel_names_any_kernelspec_of_the_gateway(gateway_client: Client) -> None:
    result = await gateway_client.call_tool("ctx_execute", {"language": "shell", "kernel": "ck-bash",
                                                             "code": "echo by-name"})
    assert (result.is_error, text_of(result)) == (False, "by-name")


async def test_a_timeout_interrupts_and_the_remote_kernel_keeps_its_variables(gateway_client: Client) -> None:
    await run(gateway_client, "kept = 'still here'")
    is_error, text = await run(gateway_client, "print('started', flush=True)\nwhile True: pass", timeout=1500)
    assert is_error and "started" in text
    assert "timed out after 1.5 s" in text and "kept its state" in text
    assert await run(gateway_client, "print(kept)") == (False, "still here")


async def test_a_cell_that_ignores_the_interrupt_is_restarted_on_the_gateway_and_the_reply_says_so(
        gateway_client: Client, gateway: RunningGateway) -> None:
    await run(gateway_client, "kept = 1")
    ids = gateway.kernel_ids()
    is_error, text = await run(gateway_client, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                               "while True: pass", timeout=1000)
    assert is_error and "the kernel was restarted: its state is lost" in text
    assert await run(gateway_client, "print(globals().get('kept', 'gone'))") == (False, "gone")
    assert gateway.kernel_ids() == ids  # restarted in place (same remote kernel id), not a new one


async def test_a_print_flood_stops_at_the_cap_and_the_server_s_memory_stays_bounded(
        tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    cap_mb = 160  # the record indexes the first 8 MB of output (~50 MB of memory, whatever the cap)
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home"), "CONTEXT_KERNEL_GATEWAY_TOKEN": gateway.token,
           "CONTEXT_KERNEL_OUTPUT_CAP": str(cap_mb * 1024 * 1024)}
    cmd = server_command("--project", str(project), "--gateway-url", gateway.url)
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as client:
        assert await run(client, "print('warm')") == (False, "warm")
        server = _server_pid()
        before = _peak_rss_kb(server)
        flood = "import sys\nline = 'y' * 4095 + '\\n'\nwhile True: sys.stdout.write(line)"
        is_error, text = await run(client, flood, timeout=300_000)
        after = _peak_rss_kb(server)
        assert is_error and f"output passed the {cap_mb} MB cap" in text and "timed out" not in text
        assert len(text.encode()) < 16 * 1024
        assert await run(client, "print('alive')") == (False, "alive")  # interrupted, not restarted
    # All of the cap went through the server; its peak memory grew by far less than that.
    assert (after - before) < cap_mb * 1024 // 2, f"peak RSS grew {after - before} KB"


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM line")


def _server_pid() -> int:
    """The stdio server this test process started (the MCP client's child)."""
    servers = [p for p in _children(os.getpid()) if b"context_kernel" in _cmdline(p)]
    assert len(servers) == 1, servers
    return servers[0]


async def test_a_shell_flood_stops_at_the_cap_and_the_remote_shell_keeps_its_directory_and_variables(
        tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    settings = gateway_settings(tmp_path, project, gateway, hard_output_cap=8 * 1024 * 1024)
    async with Client(create_server(settings)) as client:
        await run(client, "cd /tmp && v=kept", "shell")
        is_error, text = await run(client, "yes", "shell", timeout=60_000)
        assert is_error and "output passed the 8 MB cap" in text and "timed out" not in text
        assert await run(client, 'echo "$v $PWD"', "shell") == (False, "kept /tmp")


async def test_a_flood_stopped_by_its_timeout_keeps_the_remote_kernel_and_its_state(
        tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    # More than SKIP_BACKLOG_BYTES printed: the interrupt drops the gateway's queue by reconnecting.
    settings = gateway_settings(tmp_path, project, gateway, hard_output_cap=1 << 40)
    async with Client(create_server(settings)) as client:
        await run(client, "kept = 'here'")
        ids = gateway.kernel_ids()
        is_error, text = await run(client, "import sys\nwhile True: sys.stdout.write('z' * 4095 + '\\n')",
                                   timeout=3000)
        assert is_error and "timed out after 3 s" in text and "kept its state" in text
        assert await run(client, "print(kept)") == (False, "here")
        assert gateway.kernel_ids() == ids


async def test_a_flood_read_slowly_is_still_stopped_with_its_state_kept(
        tmp_path: Path, project: Path, gateway: RunningGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    # On a busy machine the server may have read little of a flood when its timeout strikes, while the
    # gateway has queued a great deal more: reading that backlog outlasted the interrupt's grace, and the
    # kernel was restarted. Raising the byte threshold reproduces it on an idle machine.
    monkeypatch.setattr(gateway_kernel, "SKIP_BACKLOG_BYTES", 1 << 40)
    settings = gateway_settings(tmp_path, project, gateway, hard_output_cap=1 << 40)
    async with Client(create_server(settings)) as client:
        await run(client, "kept = 'here'")
        ids = gateway.kernel_ids()
        is_error, text = await run(client, "import sys\nwhile True: sys.stdout.write('z' * 4095 + '\\n')",
                                   timeout=3000)
        assert is_error and "timed out after 3 s" in text and "kept its state" in text, text[-300:]
        assert await run(client, "print(kept)") == (False, "here")
        assert gateway.kernel_ids() == ids


async def test_a_kernel_that_dies_is_detected_and_replaced_by_a_new_one_on_the_gateway(
        gateway_client: Client, gateway: RunningGateway) -> None:
    await run(gateway_client, "x = 1")
    before = gateway.kernel_ids()
    is_error, text = await run(gateway_client, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert is_error and "KernelDied" in text
    assert await run(gateway_client, "print(globals().get('x', 'fresh'))") == (False, "fresh")
    after = gateway.kernel_ids()
    assert len(after - before) == 1 and len(before - after) == 1  # the dead one ended, a new one runs


async def test_fresh_runs_in_a_kernel_of_its_own_that_is_ended_afterwards(
        gateway_client: Client, gateway: RunningGateway) -> None:
    await run(gateway_client, "mine = 1")
    before = gateway.kernel_ids()
    assert await run(gateway_client, "print(globals().get('mine', 'clean'))", fresh=True) == (False, "clean")
    assert gateway.kernel_ids() == before


async def test_a_background_cell_finishes_on_its_own_remote_kernel_which_is_then_ended(
        tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    settings = gateway_settings(tmp_path, project, gateway)
    session = SessionRef(id="gateway-background")
    before = gateway.kernel_ids()
    async with AppHolder(settings) as holder:
        app = await holder.get()
        code = "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('later')"
        reply = await app.execution.execute(
            ExecuteRequest(code=code, language="python", timeout_ms=700, background=True), session)
        assert reply.status == "running" and reply.text.startswith("first")
        assert len(gateway.kernel_ids() - before) == 1
        assert reply.execution_id is not None and await app.execution.wait_background(reply.execution_id, 30)
        assert gateway.kernel_ids() == before
    repo = ExecutionRepository(open_engine(settings.db_path))
    row = repo.get(reply.execution_id)
    assert row is not None and row.status == "ok"
    assert "".join(o.get("text", "") for o in repo.outputs(reply.execution_id)) == "first\nlater\n"


async def test_idle_remote_kernels_are_culled(tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    session = SessionRef(id="gateway-cull")
    before = gateway.kernel_ids()
    async with AppHolder(gateway_settings(tmp_path, project, gateway, kernel_idle_cull_s=0.0)) as holder:
        app = await holder.get()
        await app.execution.execute(ExecuteRequest(code="x = 1", language="python"), session)
        assert len(gateway.kernel_ids() - before) == 1
        assert await app._resources.pool.cull_idle() == 1  # what the lifespan's cull loop calls
        assert gateway.kernel_ids() == before
        reply = await app.execution.execute(ExecuteRequest(code="print(x)", language="python"), session)
    assert reply.is_error and "was stopped after 0 minutes idle" in reply.text


async def test_the_least_recently_used_remote_kernel_makes_room(tmp_path: Path, project: Path,
                                                                 gateway: RunningGateway) -> None:
    before = gateway.kernel_ids()
    async with Client(create_server(gateway_settings(tmp_path, project, gateway, max_kernels=1))) as c:
        await run(c, "mine = 1")
        await run(c, "echo other", "shell")
        assert len(gateway.kernel_ids() - before) == 1  # at most one, on the gateway too
        is_error, text = await run(c, "print(mine)")
    assert is_error and text.startswith("[your python kernel was stopped to make room")


async def test_every_remote_kernel_is_ended_when_the_client_goes_away(
        tmp_path: Path, project: Path, gateway: RunningGateway) -> None:
    before = gateway.kernel_ids()
    async with Client(create_server(gateway_settings(tmp_path, project, gateway))) as c:
        await run(c, "x = 1")
        await run(c, "y=2", "shell")
        assert len(gateway.kernel_ids() - before) == 2
    assert gateway.kernel_ids() == before


def _reaper_of(server_pid: int) -> int:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == server_pid and b"gateway_reaper" in cmdline:
            return int(entry.name)
    raise AssertionError(f"no reaper below server {server_pid}")


async def test_a_killed_server_leaves_no_kernel_on_the_gateway(tmp_path: Path, project: Path,
                                                               gateway: RunningGateway) -> None:
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home"),
           "CONTEXT_KERNEL_GATEWAY_TOKEN": gateway.token}
    cmd = server_command("--project", str(project), "--gateway-url", gateway.url)
    before = gateway.kernel_ids()
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as client:
        assert await run(client, "x = 1") == (False, "(no output)")
        assert await run(client, "y=1", "shell") == (False, "(no output)")
        assert len(gateway.kernel_ids() - before) == 2
        server = _server_pid()
        reaper = _reaper_of(server)
        os.kill(server, signal.SIGKILL)
        assert wait_gone([reaper], timeout=30) == []  # it ended what the server held, then exited
        assert gateway.kernel_ids() == before


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


