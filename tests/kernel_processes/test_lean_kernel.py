"""The lean kernel base (lean_kernel.py) through real jupyter_client and nbclient clients, on ck-bash."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
import zmq
import zmq.asyncio
from kernel_harness import Kernel, StartKernel, stdout_has
from nbclient import NotebookClient

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed"),
]
TIMEOUT = 30  # seconds for any one request


@pytest.fixture
async def kernel(start_kernel: StartKernel) -> AsyncIterator[Kernel]:
    yield await start_kernel("ck-bash", cell_timeout=TIMEOUT)


def exited(pid: int) -> bool:
    """True once process pid has exited (waits, bounded, on a pidfd)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], TIMEOUT)[0])
    finally:
        os.close(fd)


async def exit_status(kernel: Kernel) -> int | None:
    """Wait for the kernel process to exit by itself; its status. The manager then lets go of it."""
    assert kernel.km.provisioner is not None
    with anyio.fail_after(TIMEOUT):
        status = await kernel.km.provisioner.wait()
        await kernel.km.shutdown_kernel()  # closes the manager's control socket
    return status


async def control_request(kernel: Kernel, msg_type: str, content: dict[str, Any]) -> dict[str, Any]:
    """Send one request on the control channel; its reply."""
    msg = kernel.kc.session.msg(msg_type, content)
    kernel.kc.control_channel.send(msg)
    with anyio.fail_after(TIMEOUT):
        while True:
            reply: dict[str, Any] = await kernel.kc.control_channel.get_msg()
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                return reply


async def statuses_of(kernel: Kernel, msg_id: str) -> list[str]:
    """The execution states published for request msg_id, up to its idle."""
    states: list[str] = []
    with anyio.fail_after(TIMEOUT):
        while "idle" not in states:
            msg = await kernel.kc.get_iopub_msg()
            if msg["msg_type"] == "status" and msg["parent_header"].get("msg_id") == msg_id:
                states.append(msg["content"]["execution_state"])
    return states


async def test_kernel_info_is_answered_on_shell_and_on_control(kernel: Kernel) -> None:
    shell = await kernel.kc.kernel_info(reply=True, timeout=TIMEOUT)
    control = await control_request(kernel, "kernel_info_request", {})
    for reply in (shell, control):
        assert reply["msg_type"] == "kernel_info_reply"
        content = reply["content"]
        assert (content["status"], content["protocol_version"], content["implementation"]) == ("ok", "5.3", "ck-bash")
        assert content["language_info"]["name"] == "bash" and content["language_info"]["version"]


async def test_a_request_is_framed_by_busy_and_idle_with_it_as_parent(kernel: Kernel) -> None:
    reply = await kernel.kc.kernel_info(reply=True, timeout=TIMEOUT)
    assert await statuses_of(kernel, reply["parent_header"]["msg_id"]) == ["busy", "idle"]


async def test_introspection_requests_get_empty_answers(kernel: Kernel) -> None:
    kc = kernel.kc
    assert (await kc.is_complete("echo hi", reply=True, timeout=TIMEOUT))["content"] == {"status": "complete"}
    complete = (await kc.complete("ec", 2, reply=True, timeout=TIMEOUT))["content"]
    assert (complete["status"], complete["matches"], complete["cursor_start"], complete["cursor_end"]) == (
        "ok", [], 2, 2)
    inspect = (await kc.inspect("echo", 2, reply=True, timeout=TIMEOUT))["content"]
    assert (inspect["status"], inspect["found"]) == ("ok", False)
    history = (await kc.history(reply=True, timeout=TIMEOUT))["content"]
    assert history == {"status": "ok", "history": []}
    comms = (await kc.comm_info(reply=True, timeout=TIMEOUT))["content"]
    assert comms == {"status": "ok", "comms": {}}


async def test_execute_reply_counts_cells_and_silent_cells_are_not_counted_or_echoed(kernel: Kernel) -> None:
    first = await kernel.run("echo one")
    second = await kernel.run("echo two")
    assert second.reply["execution_count"] == first.reply["execution_count"] + 1
    (echo,) = second.of_type("execute_input")
    assert echo == {"code": "echo two", "execution_count": second.reply["execution_count"]}
    msg_id = kernel.kc.execute("echo hidden", silent=True)
    assert await statuses_of(kernel, msg_id) == ["busy", "idle"]
    third = await kernel.run("echo three")
    assert third.reply["execution_count"] == second.reply["execution_count"] + 1


async def test_a_failed_cell_aborts_the_cells_queued_behind_it(kernel: Kernel, tmp_path: Path) -> None:
    go = tmp_path / "go"
    os.mkfifo(go)
    failing = kernel.send(f"read -r _ < {go}; false")
    queued = [kernel.send("echo never"), kernel.send("echo never again")]
    with anyio.fail_after(TIMEOUT):  # the cell fails once all three requests are sent
        await anyio.to_thread.run_sync(go.write_text, "\n")
    failed = await kernel.collect(failing)
    assert failed.reply["status"] == "error" and failed.reply["ename"] == "ExitCode"
    for cell in queued:
        await kernel.collect(cell)
        assert cell.reply == {"status": "aborted"}
        assert cell.streams == []
    after = await kernel.run("echo runs")
    assert after.stdout == "runs\n"  # aborting ends with the queue it found


async def test_without_stop_on_error_the_cells_behind_a_failed_one_run(
    start_kernel: StartKernel, tmp_path: Path
) -> None:
    kernel = await start_kernel("ck-bash", cell_timeout=TIMEOUT, stop_on_error=False)
    failing = kernel.send("false")
    queued = kernel.send("echo still")
    assert (await kernel.collect(failing)).reply["status"] == "error"
    assert (await kernel.collect(queued)).stdout == "still\n"


async def test_a_flood_arrives_whole_and_nothing_of_it_after_its_idle(kernel: Kernel) -> None:
    cell = await kernel.run("yes | head -c 20000000")
    assert cell.reply["status"] == "ok"
    assert len(cell.stdout) == 20_000_000
    assert cell.messages[-1]["msg_type"] == "status"
    await kernel.run("echo next")
    assert not [m for m in kernel.strays if m["parent_header"].get("msg_id") == cell.msg_id]


async def test_an_interrupt_request_on_control_stops_the_cell(kernel: Kernel) -> None:
    cell = kernel.send("echo started; sleep 100; echo after")
    await kernel.collect(cell, until=stdout_has("started"))
    reply = await control_request(kernel, "interrupt_request", {})
    assert reply["content"]["status"] == "ok"
    await kernel.collect(cell)
    assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt"
    assert "after" not in cell.stdout


async def test_the_heartbeat_echoes(kernel: Kernel) -> None:
    info = kernel.km.get_connection_info()
    context = zmq.asyncio.Context()
    socket = context.socket(zmq.REQ)
    socket.linger = 0
    try:
        socket.connect(f"ipc://{info['ip']}-{info['hb_port']}")
        with anyio.fail_after(TIMEOUT):
            await socket.send(b"ping")
            assert await socket.recv() == b"ping"
    finally:
        socket.close()
        context.term()


async def test_shutdown_on_control_is_answered_and_the_kernel_exits(kernel: Kernel) -> None:
    bash_pid = int((await kernel.run("echo $$")).stdout)
    reply = await control_request(kernel, "shutdown_request", {"restart": False})
    assert reply["content"] == {"status": "ok", "restart": False}
    assert await exit_status(kernel) == 0
    assert exited(bash_pid)  # the shell went with it


async def test_shutdown_on_shell_is_answered_too(kernel: Kernel) -> None:
    msg = kernel.kc.session.msg("shutdown_request", {"restart": False})
    kernel.kc.shell_channel.send(msg)
    with anyio.fail_after(TIMEOUT):
        while (reply := await kernel.kc.get_shell_msg())["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            pass
        assert reply["content"]["status"] == "ok"
    assert await exit_status(kernel) == 0


async def test_nbclient_executes_a_notebook_of_bash_cells(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"cd {tmp_path}; greeting=hello"),
        nbformat.v4.new_code_cell('echo "$greeting from $PWD"; echo warn >&2'),
        nbformat.v4.new_code_cell("exit_with() { return $1; }; exit_with 4"),
    ]
    client = NotebookClient(nb, kernel_name="ck-bash", timeout=TIMEOUT, startup_timeout=TIMEOUT,
                            allow_errors=True, resources={"metadata": {"path": str(tmp_path)}})
    with anyio.fail_after(4 * TIMEOUT):
        await client.async_execute()
    assert nb.cells[0].outputs == []
    out, err = nb.cells[1].outputs
    assert (out.name, out.text, err.name, err.text) == ("stdout", f"hello from {tmp_path}\n", "stderr", "warn\n")
    (error,) = nb.cells[2].outputs
    assert (error.output_type, error.ename, error.evalue) == ("error", "ExitCode", "4")
    assert [cell.execution_count for cell in nb.cells] == [1, 2, 3]
    nbformat.validate(nb)


@pytest.mark.parametrize("kernel", ["bash", "node"])
def test_our_lean_kernels_import_neither_ipykernel_nor_jupyter_client(kernel: str) -> None:
    # they cost a start ~0.3 s; the lean base needs only pyzmq and the standard library
    code = (f"import sys, context_kernel.kernel_processes.{kernel};"
            "print(sorted({'ipykernel', 'jupyter_client', 'traitlets'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=TIMEOUT)
    assert out.stdout == "[]\n"
