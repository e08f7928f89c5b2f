"""ctx_execute and ctx_execute_file through the SDK's in-memory client against the real server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of

from context_kernel.settings import Settings
from context_kernel.tools.server import create_server

pytestmark = pytest.mark.anyio


async def run(client: Client, language: str, code: str, **extra: object) -> tuple[bool, str]:
    result = await client.call_tool("ctx_execute", {"language": language, "code": code, **extra})
    return bool(result.is_error), text_of(result)


@pytest.mark.kernels
async def test_python_prints_and_returns_the_last_expression(client: Client) -> None:
    is_error, text = await run(client, "python", "print('hello')\n6 * 7")
    assert not is_error
    assert text.splitlines() == ["hello", "42"]


@pytest.mark.kernels
async def test_state_persists_between_two_calls(client: Client) -> None:
    await run(client, "python", "data = [3, 1, 2]")
    is_error, text = await run(client, "python", "print(sorted(data))")
    assert (is_error, text) == (False, "[1, 2, 3]")


@pytest.mark.kernels
async def test_fresh_kernel_does_not_share_state(client: Client) -> None:
    await run(client, "python", "secret = 1")
    is_error, text = await run(client, "python", "print('secret' in globals())", fresh=True)
    assert (is_error, text) == (False, "False")
    assert await run(client, "python", "print(secret)") == (False, "1")


@pytest.mark.kernels
async def test_two_servers_do_not_share_kernels(settings: Settings) -> None:
    async with Client(create_server(settings)) as first, Client(create_server(settings)) as second:
        await run(first, "python", "owner = 'first'")
        is_error, text = await run(second, "python", "print(globals().get('owner', 'none'))")
        assert (is_error, text) == (False, "none")


@pytest.mark.kernels
async def test_python_error_returns_a_compact_traceback_flagged_as_error(client: Client) -> None:
    is_error, text = await run(client, "python", "print('before')\n1/0")
    assert is_error
    assert text.startswith("before")
    assert "ZeroDivisionError: division by zero" in text
    assert "\x1b[" not in text


async def test_unknown_language_is_an_error_listing_the_languages(client: Client) -> None:
    is_error, text = await run(client, "cobol", "DISPLAY 'HI'")
    assert is_error
    assert "unknown language 'cobol'" in text and "python" in text and "kernel=" in text


@pytest.mark.kernels
async def test_kernel_parameter_selects_any_kernelspec_by_name(client: Client) -> None:
    is_error, text = await run(client, "whatever", "import sys; print(sys.version_info[0])", kernel="python3")
    assert (is_error, text) == (False, "3")


async def test_unknown_kernel_names_what_to_do(client: Client) -> None:
    is_error, text = await run(client, "python", "1", kernel="no-such-kernel")
    assert is_error
    assert "no-such-kernel" in text and "doctor" in text


async def test_negative_timeout_is_refused_with_the_default_named(client: Client) -> None:
    is_error, text = await run(client, "python", "1", timeout=-5)
    assert is_error
    assert "timeout must be a positive" in text and "default" in text


@pytest.mark.kernels
async def test_output_over_the_budget_keeps_head_and_tail_with_a_marker(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project, return_budget=2048)
    async with Client(create_server(settings)) as client:
        is_error, text = await run(client, "python", "for i in range(5000): print(f'line {i}')")
    assert not is_error
    lines = text.splitlines()
    assert lines[0] == "line 0" and lines[-1] == "line 4999"
    assert any("lines" in line and "cut" in line and "ctx_search" in line and 'source="exec-' in line for line in lines)
    assert len(text.encode()) < 2048 + 300


@pytest.mark.kernels
async def test_images_are_recorded_and_named_not_returned_as_base64(client: Client) -> None:
    code = (
        "from IPython.display import Image, display\n"
        "import base64\n"
        "png = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
        "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')\n"
        "display(Image(data=png))\nprint('done')"
    )
    is_error, text = await run(client, "python", code)
    assert not is_error
    assert "image/png output recorded" in text and "done" in text
    assert "iVBOR" not in text


@pytest.mark.kernels
async def test_execute_file_defines_file_content_inside_the_project(client: Client, project: Path) -> None:
    (project / "data.csv").write_text("a,b\n1,2\n3,4\n")
    result = await client.call_tool("ctx_execute_file", {
        "path": "data.csv", "language": "python",
        "code": "rows = FILE_CONTENT.splitlines()\nprint(len(rows) - 1, FILE_CONTENT_PATH == file_path)",
    })
    assert not result.is_error
    assert text_of(result) == "2 True"


async def test_execute_file_refuses_a_path_outside_the_project(client: Client, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    result = await client.call_tool("ctx_execute_file", {"path": str(outside), "language": "python", "code": "1"})
    assert result.is_error
    assert "outside the project directory" in text_of(result)
    result = await client.call_tool("ctx_execute_file", {"path": "../outside.txt", "language": "python", "code": "1"})
    assert result.is_error and "outside the project directory" in text_of(result)
    assert "ctx_execute_file" in text_of(result) and "'../outside.txt'" in text_of(result)


async def test_execute_file_refuses_a_symlink_escaping_the_project(client: Client, project: Path,
                                                                   tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, project / "innocent.txt")
    result = await client.call_tool("ctx_execute_file", {"path": "innocent.txt", "language": "python",
                                                         "code": "print(FILE_CONTENT)"})
    assert result.is_error
    assert "through a symlink" in text_of(result) and "secret" not in text_of(result).split("refused")[0]


async def test_a_missing_file_is_an_error_saying_so(client: Client) -> None:
    result = await client.call_tool("ctx_execute_file", {"path": "nope.txt", "language": "python", "code": "1"})
    assert result.is_error and "no such file: nope.txt" in text_of(result)


async def test_a_directory_given_as_the_file_is_an_error_naming_it_a_directory_and_what_to_do(
        client: Client, project: Path) -> None:
    (project / "data").mkdir()
    for name in ("b.csv", "a.csv"):
        (project / "data" / name).write_text("x\n1\n")
    result = await client.call_tool("ctx_execute_file", {"path": "data", "language": "python", "code": "1"})
    text = text_of(result)
    assert result.is_error and "no such file" not in text
    assert "ctx_execute_file: data is a directory, not a file" in text
    assert "data/a.csv, data/b.csv" in text  # what it holds, to pick one from
    assert "ctx_execute" in text.split("\n", 1)[1]  # the next step: one file each, or the directory in code


@pytest.mark.kernels
async def test_execute_file_in_shell(client: Client, project: Path) -> None:
    (project / "it's here.log").write_text("ok 1\nERROR 2\nok 3\n")
    result = await client.call_tool("ctx_execute_file", {
        "path": "it's here.log", "language": "shell", "code": 'printf "%s" "$FILE_CONTENT" | grep -c ok',
    })
    assert (result.is_error, text_of(result)) == (False, "2")
