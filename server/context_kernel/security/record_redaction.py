"""Secrets taken out of an execution record on its way out (`ctx_export(redact=True)`,
`context-kernel export --redact`).

The record itself stays raw: it is the audit trail, and replay needs the code as it ran. An export
meant for other eyes runs the same rules as everything stored outside the record (key names and
value shapes, `redact.py` and `secret_shapes.py`) over the code, the error, what the agent was
shown, and each output's text. Binary output (images, PDFs: base64) is left alone: it holds no
typed secret, and a shape matched by chance would corrupt it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..store.executions import ExecutionRow
from .redact import redact_output

_TEXT_MIME = ("text/", "application/json", "application/javascript", "application/xml")


def redacted_row(row: ExecutionRow) -> ExecutionRow:
    return replace(row, code=redact_output(row.code),
                   error_value=None if row.error_value is None else redact_output(row.error_value),
                   returned_text=None if row.returned_text is None else redact_output(row.returned_text),
                   intent=None if row.intent is None else redact_output(row.intent))


def redacted_output(output: dict[str, Any]) -> dict[str, Any]:
    """One nbformat output (stream, execute_result/display_data, error) with its text redacted."""
    out = dict(output)
    if isinstance(out.get("text"), (str, list)):
        out["text"] = _text(out["text"])
    if isinstance(out.get("data"), dict):
        out["data"] = {mime: _text(value) if mime.startswith(_TEXT_MIME) else value
                       for mime, value in out["data"].items()}
    if isinstance(out.get("evalue"), str):
        out["evalue"] = redact_output(out["evalue"])
    if isinstance(out.get("traceback"), list):
        out["traceback"] = [redact_output(line) if isinstance(line, str) else line for line in out["traceback"]]
    return out


def _text(value: Any) -> Any:
    """nbformat text is a string or a list of lines; JSON data may be anything (its strings are redacted)."""
    if isinstance(value, str):
        return redact_output(value)
    if isinstance(value, list):
        return [_text(item) for item in value]
    if isinstance(value, dict):
        return {key: _text(item) for key, item in value.items()}
    return value
