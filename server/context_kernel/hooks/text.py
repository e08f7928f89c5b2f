"""Short, bounded text for session events: one-line clips, relative paths, the telling line of an error.

Pure string work (standard library only, no file system access): it runs in the hook process.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import PurePath
from typing import Any

SCAN_CHARS = 16_384
"""How much of a command, prompt or error text is examined: the hook must answer in milliseconds."""


def one_line(text: str) -> str:
    return " ".join(text.split())


def clip(text: str, limit: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def relative_path(path: str, cwd: str | None) -> str:
    """`path` relative to `cwd` when it lies inside it (purely lexical: no file system access)."""
    if not cwd or not path:
        return path
    try:
        rel = PurePath(posixpath.normpath(path)).relative_to(posixpath.normpath(cwd))
    except ValueError:
        return path
    return rel.as_posix() if str(rel) != "." else "."


def text_of(value: Any) -> str:
    """Text inside a tool response: a string, MCP content blocks, or {text|message|content} dicts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (text_of(v) for v in value) if t)
    if isinstance(value, dict):
        for key in ("text", "message", "content", "stderr", "error"):
            if value.get(key):
                return text_of(value[key])
        return ""
    return str(value)


# "ValueError: x", "requests.exceptions.ConnectionError: y" — but not a bare "Error: exit code 1".
_EXCEPTION_LINE = re.compile(r"^(?:[\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt)\b(?::|$)")
_ERRORISH = re.compile(r"error|fatal|failed|failure|not found|denied|cannot|can't|unable|invalid|panic", re.IGNORECASE)
_GENERIC = re.compile(r"exit code|exited with|non-zero (?:exit|status)", re.IGNORECASE)


def error_line(text: str) -> str:
    """The most telling line of an error text: a Python-style exception line, else the first error-ish
    line that is more than "exit code 1", else the first line."""
    if len(text) > SCAN_CHARS:  # compilers name the error first, Python tracebacks last
        text = text[: SCAN_CHARS // 2] + "\n" + text[-SCAN_CHARS // 2:]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    exceptions = [line for line in lines if _EXCEPTION_LINE.match(line)]
    if exceptions:
        return exceptions[-1]
    specific = [line for line in lines if not _GENERIC.search(line)]
    return next((line for line in specific if _ERRORISH.search(line)), specific[0] if specific else
                (lines[0] if lines else ""))
