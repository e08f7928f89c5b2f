"""The script kernel (ck-ruby, ck-go, ...) through jupyter_client, one real kernel per language."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from kernel_harness import Kernel, StartKernel, running, stdout_has

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


def _missing_tool(language: str) -> str | None:
    for tool, package in LANGUAGES[language].tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install {package})"
    return None


# Cells are sent with stop_on_error false, as the server sends them.
OPTIONS: dict[str, Any] = {"cell_timeout": TIMEOUT, "stop_on_error": False}


@pytest.fixture(scope="module", params=sorted(SNIPPETS))
async def kernel(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, Kernel]]:
    language = request.param
    if reason := _missing_tool(language):
        pytest.skip(reason)
    async with running(f"ck-{language}", **OPTIONS) as k:
        yield language, k


async def test_kernel_info_names_the_language_and_says_cells_are_stateless(kernel) -> None:
    language, k = kernel
    reply = await k.kc.kernel_info(reply=True, timeout=TIMEOUT)
    info = reply["content"]
    assert info["language_info"]["name"] == language
    assert info["language_info"]["file_extension"] == LANGUAGES[language].file_extension
    assert "no state is kept between cells" in info["banner"]


async def test_a_cell_prints_a_computed_value(kernel) -> None:
    language, k = kernel
    cell = await k.run(SNIPPETS[language].answer)
    assert cell.reply["status"] == "ok", cell
    assert (cell.stdout, cell.stderr, cell.errors) == ("42\n", "", [])


async def test_stderr_arrives_as_its_own_stream(kernel) -> None:
    language, k = kernel
    cell = await k.run(SNIPPETS[language].both_streams)
    assert cell.reply["status"] == "ok", cell
    assert (cell.stdout, cell.stderr) == ("to-out\n", "to-err\n")


async def test_a_nonzero_exit_status_is_an_exitcode_error(kernel) -> None:
    language, k = kernel
    cell = await k.run(SNIPPETS[language].exit3)
    assert cell.reply["status"] == "error"
    assert (cell.reply["ename"], cell.reply["evalue"]) == ("ExitCode", "3")
    assert [(e["ename"], e["evalue"]) for e in cell.errors] == [("ExitCode", "3")]


async def test_a_syntax_error_fails_the_cell_with_the_compilers_message(kernel) -> None:
    language, k = kernel
    snippets = SNIPPETS[language]
    cell = await k.run(snippets.broken)
    assert cell.reply["status"] == "error"
    assert len(cell.errors) == 1
    # interpreters report on stderr; compiled languages put the message in the error itself
    shown = cell.stderr + "\n".join(cell.errors[0]["traceback"])
    assert snippets.broken_message in shown
    expected = "CompileError" if LANGUAGES[language].tools[0][0] in ("go", "rustc", "mcs") else "ExitCode"
    assert cell.reply["ename"] == expected


async def test_file_content_names_are_defined_for_an_awkward_path(kernel, tmp_path: Path) -> None:
    language, k = kernel
    folder = tmp_path / "dir with space 'single' \"double\" #{x} $y \\ back ü"
    folder.mkdir()
    path = folder / "dätä file.txt"
    content = 'say "hi" to \'them\' — naïve ✓ \\n #{not} $interpolated\nsecond line\n'
    path.write_text(content, encoding="utf-8")
    cell = await k.run(SNIPPETS[language].show_file,
                       {"context_kernel": {"file_path": str(path)}})
    assert cell.reply["status"] == "ok", cell
    assert cell.stdout == f"{path}\n{path}\n{content}"


async def test_a_program_with_its_own_definitions_sees_file_content(kernel, tmp_path: Path) -> None:
    language, k = kernel
    path = tmp_path / "input.txt"
    path.write_text("hello file\n", encoding="utf-8")
    cell = await k.run(SNIPPETS[language].program, {"context_kernel": {"file_path": str(path)}})
    assert cell.reply["status"] == "ok", cell
    assert cell.stdout == "HELLO FILE\n"


async def test_errors_name_the_cells_own_line_numbers_with_a_file_attached(kernel, tmp_path: Path) -> None:
    language, k = kernel
    path = tmp_path / "input.txt"
    path.write_text("x\n", encoding="utf-8")
    code, marker = SNIPPETS[language].line2_error
    cell = await k.run(code, {"context_kernel": {"file_path": str(path)}})
    assert cell.reply["status"] == "error"
    assert marker in cell.stderr + "\n".join(cell.errors[0]["traceback"])


async def test_a_missing_attached_file_is_reported_before_running(kernel, tmp_path: Path) -> None:
    language, k = kernel
    cell = await k.run(SNIPPETS[language].answer,
                       {"context_kernel": {"file_path": str(tmp_path / "absent.txt")}})
    assert cell.reply["ename"] == "FileNotFoundError"
    assert cell.stdout == ""


async def test_interrupt_kills_an_endless_loop_and_the_next_cell_runs(kernel) -> None:
    language, k = kernel
    cell = await k.run(SNIPPETS[language].endless, interrupt_when=stdout_has("started"))
    assert cell.reply["status"] == "error"
    assert cell.reply["ename"] == "KeyboardInterrupt"
    after = await k.run(SNIPPETS[language].answer)
    assert after.stdout == "42\n"
    await k.interrupt()  # while idle: nothing to stop, the kernel carries on
    assert (await k.run(SNIPPETS[language].answer)).stdout == "42\n"


async def test_a_missing_runtime_names_the_debian_package_to_install(start_kernel: StartKernel,
                                                                      tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # an empty directory: no interpreter on PATH
    ruby = await start_kernel("ck-ruby", env=env, **OPTIONS)
    cell = await ruby.run("puts 1")
    assert cell.reply["ename"] == "RuntimeNotFound"
    assert cell.reply["evalue"] == ("ruby is not installed: apt-get install ruby "
                                    "(or, as root, context-kernel kernels install)")


@pytest.fixture
async def perl(start_kernel: StartKernel) -> Kernel:
    """Kernel behaviour that does not depend on the language, shown with the fastest one."""
    if reason := _missing_tool("perl"):
        pytest.skip(reason)
    return await start_kernel("ck-perl", **OPTIONS)


async def test_a_flood_of_lines_is_coalesced_into_few_stream_messages(perl: Kernel) -> None:
    cell = await perl.run('print "line $_\\n" for 1..100000;')
    assert cell.stdout.count("\n") == 100000
    assert len(cell.streams) < 200


async def test_a_background_grandchild_does_not_keep_the_cell_running(perl: Kernel) -> None:
    cell = await perl.run('if (fork() == 0) { sleep 300; exit 0 } print "parent done\\n";')
    assert cell.reply["status"] == "ok"
    assert cell.stdout == "parent done\n"


async def test_shutdown_removes_the_kernels_scratch_directory(perl: Kernel) -> None:
    cell = await perl.run("print __FILE__;")
    scratch = Path(cell.stdout).parent
    assert scratch.is_dir()
    await perl.stop()
    assert not scratch.exists()


async def test_a_killed_kernel_takes_its_program_along_and_the_next_kernel_clears_its_files(
        perl: Kernel, start_kernel: StartKernel) -> None:
    cell = await perl.collect(perl.send('$| = 1; print "$$ ", __FILE__, "\\n"; sleep 300;'), until=stdout_has("\n"))
    pid, source = cell.stdout.split()
    pidfd = os.pidfd_open(int(pid))
    try:
        await perl.stop_now()  # SIGKILL: the kernel gets no chance to clean up
        with anyio.fail_after(TIMEOUT):
            await anyio.wait_readable(pidfd)  # readable once the program has exited
    finally:
        os.close(pidfd)
    assert await anyio.Path(source).exists()
    second = await start_kernel("ck-perl", **OPTIONS)  # a starting script kernel sweeps dead kernels' files
    await second.stop()
    assert not await anyio.Path(source).parent.exists()
