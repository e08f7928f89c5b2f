"""Export a session's execution record as Jupyter notebooks a person can open, read and replay.

A notebook has one kernel, so a session that used several languages becomes one notebook per
kernel (each replayable by its own kernel, cells in the order they ran) plus an index notebook
that tells the whole story in order, with each step's language and where its cell lives. A
single-kernel session is one notebook. Every execution appears: refused calls, and calls whose kernel
could not be had (unknown, did not start), as markdown notes,
cells that never finished (the server was killed) as code cells marked interrupted, cells that
hit their time limit as code cells marked timeout with that limit (replay runs them under the
same limit), and `ctx_batch_execute` commands as shell cells whose first line names the label.

The files are what Jupyter tools expect of a notebook under version control: exporting the same
session twice writes the same bytes (cell ids derive from execution ids, and no export time is
written), and every notebook names a kernelspec — the index the session's first kernel, so
JupyterLab opens it without asking for one (its cells are all markdown: it is marked `role:
index`, and replay replays the notebooks it lists). What the agent was shown, when it differs
from the recorded output (head and tail, intent matches, a placeholder line for an image), is
the first output of the cell, where a reader looks before the output itself.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbformat import v4

from ..datadir import private_dir, write_private
from ..execution.collector import placeholder_types
from ..kernels.languages import language_for_kernel
from ..store.events import ConversationCall
from ..store.executions import NEVER_RAN_ERRORS, ExecutionRow
from ..wording import counted
from .conversation import call_cell, in_order, narration_cell
from .inputs import INPUTS_DIR, copy_inputs, input_files, inputs_cell
from .narration import Narration
from .notebook_head import SETUP_ROLE, language_info_of, new_notebook, python_of, setup_cells
from .preambles import with_file_preamble

Outputs = Callable[[int], list[dict[str, Any]]]
BATCH_TOOL = "ctx_batch_execute"
# How the execution service notes a batch command's label: `batch command "<label>": …` (a JSON
# string, so any label survives).
_BATCH_NOTE = re.compile(r'^batch command ("(?:[^"\\]|\\.)*")')
# …and what stopped a command that ran out of time: `…; stopped by the batch's 2 s time budget`.
_BATCH_LIMIT = re.compile(r"search results; stopped by (.+)$")


@dataclass
class ExportedNotebook:
    path: Path
    kernel_name: str | None
    cells: int


@dataclass
class Export:
    notebooks: list[ExportedNotebook] = field(default_factory=list)
    executions: int = 0

    @property
    def main(self) -> Path:
        return self.notebooks[0].path


def export_session(session_id: str, rows: list[ExecutionRow], outputs: Outputs, directory: Path,
                   kernelspecs: Callable[[str], dict[str, Any] | None], *,
                   project_dir: str | None = None, calls: Sequence[ConversationCall] = (),
                   said: Sequence[Narration] = (), with_inputs: bool = False) -> Export:
    """Write the notebooks for one session into `directory`; the first one listed is the entry point.

    `project_dir` is where the session's code ran; replay runs the cells there by default, so
    relative paths in them reach the same files. `calls`: the session's searches, fetches, index and
    batch calls (notebooks/conversation.py), placed among the cells when they happened — in the
    notebook of a one-kernel session, in the index of a mixed one. `said`: the user's prompts and the agent's
    words from the client's transcript (notebooks/narration.py), placed the same way. `with_inputs`: copy the
    inputs the cells read next to the notebooks and run the cells there (notebooks/inputs.py).
    """
    private_dir(directory)  # a copy of the record: as private as the record (datadir.py)
    stem = f"session-{_safe(session_id)}"
    kernels = list(dict.fromkeys(r.kernel_name for r in rows if r.kernel_name and _ran(r)))
    result = Export(executions=len(rows))
    meta = {"session": session_id, **({"project_dir": project_dir} if project_dir else {})}
    inputs = input_files(rows)
    if with_inputs and project_dir:
        copy_inputs(inputs, Path(project_dir), directory)
        meta["inputs_dir"] = INPUTS_DIR
    run_in = INPUTS_DIR if "inputs_dir" in meta else project_dir
    table = [cell for cell in [inputs_cell(inputs)] if cell is not None]
    context = _Context(rows, outputs, kernelspecs, meta, run_in, table, in_order(rows, calls, said))
    if len(kernels) <= 1:
        result.notebooks.append(_one_notebook(context, kernels[0] if kernels else None, directory / f"{stem}.ipynb"))
    else:
        result.notebooks += _per_kernel(context, kernels, session_id, directory, stem)
    return result


@dataclass
class _Context:
    """What every notebook of one export is made from."""

    rows: list[ExecutionRow]
    outputs: Outputs
    kernelspecs: Callable[[str], dict[str, Any] | None]
    meta: dict[str, Any]
    run_in: str | None
    table: list[Any]
    """The inputs table, or nothing."""
    story: Iterator[ExecutionRow | ConversationCall | Narration]
    """Cells, calls and what was said, in order."""


def _one_notebook(c: _Context, kernel: str | None, path: Path) -> ExportedNotebook:
    """A session of one kernel: one notebook, the conversation among its cells."""
    python = python_of(c.rows, [kernel] if kernel else [])
    nb = new_notebook(kernel, c.kernelspecs, {**c.meta, **python}, language_info_of(c.rows, kernel) if kernel else None)
    nb.cells += c.table + setup_cells(kernel, c.run_in, python.get("python", {}))
    for item in c.story:
        if not isinstance(item, ExecutionRow):
            nb.cells.append(_told(item, len(nb.cells)))
            continue
        cell = _cell(item, c.outputs)
        _stable_ids([cell], [item], "note")
        nb.cells.append(cell)
    return _write(nb, path, kernel)


def _per_kernel(c: _Context, kernels: list[str], session_id: str, directory: Path,
                stem: str) -> list[ExportedNotebook]:
    """A mixed session: a notebook per kernel, and an index telling the whole story in order."""
    per_kernel = {k: new_notebook(k, c.kernelspecs, {**c.meta, **python_of(c.rows, [k])}, language_info_of(c.rows, k))
                  for k in kernels}
    for k, nb in per_kernel.items():
        nb.cells += setup_cells(k, c.run_in, python_of(c.rows, [k]).get("python", {}))
    paths = {k: directory / f"{stem}-{_safe(k)}.ipynb" for k in kernels}
    # The index names its notebooks so `replay` given the index replays each of them.
    index = new_notebook(kernels[0], c.kernelspecs, {**c.meta, **python_of(c.rows, kernels[:1]), "role": "index",
                                                     "notebooks": [paths[k].name for k in kernels]})
    index.cells.append(v4.new_markdown_cell(
        f"# Table of contents: session {session_id}\n\n{counted(len(c.rows), 'execution')} in {len(kernels)} "
        "kernels. Each kernel's cells are in their own notebook (replayable with that kernel); this index tells the "
        "whole story in order and runs nothing itself."))
    index.cells += c.table
    step = 0
    for row in c.story:
        if not isinstance(row, ExecutionRow):
            index.cells.append(_told(row, len(index.cells)))
            continue
        step += 1
        first = len(index.cells)
        if row.kernel_name in per_kernel and _ran(row):
            index.cells.append(_step(row, step, _cell(row, c.outputs), per_kernel[row.kernel_name],
                                     paths[row.kernel_name].name))
        else:
            note = _cell(row, c.outputs)
            if note.cell_type == "markdown":
                note.source = f"**Step {step}** — {note.source.removeprefix('> ')}"
            index.cells.append(note)
        _stable_ids(index.cells[first:], [row], "step")
    index.cells[0].id = "session"
    return [_write(index, directory / f"{stem}.ipynb", None), *(_write(per_kernel[k], paths[k], k) for k in kernels)]


def _step(row: ExecutionRow, step: int, cell: Any, nb: Any, name: str) -> Any:
    """Put `cell` in its kernel's notebook `nb` (file `name`); the index's markdown cell that points to it."""
    nb.cells.append(cell)
    label = f" batch: *{cell.metadata.context_kernel.get('batch_label', 'no label')}*" if row.tool == BATCH_TOOL else ""
    return v4.new_markdown_cell(
        f"**Step {step}** — {row.language or row.kernel_name} ({row.tool}, {_status(row)}){label} → [{name}]({name}), "
        f"cell {len(nb.cells)}\n\n" + _fence(row.code, row.language))


def _told(item: ConversationCall | Narration, position: int) -> Any:
    """The markdown cell of a search, fetch or index call, or of what the user or the agent said."""
    return call_cell(item) if isinstance(item, ConversationCall) else narration_cell(item, position)


def _stable_ids(cells: list[Any], rows: list[ExecutionRow], prefix: str) -> None:
    """Give the cells told of `rows` (one each, in order) ids derived from the execution ids: new
    random ids on every export would make every cell look changed to nbdime. A code cell keeps its
    `exec-N`, shared with the per-kernel notebook."""
    for cell, row in zip(cells, rows, strict=True):
        if not cell.id.startswith("exec-"):
            cell.id = f"{prefix}-{row.id}"


def _status(row: ExecutionRow) -> str:
    return "interrupted" if row.status in ("pending", "running") else row.status


def _ran(row: ExecutionRow) -> bool:
    """Whether the call reached a kernel: refused calls and calls whose kernel could not be had did
    not, and get no code cell (a notebook for a kernel no machine has could never be replayed)."""
    return row.status != "refused" and not (row.status == "error" and row.error_name in NEVER_RAN_ERRORS)


def _cell(row: ExecutionRow, outputs: Outputs) -> Any:
    if row.status == "refused":
        return v4.new_markdown_cell(
            f"> **Refused call** ({row.tool}, {row.language or row.kernel_name or 'no language'}): "
            f"{(row.error_value or '').strip()}\n\n" + _fence(row.code, row.language))
    if not _ran(row):
        return v4.new_markdown_cell(
            f"> **Call not run** ({row.tool}, kernel {row.kernel_name or 'none'}): the kernel could not be had — "
            f"{(row.error_value or row.error_name or '').strip()}\n\n" + _fence(row.code, row.language))
    cell = v4.new_code_cell(source=_source(row))
    cell.id = f"exec-{row.id}"
    cell.execution_count = row.execution_count
    cell.outputs = [_output(o) for o in outputs(row.id)]
    meta = _cell_meta(row)
    placeholders = _placeholders(cell.outputs)
    if placeholders:
        meta["placeholders"] = placeholders
        if row.returned_kind == "full":
            meta["agent_saw"] = "placeholder"
    shown_differs = meta["agent_saw"] in ("trimmed", "intent", "partial", "indexed", "placeholder")
    if shown_differs and row.returned_text is not None:
        # What the agent was shown differs from the full output: keep it, visibly, before the output.
        meta["agent_reply"] = row.returned_text
        cell.outputs.insert(0, v4.new_output("stream", name="stdout", text=(
            f"[context-kernel: the agent was shown {agent_view(meta)}; see cell metadata "
            "context_kernel.agent_reply]\n")))
    ending = _unfinished_note(row)
    if ending:
        cell.outputs.append(v4.new_output("stream", name="stderr", text=ending))
    cell.metadata["context_kernel"] = {k: v for k, v in meta.items() if v is not None}
    return cell


def _cell_meta(row: ExecutionRow) -> dict[str, Any]:
    """A code cell's `context_kernel` metadata: what ran, how it ended, its file, the files it opened."""
    meta: dict[str, Any] = {
        "execution_id": row.id, "tool": row.tool, "language": row.language, "kernel": row.kernel_name,
        "status": _status(row), "started": _iso(row.started_at), "duration_ms": _round(row.duration_ms),
        "intent": row.intent, "bytes_produced": row.bytes_produced, "bytes_returned": row.bytes_returned,
        "agent_saw": row.returned_kind,
    }
    if row.file_path:
        meta["file"] = {"path": row.file_path, "hash": row.file_hash}
    if row.files:  # the files it opened (execution/provenance.py): what a reviewer traces a number to
        opened = [(f.pop("mode"), f) for f in json.loads(row.files)]
        meta["inputs"] = [f for mode, f in opened if mode == "read"] or None
        meta["written"] = [f for mode, f in opened if mode != "read"] or None
    if row.tool == BATCH_TOOL:
        meta["batch_label"] = batch_label(row.note)
    if meta["status"] == "timeout":
        meta["timeout_ms"] = row.timeout_ms
    return meta


def _unfinished_note(row: ExecutionRow) -> str | None:
    """The line that ends a cell that did not finish by itself: never finished, or stopped at its limit."""
    status = _status(row)
    if status == "interrupted" and row.error_name == "Cancelled":  # execution/background.py
        return "[context-kernel: this background cell never finished — the agent cancelled it; replay skips it]\n"
    if status == "interrupted":
        why = ("the call was cancelled while it ran (the client went away, or the server stopped) and the cell was "
               "interrupted" if row.status == "interrupted" else "the server stopped while it ran")
        return f"[context-kernel: this cell never finished — {why}; replay skips it]\n"
    if status != "timeout":
        return None
    limit = f"{row.timeout_ms / 1000:g} s" if row.timeout_ms else "its time limit"
    stopped_by = _BATCH_LIMIT.search(row.note or "") if row.tool == BATCH_TOOL else None
    what = (f"stopped by {stopped_by.group(1)} ({limit} of it left when the command began)" if stopped_by
            else f"timed out after {limit}")
    return f"[context-kernel: {what} and was interrupted; replay runs it under the same limit]\n"


def _placeholders(outputs: list[Any]) -> list[str]:
    """The MIME types of rich outputs the agent got a placeholder line for, not the data: images, and any
    rendering whose text/plain says nothing (`<IPython.core.display.HTML object>`). The HTML, LaTeX or
    markdown of a DataFrame beside its text/plain are other forms of the text the agent read
    (execution/collector.py decides the same way)."""
    return sorted({mime for o in outputs for mime in placeholder_types(o.get("data", {}))})


def agent_view(meta: dict[str, Any]) -> str:
    """What the agent was shown, in words: the kind of reply and its size next to the output's (a
    90-byte reply to a 17 KB plot is a placeholder, not '90 of 17,641 bytes' of it)."""
    seen = meta.get("agent_saw") or "full"
    kinds = {"full": "full output", "trimmed": "trimmed output (head and tail)",
             "partial": "the output with a part left out (a traceback shortened, or stderr or the interrupt's "
                        "traceback not shown)",
             "intent": "intent output (the matching lines)", "indexed": "search results (the output was indexed)",
             "placeholder": "the text output"}
    what = kinds.get(seen, f"{seen} output")
    placeholders = meta.get("placeholders") or []
    if placeholders:
        what += f", a placeholder instead of {', '.join(placeholders)}"
    return (f"{what} — a {meta.get('bytes_returned', 0):,}-byte reply; the cell produced "
            f"{meta.get('bytes_produced', 0):,} bytes")


def _source(row: ExecutionRow) -> str:
    """The code as it ran, plus what the server supplied around it, so the notebook replays alone."""
    code = row.code
    if row.file_path:
        lang = language_for_kernel(row.kernel_name or "")
        with_file = with_file_preamble(lang, code, row.file_path, row.file_hash) if lang else None
        code = with_file if with_file is not None else code
    if row.tool == BATCH_TOOL:
        label = batch_label(row.note)
        # Each batch command ran in a fresh shell; in the notebook they share one, so the command
        # runs in a subshell: a `cd` or `export` in it stays there on replay, as in the session.
        code = (f"# batch: {label}\n" if label else "# batch command\n") + f"(\n{code}\n)"
    return code


def batch_label(note: str | None) -> str | None:
    """The label of a ctx_batch_execute command, from the note the execution service wrote."""
    match = _BATCH_NOTE.match(note or "")
    if not match:
        return None
    label = json.loads(match.group(1))
    return " ".join(str(label).split()) or None  # one line: it heads a shell comment


def _output(recorded: dict[str, Any]) -> Any:
    out = nbformat.from_dict(dict(recorded))
    if out.get("output_type") == "execute_result" and "execution_count" not in out:
        out["execution_count"] = None
    return out


def _write(nb: Any, path: Path, kernel_name: str | None) -> ExportedNotebook:
    nbformat.validate(nb)
    write_private(path, (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    session_cells = [c for c in nb.cells if c.get("metadata", {}).get("context_kernel", {}).get("role") != SETUP_ROLE]
    return ExportedNotebook(path, kernel_name, len(session_cells))


def _fence(code: str, language: str | None) -> str:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    lang = language_for_kernel(language or "")
    return f"{ticks}{(lang.name if lang else language) or ''}\n{code}\n{ticks}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[:60] or "session"


def _iso(ts: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts)) if ts else None


def _round(value: float | None) -> float | None:
    return round(value, 1) if value is not None else None
