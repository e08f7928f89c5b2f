"""`context-kernel show 42`: one execution as a reviewer reads it, from the citation `[#42]` in an agent's answer
to the code, its output, the files it read and wrote, and what the agent was shown."""

from __future__ import annotations

import json
import time
from typing import Any

from ..execution.text import strip_ansi
from ..store.executions import ExecutionRow
from .export import agent_view

# Output printed in full up to this size; past it, its head and a pointer to the export.
MAX_OUTPUT_CHARS = 20_000


def render_execution(row: ExecutionRow, outputs: list[dict[str, Any]]) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(row.started_at))
    took = f"{row.duration_ms:.0f} ms" if row.duration_ms is not None else "unfinished"
    lines = [f"execution #{row.id} · {row.tool} · {row.language or '-'} (kernel {row.kernel_name or '-'}) · "
             f"{row.status} · {when} · {took} · session {row.session_id}"]
    if row.python:
        lines.append(f"python: {row.python}" + (f" ({row.python_env})" if row.python_env else ""))
    if row.intent:
        lines.append(f"intent: {row.intent}")
    lines += ["", "--- code ---", row.code.rstrip("\n")]
    files = json.loads(row.files) if row.files else []
    if row.file_path:
        files.insert(0, {"path": row.file_path, "mode": "read", "sha256": row.file_hash, "as": "FILE_CONTENT"})
    if files:
        lines += ["", "--- files ---"]
        lines += [_file_line(f) for f in files]
    lines += ["", "--- output ---", _output_text(outputs) or "(none)"]
    if row.error_name:
        lines.append(f"[{row.error_name}: {row.error_value or ''}]".replace(": ]", "]"))
    meta = {"agent_saw": row.returned_kind or "full", "bytes_returned": row.bytes_returned,
            "bytes_produced": row.bytes_produced}
    lines += ["", f"--- shown to the agent: {agent_view(meta)} ---", row.returned_text or "(no reply recorded)"]
    return "\n".join(lines)


def _file_line(entry: dict[str, Any]) -> str:
    mode = entry.get("mode", "read")
    if entry.get("gone"):
        state = "gone after the cell"
    elif entry.get("sha256"):
        state = f"{entry['sha256'][:19]}…" + (f", {entry['size']:,} B" if "size" in entry else "")
    else:
        state = f"{entry.get('size', 0):,} B (not hashed: large)"
    return f"{mode:<7} {entry['path']}  {state}" + (" (as FILE_CONTENT)" if entry.get("as") else "")


def _output_text(outputs: list[dict[str, Any]]) -> str:
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            parts.append("".join(out.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            plain = data.get("text/plain")
            others = sorted(m for m in data if m != "text/plain")
            if plain:
                parts.append(("".join(plain) if isinstance(plain, list) else str(plain)) + "\n")
            if others:
                parts.append(f"[{', '.join(others)} output: in the exported notebook]\n")
        elif kind == "error":
            parts.append(strip_ansi("\n".join(out.get("traceback", []))) + "\n")
    text = "".join(parts).rstrip("\n")
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"\n[… {len(text) - MAX_OUTPUT_CHARS:,} more characters: see the export]"
    return text
