"""Semantic recall through the MCP client: ctx_index says when semantic search covers a source."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from tests.helpers import make_settings, text_of

from context_kernel.app import AppHolder
from context_kernel.tools.server import create_server

pytestmark = pytest.mark.anyio

DOC = ("# Routine vacuuming\n\nAn UPDATE or DELETE of a row does not immediately remove the old version of the row. "
       "VACUUM reclaims the space later.\n")


async def test_ctx_index_says_semantic_search_will_cover_the_source(tmp_path: Path, project: Path) -> None:
    async with Client(create_server(make_settings(tmp_path, project, semantic=True))) as client:
        reply = text_of(await client.call_tool("ctx_index", {"content": DOC, "source": "vacuum"}))
        assert reply.startswith('Indexed 1 section (0 with code) as "vacuum".\nSemantic search covers it')
        found = text_of(await client.call_tool("ctx_search", {"queries": ["old version of the row"]}))
        assert "source: vacuum" in found


async def test_ctx_index_says_nothing_of_semantic_search_when_it_is_off(client: Client) -> None:
    reply = text_of(await client.call_tool("ctx_index", {"content": DOC, "source": "vacuum"}))
    assert reply == 'Indexed 1 section (0 with code) as "vacuum".'


async def test_once_embedded_the_reply_says_semantic_search_covers_it_now(tmp_path: Path, project: Path) -> None:
    async with AppHolder(make_settings(tmp_path, project, semantic=True)) as holder:
        app = await holder.get()
        await app.knowledge.index(content=DOC, source="vacuum", session_id="s")
        semantic = await app.knowledge.semantic_started()
        assert semantic is not None
        assert await anyio.to_thread.run_sync(semantic.worker.wait_idle, 120.0)
        assert await app.knowledge.semantic_coverage(["vacuum"]) == "Semantic search covers it now."
        reply = await app.knowledge.search(["why is my table not smaller after I delete records"], session_id="s")
        assert "source: vacuum" in reply.text


def _embedder_children() -> list[int]:
    """This process's children that are embedder processes (semantic/embed_process.py)."""
    import os

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if ppid == os.getpid() and b"embed_process" in cmdline:
            found.append(int(entry.name))
    return found


async def test_a_server_closed_while_semantic_recall_starts_leaves_no_embedder_behind(tmp_path: Path,
                                                                                        project: Path) -> None:
    """Semantic recall starts in a thread after the build; a shutdown in that window dropped the started
    instance with the cancelled task, and its embedder process ran on (seen on a loaded machine)."""
    before = set(_embedder_children())
    async with AppHolder(make_settings(tmp_path, project, semantic=True)) as holder:
        await holder.get()  # and close at once: semantic recall is still starting in its thread
    assert set(_embedder_children()) - before == set()
