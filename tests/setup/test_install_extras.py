"""The `analysis` extra (numpy, pandas, matplotlib) is what `make serve` and `make test` install and the docs name."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_analysis_extra_is_what_make_installs_and_the_readme_names() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {re.split(r"[<>=!~ ]", req)[0] for req in extras["analysis"]} >= {"numpy", "pandas", "matplotlib"}
    assert "context-kernel[analysis]" in extras["test"]  # so the tests that need it always have it
    assert re.search(r"pip install -q -e '\.\[[\w,]*\banalysis\b[\w,]*\]'", (ROOT / "Makefile").read_text())
    # Named by the extra, with the command for each install (not a PyPI name: tests/setup/test_installation.py).
    assert "[analysis]" in (ROOT / "README.md").read_text()
    assert "extra `analysis`" in (ROOT / "docs" / "kernels.md").read_text()
