"""Every execution's reply ends with its id (`[#42]`) and carries it in `_meta`, so an agent can cite the cell a
number came from and a reviewer can find it: in search hits from its output, the exported notebook's cell, the
HTML export's `#exec-42` anchor."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from mcp.types import CallToolResult
from tests.helpers import session_cells, text_of

from context_kernel.settings import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
META = "context-kernel/executions"


def cited(result: CallToolResult) -> int:
    """The execution a reply cites: its last line, the same id as its `_meta`."""
    text = "".join(getattr(block, "text", "") for block in result.content)
    last = text.rsplit("\n", 1)[-1]
    match = re.fullmatch(r"\[#(\d+)\]", last)
    assert match, f"the reply does not end with its citation: {text[-200:]!r}"
    assert (result.meta or {}).get(META) == [int(match[1])], result.meta
    return int(match[1])


async def execute(client: Client, code: str, language: str = "python", **extra: object) -> CallToolResult:
    return await client.call_tool("ctx_execute", {"language": language, "code": code, **extra})


async def test_every_kind_of_execution_reply_ends_with_its_own_id(client: Client, project: Path) -> None:
    (project / "data.csv").write_text("mass\n6300\n4200\n")
    replies = {
        "ok": await execute(client, "print(6 * 7)"),
        "error": await execute(client, "1/0"),
        "shell": await execute(client, "echo hi", "shell"),
        "shell exit 1 answered": await execute(client, "grep -c nothing /dev/null", "shell"),
        "timeout": await execute(client, "import time; time.sleep(30)", timeout=1000),
        "trimmed": await execute(client, "for i in range(5000): print('row', i)"),
        "intent": await execute(client, "for i in range(5000): print('row', i, 'heaviest' if i == 4321 else '')",
                                intent="heaviest"),
        "file": await client.call_tool("ctx_execute_file", {
            "path": "data.csv", "language": "python",
            "code": "print(max(int(x) for x in FILE_CONTENT.split()[1:]))"}),
        "background": await execute(client, "import time; print('started', flush=True); time.sleep(3)",
                                    background=True, timeout=500),
    }
    ids = {name: cited(result) for name, result in replies.items()}
    assert len(set(ids.values())) == len(ids), ids  # each reply names its own execution
    assert replies["error"].is_error and replies["timeout"].is_error and not replies["ok"].is_error
    assert text_of(replies["ok"]) == "42" and text_of(replies["file"]) == "6300"
    # the citation costs a few bytes: a newline and "[#N]"
    full = "".join(getattr(b, "text", "") for b in replies["ok"].content)
    assert len(full.encode()) - len(b"42") <= 12


async def test_a_batch_cites_each_command_and_a_search_hit_its_execution(client: Client) -> None:
    batch = await client.call_tool("ctx_batch_execute", {"commands": [
        {"label": "one", "command": "echo first"}, {"label": "two", "command": "echo second"}]})
    text = text_of(batch)
    ids = (batch.meta or {}).get(META)
    assert isinstance(ids, list) and len(ids) == 2, batch.meta
    assert f"1. one [#{ids[0]}]: ok" in text and f"2. two [#{ids[1]}]: ok" in text, text
    big = await execute(client, "for i in range(4000): print('sample', i, 'zeppelin' if i == 3999 else '')")
    exec_id = cited(big)
    found = text_of(await client.call_tool("ctx_search", {"queries": ["zeppelin"], "source": f"exec-{exec_id}"}))
    assert f"source: exec-{exec_id} [#{exec_id}]" in found, found


async def test_the_export_names_each_cell_by_its_id_and_the_html_has_its_anchor(client: Client, project: Path) -> None:
    first = cited(await execute(client, "x = 6300\nprint(x)"))
    second = cited(await execute(client, "print(x // 2)"))
    done = text_of(await client.call_tool("ctx_export", {"path": "exports", "format": "html"}))
    html_path = Path(done.split(" to ", 1)[1].split(";")[0])
    notebook = html_path.with_suffix(".ipynb")
    nb = nbformat.read(notebook, as_version=4)
    assert [(c.id, c.metadata.context_kernel.execution_id) for c in session_cells(nb)] == [
        (f"exec-{first}", first), (f"exec-{second}", second)]
    html = await anyio.Path(html_path).read_text()
    for exec_id in (first, second):
        assert f'id="exec-{exec_id}"' in html and f"[#{exec_id}]" in html


async def test_the_server_tells_the_agent_to_cite_the_ids(client: Client) -> None:
    instructions = client.instructions or ""
    assert "[#42]" in instructions and "cite" in instructions


async def test_context_kernel_show_prints_the_cited_execution_for_a_reviewer(client: Client, project: Path,
                                                                            settings: Settings) -> None:
    (project / "penguins.csv").write_text("species,body_mass_g\nGentoo,6300\nAdelie,3750\n")
    exec_id = cited(await execute(client, "import csv\nrows = list(csv.DictReader(open('penguins.csv')))\n"
                                          "print(max(int(r['body_mass_g']) for r in rows))"))
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(settings.home)}

    def show(arg: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "context_kernel", "show", arg], capture_output=True, text=True,
                              env=env, cwd=project, timeout=60, check=False)

    done = await anyio.to_thread.run_sync(show, f"[#{exec_id}]")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"execution #{exec_id} · ctx_execute · python (kernel python3) · ok · "), out
    assert "rows = list(csv.DictReader(open('penguins.csv')))" in out
    assert "read    penguins.csv  sha256:" in out and "--- output ---\n6300\n" in out
    assert "--- shown to the agent: full output — a 4-byte reply" in out
    wrong, missing = await anyio.to_thread.run_sync(show, "penguins"), await anyio.to_thread.run_sync(show, "99999")
    assert wrong.returncode == 2 and "not an execution id" in wrong.stderr
    assert missing.returncode == 1 and "no execution #99999" in missing.stderr and "[#N]" in missing.stderr
