"""The script kernel (ck-ruby, ck-go, ...) through jupyter_client, one real kernel per language."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from jupyter_client import AsyncKernelClient, AsyncKernelManager

from context_kernel.kernel_processes.script_languages import LANGUAGES

pytestmark = pytest.mark.anyio
TIMEOUT = 60  # seconds for any one cell (the first Go/Rust/C# build is the slowest)


@dataclass(frozen=True)
class Snippets:
    """One cell per behaviour, in the language's own syntax."""

    answer: str  # prints 6*7
    both_streams: str  # "to-out" on stdout, "to-err" on stderr
    exit3: str
    broken: str  # a syntax or type error
    broken_message: str  # a fragment of the compiler's / interpreter's complaint
    show_file: str  # prints path, file_path and content, newline separated
    endless: str  # prints "started", then loops forever
    line2_error: tuple[str, str]  # (a cell failing on its line 2, how the error names that line)
    program: str  # own definitions (entry point, function, module): prints FILE_CONTENT upper-cased


SNIPPETS = {
    "ruby": Snippets(
        "puts 6 * 7", 'puts "to-out"; $stderr.puts "to-err"', "exit 3", "puts(", "syntax error",
        'print FILE_CONTENT_PATH, "\\n", file_path, "\\n", FILE_CONTENT',
        '$stdout.sync = true; puts "started"; loop { }',
        ('puts 1\nraise "boom"', "cell.rb:2:"),
        "# frozen_string_literal: true\ndef shout = FILE_CONTENT.upcase\nprint shout"),
    "perl": Snippets(
        "print 6 * 7, qq(\\n);", 'print "to-out\\n"; print STDERR "to-err\\n";', "exit 3;",
        "print (;", "syntax error",
        'print $FILE_CONTENT_PATH, "\\n", $file_path, "\\n", $FILE_CONTENT;',
        '$| = 1; print "started\\n"; 1 while 1;',
        ('print 1;\ndie "boom";', "cell.pl line 2."),
        "use strict; use warnings;\nsub shout { return uc $FILE_CONTENT }\nprint shout();"),
    "php": Snippets(
        'echo 6 * 7, "\\n";', 'echo "to-out\\n"; fwrite(STDERR, "to-err\\n");', "exit(3);",
        "echo (;", "syntax error",
        'echo $FILE_CONTENT_PATH, "\\n", $file_path, "\\n", $FILE_CONTENT;',
        'echo "started\\n"; while (true) {}',
        ("echo 1;\nundefined_fn();", "cell.php:2"),
        "<?php\ndeclare(strict_types=1);\nnamespace Cell;\nfunction shout(string $s): string "
        "{ return strtoupper($s); }\necho shout($FILE_CONTENT);"),
    "elixir": Snippets(
        "IO.puts(6 * 7)", 'IO.puts("to-out"); IO.puts(:stderr, "to-err")', "System.halt(3)",
        "IO.puts(", "missing terminator",
        'IO.write(file_content_path <> "\\n" <> file_path <> "\\n" <> file_content)',
        'IO.puts("started"); Process.sleep(:infinity)',
        ('IO.puts(1)\nraise "boom"', "cell.exs:2"),
        "defmodule Cell do\n  def shout(s), do: String.upcase(s)\nend\nIO.write(Cell.shout(file_content))"),
    "go": Snippets(
        "fmt.Println(6 * 7)", 'fmt.Println("to-out")\nfmt.Fprintln(os.Stderr, "to-err")',
        "os.Exit(3)", "x := ", "syntax error",
        'fmt.Print(FILE_CONTENT_PATH + "\\n" + file_path + "\\n" + FILE_CONTENT)',
        'fmt.Println("started")\nfor {\n}',
        ('fmt.Println(1)\nvar y int = "a"', "cell.go:2"),
        'package main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\n'
        'func main() {\n\tfmt.Print(strings.ToUpper(FILE_CONTENT))\n}\n'),
    "rust": Snippets(
        'println!("{}", 6 * 7);', 'println!("to-out"); eprintln!("to-err");',
        "std::process::exit(3);", 'let x: i32 = "a";', "mismatched types",
        'print!("{}\\n{}\\n{}", file_content_path, file_path, file_content);',
        'println!("started"); loop {}',
        ('let a = 1;\nlet y: i32 = "a";', "cell.rs:2:"),
        'fn shout(s: &str) -> String { s.to_uppercase() }\n'
        'fn main() {\n    print!("{}", shout(&file_content));\n}\n'),
    "csharp": Snippets(
        "Console.WriteLine(6 * 7);", 'Console.WriteLine("to-out"); Console.Error.WriteLine("to-err");',
        "Environment.Exit(3);", 'int x = "a";', "CS0029",
        'Console.Write(FILE_CONTENT_PATH + "\\n" + file_path + "\\n" + FILE_CONTENT);',
        'Console.WriteLine("started"); while (true) {}',
        ('int a = 1;\nint y = "a";', "cell.cs(2,"),
        "using System;\nclass Cell {\n  static void Main() { Console.Write(FILE_CONTENT.ToUpper()); }\n}\n"),
}


@dataclass
class Cell:
    stdout: str = ""
    stderr: str = ""
    errors: list[dict[str, Any]] = field(default_factory=list)
    stream_messages: int = 0
    reply: dict[str, Any] = field(default_factory=dict)


def _missing_tool(language: str) -> str | None:
    for tool, package in LANGUAGES[language].tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install {package})"
    return None


def send_cell(kc: AsyncKernelClient, code: str, metadata: dict[str, Any] | None = None) -> str:
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
               "allow_stdin": False, "stop_on_error": False}
    msg = kc.session.msg("execute_request", content, metadata=metadata or {})
    kc.shell_channel.send(msg)
    return msg["header"]["msg_id"]


async def collect(kc: AsyncKernelClient, msg_id: str, cell: Cell, until: str | None = None) -> Cell:
    """Read iopub for ``msg_id`` until idle (then the reply), or until stdout contains ``until``."""
    while until is None or until not in cell.stdout:
        msg = await kc.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            setattr(cell, content["name"], getattr(cell, content["name"]) + content["text"])
            cell.stream_messages += 1
        elif kind == "error":
            cell.errors.append(content)
        elif kind == "status" and content["execution_state"] == "idle":
            # wait_for_ready may have sent more than one kernel_info_request when the kernel was
            # slow to start: their late replies are not this cell's.
            reply = await kc.get_shell_msg(timeout=TIMEOUT)
            while reply["parent_header"].get("msg_id") != msg_id:
                reply = await kc.get_shell_msg(timeout=TIMEOUT)
            cell.reply = reply["content"]
            return cell
    return cell


async def run_cell(kc: AsyncKernelClient, code: str, metadata: dict[str, Any] | None = None) -> Cell:
    return await collect(kc, send_cell(kc, code, metadata), Cell())


async def start(kernel_name: str, env: dict[str, str] | None = None,
                ) -> tuple[AsyncKernelManager, AsyncKernelClient]:
    km = AsyncKernelManager(kernel_name=kernel_name, transport="ipc")
    await km.start_kernel(**({"env": env} if env is not None else {}))
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=TIMEOUT)
    except Exception:
        await stop(km, kc)
        raise
    return km, kc


async def stop(km: AsyncKernelManager, kc: AsyncKernelClient) -> None:
    kc.stop_channels()
    if km.has_kernel:  # a shutdown_request, so the kernel cleans up after itself
        await km.shutdown_kernel()


async def stop_now(km: AsyncKernelManager, kc: AsyncKernelClient) -> None:
    kc.stop_channels()
    await km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=sorted(SNIPPETS))
async def kernel(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[str, AsyncKernelManager, AsyncKernelClient]]:
    language = request.param
    if reason := _missing_tool(language):
        pytest.skip(reason)
    km, kc = await start(f"ck-{language}")
    try:
        yield language, km, kc
    finally:
        await stop(km, kc)


async def test_kernel_info_names_the_language_and_says_cells_are_stateless(kernel) -> None:
    language, _, kc = kernel
    reply = await kc.kernel_info(reply=True, timeout=TIMEOUT)
    info = reply["content"]
    assert info["language_info"]["name"] == language
    assert info["language_info"]["file_extension"] == LANGUAGES[language].file_extension
    assert "no state is kept between cells" in info["banner"]


async def test_a_cell_prints_a_computed_value(kernel) -> None:
    language, _, kc = kernel
    cell = await run_cell(kc, SNIPPETS[language].answer)
    assert cell.reply["status"] == "ok", cell
    assert (cell.stdout, cell.stderr, cell.errors) == ("42\n", "", [])


async def test_stderr_arrives_as_its_own_stream(kernel) -> None:
    language, _, kc = kernel
    cell = await run_cell(kc, SNIPPETS[language].both_streams)
    assert cell.reply["status"] == "ok", cell
    assert (cell.stdout, cell.stderr) == ("to-out\n", "to-err\n")


async def test_a_nonzero_exit_status_is_an_exitcode_error(kernel) -> None:
    language, _, kc = kernel
    cell = await run_cell(kc, SNIPPETS[language].exit3)
    assert cell.reply["status"] == "error"
    assert (cell.reply["ename"], cell.reply["evalue"]) == ("ExitCode", "3")
    assert [(e["ename"], e["evalue"]) for e in cell.errors] == [("ExitCode", "3")]


async def test_a_syntax_error_fails_the_cell_with_the_compilers_message(kernel) -> None:
    language, _, kc = kernel
    snippets = SNIPPETS[language]
    cell = await run_cell(kc, snippets.broken)
    assert cell.reply["status"] == "error"
    assert len(cell.errors) == 1
    # interpreters report on stderr; compiled languages put the message in the error itself
    shown = cell.stderr + "\n".join(cell.errors[0]["traceback"])
    assert snippets.broken_message in shown
    expected = "CompileError" if LANGUAGES[language].tools[0][0] in ("go", "rustc", "mcs") else "ExitCode"
    assert cell.reply["ename"] == expected


async def test_file_content_names_are_defined_for_an_awkward_path(kernel, tmp_path: Path) -> None:
    language, _, kc = kernel
    folder = tmp_path / "dir with space 'single' \"double\" #{x} $y \\ back ü"
    folder.mkdir()
    path = folder / "dätä file.txt"
    content = 'say "hi" to \'them\' — naïve ✓ \\n #{not} $interpolated\nsecond line\n'
    path.write_text(content, encoding="utf-8")
    cell = await run_cell(kc, SNIPPETS[language].show_file,
                          {"context_kernel": {"file_path": str(path)}})
    assert cell.reply["status"] == "ok", cell
    assert cell.stdout == f"{path}\n{path}\n{content}"


async def test_a_program_with_its_own_definitions_sees_file_content(kernel, tmp_path: Path) -> None:
    language, _, kc = kernel
    path = tmp_path / "input.txt"
    path.write_text("hello file\n", encoding="utf-8")
    cell = await run_cell(kc, SNIPPETS[language].program, {"context_kernel": {"file_path": str(path)}})
    assert cell.reply["status"] == "ok", cell
    assert cell.stdout == "HELLO FILE\n"


async def test_errors_name_the_cells_own_line_numbers_with_a_file_attached(kernel, tmp_path: Path) -> None:
    language, _, kc = kernel
    path = tmp_path / "input.txt"
    path.write_text("x\n", encoding="utf-8")
    code, marker = SNIPPETS[language].line2_error
    cell = await run_cell(kc, code, {"context_kernel": {"file_path": str(path)}})
    assert cell.reply["status"] == "error"
    assert marker in cell.stderr + "\n".join(cell.errors[0]["traceback"])


async def test_a_missing_attached_file_is_reported_before_running(kernel, tmp_path: Path) -> None:
    language, _, kc = kernel
    cell = await run_cell(kc, SNIPPETS[language].answer,
                          {"context_kernel": {"file_path": str(tmp_path / "absent.txt")}})
    assert cell.reply["ename"] == "FileNotFoundError"
    assert cell.stdout == ""


async def test_interrupt_kills_an_endless_loop_and_the_next_cell_runs(kernel) -> None:
    language, km, kc = kernel
    msg_id = send_cell(kc, SNIPPETS[language].endless)
    cell = await collect(kc, msg_id, Cell(), until="started")
    await km.interrupt_kernel()
    cell = await collect(kc, msg_id, cell)
    assert cell.reply["status"] == "error"
    assert cell.reply["ename"] == "KeyboardInterrupt"
    after = await run_cell(kc, SNIPPETS[language].answer)
    assert after.stdout == "42\n"
    await km.interrupt_kernel()  # while idle: nothing to stop, the kernel carries on
    assert (await run_cell(kc, SNIPPETS[language].answer)).stdout == "42\n"


async def test_a_missing_runtime_names_the_debian_package_to_install(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # an empty directory: no interpreter on PATH
    km, kc = await start("ck-ruby", env=env)
    try:
        cell = await run_cell(kc, "puts 1")
    finally:
        await stop(km, kc)
    assert cell.reply["ename"] == "RuntimeNotFound"
    assert cell.reply["evalue"] == "ruby is not installed: apt-get install ruby"


@pytest.fixture
async def perl() -> AsyncIterator[tuple[AsyncKernelManager, AsyncKernelClient]]:
    """Kernel behaviour that does not depend on the language, shown with the fastest one."""
    if reason := _missing_tool("perl"):
        pytest.skip(reason)
    km, kc = await start("ck-perl")
    try:
        yield km, kc
    finally:
        await stop(km, kc)


async def test_a_flood_of_lines_is_coalesced_into_few_stream_messages(perl) -> None:
    _, kc = perl
    cell = await run_cell(kc, 'print "line $_\\n" for 1..100000;')
    assert cell.stdout.count("\n") == 100000
    assert cell.stream_messages < 200


async def test_a_background_grandchild_does_not_keep_the_cell_running(perl) -> None:
    _, kc = perl
    cell = await run_cell(kc, 'if (fork() == 0) { sleep 300; exit 0 } print "parent done\\n";')
    assert cell.reply["status"] == "ok"
    assert cell.stdout == "parent done\n"


async def test_shutdown_removes_the_kernels_scratch_directory(perl) -> None:
    km, kc = perl
    cell = await run_cell(kc, "print __FILE__;")
    scratch = Path(cell.stdout).parent
    assert scratch.is_dir()
    await stop(km, kc)
    assert not scratch.exists()


async def test_a_killed_kernel_takes_its_program_along_and_the_next_kernel_clears_its_files(
        perl) -> None:
    km, kc = perl
    msg_id = send_cell(kc, '$| = 1; print "$$ ", __FILE__, "\\n"; sleep 300;')
    cell = await collect(kc, msg_id, Cell(), until="\n")
    pid, source = cell.stdout.split()
    pidfd = os.pidfd_open(int(pid))
    try:
        await stop_now(km, kc)  # SIGKILL: the kernel gets no chance to clean up
        with anyio.fail_after(TIMEOUT):
            await anyio.wait_readable(pidfd)  # readable once the program has exited
    finally:
        os.close(pidfd)
    assert Path(source).exists()
    km2, kc2 = await start("ck-perl")
    await stop(km2, kc2)
    assert not Path(source).parent.exists()
