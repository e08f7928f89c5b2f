"""docs/architecture.md names every top-level entry of the package; tests mirror the package; README is short."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "context_kernel"
DOC = ROOT / "docs" / "architecture.md"


def _layout_block() -> str:
    text = DOC.read_text()
    match = re.search(r"## Layout\s*```\n(.*?)```", text, re.S)
    assert match, "docs/architecture.md has no ```-fenced block under '## Layout'"
    return match[1]


def package_entries() -> set[str]:
    """Subpackages as `name/`, modules as `name.py` (the package's own `__init__`/`__main__` aside)."""
    entries = {f"{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    entries |= {p.name for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return entries


def layout_entries() -> set[str]:
    """What the block names at the package's level: indented two spaces, one or several per line
    (`metering.py, stats.py`)."""
    names: set[str] = set()
    for line in _layout_block().splitlines():
        head = re.match(r"  (\S[^ ]*(?:, \S+)*)\s{2,}", line + "  ")
        if head and not line.startswith("   "):
            names.update(n.strip() for n in head[1].split(","))
    return names


def test_the_layout_names_every_top_level_entry_of_the_package_and_nothing_gone() -> None:
    entries, named = package_entries(), layout_entries()
    assert {"cli/", "app.py", "tools/"} <= entries  # the scan sees the package at all
    assert {"not in the layout": sorted(entries - named), "named but gone": sorted(named - entries)} == {
        "not in the layout": [], "named but gone": []}


def test_the_readme_stays_a_front_page() -> None:
    # Figures live in docs/benchmarks.md and the variables in docs/configuration.md; the README points to them.
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move detail into docs/ and link it"


def test_every_subpackage_has_a_test_folder_of_its_name() -> None:
    subpackages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert len(subpackages) >= 17  # the scan sees the package at all
    without = sorted(name for name in subpackages if not any((ROOT / "tests" / name).glob("test_*.py")))
    assert without == [], f"subpackages with no tests/<name>/test_*.py: {without}"
