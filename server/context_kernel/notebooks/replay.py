"""Replay an exported notebook in a fresh kernel and say, cell by cell, whether the outputs match.

Volatile parts are normalised before comparing (memory addresses, timestamps, durations, temp
paths, ANSI codes, execution counts in tracebacks), and our own annotation lines are ignored.
Raster images (a plot) are compared by their decoded pixels with a tolerance for renderer noise
(images.py): a plot of changed data is a difference even when every text output matches.
Each stream is compared as a whole: how a kernel splits its output into messages, and how
stdout and stderr interleave, depend on timing. Cells that read a file (`ctx_execute_file`)
report when the file's hash changed since the session.

Cells that did not finish in the session replay as follows:
- interrupted (the server stopped while the cell ran): not run, reported `skipped`, since what
  it did before it stopped is unknown;
- died (the cell killed its kernel): not run, reported `skipped`, so the rest of the notebook
  still replays in one kernel;
- timeout: run under the same time limit and interrupted there, reported `match` when it times
  out again (its output up to the limit depends on the machine's speed and is not compared),
  `differ` when it finishes this time.
Any other cell that runs past `timeout_s` is interrupted and reported `differ`, and the replay
goes on with the next cell; nothing waits forever.

Given the index notebook of a mixed-language session, replay runs each per-kernel notebook it
lists, and the report names the notebook of each cell and tallies each notebook; a notebook that
cannot run here (its kernel is not installed, it is missing) is reported as not replayed and the
others still run.

A notebook whose cells ran in a project's environment (`metadata.context_kernel.python`, a kernel
named `ck-python-…`) replays in that same interpreter, with its environment activated as in the
session; when that interpreter is not on this machine, or cannot run the kernel, replay says so
and stops (the CLI exits 2) instead of running the cells in another Python.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from ..errors import KernelUnavailable, ReplayError
from ..execution.provenance import changed_inputs
from ..kernels.languages import PROJECT_PYTHON_PREFIX
from ..kernels.python_env import SERVER_KERNEL
from ..kernels.specs import find_spec, kernel_manager_class
from ..wording import counted
from .notebook_head import SETUP_ROLE
from .output_comparison import comparable, image_changes

# The error nbclient reports for a cell it interrupted at its time limit (our marker, not the kernel's).
_TIMEOUT_ENAME = "ContextKernelReplayTimeout"
# Statuses whose cells replay does not run, and why.
_NOT_RUN = {
    "interrupted": "never finished in the session; not run",
    "died": "its kernel died running it in the session; not run",
}


@dataclass(frozen=True)
class KernelPlace:
    """Where replay finds the kernelspecs a server wrote (its data dir) and the environment kernels get."""

    kernels_dir: Path | None = None
    overlays_dir: Path | None = None
    env: Mapping[str, str] | None = None


@dataclass
class CellReport:
    index: int
    execution_id: int | None
    status: Literal["match", "differ", "skipped", "not replayed"]
    """skipped: the session never finished it; not replayed: the replay stopped before it (a dead kernel)"""
    diff: str = ""
    file_changed: str | None = None
    note: str = ""
    notebook: str = ""
    """The per-kernel notebook's file name, when the replay started from an index notebook."""


@dataclass
class NotebookOutcome:
    """One per-kernel notebook of an index: replayed, or why not (its kernel is missing here...)."""

    name: str
    problem: str = ""
    code_cells: int = 0
    """How many code cells it holds: not replayed when it has a problem."""


@dataclass
class ReplayReport:
    cells: list[CellReport] = field(default_factory=list)
    stopped: str = ""
    """Why the replay ended early (the kernel died), or empty."""
    notebooks: list[NotebookOutcome] = field(default_factory=list)
    """Given an index: each notebook it lists, in order, so one that cannot run does not hide the others."""

    @property
    def ok(self) -> bool:
        return (not self.stopped and all(c.status != "differ" for c in self.cells)
                and not any(n.problem for n in self.notebooks))

    @property
    def diverging(self) -> list[CellReport]:
        return [c for c in self.cells if c.status == "differ"]

    def render(self) -> str:
        lines = []
        for c in self.cells:
            label = (f"{c.notebook} " if c.notebook else "") + f"cell {c.index}" + (
                f" (execution #{c.execution_id})" if c.execution_id else "")
            line = f"{label}: {c.status}" + (f" — file changed: {c.file_changed}" if c.file_changed else "")
            lines.append(line + (f" ({c.note})" if c.note else ""))
            if c.diff:
                lines.append(c.diff)
        if self.stopped:
            lines.append(f"replay stopped early: {self.stopped}")
        for nb in self.notebooks:
            ran = [c for c in self.cells if c.notebook == nb.name]
            lines.append(f"{nb.name}: " + (f"not replayed — {nb.problem}" if nb.problem else _tally(ran)))
        unread = [n for n in self.notebooks if n.problem]
        lines.append(_tally(self.cells, sum(n.code_cells for n in unread), [n.name for n in unread]))
        return "\n".join(lines)


def _tally(cells: list[CellReport], unread_cells: int = 0, unread: list[str] | None = None) -> str:
    """What was replayed and how it compared, and what was not replayed: "3 of 3 cells match" must not be
    the whole story of a replay that left a notebook out (its kernel is not installed here)."""
    matched = sum(c.status == "match" for c in cells)
    differ = sum(c.status == "differ" for c in cells)
    skipped = sum(c.status == "skipped" for c in cells)
    stopped = sum(c.status == "not replayed" for c in cells)
    line = f"{matched} of {matched + differ} cells match" + (f", {skipped} skipped" if skipped else "")
    if differ:
        line += f"; {differ} differ: see the differences above"
    if stopped:
        line += f"; {stopped} not replayed: the replay stopped before them"
    if unread:
        left = counted(unread_cells, "cell") if unread_cells else "the cells"
        line += f"; {left} of {', '.join(unread)} not replayed"
    return line


def replay(path: Path, *, timeout_s: int = 600, cwd: Path | None = None,
           place: KernelPlace | None = None,
           run_one: Callable[[Any, int], ReplayReport] | None = None,
           progress: Callable[[str, int, int], None] | None = None) -> ReplayReport:
    """Run the notebook (or each notebook an index lists) in a fresh kernel and compare outputs.

    `cwd` defaults to the directory the session ran in, when it still exists, else the
    notebook's own directory. `run_one(notebook, timeout_s)` runs each notebook instead of a local
    kernel (notebooks/gateway_replay.py, for `replay --gateway-url`). `progress(notebook, n, of)`: called as the
    session's n-th cell of a local replay starts (the CLI prints it).
    """
    place = place or KernelPlace()
    nb = nbformat.read(path, as_version=4)

    def one(at: Path, notebook: Any) -> ReplayReport:
        if run_one is not None:
            return run_one(notebook, timeout_s)
        return _replay_one(at, notebook, timeout_s, cwd, place, progress)

    if nb.metadata.get("kernelspec") and not nb.metadata.get("context_kernel", {}).get("notebooks"):
        return one(path, nb)
    listed = nb.metadata.get("context_kernel", {}).get("notebooks")
    if not listed:
        raise ReplayError(f"{path} names no kernel and lists no per-kernel notebooks to replay")
    missing = [name for name in listed if not (path.parent / name).is_file()]
    if len(missing) == len(listed):
        raise ReplayError(f"{path} lists notebooks that are not next to it: {', '.join(missing)}")
    report = ReplayReport()
    for name in listed:
        outcome = NotebookOutcome(name)
        report.notebooks.append(outcome)
        if name in missing:
            outcome.problem = "it is not next to the index"
            continue
        try:
            part_nb = nbformat.read(path.parent / name, as_version=4)
        except ValueError as exc:  # nbformat: not JSON, not a notebook
            outcome.problem = f"not a readable notebook: {exc}"
            continue
        try:
            part = one(path.parent / name, part_nb)
        except ReplayError as exc:  # this notebook cannot run here; the others still can
            outcome.problem = exc.message
            outcome.code_cells = sum(c.cell_type == "code" for c in part_nb.cells)
            continue
        for c in part.cells:
            c.notebook = name
        report.cells += part.cells
        if part.stopped:
            report.stopped = "; ".join(filter(None, [report.stopped, f"{name}: {part.stopped}"]))
    if all(n.problem for n in report.notebooks):
        raise ReplayError(f"none of the notebooks {path.name} lists can be replayed here: " + "; ".join(
            f"{n.name}: {n.problem}" for n in report.notebooks))
    return report


def _replay_one(path: Path, nb: Any, timeout_s: int, cwd: Path | None, place: KernelPlace,
                progress: Callable[[str, int, int], None] | None = None) -> ReplayReport:
    kernel = nb.metadata.kernelspec.name
    project = nb.metadata.get("context_kernel", {}).get("project_dir")
    where = cwd or (Path(project) if project and Path(project).is_dir() else path.parent)
    start: dict[str, Any] = {}
    if kernel.startswith(PROJECT_PYTHON_PREFIX):
        ran_in = dict(nb.metadata.get("context_kernel", {}).get("python") or {})
        if ran_in.get("executable") and os.path.abspath(ran_in["executable"]) == os.path.abspath(sys.executable):
            kernel = SERVER_KERNEL  # it ran in this very interpreter: its own python kernel is the same one
        else:
            kernel, start["env"] = _project_kernel(path.name, ran_in, where, place)
    elif find_spec(kernel, place.kernels_dir) is None:
        raise ReplayError(f"{path.name} needs the kernel {kernel!r}, which is not installed here "
                         "(context-kernel doctor lists the kernels)")
    recorded = copy.deepcopy(nb)
    for cell in nb.cells:
        if _meta(cell).get("status") in _NOT_RUN or is_setup(cell):
            cell.cell_type = "raw"  # nbclient runs code cells only; replay puts the kernel in the folder itself
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
    timed_out: set[int] = set()
    started: set[int] = set()

    def limit(cell: Any) -> float:
        meta = _meta(cell)
        if meta.get("status") == "timeout" and meta.get("timeout_ms"):
            return float(meta["timeout_ms"]) / 1000
        return float(timeout_s)

    def executed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        if execute_reply.get("content", {}).get("ename") == _TIMEOUT_ENAME:
            timed_out.add(cell_index)

    to_run = sum(1 for c in nb.cells if c.cell_type == "code")

    def began(cell_index: int) -> None:
        started.add(cell_index)
        if progress is not None:
            progress(path.name, len(started), to_run)

    client = NotebookClient(
        nb, kernel_manager_class=kernel_manager_class(place.kernels_dir),
        timeout=timeout_s, timeout_func=limit, allow_errors=True, interrupt_on_timeout=True,
        # Answer for a kernel that ignores the interrupt instead of waiting on it again.
        error_on_timeout={"ename": _TIMEOUT_ENAME, "evalue": "interrupted at the time limit", "traceback": []},
        on_cell_executed=executed, on_cell_start=lambda cell, cell_index: began(cell_index),
        kernel_name=kernel,
        resources={"metadata": {"path": str(where)}})
    report = ReplayReport()
    # The kernel's own stderr (start-up warnings, a crash's last words) is not the cells' output:
    # keep it out of the caller's terminal or notebook, and quote it if the kernel dies.
    with tempfile.TemporaryFile() as kernel_log:
        try:
            client.execute(stderr=kernel_log, **start)
        except (CellTimeoutError, DeadKernelError) as exc:
            kernel_log.seek(0)
            last = kernel_log.read().decode("utf-8", "replace").strip().splitlines()[-3:]
            report.stopped = f"{type(exc).__name__}: {exc}".strip() + "".join(f"\n  kernel: {line}" for line in last)
            for cell in nb.cells:
                cell.setdefault("outputs", [])
    for i, number, old, new in session_cells(recorded.cells, nb.cells):
        report.cells.append(not_replayed(number, old) if report.stopped and i not in started
                            else _compare(number, old, new, timed_out=i in timed_out, limit=limit(old), where=where))
    return report


def session_cells(recorded: list[Any], replayed: list[Any]) -> Iterator[tuple[int, int, Any, Any]]:
    """(position in the notebook, number in the report, recorded, replayed) of each code cell of the session:
    the setup cell is neither compared nor counted, so "cell 1" is the session's first cell."""
    setup = 0
    for i, (old, new) in enumerate(zip(recorded, replayed, strict=False)):
        if is_setup(old):
            setup += 1
        elif old.cell_type == "code":
            yield i, i + 1 - setup, old, new


def not_replayed(index: int, old: Any) -> CellReport:
    """A cell the replay never reached (its kernel died on an earlier one); one the session never finished is
    `skipped` as always."""
    meta = _meta(old)
    if meta.get("status") in _NOT_RUN:
        return CellReport(index, meta.get("execution_id"), "skipped", note=_NOT_RUN[meta["status"]])
    return CellReport(index, meta.get("execution_id"), "not replayed", note="the replay stopped before it")


def _project_kernel(name: str, recorded: dict[str, Any], where: Path, place: KernelPlace) -> tuple[str, dict[str, str]]:
    """The kernel and environment to replay a notebook that ran in a project's interpreter: the same
    interpreter (its kernelspec written again if this data dir lacks it), or ReplayError saying why not."""
    from ..kernels.python_env import find_project_python

    executable = recorded.get("executable")
    if not executable:
        raise ReplayError(f"{name} ran in a project's Python environment but does not say which interpreter "
                          "(metadata.context_kernel.python is missing)")
    if place.kernels_dir is None or place.overlays_dir is None:
        raise ReplayError(f"{name} ran in {executable}: replay it with `context-kernel replay`, which knows the "
                          "data dir its kernelspec lives in")
    python = find_project_python(where, place.env or {}, kernels_dir=place.kernels_dir,
                                 overlays_dir=place.overlays_dir, explicit=executable,
                                 explicit_from="the notebook's recorded interpreter")
    try:
        launch = python.prepare()
    except KernelUnavailable as exc:
        env = f" (environment {recorded['env']})" if recorded.get("env") else ""
        raise ReplayError(f"{name} ran in {executable}{env}, which cannot run here: {exc}") from exc
    return launch.kernel_name, python.env


def _compare(index: int, old: Any, new: Any, *, timed_out: bool, limit: float,
             where: Path | None = None) -> CellReport:
    """How the replayed cell compares with the recorded one; `where`: the project folder it replayed in (a
    cell's recorded inputs are relative to it)."""
    meta = _meta(old)
    exec_id = meta.get("execution_id")
    if meta.get("status") in _NOT_RUN:
        return CellReport(index, exec_id, "skipped", note=_NOT_RUN[meta["status"]])
    changed = _file_changed(meta.get("file"))
    if meta.get("status") == "timeout":
        if timed_out:
            return CellReport(index, exec_id, "match", file_changed=changed,
                              note=f"timed out again at the recorded {limit:g} s limit")
        return CellReport(index, exec_id, "differ", file_changed=changed,
                          note=f"timed out after {limit:g} s in the session, finished this time")
    before, after = comparable(old.get("outputs", [])), comparable(new.get("outputs", []))
    diff = "" if before == after else "\n".join(difflib.unified_diff(
        before.splitlines(), after.splitlines(), "recorded", "replayed", lineterm="", n=1))
    if not diff:  # the same outputs in kind and text: are the pictures the same too?
        diff = "\n".join(image_changes(old.get("outputs", []), new.get("outputs", [])))
    note = f"interrupted at the {limit:g} s replay limit" if timed_out else ""
    status: Literal["match", "differ"] = "match" if not diff and not timed_out else "differ"
    if status == "differ":  # which of the files it read changed since: the likely reason
        changed = "; ".join(filter(None, [changed, *changed_inputs(meta.get("inputs") or [], where)])) or None
    return CellReport(index, exec_id, status, diff, changed, note)


def is_setup(cell: Any) -> bool:
    """The export's first cell, which puts the kernel in the session's folder (notebooks/export.py)."""
    return _meta(cell).get("role") == SETUP_ROLE


def _meta(cell: Any) -> dict[str, Any]:
    return dict(cell.get("metadata", {}).get("context_kernel", {}))


def _file_changed(info: dict[str, Any] | None) -> str | None:
    if not info or not info.get("path"):
        return None
    path = Path(info["path"])
    if not path.is_file():
        return f"{path} no longer exists"
    now = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    return None if now == info.get("hash") else f"{path} (hash differs from the session's)"
