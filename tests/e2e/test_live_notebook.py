"""A person watches a session as it runs: its notebook in the live folder is rewritten after the agent's calls,
whole every time (a reader never meets half a file), with the same cells an export has."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, session_cells

from context_kernel.notebooks.live import prune
from context_kernel.tools.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]
WAIT_S = 60.0


async def live_cells(folder: Path, wanted: int) -> list[Any]:
    """The live notebook's cells once it holds `wanted` of them (bounded: the writer runs after each call);
    every read parses and validates the file, as JupyterLab would."""
    deadline = time.monotonic() + WAIT_S
    while True:
        found = sorted([p async for p in anyio.Path(folder).glob("*/session-*.ipynb")])
        if found:
            nb = nbformat.reads(await anyio.Path(found[0]).read_text(), as_version=4)
            nbformat.validate(nb)
            if len(session_cells(nb)) >= wanted:
                return session_cells(nb)
        assert time.monotonic() < deadline, f"the live notebook did not reach {wanted} cells in {WAIT_S:g} s"
        await anyio.sleep(0.05)


async def test_the_live_notebook_follows_the_session_while_it_runs(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project, live_notebooks=True)
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_execute", {"language": "python", "code": "mass = 6300\nprint(mass)"})
        first = await live_cells(settings.live_dir, 1)
        assert [c.source for c in first] == ["mass = 6300\nprint(mass)"]
        assert first[0].outputs[0].text == "6300\n"
        await client.call_tool("ctx_index", {"content": "# Penguins\nGentoo are the heaviest.", "source": "notes"})
        await client.call_tool("ctx_execute", {"language": "python", "code": "print(mass // 2)"})
        later = await live_cells(settings.live_dir, 3)  # read mid-session: the client is still connected
        assert [c.cell_type for c in later] == ["code", "markdown", "code"]
        assert later[2].outputs[0].text == "3150\n" and later[2].metadata.context_kernel.status == "ok"
    # nothing but whole notebooks in the folder: no temporary file left behind
    assert [p.suffix for p in settings.live_dir.rglob("*") if p.is_file()] == [".ipynb"]


async def test_no_live_notebook_is_written_when_turned_off(tmp_path: Path, project: Path) -> None:
    settings = make_settings(tmp_path, project)  # live_notebooks=False
    async with Client(create_server(settings)) as client:
        await client.call_tool("ctx_execute", {"language": "python", "code": "print(1)"})
        await client.call_tool("ctx_stats", {})  # a later call: the first one's record is written by now
    assert not settings.live_dir.exists()


def test_retention_deletes_the_live_folders_of_sessions_idle_past_it(tmp_path: Path) -> None:
    old, recent = tmp_path / "old-session", tmp_path / "recent-session"
    for folder, age_days in ((old, 40), (recent, 2)):
        folder.mkdir()
        (folder / "session.ipynb").write_text("{}")
        when = time.time() - age_days * 86_400
        os.utime(folder / "session.ipynb", (when, when))
    assert prune(tmp_path, 30) == 1 and not old.exists() and recent.exists()
    assert prune(tmp_path, 0) == 0 and recent.exists()  # 0 keeps everything, as for the records
