"""The ck-javascript and ck-typescript kernels (our node kernel) through jupyter_client.

They pin what the server relies on: state persists, every byte of a cell's output
arrives before its `status: idle`, stdout and stderr stay apart, errors are error
messages, and an interrupt stops a cell without losing the session when node can.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import nbformat
import pytest
from kernel_harness import Kernel, StartKernel, Trigger, any_output, running
from nbclient import NotebookClient

from context_kernel.kernel_processes.node_process import DRIVER, typescript_dir

pytestmark = pytest.mark.anyio
CELL_TIMEOUT = 20.0


def _require_runtime() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (bash kernels/install.sh)")
    if not os.path.isdir(typescript_dir()):
        pytest.skip("npm package typescript is not installed in the venv (bash kernels/install.sh)")


def printed(size: int) -> Trigger:
    """Holds once the cell has printed more than size characters."""
    return lambda cell, msg: sum(len(text) for _, text in cell.streams) > size


@pytest.fixture(scope="module")
async def js() -> AsyncIterator[Kernel]:
    _require_runtime()
    async with running("ck-javascript", cell_timeout=CELL_TIMEOUT) as kernel:
        yield kernel


@pytest.fixture(scope="module")
async def ts() -> AsyncIterator[Kernel]:
    _require_runtime()
    async with running("ck-typescript", cell_timeout=CELL_TIMEOUT) as kernel:
        yield kernel


@pytest.fixture
async def fresh_js(start_kernel: StartKernel) -> Kernel:
    _require_runtime()
    return await start_kernel("ck-javascript", cell_timeout=CELL_TIMEOUT)


async def test_variables_functions_and_classes_persist_between_javascript_cells(js: Kernel) -> None:
    await js.run(
        "const answer = 6 * 7; function twice(x) { return 2 * x }\n"
        "class Box { constructor(v) { this.v = v } }"
    )
    cell = await js.run("console.log(answer, twice(answer), new Box('b').v)")
    assert cell.stream() == "42 84 b\n"


async def test_a_const_can_be_declared_again_in_a_later_cell_like_in_a_repl(js: Kernel) -> None:
    await js.run("const again = 1")
    assert (await js.run("const again = 2; again")).value() == "2"


async def test_the_last_expression_value_comes_back_as_execute_result(js: Kernel) -> None:
    assert (await js.run("({a: [1, 2], s: 'x'})")).value() == "{ a: [ 1, 2 ], s: 'x' }"
    assert (await js.run("let nothing = 1")).of_type("execute_result") == []


async def test_typescript_keeps_state_and_accepts_annotations_interfaces_and_enums(ts: Kernel) -> None:
    first = await ts.run(
        "interface Point { x: number }\nenum Dir { Up, Down }\n"
        "const p: Point = { x: 3 };\nfunction norm<T extends Point>(q: T): number { return q.x }"
    )
    assert first.reply["status"] == "ok", first.of_type("error")
    assert (await ts.run("const n: number = norm(p) + Dir.Down; n")).value() == "4"


async def test_typescript_error_lines_point_at_the_typescript_source(ts: Kernel) -> None:
    cell = await ts.run(
        "type A = string\ninterface B { b: A }\n"
        "function f(): never {\n  throw new RangeError('deep')\n}\nf()"
    )
    (error,) = cell.of_type("error")
    assert (error["ename"], error["evalue"]) == ("RangeError", "deep")
    assert any("cell" in line and ":4:" in line for line in error["traceback"]), error["traceback"]


async def test_typescript_syntax_error_names_line_and_column(ts: Kernel) -> None:
    cell = await ts.run("const ok = 1\nconst bad: number = ;")
    assert cell.reply["status"] == "error"
    assert cell.reply["ename"] == "SyntaxError"
    assert "line 2" in cell.of_type("error")[0]["traceback"][0]


async def test_imports_bind_names_that_later_cells_can_use(ts: Kernel) -> None:
    await ts.run(
        "import path from 'node:path'\nimport { join } from 'node:path'\n"
        "import type { Stats } from 'node:fs'"
    )
    assert (await ts.run("join('a', path.basename('/x/y'))")).value() == "'a/y'"


async def test_console_error_arrives_as_stderr_apart_from_stdout(js: Kernel) -> None:
    cell = await js.run("console.log('to-out'); console.error('to-err'); process.stdout.write('raw')")
    assert cell.stream("stdout") == "to-out\nraw"
    assert cell.stream("stderr") == "to-err\n"


async def test_a_thrown_error_is_an_error_message_and_reply_with_name_and_message(js: Kernel) -> None:
    cell = await js.run("console.log('before')\nnull.boom")
    (error,) = cell.of_type("error")
    assert error["ename"] == "TypeError"
    assert "null" in error["evalue"]
    assert error["traceback"][0].startswith("TypeError: ")
    assert any(":2:" in line for line in error["traceback"][1:]), error["traceback"]
    assert cell.stream() == "before\n"
    assert (cell.reply["status"], cell.reply["ename"], cell.reply["evalue"]) == (
        "error",
        error["ename"],
        error["evalue"],
    )


async def test_traceback_has_only_cell_frames_even_when_the_cwd_contains_the_driver(
    start_kernel: StartKernel,
) -> None:
    _require_runtime()
    k = await start_kernel("ck-javascript", cwd=Path(DRIVER).parent, cell_timeout=CELL_TIMEOUT)
    cell = await k.run("throw new TypeError('boom')")
    assert cell.of_type("error")[0]["traceback"] == ["TypeError: boom", "    at cell1:1:21"]


async def test_throwing_a_non_error_value_is_reported_as_uncaught(js: Kernel) -> None:
    cell = await js.run("throw {code: 7}")
    assert (cell.reply["ename"], cell.reply["evalue"]) == ("Uncaught", "{ code: 7 }")


async def test_top_level_await_works_and_its_result_persists(js: Kernel) -> None:
    cell = await js.run(
        "const slow = await new Promise(r => setTimeout(() => r('done'), 20)); console.log(slow)"
    )
    assert cell.stream() == "done\n"
    assert (await js.run("slow")).value() == "'done'"


async def test_no_output_is_lost_or_late_across_200_cells_that_log_after_an_await(js: Kernel) -> None:
    js.strays.clear()
    for i in range(200):
        cell = await js.run(f"await new Promise(r => setTimeout(r, 1)); console.log({i})")
        assert cell.stream() == f"{i}\n"
    await js.run("1")
    assert js.strays == []


async def test_a_large_flood_arrives_complete_in_coalesced_messages(js: Kernel) -> None:
    cell = await js.run("for (let i = 0; i < 100000; i++) console.log(i)")
    assert cell.stream().split("\n")[:-1] == [str(i) for i in range(100000)]
    assert len(cell.of_type("stream")) < 500


async def test_output_of_a_timer_that_fires_after_its_cell_comes_with_the_next_cell(js: Kernel) -> None:
    js.strays.clear()
    # setImmediate runs after the cell has ended (its end is a promise continuation)
    first = await js.run("void setImmediate(() => console.log('late'))")
    cell = await js.run("console.log('second')")
    assert (first.stream(), cell.stream()) == ("", "late\nsecond\n")
    assert js.strays == []


async def test_emoji_arrive_intact_and_invalid_utf8_bytes_become_replacement_characters(
    js: Kernel,
) -> None:
    cell = await js.run(
        "console.log('😀 日本 é'); "
        "process.stdout.write(Buffer.from([0x41, 0xff, 0xfe, 0x42, 0x0a]))"
    )
    assert cell.stream() == "😀 日本 é\nA\ufffd\ufffdB\n"


async def test_file_path_metadata_defines_file_content_variables(js: Kernel, tmp_path: Path) -> None:
    target = tmp_path / "data é.txt"
    target.write_text("line1\nü 😀\n", encoding="utf-8")
    cell = await js.run(
        "console.log(JSON.stringify([FILE_CONTENT, FILE_CONTENT_PATH === file_path, file_path]))",
        metadata={"context_kernel": {"file_path": str(target)}},
    )
    assert cell.stream() == f'["line1\\nü 😀\\n",true,"{target}"]\n'


async def test_missing_file_path_is_an_error_before_the_cell_runs(js: Kernel, tmp_path: Path) -> None:
    cell = await js.run(
        "console.log('ran')", metadata={"context_kernel": {"file_path": str(tmp_path / "nope")}}
    )
    assert cell.reply["ename"] == "FileNotFoundError"
    assert cell.stream() == ""


async def test_interrupting_a_busy_loop_stops_it_and_keeps_the_variables(fresh_js: Kernel) -> None:
    await fresh_js.run("var kept = 41")
    cell = await fresh_js.run("console.log('spinning'); while (true) {}", interrupt_when=any_output)
    assert cell.reply["status"] == "error"
    assert cell.of_type("error")[0]["ename"] == "KeyboardInterrupt"
    assert await fresh_js.km.is_alive()
    assert (await fresh_js.run("kept + 1")).value() == "42"


async def test_interrupting_an_await_that_never_resolves_keeps_the_variables(fresh_js: Kernel) -> None:
    await fresh_js.run("var kept = 'yes'")
    cell = await fresh_js.run("console.log('waiting'); await new Promise(() => {})", interrupt_when=any_output)
    assert cell.reply["ename"] == "KeyboardInterrupt"
    assert (await fresh_js.run("kept")).value() == "'yes'"


async def test_interrupting_a_child_process_ends_it_and_the_cell(fresh_js: Kernel) -> None:
    cell = await fresh_js.run(
        "console.log('go'); require('child_process').execSync('sleep 30')", interrupt_when=any_output
    )
    assert cell.reply["status"] == "error"
    assert (await fresh_js.run("'next'")).value() == "'next'"


async def test_a_busy_loop_after_an_await_cannot_be_stopped_so_node_restarts_and_says_state_is_lost(
    fresh_js: Kernel,
) -> None:
    await fresh_js.run("var kept = 1")
    cell = await fresh_js.run("console.log('spinning'); await null; while (true) {}", interrupt_when=any_output)
    assert cell.reply["ename"] == "KeyboardInterrupt"
    assert cell.reply["context_kernel"] == {"state_lost": True, "note": cell.reply["evalue"]}
    assert "node was restarted: all variables are gone" in cell.reply["evalue"]
    assert (await fresh_js.run("typeof kept")).value() == "'undefined'"


async def test_a_cell_whose_sigint_listener_swallows_the_interrupt_gets_node_restarted_and_says_so(
    fresh_js: Kernel,
) -> None:
    await fresh_js.run("var kept = 1")
    cell = await fresh_js.run(
        "process.on('SIGINT', () => {}); console.log('spinning'); while (true) {}", interrupt_when=any_output
    )
    assert cell.reply["ename"] == "KeyboardInterrupt"
    assert cell.reply["context_kernel"]["state_lost"] is True
    assert (await fresh_js.run("typeof kept")).value() == "'undefined'"


async def test_interrupting_a_console_log_flood_stops_it_and_keeps_the_variables(fresh_js: Kernel) -> None:
    # the interrupt lands inside console.log's code, with the pipe full: the next output must still go out
    await fresh_js.run("var kept = 'yes'")
    cell = await fresh_js.run("while (true) console.log('x'.repeat(1000))", interrupt_when=printed(5_000_000))
    assert cell.reply["ename"] == "KeyboardInterrupt" and "context_kernel" not in cell.reply
    after = await fresh_js.run("console.log('printed'); kept")
    assert (after.stream(), after.value()) == ("printed\n", "'yes'")


async def test_interrupting_a_cell_stops_the_timers_it_set_and_no_others(fresh_js: Kernel) -> None:
    await fresh_js.run("var ticks = 0; var keep = setInterval(() => { ticks += 1 }, 1)")
    cell = await fresh_js.run(
        "setInterval(() => console.log('flood'), 0); setTimeout(() => setInterval(() => console.log('nested'), 0), 0);"
        " await new Promise(() => {})",
        interrupt_when=any_output,
    )
    assert cell.reply["ename"] == "KeyboardInterrupt"
    # the earlier cell's interval still ticks, and while it does, nothing of the interrupted cell prints
    first = await fresh_js.run(
        "var seen = ticks; await new Promise((done) => { const t = setInterval(() => {"
        " if (ticks > seen + 3) { clearInterval(t); done(); } }, 1); }); 'ticked'"
    )
    later = await fresh_js.run("clearInterval(keep); 'done'")
    assert first.value() == "'ticked'" and first.stream() + later.stream() == ""


async def test_process_exit_is_an_exit_code_error_and_the_next_cell_gets_a_fresh_node(
    fresh_js: Kernel,
) -> None:
    cell = await fresh_js.run("console.log('bye'); process.exit(3)")
    assert (cell.reply["ename"], cell.reply["evalue"]) == ("ExitCode", "3")
    assert cell.reply["context_kernel"]["state_lost"] is True
    assert cell.stream() == "bye\n"
    assert (await fresh_js.run("6 * 7")).value() == "42"


async def test_node_dies_when_the_kernel_is_killed(start_kernel: StartKernel) -> None:
    _require_runtime()
    k = await start_kernel("ck-javascript", cell_timeout=CELL_TIMEOUT)
    try:
        pid = int((await k.run("process.pid")).value())
        pidfd = os.pidfd_open(pid)
        os.kill(k.pid, signal.SIGKILL)
    finally:
        await k.stop_now()
    try:  # a pidfd turns readable when its process has ended
        assert select.select([pidfd], [], [], CELL_TIMEOUT)[0] == [pidfd]
    finally:
        os.close(pidfd)


def test_shutdown_from_nbclient_stops_node_cleanly(tmp_path: Path) -> None:
    # nbclient shuts a kernel down with shutdown_request, which ipykernel handles on its control
    # thread's loop; node's pipes belong to the shell loop, and stopping it there used to raise.
    _require_runtime()
    script = (
        "import nbformat\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.v4.new_notebook()\n"
        "nb.cells.append(nbformat.v4.new_code_cell('console.log(1 + 1)'))\n"
        "NotebookClient(nb, timeout=60, kernel_name='ck-javascript').execute()\n"
        "print(nb.cells[0].outputs[0]['text'].strip())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"
    assert "different loop" not in done.stderr and "Traceback" not in done.stderr, done.stderr


async def test_nbclient_executes_a_javascript_notebook(tmp_path: Path) -> None:
    _require_runtime()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("const greeting = 'hello'"),
        nbformat.v4.new_code_cell("console.log(greeting + ' from node'); console.error('warn'); 6 * 7"),
        nbformat.v4.new_code_cell("throw new RangeError('nope')"),
    ]
    client = NotebookClient(nb, kernel_name="ck-javascript", timeout=CELL_TIMEOUT, startup_timeout=CELL_TIMEOUT,
                            allow_errors=True, resources={"metadata": {"path": str(tmp_path)}})
    with anyio.fail_after(4 * CELL_TIMEOUT):
        await client.async_execute()
    assert nb.cells[0].outputs == []
    out, err, result = nb.cells[1].outputs
    assert (out.name, out.text, err.name, err.text) == ("stdout", "hello from node\n", "stderr", "warn\n")
    assert (result.output_type, result.data["text/plain"]) == ("execute_result", "42")
    (error,) = nb.cells[2].outputs
    assert (error.output_type, error.ename, error.evalue) == ("error", "RangeError", "nope")
    assert [cell.execution_count for cell in nb.cells] == [1, 2, 3]
    assert nb.metadata["language_info"]["name"] == "javascript"
    nbformat.validate(nb)
