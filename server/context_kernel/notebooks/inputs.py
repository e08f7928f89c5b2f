"""The session's inputs at the top of its export, and (`--with-inputs`) a copy of them next to the notebooks.

The table lists each file the session's cells read (execution/provenance.py: path, size, sha256) once per
version, with the cells that read it (`exec-N` anchors): a reviewer sees at a glance what the numbers rest on.
With `with_inputs`, each input inside the project that is still the version the cells read (same hash) is copied
to `inputs/<its project path>` next to the notebooks, within a size limit, and the notebooks then run their cells
there: the session re-runs after the project's data has moved on. A file that changed since, lies outside the
project, or is over the limit is not copied, and the table says why.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbformat import v4

from ..execution.files import file_hash
from ..store.executions import ExecutionRow

INPUTS_DIR = "inputs"
# What one export copies at most: a file, and all of them. Past these the table says "over the size limit".
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_TOTAL_BYTES = 500 * 1024 * 1024


@dataclass
class InputFile:
    path: str
    """Relative to the project when inside it (absolute otherwise), as the cells' metadata give it."""
    size: int | None
    sha256: str | None
    readers: list[int] = field(default_factory=list)
    """The executions that read this version."""
    copy: str | None = None
    """With `with_inputs`: "copied", or why not."""


def input_files(rows: list[ExecutionRow]) -> list[InputFile]:
    """Each version of each file the session's cells read, in the order first read."""
    found: dict[tuple[str, str | None], InputFile] = {}
    for row in rows:
        for entry in json.loads(row.files) if row.files else []:
            if entry.get("mode") != "read" or entry.get("gone") or not entry.get("path"):
                continue
            key = (entry["path"], entry.get("sha256"))
            item = found.setdefault(key, InputFile(entry["path"], entry.get("size"), entry.get("sha256")))
            if row.id not in item.readers:
                item.readers.append(row.id)
    return list(found.values())


def copy_inputs(files: list[InputFile], project_dir: Path, directory: Path) -> None:
    """Copy each input still as the cells read it into `directory/inputs/`, setting each file's `copy`."""
    total = 0
    for item in files:
        source = project_dir / item.path
        if Path(item.path).is_absolute() or ".." in Path(item.path).parts:
            item.copy = "outside the project: not copied"
        elif item.sha256 is None:
            item.copy = "too big to hash when read: not copied"
        elif item.size is None or item.size > MAX_FILE_BYTES or total + item.size > MAX_TOTAL_BYTES:
            item.copy = "over the size limit: not copied"
        elif not source.is_file() or file_hash(source) != item.sha256:
            item.copy = "changed or gone since the session: not copied"
        else:
            target = directory / INPUTS_DIR / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            total += item.size
            item.copy = "copied"


def inputs_cell(files: list[InputFile]) -> Any:
    """The markdown table of the session's inputs (None when its cells read no file)."""
    if not files:
        return None
    copied = any(f.copy is not None for f in files)
    head = "| file | size | sha256 | read by |" + (" copy |" if copied else "")
    rule = "|---|---:|---|---|" + ("---|" if copied else "")
    lines = [f"**Inputs** — the files this session's cells read, as they were when read.\n\n{head}\n{rule}"]
    for f in files:
        size = f"{f.size:,} B" if f.size is not None else ""
        digest = f"`{f.sha256.removeprefix('sha256:')[:16]}…`" if f.sha256 else "(size and time only)"
        readers = ", ".join(f"[#{n}](#exec-{n})" for n in f.readers)
        lines.append(f"| `{f.path}` | {size} | {digest} | {readers} |" + (f" {f.copy} |" if copied else ""))
    if copied:
        lines.append(f"\nThe copies are in `{INPUTS_DIR}/` next to this notebook; the cells run there.")
    cell = v4.new_markdown_cell("\n".join(lines))
    cell.id = "inputs"
    # `role: setup` like the cells that put the kernel in place: not one of the session's cells, so replay numbers
    # the session's cells without it.
    cell.metadata["context_kernel"] = {"role": "setup", "table": "inputs", "inputs": [
        {"path": f.path, "size": f.size, "sha256": f.sha256, "read_by": f.readers,
         **({"copy": f.copy} if f.copy else {})} for f in files]}
    return cell
