"""The MCP edge is the one error boundary: every refusal and failure reaches the agent as an `isError`
result with its message and hint, argument mistakes as one plain sentence, and every call is counted."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from mcp.client.client import Client
from mcp.types import CallToolResult
from tests.helpers import text_of

from context_kernel.errors import InvalidRequest, StoreError
from context_kernel.settings import Settings
from context_kernel.tools.server import create_server, ours

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def stats_row(stats: str, tool: str) -> list[str]:
    """This session's row for `tool` in ctx_stats: tool, calls, errors, in, indexed, returned, kept out."""
    session_part = stats.split("Lifetime")[0]
    return next(line.split() for line in session_part.splitlines() if line.startswith(f"  {tool} "))


def assert_error(result: CallToolResult, *parts: str) -> str:
    text = text_of(result)
    assert result.is_error, text
    for part in parts:
        assert part in text, text
    assert "Error executing tool" not in text and "pydantic" not in text.lower()
    return text


async def test_a_store_that_cannot_open_answers_with_its_hint_and_the_call_is_counted_once_it_opens(
        settings: Settings) -> None:
    settings.home.mkdir(parents=True)
    settings.db_path.mkdir()  # a directory where the database file should be: SQLite cannot open it
    async with Client(create_server(settings)) as client:
        failed = await client.call_tool("ctx_search", {"queries": ["anything"]})
        assert_error(failed, f"the database file cannot be opened or created ({settings.db_path})",
                     "point CONTEXT_KERNEL_HOME at a writable directory")
        shutil.rmtree(settings.db_path)  # the user mends the data dir; no restart needed
        await client.call_tool("ctx_index", {"content": "opens the store", "source": "s"})  # and writes the backlog
        stats = text_of(await client.call_tool("ctx_stats", {}))
    assert stats_row(stats, "ctx_search")[1:3] == ["1", "1"]  # one call, one error


async def test_a_failing_search_keeps_the_store_s_message_and_hint(settings: Settings) -> None:
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_index", {"content": "# Cache\n\nThe cache lives in sqlite.", "source": "doc"})
        with sqlite3.connect(settings.db_path) as db:  # damage the real file under the running server
            db.execute("DROP TABLE sent_chunks")
        failed = await client.call_tool("ctx_search", {"queries": ["cache"]})
        assert_error(failed, "no such table: sent_chunks", StoreError.hint)
        stats = text_of(await client.call_tool("ctx_stats", {}))
    assert stats_row(stats, "ctx_search")[1:3] == ["1", "1"]


async def test_failing_stats_keep_their_hint_and_are_counted(settings: Settings) -> None:
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_index", {"content": "opens the store", "source": "s"})
        with sqlite3.connect(settings.db_path) as db:
            db.execute("DROP TABLE session_events")
        assert_error(await client.call_tool("ctx_stats", {}), "no such table: session_events", StoreError.hint)
        await client.call_tool("ctx_upgrade", {})  # written in order after the failed call's row
    with sqlite3.connect(settings.db_path) as db:
        rows = db.execute("SELECT tool, is_error FROM tool_calls ORDER BY id").fetchall()
    assert ("ctx_stats", 1) in rows


async def test_a_missing_argument_is_one_plain_sentence_naming_it_and_is_counted(client: Client) -> None:
    text = assert_error(await client.call_tool("ctx_execute", {"language": "python"}), "`code` is required")
    assert "errors.pydantic.dev" not in text and "\n" not in text
    stats = text_of(await client.call_tool("ctx_stats", {}))
    assert stats_row(stats, "ctx_execute")[1:3] == ["1", "1"]


async def test_a_mistyped_argument_names_it_and_what_it_should_be(client: Client) -> None:
    text = assert_error(await client.call_tool("ctx_search", {"queries": "cache", "limit": "many"}),
                        "`queries`", "`limit`", "valid integer")
    assert text.startswith("ctx_search was called with invalid arguments:")
    assert "many" not in text  # the caller's values are not echoed back


async def test_our_refusals_keep_their_hint_and_are_counted(client: Client) -> None:
    assert_error(await client.call_tool("ctx_index", {"content": "x", "path": "y"}),
                 "give exactly one of content or path", "content= for text")
    assert_error(await client.call_tool("ctx_purge", {"confirm": False}), "confirm=true")
    assert_error(await client.call_tool("ctx_search", {"queries": ["  "]}), "queries is empty", "queries=[")
    assert_error(await client.call_tool("ctx_fetch_and_index", {}), "exactly one of url or requests")
    stats = text_of(await client.call_tool("ctx_stats", {}))
    for tool in ("ctx_index", "ctx_purge", "ctx_search", "ctx_fetch_and_index"):
        assert stats_row(stats, tool)[1:3] == ["1", "1"], tool


async def test_an_unknown_tool_is_an_error_result_naming_it(client: Client) -> None:
    result = await client.call_tool("ctx_nothing", {})
    assert result.is_error and "ctx_nothing" in text_of(result)


def test_our_error_is_found_behind_causes_and_inside_exception_groups() -> None:
    inner = InvalidRequest("bad", hint="do this")
    try:
        try:
            raise ExceptionGroup("task group", [ValueError("other"), inner])
        except ExceptionGroup as group:
            raise RuntimeError("wrapper") from group
    except RuntimeError as outer:
        assert ours(outer) is inner
    assert ours(ValueError("plain")) is None
