"""The R kernel (IRkernel, kernelspec "ir") as the server sees it, and the R FILE_CONTENT prelude.

These pin IRkernel's real behaviour (through our launcher, kernels/ir/launch.R), quirks included,
because the execution layer depends on it: errors stop a cell at the end of the failing *line*, an
interrupt replies "abort" with no iopub error, message() text carries an extra newline.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from kernel_harness import Kernel, StartKernel, busy, running, stream_named

from context_kernel.kernels.file_content import R_PRELUDE_LINES, r_file_prelude, r_string_literal

pytestmark = pytest.mark.anyio
CELL_TIMEOUT = 20.0


def _require_ir() -> None:
    if shutil.which("R") is None:
        pytest.skip("R is not installed (bash kernels/install.sh installs r-cran-irkernel)")
    try:
        spec = KernelSpecManager().get_kernel_spec("ir")
    except NoSuchKernel:
        pytest.skip("IRkernel kernelspec 'ir' is not installed (bash kernels/install.sh)")
    # R is there but the spec is IRkernel's own (no interrupt guard): a setup error, not a skip.
    assert any("launch.R" in arg for arg in spec.argv), f"{spec.resource_dir} is not kernels/ir: run kernels/install.sh"


@pytest.fixture(scope="module")
def short_tmp() -> Iterator[Path]:
    # Files for the R cells, in one short module-wide directory: R's messages quote these paths whole.
    with tempfile.TemporaryDirectory(prefix="ck-ir-") as d:
        yield Path(d)


@pytest.fixture(scope="module")
async def kernel() -> AsyncIterator[Kernel]:
    _require_ir()
    async with running("ir", cell_timeout=CELL_TIMEOUT) as k:
        yield k


async def test_variable_assigned_in_one_cell_is_visible_in_the_next(kernel: Kernel) -> None:
    assert (await kernel.run("persisted <- 6 * 7")).reply["status"] == "ok"
    assert (await kernel.run("cat(persisted)")).stream("stdout") == "42"


async def test_printed_data_frame_arrives_as_stdout_text_before_idle(kernel: Kernel) -> None:
    cell = await kernel.run('print(data.frame(n = 1:2, s = c("a", "b")))')
    assert cell.stream("stdout") == "  n s\n1 1 a\n2 2 b\n"
    assert cell.reply["status"] == "ok"


async def test_visible_value_arrives_as_display_data_with_plain_text(kernel: Kernel) -> None:
    (data,) = [d["data"] for d in (await kernel.run("1:3")).of_type("display_data")]
    assert data["text/plain"] == "[1] 1 2 3"


async def test_message_goes_to_stderr_with_an_extra_newline_and_cat_to_stdout(kernel: Kernel) -> None:
    cell = await kernel.run('cat("out\\n"); message("err")')
    assert cell.stream("stdout") == "out\n"
    assert cell.stream("stderr") == "err\n\n"


async def test_output_of_earlier_lines_streams_before_a_slow_line_finishes(kernel: Kernel) -> None:
    cell = await kernel.run('cat("first")\nSys.sleep(0.3)\ncat("second")')
    assert [m["content"]["text"] for m in cell.messages if m["msg_type"] == "stream"] == ["first", "second"]


async def test_r_error_sends_iopub_error_and_error_reply_with_r_message_and_call_stack(kernel: Kernel) -> None:
    cell = await kernel.run('f <- function() stop("boom")\nf()')
    (error,) = cell.of_type("error")
    assert error["ename"] == "ERROR"
    assert error["evalue"] == "Error in f(): boom\n"
    assert error["traceback"][0] == "Error in f(): boom\nTraceback:\n"
    assert any(line.startswith("1. f()") for line in error["traceback"])
    assert cell.reply["status"] == "error"
    assert (cell.reply["ename"], cell.reply["evalue"]) == (error["ename"], error["evalue"])


async def test_error_stops_the_cell_at_the_end_of_the_failing_line_not_the_statement(kernel: Kernel) -> None:
    cell = await kernel.run('cat("a "); stop("x"); cat("same-line ")\ncat("next-line")')
    assert cell.reply["status"] == "error"
    assert cell.stream("stdout") == "a same-line "


async def test_interrupt_stops_an_infinite_loop_replies_abort_and_keeps_variables(kernel: Kernel) -> None:
    await kernel.run("kept <- 7")
    cell = await kernel.run('cat("looping")\nwhile (TRUE) {}', interrupt_when=stream_named("stdout"))
    assert cell.reply["status"] == "abort"
    assert cell.of_type("error") == []
    assert await kernel.km.is_alive()
    assert (await kernel.run("cat(kept)")).stream("stdout") == "7"


async def test_interrupt_stops_sys_sleep_and_the_kernel_takes_the_next_cell(kernel: Kernel) -> None:
    code = 'cat("sleeping")\nSys.sleep(100)\ncat("not reached")'
    cell = await kernel.run(code, interrupt_when=stream_named("stdout"))
    assert cell.reply["status"] == "abort"
    assert "not reached" not in cell.stream("stdout")
    assert (await kernel.run("cat(1 + 1)")).stream("stdout") == "2"


async def test_interrupt_landing_while_irkernel_prepares_the_cell_aborts_it_without_killing_r(kernel: Kernel) -> None:
    # Stock IRkernel exits on a SIGINT in this window; kernels/ir/launch.R holds it off until the
    # user's code runs. Several tries, since the window is a few tens of milliseconds.
    await kernel.run("survivor <- 3")
    for _ in range(5):
        cell = await kernel.run("Sys.sleep(0.5)", interrupt_when=busy)
        assert cell.reply["status"] == "abort"
    assert await kernel.km.is_alive()
    assert (await kernel.run("cat(survivor)")).stream("stdout") == "3"


async def test_launcher_leaves_nothing_in_the_global_environment(kernel: Kernel) -> None:
    cell = await kernel.run(
        'rm(list = ls()); cat("[", toString(setdiff(ls(all.names = TRUE), ".pbd_env")), "]", sep = "")')
    assert cell.stream("stdout") == "[]"
    assert (await kernel.run("Sys.sleep(100)", interrupt_when=busy)).reply["status"] == "abort"
    assert (await kernel.run("cat('still here')")).stream("stdout") == "still here"


async def test_interrupt_drops_stdout_not_yet_flushed_by_a_message_or_the_end_of_the_expression(
        kernel: Kernel) -> None:
    code = '{cat("flushed "); message("tick"); cat("dropped"); Sys.sleep(100)}'
    cell = await kernel.run(code, interrupt_when=stream_named("stderr"))
    assert cell.reply["status"] == "abort"
    assert cell.stream("stdout") == "flushed "
    assert cell.stream("stderr") == "tick\n\n"


async def test_readline_asks_on_stdin_even_when_allow_stdin_is_false_and_input_reply_answers(kernel: Kernel) -> None:
    asking = kernel.send('answer <- readline("q? "); cat("got[", answer, "]", sep = "")')  # allow_stdin false
    request = await kernel.kc.get_stdin_msg(timeout=CELL_TIMEOUT)
    assert request["parent_header"]["msg_id"] == asking.msg_id
    assert request["content"]["prompt"] == "q? "
    kernel.kc.input("")
    assert (await kernel.run("cat(answer == '')")).stream("stdout") == "TRUE"


NASTY_NAME = 'q"uo\'te b\\ack sp ace é 日本 😀 $x `y` \t\\x41 ~ \\u00e9\\n.txt'
NASTY_TEXT = 'line1 é\r\nline2 😀\n\n\\x41 "q" \\n\n'


def r_raw(data: bytes) -> str:
    """R expression for these bytes: compare with charToRaw(), which ignores encoding marks and locale."""
    return "as.raw(c(" + ", ".join(f"0x{b:02x}" for b in data) + "))"


async def check_nasty_prelude(kernel: Kernel, directory: Path) -> None:
    path = directory / NASTY_NAME
    path.write_bytes(NASTY_TEXT.encode())
    cell = await kernel.run(
        r_file_prelude(str(path))
        + f"cat(identical(charToRaw(FILE_CONTENT), {r_raw(NASTY_TEXT.encode())}), Encoding(FILE_CONTENT), "
        f"identical(file_path, FILE_CONTENT_PATH), file.exists(file_path), "
        f"identical(charToRaw(basename(FILE_CONTENT_PATH)), {r_raw(NASTY_NAME.encode())}), nchar(FILE_CONTENT))",
    )
    assert cell.reply["status"] == "ok", cell.of_type("error")
    assert cell.stream("stdout") == f"TRUE UTF-8 TRUE TRUE TRUE {len(NASTY_TEXT)}"
    assert cell.stream("stderr") == ""


async def test_file_prelude_defines_path_and_exact_utf8_content_for_a_nasty_path(
        kernel: Kernel, short_tmp: Path) -> None:
    await check_nasty_prelude(kernel, short_tmp)


async def test_file_prelude_works_for_a_nasty_path_in_a_kernel_running_in_the_c_locale(
        start_kernel: StartKernel, short_tmp: Path) -> None:
    _require_ir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_")} | {"LANG": "C", "LC_ALL": "C"}
    c_locale = await start_kernel("ir", env=env, cell_timeout=CELL_TIMEOUT)
    assert (await c_locale.run('cat(Sys.getlocale("LC_CTYPE"))')).stream("stdout") == "C"
    await check_nasty_prelude(c_locale, short_tmp)


async def test_file_prelude_reads_a_relative_path_that_looks_like_a_special_connection(
        kernel: Kernel, short_tmp: Path) -> None:
    (short_tmp / "stdin").write_text("not the console\n")
    await kernel.run(f"setwd({r_string_literal(str(short_tmp))})")
    cell = await kernel.run(r_file_prelude("stdin") + "cat(FILE_CONTENT_PATH, FILE_CONTENT)")
    assert cell.stream("stdout") == "stdin not the console\n"


async def test_file_prelude_replaces_invalid_utf8_bytes_and_ignores_user_redefinitions(
        kernel: Kernel, short_tmp: Path) -> None:
    path = short_tmp / "latin1.txt"
    path.write_bytes(b"caf\xe9\n")
    await kernel.run("c <- 5; file <- function(...) stop('user file')")
    replaced = r_raw("caf\ufffd\n".encode())
    cell = await kernel.run(r_file_prelude(str(path)) + f"cat(identical(charToRaw(FILE_CONTENT), {replaced}))")
    await kernel.run("rm(c, file)")
    assert cell.stream("stdout") == "TRUE"


async def test_file_prelude_for_a_missing_file_errors_before_the_user_code_runs(
        kernel: Kernel, short_tmp: Path) -> None:
    missing = short_tmp / "no such file.txt"
    cell = await kernel.run(r_file_prelude(str(missing)) + 'cat("user code ran")')
    assert cell.reply["status"] == "error"
    assert cell.reply["evalue"] == f"Error: cannot open file '{missing}': No such file or directory\n"
    assert cell.stream("stdout") == ""


async def test_user_code_after_the_prelude_reports_line_numbers_offset_by_the_prelude(
        kernel: Kernel, short_tmp: Path) -> None:
    path = short_tmp / "plain.txt"
    path.write_text("x")
    cell = await kernel.run(r_file_prelude(str(path)) + 'g <- function() stop("here")\ng()')
    assert any(f"at line {1 + R_PRELUDE_LINES} of file <text>" in line for line in cell.reply["traceback"])


def test_r_string_literal_escapes_everything_but_printable_ascii() -> None:
    assert r_string_literal('a"b\\c é\n') == '"a\\x22b\\x5cc \\xc3\\xa9\\x0a"'
    assert r_string_literal(os.fsdecode(b"bad\xff")) == '"bad\\xff"'
    with pytest.raises(ValueError):
        r_string_literal("nul\0")
