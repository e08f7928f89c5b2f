"""The ck-bash kernel (one persistent bash) through jupyter_client, as the server drives it."""

from __future__ import annotations

import os
import select
import shutil
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from kernel_harness import Cell, Kernel, StartKernel, stdout_has

from context_kernel.kernel_processes.bash_shell import BETWEEN_CELLS, BETWEEN_CELLS_END

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed"),
]
TIMEOUT = 30  # seconds for any one cell


@pytest.fixture
async def kernel(start_kernel: StartKernel) -> AsyncIterator[Kernel]:
    yield await start_kernel("ck-bash", cell_timeout=TIMEOUT)


def wait_gone(pid: int, timeout: float = 10) -> bool:
    """True once process pid has exited (waits on a pidfd; any process, not only children)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def assert_ok(cell: Cell) -> None:
    assert cell.error is None, (cell.error, cell.streams)
    assert cell.reply["status"] == "ok"


def assert_exit_code(cell: Cell, code: int) -> None:
    assert cell.error is not None and cell.error["ename"] == "ExitCode", cell.streams
    assert cell.error["evalue"] == str(code)
    assert cell.reply["status"] == "error"
    assert (cell.reply["ename"], cell.reply["evalue"]) == ("ExitCode", str(code))


async def test_kernel_info_describes_bash(kernel: Kernel) -> None:
    reply = await kernel.kc.kernel_info(reply=True, timeout=TIMEOUT)
    info = reply["content"]["language_info"]
    assert (info["name"], info["file_extension"], info["mimetype"]) == ("bash", ".sh", "text/x-sh")


async def test_cwd_variables_functions_and_aliases_persist_between_cells(
    kernel: Kernel, tmp_path: Path
) -> None:
    setup = await kernel.run(
        f"""cd {tmp_path}
export CK_EXPORTED=exported
plain=plain
declare -A table=([key]=value)
greet() {{
  echo "hello $1"
}}
alias shout='echo LOUD'""",
    )
    assert_ok(setup)
    cell = await kernel.run('echo "$PWD $CK_EXPORTED $plain ${table[key]}"; greet you; shout')
    assert_ok(cell)
    assert cell.stdout == f"{tmp_path} exported plain value\nhello you\nLOUD\n"


async def test_stderr_is_a_separate_stream_from_stdout(kernel: Kernel) -> None:
    cell = await kernel.run("echo to-out; echo to-err >&2; echo more-out")
    assert_ok(cell)
    assert cell.stdout == "to-out\nmore-out\n"
    assert cell.stderr == "to-err\n"


async def test_nonzero_exit_status_of_the_last_command_is_an_exit_code_error(
    kernel: Kernel,
) -> None:
    cell = await kernel.run("echo partial; ls /no/such/dir")
    assert_exit_code(cell, 2)
    assert cell.stdout == "partial\n"
    assert "No such file or directory" in cell.stderr


async def test_grep_without_match_is_exit_code_1_with_no_stderr(kernel: Kernel) -> None:
    cell = await kernel.run("printf 'a\\nb\\n' | grep zzz")
    assert_exit_code(cell, 1)
    assert cell.streams == []


async def test_output_streams_while_the_cell_is_still_running(kernel: Kernel) -> None:
    cell = await kernel.run("for i in 1 2 3; do echo $i; sleep 0.4; done")
    assert_ok(cell)
    assert cell.stdout == "1\n2\n3\n"
    assert len(cell.streams) >= 3
    assert cell.ended - cell.stream_times[0] > 0.6  # "1" arrived long before the end


async def test_a_flood_of_output_is_coalesced_into_few_messages(kernel: Kernel) -> None:
    cell = await kernel.run("yes | head -c 50000000")
    assert_ok(cell)
    assert len(cell.stdout) == 50_000_000
    assert set(cell.stdout) == {"y", "\n"}
    assert len(cell.streams) < 2000  # ~64 KiB each, not one per line


async def test_interrupt_stops_the_command_and_keeps_cwd_and_variables(
    kernel: Kernel, tmp_path: Path
) -> None:
    assert_ok(await kernel.run(f"cd {tmp_path} && export CK_KEPT=yes && kept_plain=also"))
    started = time.monotonic()
    cell = await kernel.run("echo started; sleep 100; echo after", interrupt_when=stdout_has("started"))
    assert time.monotonic() - started < 10
    assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt"
    assert cell.reply["status"] == "error" and cell.reply["ename"] == "KeyboardInterrupt"
    assert "after" not in cell.stdout
    assert "state_lost" not in cell.reply.get("context_kernel", {})  # nothing was lost (it says where it started)
    after = await kernel.run('echo "$PWD $CK_KEPT $kept_plain"')
    assert after.stdout == f"{tmp_path} yes also\n"  # same shell: even plain variables


async def test_interrupt_breaks_out_of_a_loop_of_builtins(kernel: Kernel) -> None:
    cell = await kernel.run("echo started; while :; do :; done; echo after", interrupt_when=stdout_has("started"))
    assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt"
    assert "after" not in cell.stdout
    assert (await kernel.run("echo alive")).stdout == "alive\n"


async def test_a_command_ignoring_sigint_gets_the_shell_replaced_with_cwd_and_exports(
    kernel: Kernel, tmp_path: Path
) -> None:
    assert_ok(await kernel.run(f"cd {tmp_path} && export CK_KEPT=yes && kept_plain=also"))
    cell = await kernel.run("trap '' INT; echo started; sleep 100", interrupt_when=stdout_has("started"))
    assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt"
    assert "new shell" in "\n".join(cell.error["traceback"])
    report = cell.reply["context_kernel"]
    assert report["state_lost"] is True and report["note"] == cell.error["traceback"][1]
    assert "unexported variables, functions, aliases and options are gone" in report["note"]
    after = await kernel.run('echo "$PWD $CK_KEPT ${kept_plain:-gone}"')
    assert after.stdout == f"{tmp_path} yes gone\n"


async def test_exit_inside_a_cell_is_reported_and_a_new_shell_keeps_cwd_and_exports(
    kernel: Kernel, tmp_path: Path
) -> None:
    cell = await kernel.run(f"cd {tmp_path}; export CK_KEPT=yes; f() {{ :; }}; exit 3")
    assert_exit_code(cell, 3)
    assert "new shell" in "\n".join(cell.error["traceback"])  # type: ignore[index]
    after = await kernel.run('echo "$PWD $CK_KEPT"; type -t f || echo no-function')
    assert after.stdout == f"{tmp_path} yes\nno-function\n"


async def test_a_killed_shell_is_reported_and_replaced(kernel: Kernel) -> None:
    cell = await kernel.run("kill -9 $$")
    assert_exit_code(cell, 128 + 9)
    assert "SIGKILL" in "\n".join(cell.error["traceback"])  # type: ignore[index]
    assert (await kernel.run("echo alive")).stdout == "alive\n"


async def test_set_e_stops_the_cell_at_the_first_failure(kernel: Kernel) -> None:
    cell = await kernel.run("set -e\necho before\nfalse\necho unreachable")
    assert_exit_code(cell, 1)
    assert cell.stdout == "before\n"
    after = await kernel.run("false; echo errexit-did-not-leak")
    assert after.stdout == "errexit-did-not-leak\n"


async def test_set_x_traces_only_the_cell_that_sets_it(kernel: Kernel) -> None:
    cell = await kernel.run("set -x; echo traced")
    assert cell.stdout == "traced\n"
    assert cell.stderr.endswith("echo traced\n") and cell.stderr.count("\n") == 1
    after = await kernel.run("echo quiet")
    assert (after.stdout, after.stderr) == ("quiet\n", "")


async def test_a_syntax_error_is_an_error_not_a_hang(kernel: Kernel) -> None:
    cell = await kernel.run("if then")
    assert_exit_code(cell, 2)
    assert cell.stderr.startswith("bash: line 1: syntax error near unexpected token")
    unclosed = await kernel.run('echo "never closed')
    assert unclosed.error is not None
    assert (await kernel.run("echo alive")).stdout == "alive\n"


async def test_heredocs_functions_and_trailing_backslashes_work(kernel: Kernel) -> None:
    cell = await kernel.run(
        """name=world
cat <<EOF
hello $name
EOF
cat <<'RAW'
$name stays
RAW
add() {
  local a=$1 \\
        b=$2
  echo $((a + b))
}
add 2 \\
    3
echo tail \\""",
    )
    assert_ok(cell)
    # a backslash ending the cell stays literal, as with `bash -c` (no wait for more input)
    assert cell.stdout == "hello world\n$name stays\n5\ntail \\\n"


async def test_output_without_trailing_newline_arrives_intact(kernel: Kernel) -> None:
    cell = await kernel.run("printf 'no newline'")
    assert_ok(cell)
    assert cell.stdout == "no newline"


async def test_output_that_looks_like_an_end_marker_is_plain_output(kernel: Kernel) -> None:
    fake = "\n".join(f"{'0' * 12}:{n} 0" for n in range(1, 40)) + "\n__CK_DONE__ 0\n"
    cell = await kernel.run(f"printf '%s' '{fake}'; printf '%s' '{fake}' >&2; false")
    assert_exit_code(cell, 1)  # the real status, not any printed one
    assert cell.stdout == fake and cell.stderr == fake


async def test_invalid_utf8_output_becomes_replacement_characters(kernel: Kernel) -> None:
    cell = await kernel.run("printf '\\xff\\xfe'; printf 'ok\\n'")
    assert_ok(cell)
    assert cell.stdout == "\ufffd\ufffdok\n"


async def test_a_character_split_across_writes_stays_whole(kernel: Kernel) -> None:
    cell = await kernel.run("printf '\\xc3'; sleep 0.2; printf '\\xa9\\n'")
    assert cell.stdout == "\u00e9\n"


async def test_commands_reading_stdin_get_eof_instead_of_hanging(kernel: Kernel) -> None:
    cell = await kernel.run('cat; read -r line; echo "read status $?"')
    assert_ok(cell)
    assert cell.stdout == "read status 1\n"


async def test_a_cell_closing_its_fds_does_not_break_the_next_cell(kernel: Kernel) -> None:
    await kernel.run("exec 0<&- 1>&- 2>&-; echo into-the-void")
    await kernel.run("exec >/dev/null 2>&1")
    cell = await kernel.run("echo back; echo err-back >&2")
    assert_ok(cell)
    assert (cell.stdout, cell.stderr) == ("back\n", "err-back\n")


async def test_a_cell_closing_every_fd_gets_a_new_shell_and_the_next_cell_runs(
    kernel: Kernel, tmp_path: Path
) -> None:
    assert_ok(await kernel.run(f"cd {tmp_path}"))
    cell = await kernel.run('for fd in {3..255}; do eval "exec $fd>&-"; done 2>/dev/null; echo g')
    assert_ok(cell)  # bash lost its own input: the cell still counts, the shell is replaced
    assert cell.stdout == "g\n"
    assert "new shell" in cell.stderr
    after = await kernel.run("echo $PWD")
    assert after.stdout == f"{tmp_path}\n"


async def test_file_path_metadata_defines_the_file_variables(
    kernel: Kernel, tmp_path: Path
) -> None:
    target = tmp_path / "notes file.txt"
    target.write_text("line one\nline 'two'\n")
    cell = await kernel.run(
        'echo "$FILE_CONTENT_PATH|$file_path"; printf %s "$FILE_CONTENT"',
        metadata={"context_kernel": {"file_path": str(target)}},
    )
    assert_ok(cell)
    assert cell.stdout == f"{target}|{target}\nline one\nline 'two'\n"


async def test_what_a_background_job_prints_between_cells_comes_marked_as_such_with_the_next_cell(
    kernel: Kernel, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    os.mkfifo(go)
    cell = await kernel.run(f"(read -r _ < {go}; echo from-background; echo bg-err >&2) & echo $!")
    job = int(cell.stdout)
    with anyio.fail_after(TIMEOUT):
        await anyio.to_thread.run_sync(go.write_text, "\n")  # the job prints now, between cells
    assert wait_gone(job)
    cell = await kernel.run("echo mine")
    assert_ok(cell)
    assert cell.stdout == f"{BETWEEN_CELLS}from-background\n{BETWEEN_CELLS_END}mine\n"
    assert cell.stderr == f"{BETWEEN_CELLS}bg-err\n{BETWEEN_CELLS_END}"
    assert (await kernel.run("echo again")).stdout == "again\n"


async def test_shutdown_kills_the_shell_and_its_background_jobs(kernel: Kernel) -> None:
    cell = await kernel.run("sleep 1000 & echo $$ $!")
    bash_pid, job_pid = map(int, cell.stdout.split())
    await kernel.stop()
    assert wait_gone(bash_pid) and wait_gone(job_pid)


async def test_the_shell_dies_with_a_killed_kernel(kernel: Kernel) -> None:
    bash_pid = int((await kernel.run("echo $$")).stdout)
    kernel_pid = kernel.pid
    os.kill(kernel_pid, signal.SIGKILL)  # the kernel alone, not its process group
    assert wait_gone(bash_pid)
