"""The notebooks committed in notebooks/ never rot: the suite executes both with nbclient.

- example-session.ipynb, an exported session, must replay cell for cell;
- tutorial.ipynb starts the server in-process, runs an analysis through the tools, exports the
  session and replays it: it must run without an error and its replay must match everywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from context_kernel.notebooks.replay import replay

pytestmark = pytest.mark.kernels

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def test_the_example_session_is_valid_and_replays_cell_for_cell() -> None:
    path = NOTEBOOKS / "example-session.ipynb"
    nbformat.validate(nbformat.read(path, as_version=4))
    report = replay(path, timeout_s=60, cwd=NOTEBOOKS)
    assert report.ok, report.render()
    assert [c.status for c in report.cells] == ["match"] * 5


@pytest.mark.timeout(240)
def test_the_tutorial_runs_end_to_end_and_its_replay_matches() -> None:
    nb = nbformat.read(NOTEBOOKS / "tutorial.ipynb", as_version=4)
    nbformat.validate(nb)
    # Executed in memory: the committed file is not rewritten.
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    replay_cell = next(c for c in nb.cells if c.cell_type == "code" and "report.render()" in c.source)
    printed = "".join(o.get("text", "") for o in replay_cell.outputs)
    total = re.search(r"^(\d+) of (\d+) cells match$", printed, re.MULTILINE)
    assert total and total.group(1) == total.group(2) and int(total.group(1)) >= 4, printed
    assert "differ" not in printed
