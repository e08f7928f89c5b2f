"""Replay: an exported session re-runs in a fresh kernel and matches; a changed input file is named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.client import Client

from context_kernel.notebooks.replay import normalise, replay
from tests.conftest import text_of

pytestmark = pytest.mark.anyio


async def test_a_replayed_session_matches_then_names_the_cell_and_file_that_changed(client: Client,
                                                                                   project: Path) -> None:
    (project / "sales.csv").write_text("region,amount\nnorth,10\nsouth,32\n")
    await client.call_tool("ctx_execute", {"language": "python", "code": "rate = 2\nprint('rate', rate)"})
    await client.call_tool("ctx_execute_file", {"path": "sales.csv", "language": "python", "code": (
        "rows = [line.split(',') for line in FILE_CONTENT.splitlines()[1:]]\n"
        "print('total', sum(int(a) for _, a in rows) * rate)")})
    await client.call_tool("ctx_execute", {"language": "python", "code": "print(object())"})  # an address
    text = text_of(await client.call_tool("ctx_export", {"path": "nb"}))
    notebook = Path(text.split(" to ", 1)[1].split(";")[0])

    report = replay(notebook, timeout_s=60, cwd=project)
    assert report.ok, report.render()
    assert [c.status for c in report.cells] == ["match", "match", "match"]

    (project / "sales.csv").write_text("region,amount\nnorth,10\nsouth,33\n")
    env = {**os.environ, "CONTEXT_KERNEL_HOME": str(project.parent / "home")}
    out = subprocess.run([sys.executable, "-m", "context_kernel", "replay", str(notebook)], capture_output=True,
                         text=True, timeout=120, env=env, cwd=project)
    assert out.returncode == 1
    assert "cell 2 (execution #" in out.stdout and "differ" in out.stdout and "file changed" in out.stdout
    assert "-[stdout] total 84" in out.stdout and "+[stdout] total 86" in out.stdout
    assert "2 of 3 cells match" in out.stdout


def test_volatile_parts_are_normalised() -> None:
    assert normalise("<object at 0x7f3a2b1c9d80> took 12.5 ms at 2026-11-30T05:00:00Z in /tmp/abc/x.py") == \
        "<object at 0xADDR> took DURATION at TIMESTAMP in /tmp/PATH"
    assert normalise("\x1b[31mCell In[12], line 3\x1b[0m") == "Cell In[N], line 3"
