"""The example session committed in notebooks/ still replays: the suite executes it with nbclient."""

from __future__ import annotations

from pathlib import Path

import nbformat

from context_kernel.notebooks.replay import replay

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def test_the_example_session_is_valid_and_replays_cell_for_cell() -> None:
    path = NOTEBOOKS / "example-session.ipynb"
    nbformat.validate(nbformat.read(path, as_version=4))
    report = replay(path, timeout_s=60, cwd=NOTEBOOKS)
    assert report.ok, report.render()
    assert [c.status for c in report.cells] == ["match"] * 5
