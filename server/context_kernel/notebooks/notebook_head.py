"""The head of an exported notebook: its kernelspec (the interpreter the session ran in, for python), its
language_info as the kernel gave it, and the setup cells before the session's own (the note naming the python
interpreter, the cell that moves the kernel to where the session ran)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nbformat import v4

from ..kernels.languages import language_for_kernel
from ..kernels.python_env import SERVER_KERNEL, kernel_name_for
from ..kernels.python_specs import python_display_name
from ..store.executions import ExecutionRow

# The cells before a notebook's session cells (the interpreter's note, the move to the session's folder, the
# inputs table): not cells of the session.
SETUP_ROLE = "setup"


def exported_kernel(kernel_name: str, python: dict[str, Any]) -> str:
    """The kernelspec an exported notebook names: the server's own python kernel by its interpreter's name,
    which `kernels install` registers (`python3` would be the reviewer's Python, which may lack the session's
    packages: kernels/python_specs.py); every other kernel by its own name."""
    if kernel_name == SERVER_KERNEL and python.get("executable"):
        return kernel_name_for(Path(python["executable"]))
    return kernel_name


def setup_cells(kernel_name: str | None, project_dir: str | None, python: dict[str, Any]) -> list[Any]:
    """The cell that puts the kernel where the session ran (kernels/project_dir_code.py): JupyterLab and
    nbconvert start it in the notebook's folder. Marked `role: setup`: replay runs the cells there itself.
    A python notebook first says which interpreter it runs in and how to register its kernel."""
    lang = language_for_kernel(kernel_name or "")
    cells = []
    if lang is not None and lang.name == "python" and kernel_name and python.get("executable"):
        note = v4.new_markdown_cell(
            f"Runs in the Python the session used, `{python['executable']}`, as the kernel "
            f"`{exported_kernel(kernel_name, python)}`. If Jupyter says there is no such kernel, register it on "
            "this machine with `context-kernel kernels install --user` (`context-kernel replay` needs no "
            "registration).")
        note.id = "kernel-note"
        note.metadata["context_kernel"] = {"role": SETUP_ROLE}
        cells.append(note)
    if not project_dir or lang is None or lang.chdir is None:
        return cells
    cell = v4.new_code_cell(lang.chdir(project_dir))
    cell.id = "project-dir"
    cell.metadata["context_kernel"] = {"role": SETUP_ROLE, "project_dir": project_dir}
    return [*cells, cell]


def language_info_of(rows: list[ExecutionRow], kernel: str) -> dict[str, Any] | None:
    """The language_info a kernel of this name gave in the session (the first recorded)."""
    found = next((r.language_info for r in rows if r.kernel_name == kernel and r.language_info), None)
    return json.loads(found) if found else None


def python_of(rows: list[ExecutionRow], kernels: list[str]) -> dict[str, Any]:
    """Which interpreter and environment the notebook's cells ran with (`python`), as recorded, so a
    reader knows and replay runs them in the same one."""
    for row in rows:
        if row.kernel_name in kernels and row.python:
            return {"python": {"executable": row.python, **({"env": row.python_env} if row.python_env else {})}}
    return {}


def new_notebook(kernel_name: str | None, kernelspecs: Callable[[str], dict[str, Any] | None],
              meta: dict[str, Any], language_info: dict[str, Any] | None = None) -> Any:
    """`language_info`: the kernel's own, as recorded (JupyterLab then opens the notebook unmodified); else
    the kernelspec's language name."""
    nb = v4.new_notebook()
    nb.nbformat, nb.nbformat_minor = 4, 5
    if kernel_name:
        spec = kernelspecs(kernel_name) or {}
        display = spec.get("display_name", kernel_name)
        python = meta.get("python") or {}
        if kernel_name != exported_kernel(kernel_name, python):
            kernel_name = exported_kernel(kernel_name, python)
            display = python_display_name(str((language_info or {}).get("version", "")), python["executable"],
                                          python.get("env"))
        nb.metadata["kernelspec"] = {"name": kernel_name, "display_name": display,
                                     "language": spec.get("language", "")}
        nb.metadata["language_info"] = language_info or {"name": spec.get("language", "")}
    # No export time: two exports of one session are the same file (nbdime, git diff show nothing).
    nb.metadata["context_kernel"] = meta
    return nb
