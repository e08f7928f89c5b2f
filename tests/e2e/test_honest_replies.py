"""A reply never claims what did not happen: each case an agent met, answered truthfully and in time."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.helpers import make_settings, session_cells, text_of

from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


async def run(client: Client, language: str, code: str, **extra: object) -> tuple[bool, str]:
    result = await client.call_tool("ctx_execute", {"language": language, "code": code, **extra})
    return bool(result.is_error), text_of(result)


async def test_a_kernel_that_stops_replying_is_an_error_and_is_replaced(client: Client, project: Path) -> None:
    # `sys.stdout = None` breaks ipykernel: it goes idle without an execute_reply, and every later
    # cell used to come back as "(no output)", not an error, while its code never ran.
    await run(client, "python", "kept = 1")
    await run(client, "python", "import sys; sys.stdout = None")  # this cell itself still gets its reply
    is_error, text = await run(client, "python", "open('ran.txt', 'w').write('yes'); print('ran')")
    assert is_error and "without replying" in text and "state is lost" in text and "run the cell again" in text
    assert not (project / "ran.txt").exists()  # indeed it did not run
    is_error, text = await run(client, "python", "open('ran.txt', 'w').write('yes'); print('ran')")
    assert (is_error, text) == (False, "ran") and (project / "ran.txt").read_text() == "yes"
    is_error, text = await run(client, "python", "kept")
    assert is_error and "NameError" in text  # the reply said the state was lost: it is


async def test_input_gets_an_empty_line_in_python_as_in_r_and_shell(client: Client) -> None:
    is_error, text = await run(client, "python", "x = input('name? ')\nprint(repr(x))")
    assert not is_error and "''" in text and "StdinNotImplementedError" not in text
    assert "given an empty line" in text


async def test_a_shell_command_that_finds_nothing_is_an_answer_not_an_error(client: Client) -> None:
    is_error, text = await run(client, "shell", "echo hello > f.txt; grep nomatch f.txt")
    assert (is_error, text) == (False, "(no output)\n[exit code 1]")
    is_error, text = await run(client, "shell", "cat no-such-file")  # exit 1 with a complaint is a failure
    assert is_error and "No such file" in text


async def test_purging_the_current_session_leaves_it_usable(client: Client) -> None:
    await run(client, "python", "y = 1")
    purged = await client.call_tool("ctx_purge", {"confirm": True})
    assert not purged.is_error and "1 session(s)" in text_of(purged)
    assert await run(client, "python", "print(y)") == (False, "1")  # records went, the kernel stayed
    batch = await client.call_tool("ctx_batch_execute", {"commands": [{"label": "a", "command": "echo hi"}]})
    assert not batch.is_error and "1. a [#" in text_of(batch) and "]: ok" in text_of(batch)
    stats = text_of(await client.call_tool("ctx_stats", {}))
    assert "ctx_execute" in stats


async def test_a_kernel_stopped_to_make_room_says_so_on_its_session_s_next_call(tmp_path: Path,
                                                                                 project: Path) -> None:
    settings = make_settings(tmp_path, project, max_kernels=1)
    server = create_server(settings)
    async with Client(server) as first:
        await run(first, "python", "mine = 1")
        await run(first, "shell", "echo other")  # evicts the python kernel: the maximum is one
        is_error, text = await run(first, "python", "print(mine)")
    assert is_error and "NameError" in text
    assert text.startswith("[your python kernel was stopped to make room") and "from before are gone" in text


async def test_kernels_start_after_the_project_directory_was_deleted_and_recreated(tmp_path: Path) -> None:
    # A re-clone: the server's own working directory is the deleted directory, which made
    # jupyter_client fail every new kernel with a bare "[Errno 2] No such file or directory".
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(tmp_path / "home")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "context_kernel", "serve"], env=env,
                                   cwd=str(project))
    async with Client(params) as client:
        assert await run(client, "python", "x = 1; print(x)") == (False, "1")
        shutil.rmtree(project)
        project.mkdir()
        (project / "data.txt").write_text("new clone\n")
        assert await run(client, "shell", "cat data.txt") == (False, "new clone")
        is_error, text = await run(client, "python", "print(open('data.txt').read().strip())")
        assert not is_error and text.endswith("new clone")
        assert "project directory was replaced" in text  # the warm kernel was in the old one


@pytest.mark.kernels
async def test_a_print_flood_collapses_in_the_reply_and_the_record_keeps_every_line(client: Client) -> None:
    result = await client.call_tool("ctx_execute", {"language": "python", "code": (
        "for _ in range(12346): print('x' * 70)\nprint('y' * 100_000)\nprint('done')")})
    text = text_of(result)
    assert not result.is_error
    # Was 8 KB of xxxx…: the line once, a count, the long run as its start and a count.
    assert text.startswith("x" * 70 + "\n[… the line above repeated 12,345 more times]\n"), text[:300]
    assert "yyyy…['y' repeated 100,000 times]\ndone" in text and len(text.encode()) < 600, text
    assert "[repeats collapsed; the full output is indexed" in text
    exported = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    [cell] = session_cells(nbformat.read(Path(exported.split(" to ", 1)[1].split(";")[0]), as_version=4))
    stdout = "".join(o.text for o in cell.outputs if o.get("name") == "stdout" and "[context-kernel" not in o.text)
    assert stdout == ("x" * 70 + "\n") * 12346 + "y" * 100_000 + "\ndone\n"
    assert cell.metadata.context_kernel.agent_saw in ("trimmed", "indexed")
