"""ctx_index, ctx_search, ctx_batch_execute and ctx_purge through the MCP client."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp.client.client import Client
from tests.helpers import text_of

pytestmark = pytest.mark.anyio


async def test_index_a_directory_then_search_it(client: Client, project: Path) -> None:
    docs = project / "docs"
    (docs / "api").mkdir(parents=True)
    (docs / "intro.md").write_text("# Intro\n## Install\nRun `pip install widget` to get started.\n")
    (docs / "api" / "client.py").write_text("def connect(url):\n    '''Open a widget connection.'''\n")
    (docs / "ignored.log").write_text("should not be indexed")
    (docs / ".gitignore").write_text("*.log\n")
    (docs / "node_modules").mkdir()
    (docs / "node_modules" / "dep.md").write_text("# Dep\nvendored")
    result = await client.call_tool("ctx_index", {"path": "docs"})
    text = text_of(result)
    assert not result.is_error, text
    assert text.startswith("Indexed 3 files") and '"docs"' in text  # intro.md, client.py, .gitignore
    found = text_of(await client.call_tool("ctx_search", {"queries": ["how to install widget"]}))
    assert "Intro > Install — source: docs/intro.md" in found and "pip install widget" in found
    code = text_of(await client.call_tool("ctx_search", {"queries": ["widget connection"], "contentType": "code"}))
    assert "docs/api/client.py" in code and "intro.md" not in code


async def test_index_text_and_search_by_source(client: Client) -> None:
    await client.call_tool("ctx_index", {"content": "# Notes\nThe launch code is tangerine.", "source": "notes"})
    await client.call_tool("ctx_index", {"content": "# Other\nThe launch is delayed.", "source": "other"})
    found = text_of(await client.call_tool("ctx_search", {"queries": ["launch"], "source": "notes"}))
    assert "tangerine" in found and "delayed" not in found


async def test_index_refuses_paths_outside_the_project(client: Client, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("# Secret")
    result = await client.call_tool("ctx_index", {"path": "../secret.md"})
    text = text_of(result)
    assert result.is_error and "outside the project directory" in text
    assert "ctx_index" in text and "'../secret.md'" in text and "ctx_execute_file" not in text
    missing = text_of(await client.call_tool("ctx_index", {"path": "docs/none"}))
    assert "ctx_index" in missing and "no such file or directory: docs/none" in missing


async def test_index_needs_exactly_one_of_content_or_path(client: Client) -> None:
    result = await client.call_tool("ctx_index", {})
    assert result.is_error and "exactly one of content or path" in text_of(result)


@pytest.mark.kernels
async def test_batch_runs_commands_in_order_indexes_them_and_answers_queries(client: Client, project: Path) -> None:
    (project / "app.log").write_text("ok\nok\nERROR quota exceeded for tenant acme\nok\n")
    result = await client.call_tool("ctx_batch_execute", {
        "commands": [
            {"label": "greeting", "command": "echo hello from the batch"},
            {"label": "errors", "command": "grep -n ERROR app.log"},
            {"label": "broken", "command": "ls /no/such/dir"},
        ],
        "queries": ["quota exceeded tenant"],
    })
    text = text_of(result)
    assert not result.is_error, text
    lines = re.sub(r" \[#\d+\]:", ":", text).splitlines()  # each command's citation aside
    assert "1. greeting: ok" in lines[1] and "2. errors: ok" in lines[2] and "3. broken: error" in lines[3]
    assert "No such file or directory" in lines[3]
    assert "errors > " in text and "ERROR quota exceeded for tenant acme" in text
    assert "Distinctive terms for follow-up ctx_search:" in text
    assert "hello from the batch" not in text  # raw outputs stay out unless a query asks for them


@pytest.mark.kernels
async def test_parallel_batch_keeps_input_order_with_a_timeout_per_command(client: Client) -> None:
    result = await client.call_tool("ctx_batch_execute", {
        "commands": [{"label": f"c{i}", "command": f"sleep 0.{3 - i % 3}; echo done {i}"} for i in range(4)]
        + [{"label": "slow", "command": "sleep 30"}],
        "concurrency": 4, "timeout": 3000,
    })
    text = text_of(result)
    order = [line.split(".", 1)[1].split(" [#")[0].strip() for line in text.splitlines()[1:6]]
    assert order == ["c0", "c1", "c2", "c3", "slow"]
    assert re.search(r"slow \[#\d+\]: timeout", text), text


@pytest.mark.kernels
async def test_serial_batch_skips_commands_once_the_shared_budget_is_spent(client: Client) -> None:
    result = await client.call_tool("ctx_batch_execute", {
        "commands": [{"label": "first", "command": "sleep 30"}, {"label": "second", "command": "echo never"}],
        "timeout": 1500,
    })
    text = text_of(result)
    # a skipped command ran no execution: nothing to cite
    assert re.search(r"first \[#\d+\]: timeout", text) and "second: skipped" in text, text


async def test_purge_removes_this_sessions_content(client: Client) -> None:
    await client.call_tool("ctx_index", {"content": "# Temp\nephemeral words", "source": "temp"})
    refused = await client.call_tool("ctx_purge", {"confirm": False})
    assert refused.is_error
    done = text_of(await client.call_tool("ctx_purge", {"confirm": True}))
    assert done.startswith("Purged 1 indexed sources")
    found = text_of(await client.call_tool("ctx_search", {"queries": ["ephemeral"]}))
    assert "(no results)" in found


async def test_an_empty_or_oversized_batch_is_refused_saying_what_to_pass(client: Client) -> None:
    empty = await client.call_tool("ctx_batch_execute", {"commands": []})
    assert empty.is_error and "no commands given" in text_of(empty) and "commands=[{label, command}" in text_of(empty)
    many = await client.call_tool("ctx_fetch_and_index", {"requests": [{"url": f"http://127.0.0.1/{i}"}
                                                                       for i in range(51)]})
    assert many.is_error and "51 URLs is more than 50" in text_of(many)
    bad = await client.call_tool("ctx_batch_execute", {"commands": [{"label": "a", "command": "true"}],
                                                       "concurrency": 9})
    assert bad.is_error and "concurrency" in text_of(bad)


@pytest.mark.kernels
async def test_a_batch_of_alike_outputs_answers_without_filler_and_with_rare_terms(client: Client) -> None:
    # A dozen package queries that print the same line (what `Rscript -e 'packageDescription(...)'`
    # prints for packages without metadata), and one whose output holds the news.
    commands = [{"label": f"pkg{i}", "command": "echo 'package: none (no description available)'"}
                for i in range(12)]
    commands.append({"label": "special", "command": "echo 'package: zirconium 2.1 (no description available)'; "
                     "echo 'zirconium needs libzr >= 3'"})
    result = await client.call_tool("ctx_batch_execute", {"commands": commands, "queries": ["package description"]})
    text = text_of(result)
    assert not result.is_error, text
    assert len(text.encode()) < 3000, text
    assert text.count("package: none (no description available)") <= 1
    terms = text.split("Distinctive terms for follow-up ctx_search: ", 1)[1].split(", ")
    assert "zirconium" in terms
    assert not {"description", "available", "none", "package"} & set(terms)
