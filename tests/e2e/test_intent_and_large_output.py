"""Large outputs are indexed; with an intent the reply holds the matching lines themselves."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of

from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


def log_program(lines: dict[int, str], total: int, filler: str = "INFO request served in 12ms") -> str:
    """Python code printing `total` log lines, with `lines` (1-based line number → text) planted."""
    return (
        f"special = {lines!r}\n"
        f"for n in range(1, {total + 1}):\n"
        f"    print(special.get(n, f'2026-11-30 12:00:{{n % 60:02d}} {filler} (worker {{n % 7}})'))"
    )


async def ask(client: Client, code: str, intent: str) -> str:
    result = await client.call_tool("ctx_execute", {"language": "python", "code": code, "intent": intent})
    assert not result.is_error, text_of(result)
    return text_of(result)


async def test_one_error_line_among_500_comes_back(client: Client) -> None:
    text = await ask(client, log_program({347: "ERROR payment gateway returned 502"}, 500), "errors")
    assert "347: ERROR payment gateway returned 502" in text
    assert "indexed as source" in text and len(text) < 4000


async def test_three_failing_tests_among_200_passing_come_back(client: Client) -> None:
    planted = {40: "tests/test_api.py::test_login FAILED", 120: "tests/test_db.py::test_migrate FAILED",
               199: "tests/test_ui.py::test_render FAILED"}
    code = (f"planted = {planted!r}\n"
            "for n in range(1, 201):\n"
            "    print(planted.get(n, f'tests/test_mod{n}.py::test_case_{n} PASSED'))")
    text = await ask(client, code, "failing tests")
    for line in planted.values():
        assert line in text
    assert text.count("PASSED") <= 8


async def test_two_warnings_in_300_lines_come_back(client: Client) -> None:
    planted = {17: "WARNING: disk usage at 85%", 260: "WARNING: certificate expires in 5 days"}
    text = await ask(client, log_program(planted, 300), "warnings")
    assert "disk usage at 85%" in text and "certificate expires in 5 days" in text


async def test_an_authentication_error_at_line_743_of_1000_comes_back(client: Client) -> None:
    planted = {743: "ERROR AuthenticationError: invalid token for user alice"}
    text = await ask(client, log_program(planted, 1000), "authentication errors")
    assert "743: ERROR AuthenticationError: invalid token for user alice" in text


async def test_the_lone_disk_full_line_of_a_3000_line_log_comes_back(client: Client) -> None:
    planted = {2211: "ERROR disk full"}
    text = await ask(client, log_program(planted, 3000), "disk errors")
    assert "2211: ERROR disk full" in text


async def test_output_over_the_budget_is_indexed_and_searchable(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project, return_budget=2048)
    async with Client(create_server(settings)) as client:
        result = await client.call_tool("ctx_execute", {"language": "python", "code": log_program(
            {1500: "the secret marmalade recipe"}, 3000)})
        text = text_of(result)
        assert "cut" in text and 'source="exec-' in text
        label = text.split('source="', 1)[1].split('"', 1)[0]
        found = await client.call_tool("ctx_search", {"queries": ["marmalade recipe"], "source": label})
    assert "the secret marmalade recipe" in text_of(found)


async def test_a_small_output_with_an_intent_is_returned_whole(client: Client) -> None:
    text = await ask(client, "print('short and sweet')", "errors")
    assert text == "short and sweet"


async def test_a_vague_intent_over_lines_sharing_its_word_answers_in_4_kb(client: Client) -> None:
    # Every line holds "request": the old reply was 8 KB of them, the planted slow one not among them.
    planted = {2400: "2026-11-30 12:40:00 INFO request served in 48213ms (worker 3)"}
    text = await ask(client, log_program(planted, 3000), "request")
    assert "2400: 2026-11-30 12:40:00 INFO request served in 48213ms" in text
    assert len(text.encode()) <= 4096
