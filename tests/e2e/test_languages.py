"""One test per language through the MCP client: it runs code and the printed result comes back.

The README's test command installs the runtimes of the required languages, so those never skip;
the others skip only when their runtime is absent, with the reason printed.
"""

from __future__ import annotations

import pytest
from mcp.client.client import Client
from tests.helpers import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]

REQUIRED = {"python", "shell", "r", "javascript", "typescript", "ruby", "perl", "php", "rust"}

PROGRAMS = {
    "python": "print(6 * 7)",
    "shell": "echo $((6 * 7))",
    "r": "cat(6 * 7, '\\n')",
    "javascript": "console.log(6 * 7)",
    "typescript": "const n: number = 6 * 7; console.log(n)",
    "ruby": "puts 6 * 7",
    "go": "fmt.Println(6 * 7)",
    "rust": 'println!("{}", 6 * 7);',
    "php": "echo 6 * 7, \"\\n\";",
    "perl": 'print 6 * 7, "\\n";',
    "elixir": "IO.puts 6 * 7",
    "csharp": "Console.WriteLine(6 * 7);",
}

# (define, use) pairs for the languages whose kernels keep state between calls.
STATEFUL = {
    "python": ("acc = 40", "print(acc + 2)"),
    "shell": ("export ACC=40; cd /", "echo $((ACC + 2)) $PWD"),
    "r": ("acc <- 40", "cat(acc + 2, '\\n')"),
    "javascript": ("var acc = 40;", "console.log(acc + 2)"),
    "typescript": ("let acc: number = 40;", "console.log(acc + 2)"),
}
STATEFUL_EXPECTED = {"shell": "42 /"}


def _skip_if_absent(language: str, text: str) -> None:
    absent = "not installed" in text or "no Jupyter kernel named" in text
    if absent and language not in REQUIRED:
        pytest.skip(f"{language} runtime absent here: {text.splitlines()[0]}")


@pytest.mark.parametrize("language", sorted(PROGRAMS))
async def test_each_language_runs_code_and_returns_what_it_printed(client: Client, language: str) -> None:
    result = await client.call_tool("ctx_execute", {"language": language, "code": PROGRAMS[language],
                                                    "timeout": 90_000})
    text = text_of(result)
    _skip_if_absent(language, text)
    assert (result.is_error, text.strip()) == (False, "42")


@pytest.mark.parametrize("language", sorted(STATEFUL))
async def test_stateful_languages_keep_variables_between_calls(client: Client, language: str) -> None:
    define, use = STATEFUL[language]
    first = await client.call_tool("ctx_execute", {"language": language, "code": define, "timeout": 90_000})
    _skip_if_absent(language, text_of(first))
    assert not first.is_error, text_of(first)
    second = await client.call_tool("ctx_execute", {"language": language, "code": use})
    assert (second.is_error, text_of(second).strip()) == (False, STATEFUL_EXPECTED.get(language, "42"))


# A cell that runs until interrupted, for the kernels interrupted by SIGINT (which reaches them through
# their supervisor, kernels/supervisor.py).
STUCK = {
    "python": "while True: pass",
    "shell": "sleep 60",
    "r": "while (TRUE) {}",
    "javascript": "while (true) {}",
}


@pytest.mark.parametrize("language", sorted(STUCK))
async def test_a_stuck_cell_is_interrupted_at_its_timeout_and_the_kernel_keeps_its_state(
        client: Client, language: str) -> None:
    define, use = STATEFUL[language]
    first = await client.call_tool("ctx_execute", {"language": language, "code": define, "timeout": 90_000})
    _skip_if_absent(language, text_of(first))
    stuck = await client.call_tool("ctx_execute", {"language": language, "code": STUCK[language], "timeout": 1500})
    assert stuck.is_error and "kept its state" in text_of(stuck), text_of(stuck)
    second = await client.call_tool("ctx_execute", {"language": language, "code": use})
    assert (second.is_error, text_of(second).strip()) == (False, STATEFUL_EXPECTED.get(language, "42"))


async def test_shell_exit_1_with_output_is_a_soft_result(client: Client) -> None:
    result = await client.call_tool("ctx_execute", {"language": "shell", "code": "echo 'no match'; exit 1"})
    assert not result.is_error
    assert text_of(result).startswith("no match")


async def test_shell_failure_returns_stderr_as_an_error(client: Client) -> None:
    result = await client.call_tool("ctx_execute", {"language": "shell", "code": "ls /definitely/not/here"})
    assert result.is_error
    assert "No such file or directory" in text_of(result)


async def test_r_code_asking_for_input_gets_an_empty_line_instead_of_hanging(client: Client) -> None:
    result = await client.call_tool("ctx_execute", {"language": "r",
                                                    "code": "x <- readline('name? ')\ncat('got', nchar(x))",
                                                    "timeout": 30_000})
    assert not result.is_error, text_of(result)
    assert "got 0" in text_of(result)


async def test_output_written_by_child_processes_is_never_lost(client: Client) -> None:
    # ipykernel forwards fd-level output from a reader thread that can lag behind the cell's end.
    await client.call_tool("ctx_execute", {"language": "python", "code": "import subprocess, os"})
    for i in range(30):
        result = await client.call_tool("ctx_execute", {"language": "python",
                                                        "code": f"_ = subprocess.run(['echo', 'child {i}'])"})
        assert text_of(result) == f"child {i}"
