"""Code that misbehaves must come back as a clear result, never a hang or a crashed server.

Every test runs twice: in the server's own Python, and in a project's .venv that has no ipykernel
(the kernel then runs with ipykernel lent from context-kernel's overlay, kernels/python_env.py).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of
from tests.pythonenvs import make_venv, without_header

from context_kernel.execution import runner
from context_kernel.kernels.backend import JupyterKernel
from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
PROJECT_ENV = "project .venv"


@pytest.fixture(params=["server python", PROJECT_ENV])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    if request.param == PROJECT_ENV:
        make_venv(root / ".venv")
    return root


async def run(client: Client, code: str, **extra: object) -> tuple[bool, str]:
    result = await client.call_tool("ctx_execute", {"language": "python", "code": code, **extra})
    return bool(result.is_error), without_header(text_of(result))


async def test_the_cells_run_in_the_python_of_the_parametrisation(client: Client, project: Path) -> None:
    venv = project / ".venv"
    expected = str(venv) if venv.is_dir() else sys.prefix
    assert await run(client, "import sys\nprint(sys.prefix)") == (False, expected)
    assert await run(client, "import os\nprint(os.environ.get('VIRTUAL_ENV', '-'))") == (
        False, str(venv) if venv.is_dir() else os.environ.get("VIRTUAL_ENV", "-"))


async def test_our_quirks_are_set_up_so_output_of_child_processes_is_never_lost(client: Client) -> None:
    hooks = "print([f.__name__ for f in get_ipython().events.callbacks['post_run_cell']])"
    assert "flush_fd_output" in (await run(client, hooks))[1]  # kernels/quirks.py ran in this kernel
    for i in range(20):
        code = f"import subprocess\n_ = subprocess.run(['echo', 'child {i}'])"
        assert await run(client, code) == (False, f"child {i}")


async def test_infinite_loop_times_out_and_the_kernel_keeps_its_variables(client: Client) -> None:
    await run(client, "kept = 'still here'")
    is_error, text = await run(client, "print('started', flush=True)\nwhile True: pass", timeout=1500)
    assert is_error
    assert "started" in text
    assert "timed out after 1.5 s" in text and "kept its state" in text
    assert await run(client, "print(kept)") == (False, "still here")


async def test_sleeping_cell_is_interrupted_on_timeout(client: Client) -> None:
    is_error, text = await run(client, "import time\ntime.sleep(60)", timeout=500)
    assert is_error and "interrupted" in text


async def test_printing_flood_is_capped_and_interrupted(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project, hard_output_cap=2 * 1024 * 1024, return_budget=4096)
    async with Client(create_server(settings)) as client:
        is_error, text = await run(client, "import sys\nwhile True: sys.stdout.write('x' * 1000 + '\\n')")
        assert is_error
        assert "output passed the 2 MB cap" in text
        assert len(text.encode()) < 8192
        assert await run(client, "print('alive')") == (False, "alive")


async def test_os_exit_is_reported_and_the_next_call_works(client: Client) -> None:
    await run(client, "x = 1")
    is_error, text = await run(client, "import os\nprint('bye', flush=True)\nos._exit(3)")
    assert is_error
    assert "kernel process exited (exit code 3)" in text and "next call starts a new kernel" in text
    is_error, text = await run(client, "print(globals().get('x', 'fresh'))")
    assert (is_error, text) == (False, "fresh")


async def test_segfault_is_reported_and_the_next_call_works(client: Client) -> None:
    is_error, text = await run(client, "import ctypes\nctypes.string_at(0)")
    assert is_error
    assert "kernel process exited (exit code -11)" in text  # killed by SIGSEGV
    assert await run(client, "print(2 + 2)") == (False, "4")


async def test_non_utf8_bytes_come_back_as_replacement_characters(client: Client) -> None:
    # Undecodable text printed by the kernel, and raw bytes read back from a child process.
    is_error, text = await run(client, "print(b'ok \\xff\\xfe end'.decode('utf-8', 'surrogateescape'))")
    assert (is_error, text) == (False, "ok \ufffd\ufffd end")
    code = ("import subprocess, sys\n"
            "sys.stdout.write(subprocess.run(['printf', 'raw \\\\377 end'], capture_output=True)"
            ".stdout.decode('utf-8', 'replace'));")
    is_error, text = await run(client, code)
    assert (is_error, text) == (False, "raw \ufffd end")


async def test_a_one_megabyte_code_string_runs(client: Client) -> None:
    code = "blob = '" + "a" * (1024 * 1024) + "'\nprint(len(blob))"
    assert await run(client, code) == (False, str(1024 * 1024))


async def test_code_reading_stdin_gets_an_empty_line_instead_of_hanging(client: Client) -> None:
    # It used to fail with StdinNotImplementedError while the docs promised an empty line.
    is_error, text = await run(client, "answer = input('name? ')\nprint(len(answer))", timeout=10_000)
    assert not is_error and text.endswith("\n0") and "given an empty line" in text


NO_RESTART_KERNEL = '''\
"""A python kernel that starts once: started again (a restart), it exits at once."""
import os, sys
marker = os.environ["CK_TEST_STARTED"]
if os.path.exists(marker):
    sys.exit(3)
open(marker, "w").close()
from ipykernel.kernelapp import launch_new_instance
launch_new_instance()
'''


async def test_a_kernel_that_cannot_be_restarted_after_a_stuck_cell_is_replaced_and_the_reply_says_so(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    if (project / ".venv").is_dir():
        pytest.skip("runs a kernelspec of its own (kernel=no-restart), whatever the project's Python")

    specs = tmp_path / "jupyter" / "kernels" / "no-restart"
    specs.mkdir(parents=True)
    (specs / "kernel.py").write_text(NO_RESTART_KERNEL)
    marker = tmp_path / "started"
    (specs / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, str(specs / "kernel.py"), "-f", "{connection_file}"], "language": "python",
        "display_name": "starts once", "env": {"CK_TEST_STARTED": str(marker)}}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    settings = make_settings(tmp_path, project, kernel_start_timeout_s=20.0)
    async with Client(create_server(settings)) as client:
        stuck = await client.call_tool("ctx_execute", {
            "language": "python", "kernel": "no-restart", "timeout": 1000,
            "code": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass"})
        text = text_of(stuck)
        assert stuck.is_error and "could not be restarted" in text and "new kernel starts with the next call" in text
        marker.unlink()  # the next start works again
        again = await client.call_tool("ctx_execute", {"language": "python", "kernel": "no-restart",
                                                        "code": "print('fresh kernel')"})
    assert (again.is_error, text_of(again)) == (False, "fresh kernel")


# -- shell and JavaScript cells that flood or ignore SIGINT: each reply's claim is checked by the next call --

FLOOD_TIMEOUT_MS = 3000
# A flood that is never stopped runs until the pytest timeout (120 s); one that is stopped replies within
# seconds (the interrupt, the kernel's backlog and indexing up to 8 MB of output). This bound only tells the
# two apart: how soon the reply comes is measured by bench/flood_stop.py, not asserted (it failed on a loaded
# CI machine at 5.5 s, and a 30 s bound at 38.6 s with the suite on 3 xdist workers of a loaded 2-core machine).
STOPPED_WITHIN_S = 90.0
NO_CAP = 1 << 40  # so the timeout, not the output cap, stops the cell
KEPT = "the cell was interrupted; the kernel kept its state"


async def call(client: Client, language: str, code: str, **extra: object) -> tuple[bool, str, float]:
    """(is_error, text, seconds the call took)."""
    started = time.monotonic()
    result = await client.call_tool("ctx_execute", {"language": language, "code": code, **extra})
    return bool(result.is_error), text_of(result), time.monotonic() - started


@pytest.mark.parametrize("flood", ["yes", "cat /dev/urandom | od -x"])
async def test_a_shell_flood_stops_at_its_timeout_and_the_shell_keeps_cd_and_variables(
        tmp_path: Path, project: Path, flood: str) -> None:
    async with Client(create_server(make_settings(tmp_path, project, hard_output_cap=NO_CAP))) as client:
        await call(client, "shell", f"cd {tmp_path} && plain=kept")
        is_error, text, took = await call(client, "shell", flood, timeout=FLOOD_TIMEOUT_MS)
        assert is_error and f"[timed out after 3 s: {KEPT}]" in text, text[-300:]
        # the shell is idle again (nothing of the flood answers instead) and kept its state
        assert (await call(client, "shell", 'echo "$PWD $plain"'))[:2] == (False, f"{tmp_path} kept")
    assert took < FLOOD_TIMEOUT_MS / 1000 + STOPPED_WITHIN_S


BACKLOG_LINES = 24
READ_S_PER_LINE = 0.25  # the server's read of each output line, slowed: 6 s for the whole backlog
BACKLOG_TIMEOUT_MS = 2000


@pytest.mark.parametrize("language", ["shell", "python"])
async def test_a_backlog_that_outlasts_the_interrupt_grace_keeps_the_kernel(
        tmp_path: Path, project: Path, language: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # On a busy machine the server reads a flood more slowly than the kernel prints it: after the interrupt
    # stopped the cell, reading what the kernel had sent before it outlasted the grace, and the kernel, which
    # had stopped, was restarted with its state lost. Here the reader is slowed instead of the machine (an
    # idle machine, or a shorter grace for the real flood, made the test pass or fail by the load): the cell
    # prints its lines within its first second, the server has read about a third of them at the timeout,
    # and the rest takes 4 s, four times the grace. The kernel stopped long before the backlog is read.
    monkeypatch.setattr(runner, "INTERRUPT_GRACE_S", 1.0)
    read = JupyterKernel.next_iopub

    async def slow_read(self: JupyterKernel, timeout: float) -> dict[str, Any] | None:
        msg = await read(self, timeout)
        if msg is not None and msg["header"]["msg_type"] == "stream":
            await anyio.sleep(READ_S_PER_LINE * msg["content"]["text"].count("\n"))
        return msg

    monkeypatch.setattr(JupyterKernel, "next_iopub", slow_read)
    if language == "shell":
        state, check = "plain=kept", 'echo "$plain"'
        lines = f"for i in $(seq {BACKLOG_LINES}); do echo line $i; sleep 0.02; done; sleep 600"
    else:
        state, check = "plain = 'kept'", "print(plain)"
        lines = (f"import time\nfor i in range({BACKLOG_LINES}):\n    print('line', i, flush=True)\n"
                 "    time.sleep(0.02)\ntime.sleep(600)")
    async with Client(create_server(make_settings(tmp_path, project))) as client:
        await call(client, language, state)
        is_error, text, _ = await call(client, language, lines, timeout=BACKLOG_TIMEOUT_MS)
        assert is_error and f"[timed out after 2 s: {KEPT}]" in text, text[-300:]
        assert text.count("line") == BACKLOG_LINES, text  # the whole backlog was read, none of it lost
        assert (await call(client, language, check))[:2] == (False, "kept")


@pytest.mark.parametrize(("flood", "lost"), [
    ("yes", None),
    ("trap '' INT; yes", "the shell was killed; a new shell was started: unexported variables"),
])
async def test_a_shell_flood_stops_at_the_output_cap_and_the_reply_says_what_the_shell_kept(
        tmp_path: Path, project: Path, flood: str, lost: str | None) -> None:
    async with Client(create_server(make_settings(tmp_path, project, hard_output_cap=2 * 1024 * 1024))) as client:
        await call(client, "shell", f"cd {tmp_path} && plain=kept")
        is_error, text, took = await call(client, "shell", flood, timeout=30_000)
        assert is_error and "[output passed the 2 MB cap: the cell was interrupted" in text, text[-300:]
        assert "timed out" not in text
        if lost is None:
            assert "gone" not in text and took < STOPPED_WITHIN_S
        else:  # the kernel replaced the shell 2 s after the interrupt
            assert lost in text, text[-600:]
        after = await call(client, "shell", 'echo "$PWD ${plain:-gone}"')
        assert after[:2] == (False, f"{tmp_path} {'kept' if lost is None else 'gone'}")


@pytest.mark.parametrize("flood", [
    "while (true) console.log('x'.repeat(1000))",
    "setInterval(() => console.log('x'.repeat(1000)), 0); await new Promise(() => {})",
])
async def test_a_javascript_flood_stops_at_its_timeout_and_keeps_the_variables(
        tmp_path: Path, project: Path, flood: str) -> None:
    async with Client(create_server(make_settings(tmp_path, project, hard_output_cap=NO_CAP))) as client:
        await call(client, "javascript", "var kept = 'yes'")
        is_error, text, took = await call(client, "javascript", flood, timeout=FLOOD_TIMEOUT_MS)
        assert is_error and f"[timed out after 3 s: {KEPT}]" in text, text[-300:]
        assert took < FLOOD_TIMEOUT_MS / 1000 + STOPPED_WITHIN_S
        # the variable is there, and nothing of the flood goes on printing into later cells
        assert (await call(client, "javascript", "kept"))[:2] == (False, "'yes'")


async def test_a_shell_cell_that_ignores_sigint_is_ended_and_the_reply_says_which_state_is_gone(
        tmp_path: Path, client: Client) -> None:
    await call(client, "shell", f"cd {tmp_path} && plain=kept && export EXPORTED=kept")
    is_error, text, _ = await call(client, "shell", "trap '' INT; while :; do :; done", timeout=1500)
    assert is_error and "timed out after 1.5 s" in text and "kept its state" not in text, text
    assert "unexported variables, functions, aliases and options are gone" in text
    assert "the working directory and exported variables were kept" in text
    next_call = await call(client, "shell", 'echo "$PWD ${plain:-gone} $EXPORTED"')
    assert next_call[:2] == (False, f"{tmp_path} gone kept")


async def test_a_javascript_cell_that_ignores_sigint_is_ended_and_the_reply_says_the_variables_are_gone(
        client: Client) -> None:
    await call(client, "javascript", "var kept = 'yes'")
    is_error, text, _ = await call(client, "javascript", "process.on('SIGINT', () => {}); while (true) {}",
                                   timeout=1500)
    assert is_error and "timed out after 1.5 s" in text and "kept its state" not in text, text
    assert "node was restarted: all variables are gone" in text
    assert (await call(client, "javascript", "typeof kept"))[:2] == (False, "'undefined'")
