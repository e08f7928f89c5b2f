"""Secrets taken out of an execution record: as it is written, and on its way out.

Every record is redacted before it is stored (execution/recording.py calls these): the code, the
intent, the error, what the agent was shown, the notes and each output's text run through the
same rules as everything else stored (key names and value shapes, `redact.py` and
`secret_shapes.py`). Binary output (images, PDFs: base64) is left alone: it holds no typed secret,
and a shape matched by chance would corrupt it. So a replayed cell runs its code as stored, with a
marker where a secret was: a secret the code needs belongs in the environment, not in the cell.

`ctx_export(redact=True)` and `context-kernel export --redact` run them again over what they read,
for records written before redaction covered the record (redacting twice changes nothing).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..store.executions import ExecutionEnd, ExecutionRow, ExecutionStart
from .redact import STORE_WHOLE_LIMIT, redact_output

_TEXT_MIME = ("text/", "application/json", "application/javascript", "application/xml")


def redacted_row(row: ExecutionRow) -> ExecutionRow:
    return replace(row, code=_clean(row.code), error_value=_maybe(row.error_value),
                   returned_text=_maybe(row.returned_text), intent=_maybe(row.intent), note=_maybe(row.note))


def redacted_start(start: ExecutionStart) -> ExecutionStart:
    """What the `pending` row keeps of a call: its code and intent without their secrets."""
    return replace(start, code=_clean(start.code), intent=_maybe(start.intent))


def redacted_end(end: ExecutionEnd) -> ExecutionEnd:
    return replace(end, error_value=_maybe(end.error_value), returned_text=_maybe(end.returned_text),
                   note=_maybe(end.note))


def redacted_outputs(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Blocking (a worker thread for anything but a few KB)."""
    return [redacted_output(o) for o in outputs]


def redacted_output(output: dict[str, Any]) -> dict[str, Any]:
    """One nbformat output (stream, execute_result/display_data, error) with its text redacted."""
    out = dict(output)
    if isinstance(out.get("text"), (str, list)):
        out["text"] = _text(out["text"])
    if isinstance(out.get("data"), dict):
        out["data"] = {mime: (_json(value) if _is_json(mime) else _text(value)) if _is_text(mime) else value
                       for mime, value in out["data"].items()}
    if isinstance(out.get("evalue"), str):
        out["evalue"] = _clean(out["evalue"])
    if isinstance(out.get("traceback"), list):
        out["traceback"] = [_clean(line) if isinstance(line, str) else line for line in out["traceback"]]
    return out


def text_size(outputs: list[dict[str, Any]]) -> int:
    """Roughly how much text redacting `outputs` goes through (to decide whether it is worth a thread)."""
    return sum(len(o.get("text") or "") + len(str(o.get("data") or "")) + len(str(o.get("traceback") or ""))
               for o in outputs)


def _is_text(mime: str) -> bool:
    return mime.startswith(_TEXT_MIME) or mime.endswith(("+json", "+xml"))


def _is_json(mime: str) -> bool:
    return mime == "application/json" or mime.endswith("+json")


def redacted_text(text: str) -> str:
    """Any text kept with the record (a conversation call's arguments and reply), redacted as outputs are."""
    return _clean(text)


def _clean(text: str) -> str:
    return redact_output(text, whole_limit=STORE_WHOLE_LIMIT)


def _maybe(text: str | None) -> str | None:
    return None if text is None else _clean(text)


def _text(value: Any) -> Any:
    """nbformat text: a string, or a list of its lines (redacted together, so that a PEM block
    over several lines goes whole)."""
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return _clean("".join(value)).splitlines(keepends=True)
    return _json(value)


def _json(value: Any) -> Any:
    """JSON data (`application/json`, `…+json`): its strings are redacted, its shape kept."""
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, list):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    return value
