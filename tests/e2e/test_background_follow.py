"""A long cell the agent can follow: `ctx_execute(background=true)` answers at its timeout and leaves the cell running
in a kernel of its own; `ctx_follow` tells its status, what it printed since the last look and how it ended, finds
the line an intent asks for, cancels it; the session's kernel serves other calls meanwhile; a search finds what it
printed; the export says the cell's own reply was partial and shows each look where it happened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from mcp.client.client import Client
from tests.helpers import session_cells, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.kernels]

# Prints one line, then waits (bounded) for the test to create `go` before printing the rest: no timing guesses.
GATED = ("import os, time\nprint('bgtick 0', flush=True)\ndeadline = time.time() + 60\n"
         "while not os.path.exists('go') and time.time() < deadline:\n    time.sleep(0.02)\n"
         "{rest}")


async def start(client: Client, rest: str) -> int:
    reply = await client.call_tool("ctx_execute", {"language": "python", "code": GATED.format(rest=rest),
                                                   "background": True, "timeout": 1500})
    assert not reply.is_error and text_of(reply).startswith("bgtick 0"), reply.content
    (execution,) = reply.meta["context-kernel/executions"]  # type: ignore[index]
    return int(execution)


async def follow(client: Client, execution: int, **args: Any) -> tuple[str, bool]:
    reply = await client.call_tool("ctx_follow", {"execution": execution, **args})
    return text_of(reply), bool(reply.is_error)


async def test_a_background_cell_is_followed_to_its_end_and_its_output_found(client: Client, project: Path) -> None:
    execution = await start(client, "for i in range(1, 6):\n    print('bgtick', i)\nprint('bg finished OK')")
    first, failed = await follow(client, execution)
    assert first.startswith(f"[#{execution} running for ") and "0 new lines since the last look]" in first, first
    assert not failed
    # the session's own python kernel serves other calls while the background cell runs
    assert text_of(await client.call_tool("ctx_execute", {"language": "python", "code": "print(6 * 7)"})) == "42"
    (project / "go").touch()
    done, failed = await follow(client, execution, wait=30)
    assert done.splitlines()[0].startswith(f"[#{execution} finished (ok) after ") and "6 new lines" in done, done
    assert done.splitlines()[1:] == [f"bgtick {i}" for i in range(1, 6)] + ["bg finished OK"] and not failed
    again, _ = await follow(client, execution)
    assert "0 new lines since the last look" in again
    found = text_of(await client.call_tool("ctx_search", {"queries": ["bg finished OK"]}))
    assert f"exec-{execution}" in found and "bg finished OK" in found, found

    exported = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    nb = nbformat.read(Path(exported.split(" to ", 1)[1].split(";")[0]), as_version=4)
    cells = session_cells(nb)
    (cell,) = [c for c in cells if c.get("id") == f"exec-{execution}"]
    assert cell.metadata.context_kernel.agent_saw == "partial"  # its own reply held 1 of 7 lines
    looks = [c for c in cells if c.metadata.get("context_kernel", {}).get("tool") == "ctx_follow"]
    assert len(looks) == 3 and "bg finished OK" in looks[1].source
    assert cells.index(looks[0]) > cells.index(cell)


async def test_a_look_with_an_intent_brings_back_the_line_asked_for(client: Client, project: Path) -> None:
    execution = await start(client, "for i in range(4000):\n    print(f'step {i} loss=0.{i % 97:02d} ok')\n"
                                     "    if i == 2718: print('CHECKPOINT saved to ckpt/epoch-27.pt')")
    (project / "go").touch()
    text, _ = await follow(client, execution, wait=30, intent="where was the checkpoint saved")
    assert "CHECKPOINT saved to ckpt/epoch-27.pt" in text and len(text.encode()) <= 4096, text


async def test_a_background_cell_is_cancelled_and_an_unknown_id_is_an_error_with_a_hint(
        client: Client, project: Path) -> None:
    execution = await start(client, "while True:\n    time.sleep(0.05)")
    text, failed = await follow(client, execution, cancel=True)
    assert text.startswith(f"[#{execution} finished (cancelled) after ") and "Cancelled" in text and failed, text
    exported = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    nb = nbformat.read(Path(exported.split(" to ", 1)[1].split(";")[0]), as_version=4)
    (cell,) = [c for c in session_cells(nb) if c.get("id") == f"exec-{execution}"]
    assert "the agent cancelled it" in "".join(o.get("text", "") for o in cell.outputs)
    unknown = await client.call_tool("ctx_follow", {"execution": 999})
    assert unknown.is_error and "not a background cell of this session" in text_of(unknown)
