"""The export tells the whole conversation: the searches, index calls and batches the agent made appear as markdown
cells among its code cells, in the order they happened, with what was asked and what came back (redacted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of
from tests.security.secret_probe import GHP

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]


async def export(client: Client) -> Any:
    done = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    return nbformat.read(Path(done.split(" to ", 1)[1].split(";")[0]), as_version=4)


def kinds(nb: Any) -> list[str]:
    return [c.metadata.get("context_kernel", {}).get("tool") or c.cell_type for c in session_cells(nb)]


async def test_searches_and_index_calls_sit_between_the_cells_they_came_between(client: Client) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('before')"})
    await client.call_tool("ctx_index", {"content": "# Airships\nThe zeppelin flew at 128 km/h.", "source": "notes"})
    found = await client.call_tool("ctx_search", {"queries": ["zeppelin speed", f"token {GHP}"]})
    assert "128 km/h" in text_of(found)
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('after')"})
    nb = await export(client)
    nbformat.validate(nb)
    assert kinds(nb) == ["ctx_execute", "ctx_index", "ctx_search", "ctx_execute"]
    index, search = session_cells(nb)[1], session_cells(nb)[2]
    assert index.id.startswith("call-") and "`notes`" not in index.source and '"source": "notes"' in index.source
    assert "content" in index.source and "characters" in index.source  # the indexed text is counted, not copied
    assert search.source.startswith("> **ctx_search**: *zeppelin speed*") and "128 km/h" in search.source
    assert GHP not in search.source and "[REDACTED" in search.source  # as every record is
    assert (await export(client)).cells == nb.cells  # the same notebook again: stable ids


async def test_in_a_mixed_session_the_index_notebook_tells_the_conversation(client: Client) -> None:
    await client.call_tool("ctx_execute", {"language": "python", "code": "print('py')"})
    await client.call_tool("ctx_batch_execute", {"commands": [{"label": "disk", "command": "echo 42% used"}],
                                                 "queries": ["used"]})
    await client.call_tool("ctx_execute", {"language": "shell", "code": "echo sh"})
    index = await export(client)
    assert kinds(index) == ["markdown", "markdown", "ctx_batch_execute", "markdown", "markdown"]
    batch = index.cells[2]  # the call, then the command it ran (step 2)
    assert '"label": "disk"' in batch.source and "42% used" in batch.source, batch.source
    assert [c.id for c in index.cells if c.id.startswith("step-")] == ["step-1", "step-2", "step-3"]
