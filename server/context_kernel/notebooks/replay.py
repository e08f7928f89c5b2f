"""Replay an exported notebook in a fresh kernel and say, cell by cell, whether the outputs match.

Volatile parts are normalised before comparing (memory addresses, timestamps, durations, temp
paths, ANSI codes, execution counts in tracebacks), and our own annotation lines are ignored.
Cells that read a file (`ctx_execute_file`) report when the file's hash changed since the session.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from ..execution.text import strip_ansi

_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0xADDR"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "TIMESTAMP"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|seconds)\b"), "DURATION"),
    (re.compile(r"/tmp/[\w./-]+"), "/tmp/PATH"),
    (re.compile(r"(Cell In\[|In \[|Out\[)\d+\]"), r"\1N]"),
]


@dataclass
class CellReport:
    index: int
    execution_id: int | None
    status: str  # match | differ | skipped
    diff: str = ""
    file_changed: str | None = None


@dataclass
class ReplayReport:
    cells: list[CellReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status != "differ" for c in self.cells)

    def render(self) -> str:
        lines = []
        for c in self.cells:
            label = f"cell {c.index}" + (f" (execution #{c.execution_id})" if c.execution_id else "")
            lines.append(f"{label}: {c.status}" + (f" — file changed: {c.file_changed}" if c.file_changed else ""))
            if c.diff:
                lines.append(c.diff)
        matched = sum(c.status == "match" for c in self.cells)
        compared = sum(c.status != "skipped" for c in self.cells)
        lines.append(f"{matched} of {compared} cells match" + ("" if self.ok else "; see the differences above"))
        return "\n".join(lines)


def normalise(text: str) -> str:
    text = strip_ansi(text)
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text.rstrip()


def comparable(outputs: list[dict[str, Any]]) -> str:
    """The text a reader would compare: streams, plain-text results, error name and value, rich types."""
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            text = "".join(out.get("text", ""))
            if text.lstrip().startswith("[context-kernel:"):
                continue  # our annotation, not the code's output
            parts.append(f"[{out.get('name')}] {text}")
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            plain = data.get("text/plain", "")
            parts.append("[result] " + ("".join(plain) if isinstance(plain, list) else plain))
            parts += [f"[{mime}]" for mime in sorted(data) if mime != "text/plain"]
        elif kind == "error":
            parts.append(f"[error] {out.get('ename')}: {out.get('evalue')}")
    return normalise("\n".join(parts))


def replay(path: Path, *, timeout_s: int = 600, cwd: Path | None = None) -> ReplayReport:
    nb = nbformat.read(path, as_version=4)
    if not nb.metadata.get("kernelspec"):
        raise ValueError(f"{path} names no kernel: replay the per-kernel notebooks listed in it instead")
    recorded = copy.deepcopy(nb)
    client = NotebookClient(nb, timeout=timeout_s, allow_errors=True, kernel_name=nb.metadata.kernelspec.name,
                            resources={"metadata": {"path": str(cwd or path.parent)}})
    try:
        client.execute()
    except (CellTimeoutError, DeadKernelError) as exc:
        note = f"replay stopped: {type(exc).__name__}"
        for cell in nb.cells:
            cell.setdefault("outputs", [])
        recorded.metadata["context_kernel_replay_error"] = note
    report = ReplayReport()
    for i, (old, new) in enumerate(zip(recorded.cells, nb.cells), 1):
        meta = old.get("metadata", {}).get("context_kernel", {})
        if old.cell_type != "code":
            continue
        if meta.get("status") == "interrupted":
            report.cells.append(CellReport(i, meta.get("execution_id"), "skipped"))
            continue
        before, after = comparable(old.get("outputs", [])), comparable(new.get("outputs", []))
        changed = _file_changed(meta.get("file"))
        diff = "" if before == after else "\n".join(difflib.unified_diff(
            before.splitlines(), after.splitlines(), "recorded", "replayed", lineterm="", n=1))
        report.cells.append(CellReport(i, meta.get("execution_id"), "match" if not diff else "differ", diff, changed))
    return report


def _file_changed(info: dict[str, Any] | None) -> str | None:
    if not info or not info.get("path"):
        return None
    path = Path(info["path"])
    if not path.is_file():
        return f"{path} no longer exists"
    now = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    return None if now == info.get("hash") else f"{path} (hash differs from the session's)"
