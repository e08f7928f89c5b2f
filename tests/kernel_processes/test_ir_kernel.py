"""The R kernel (IRkernel, kernelspec "ir") as the server sees it, and the R FILE_CONTENT prelude.

These pin IRkernel's real behaviour (through our launcher, kernels/ir/launch.R), quirks included,
because the execution layer depends on it: errors stop a cell at the end of the failing *line*, an
interrupt replies "abort" with no iopub error, message() text carries an extra newline.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.manager import KernelManager

from context_kernel.kernels.preludes_r import R_PRELUDE_LINES, r_file_prelude, r_string_literal

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
    # ipc socket paths must stay under the ~107-byte unix socket limit: no long pytest tmp names.
    with tempfile.TemporaryDirectory(prefix="ck-ir-") as d:
        yield Path(d)


@pytest.fixture(scope="module")
def kernel(short_tmp: Path) -> Iterator[tuple[KernelManager, Any]]:
    _require_ir()
    km = KernelManager(kernel_name="ir", transport="ipc")
    km.ip = str(short_tmp / "k")
    with open(short_tmp / "kernel.log", "wb") as log:
        km.start_kernel(stdout=log, stderr=log)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
            yield km, kc
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


class Cell:
    """Everything one execute_request produced, collected until iopub status idle."""

    def __init__(self, messages: list[dict[str, Any]], reply: dict[str, Any]) -> None:
        self.messages = messages
        self.reply = reply["content"]

    def stream(self, name: str) -> str:
        return "".join(
            m["content"]["text"] for m in self.messages if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    def of_type(self, msg_type: str) -> list[dict[str, Any]]:
        return [m["content"] for m in self.messages if m["msg_type"] == msg_type]


Trigger = tuple[Callable[[dict[str, Any]], bool], Callable[[], Any]]


def stream_named(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda msg: msg["msg_type"] == "stream" and msg["content"]["name"] == name


def is_busy(msg: dict[str, Any]) -> bool:
    return bool(msg["msg_type"] == "status" and msg["content"]["execution_state"] == "busy")


def run(kc: Any, code: str, *, trigger: Trigger | None = None) -> Cell:
    """Execute `code`; `trigger` = (predicate, action): run the action once, on the first iopub
    message of this cell that matches the predicate (used to interrupt at a known point)."""
    msg_id = kc.execute(code, allow_stdin=False)
    deadline = time.monotonic() + CELL_TIMEOUT
    messages: list[dict[str, Any]] = []
    while True:
        msg = kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(msg)
        if trigger is not None and trigger[0](msg):
            trigger[1]()
            trigger = None
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while True:
        reply = kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01))
        if reply["parent_header"].get("msg_id") == msg_id:
            return Cell(messages, reply)


def test_variable_assigned_in_one_cell_is_visible_in_the_next(kernel: Any) -> None:
    _, kc = kernel
    assert run(kc, "persisted <- 6 * 7").reply["status"] == "ok"
    assert run(kc, "cat(persisted)").stream("stdout") == "42"


def test_printed_data_frame_arrives_as_stdout_text_before_idle(kernel: Any) -> None:
    _, kc = kernel
    cell = run(kc, 'print(data.frame(n = 1:2, s = c("a", "b")))')
    assert cell.stream("stdout") == "  n s\n1 1 a\n2 2 b\n"
    assert cell.reply["status"] == "ok"


def test_visible_value_arrives_as_display_data_with_plain_text(kernel: Any) -> None:
    _, kc = kernel
    (data,) = [d["data"] for d in run(kc, "1:3").of_type("display_data")]
    assert data["text/plain"] == "[1] 1 2 3"


def test_message_goes_to_stderr_with_an_extra_newline_and_cat_to_stdout(kernel: Any) -> None:
    _, kc = kernel
    cell = run(kc, 'cat("out\\n"); message("err")')
    assert cell.stream("stdout") == "out\n"
    assert cell.stream("stderr") == "err\n\n"


def test_output_of_earlier_lines_streams_before_a_slow_line_finishes(kernel: Any) -> None:
    _, kc = kernel
    cell = run(kc, 'cat("first")\nSys.sleep(0.3)\ncat("second")')
    assert [m["content"]["text"] for m in cell.messages if m["msg_type"] == "stream"] == ["first", "second"]


def test_r_error_sends_iopub_error_and_error_reply_with_r_message_and_call_stack(kernel: Any) -> None:
    _, kc = kernel
    cell = run(kc, 'f <- function() stop("boom")\nf()')
    (error,) = cell.of_type("error")
    assert error["ename"] == "ERROR"
    assert error["evalue"] == "Error in f(): boom\n"
    assert error["traceback"][0] == "Error in f(): boom\nTraceback:\n"
    assert any(line.startswith("1. f()") for line in error["traceback"])
    assert cell.reply["status"] == "error"
    assert (cell.reply["ename"], cell.reply["evalue"]) == (error["ename"], error["evalue"])


def test_error_stops_the_cell_at_the_end_of_the_failing_line_not_the_statement(kernel: Any) -> None:
    _, kc = kernel
    cell = run(kc, 'cat("a "); stop("x"); cat("same-line ")\ncat("next-line")')
    assert cell.reply["status"] == "error"
    assert cell.stream("stdout") == "a same-line "


def test_interrupt_stops_an_infinite_loop_replies_abort_and_keeps_variables(kernel: Any) -> None:
    km, kc = kernel
    run(kc, "kept <- 7")
    cell = run(kc, 'cat("looping")\nwhile (TRUE) {}', trigger=(stream_named("stdout"), km.interrupt_kernel))
    assert cell.reply["status"] == "abort"
    assert cell.of_type("error") == []
    assert km.is_alive()
    assert run(kc, "cat(kept)").stream("stdout") == "7"


def test_interrupt_stops_sys_sleep_and_the_kernel_takes_the_next_cell(kernel: Any) -> None:
    km, kc = kernel
    code = 'cat("sleeping")\nSys.sleep(100)\ncat("not reached")'
    cell = run(kc, code, trigger=(stream_named("stdout"), km.interrupt_kernel))
    assert cell.reply["status"] == "abort"
    assert "not reached" not in cell.stream("stdout")
    assert run(kc, "cat(1 + 1)").stream("stdout") == "2"


def test_interrupt_landing_while_irkernel_prepares_the_cell_aborts_it_without_killing_r(kernel: Any) -> None:
    # Stock IRkernel exits on a SIGINT in this window; kernels/ir/launch.R holds it off until the
    # user's code runs. Several tries, since the window is a few tens of milliseconds.
    km, kc = kernel
    run(kc, "survivor <- 3")
    for _ in range(5):
        cell = run(kc, "Sys.sleep(0.5)", trigger=(is_busy, km.interrupt_kernel))
        assert cell.reply["status"] == "abort"
    assert km.is_alive()
    assert run(kc, "cat(survivor)").stream("stdout") == "3"


def test_launcher_leaves_nothing_in_the_global_environment(kernel: Any) -> None:
    km, kc = kernel
    cell = run(kc, 'rm(list = ls()); cat("[", toString(setdiff(ls(all.names = TRUE), ".pbd_env")), "]", sep = "")')
    assert cell.stream("stdout") == "[]"
    assert run(kc, "Sys.sleep(100)", trigger=(is_busy, km.interrupt_kernel)).reply["status"] == "abort"
    assert run(kc, "cat('still here')").stream("stdout") == "still here"


def test_interrupt_drops_stdout_not_yet_flushed_by_a_message_or_the_end_of_the_expression(kernel: Any) -> None:
    km, kc = kernel
    code = '{cat("flushed "); message("tick"); cat("dropped"); Sys.sleep(100)}'
    cell = run(kc, code, trigger=(stream_named("stderr"), km.interrupt_kernel))
    assert cell.reply["status"] == "abort"
    assert cell.stream("stdout") == "flushed "
    assert cell.stream("stderr") == "tick\n\n"


def test_readline_asks_on_stdin_even_when_allow_stdin_is_false_and_input_reply_answers(kernel: Any) -> None:
    _, kc = kernel
    msg_id = kc.execute('answer <- readline("q? "); cat("got[", answer, "]", sep = "")', allow_stdin=False)
    request = kc.get_stdin_msg(timeout=CELL_TIMEOUT)
    assert request["parent_header"]["msg_id"] == msg_id
    assert request["content"]["prompt"] == "q? "
    kc.input("")
    assert run(kc, "cat(answer == '')").stream("stdout") == "TRUE"


NASTY_NAME = 'q"uo\'te b\\ack sp ace é 日本 😀 $x `y` \t\\x41 ~ \\u00e9\\n.txt'
NASTY_TEXT = 'line1 é\r\nline2 😀\n\n\\x41 "q" \\n\n'


def r_raw(data: bytes) -> str:
    """R expression for these bytes: compare with charToRaw(), which ignores encoding marks and locale."""
    return "as.raw(c(" + ", ".join(f"0x{b:02x}" for b in data) + "))"


def check_nasty_prelude(kc: Any, directory: Path) -> None:
    path = directory / NASTY_NAME
    path.write_bytes(NASTY_TEXT.encode())
    cell = run(
        kc,
        r_file_prelude(str(path))
        + f"cat(identical(charToRaw(FILE_CONTENT), {r_raw(NASTY_TEXT.encode())}), Encoding(FILE_CONTENT), "
        f"identical(file_path, FILE_CONTENT_PATH), file.exists(file_path), "
        f"identical(charToRaw(basename(FILE_CONTENT_PATH)), {r_raw(NASTY_NAME.encode())}), nchar(FILE_CONTENT))",
    )
    assert cell.reply["status"] == "ok", cell.of_type("error")
    assert cell.stream("stdout") == f"TRUE UTF-8 TRUE TRUE TRUE {len(NASTY_TEXT)}"
    assert cell.stream("stderr") == ""


def test_file_prelude_defines_path_and_exact_utf8_content_for_a_nasty_path(kernel: Any, short_tmp: Path) -> None:
    _, kc = kernel
    check_nasty_prelude(kc, short_tmp)


def test_file_prelude_works_for_a_nasty_path_in_a_kernel_running_in_the_c_locale(short_tmp: Path) -> None:
    _require_ir()
    km = KernelManager(kernel_name="ir", transport="ipc")
    km.ip = str(short_tmp / "c")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_")} | {"LANG": "C", "LC_ALL": "C"}
    km.start_kernel(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        assert run(kc, 'cat(Sys.getlocale("LC_CTYPE"))').stream("stdout") == "C"
        check_nasty_prelude(kc, short_tmp)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_file_prelude_reads_a_relative_path_that_looks_like_a_special_connection(kernel: Any, short_tmp: Path) -> None:
    _, kc = kernel
    (short_tmp / "stdin").write_text("not the console\n")
    run(kc, f"setwd({r_string_literal(str(short_tmp))})")
    cell = run(kc, r_file_prelude("stdin") + "cat(FILE_CONTENT_PATH, FILE_CONTENT)")
    assert cell.stream("stdout") == "stdin not the console\n"


def test_file_prelude_replaces_invalid_utf8_bytes_and_ignores_user_redefinitions(kernel: Any, short_tmp: Path) -> None:
    _, kc = kernel
    path = short_tmp / "latin1.txt"
    path.write_bytes(b"caf\xe9\n")
    run(kc, "c <- 5; file <- function(...) stop('user file')")
    replaced = r_raw("caf\ufffd\n".encode())
    cell = run(kc, r_file_prelude(str(path)) + f"cat(identical(charToRaw(FILE_CONTENT), {replaced}))")
    run(kc, "rm(c, file)")
    assert cell.stream("stdout") == "TRUE"


def test_file_prelude_for_a_missing_file_errors_before_the_user_code_runs(kernel: Any, short_tmp: Path) -> None:
    _, kc = kernel
    missing = short_tmp / "no such file.txt"
    cell = run(kc, r_file_prelude(str(missing)) + 'cat("user code ran")')
    assert cell.reply["status"] == "error"
    assert cell.reply["evalue"] == f"Error: cannot open file '{missing}': No such file or directory\n"
    assert cell.stream("stdout") == ""


def test_user_code_after_the_prelude_reports_line_numbers_offset_by_the_prelude(kernel: Any, short_tmp: Path) -> None:
    _, kc = kernel
    path = short_tmp / "plain.txt"
    path.write_text("x")
    cell = run(kc, r_file_prelude(str(path)) + 'g <- function() stop("here")\ng()')
    assert any(f"at line {1 + R_PRELUDE_LINES} of file <text>" in line for line in cell.reply["traceback"])


def test_r_string_literal_escapes_everything_but_printable_ascii() -> None:
    assert r_string_literal('a"b\\c é\n') == '"a\\x22b\\x5cc \\xc3\\xa9\\x0a"'
    assert r_string_literal(os.fsdecode(b"bad\xff")) == '"bad\\xff"'
    with pytest.raises(ValueError):
        r_string_literal("nul\0")
