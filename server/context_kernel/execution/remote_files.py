"""FILE_CONTENT for a kernel that cannot see the server's disk (one on a kernel gateway).

ctx_execute_file reads the file here and sends its text inside a silent cell of the kernel's
language, defining what kernels/file_content.py's preambles define by reading the file in the kernel:
FILE_CONTENT_PATH and file_path (the path on the server, for messages) and FILE_CONTENT.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from ..errors import InvalidRequest
from ..kernels.file_content import r_string_literal

# Jupyter Server refuses WebSocket messages over 10 MB (tornado's websocket_max_message_size); the
# text travels inside one, JSON-escaped.
MAX_SENT_BYTES = 8 * 1024 * 1024


def read_for_remote(path: Path) -> str:
    """The file's text to send (UTF-8, invalid bytes replaced, as the local preambles read it)."""
    size = path.stat().st_size
    if size > MAX_SENT_BYTES:
        raise InvalidRequest(f"{path} is {size / 1024 / 1024:.1f} MB; a remote kernel gets a file's content with "
                             f"the cell, at most {MAX_SENT_BYTES // 1024 // 1024} MB",
                             hint="mount the project where the gateway's kernels run and open it by path, or "
                                  "run this cell on a local server")
    return path.read_bytes().decode("utf-8", "replace")


def content_preamble(language: str, path: str, text: str) -> str | None:
    """The silent cell that defines the file variables from `text`; None for a language we cannot do."""
    if language == "python":
        return f"FILE_CONTENT_PATH = file_path = {path!r}\nFILE_CONTENT = {text!r}\n"
    if language == "r":
        return (f"FILE_CONTENT_PATH <- {r_string_literal(path)}; file_path <- FILE_CONTENT_PATH; "
                f"FILE_CONTENT <- {r_string_literal(text)}; Encoding(FILE_CONTENT) <- \"UTF-8\"\n")
    if language == "shell":
        p = shlex.quote(path)
        return f"FILE_CONTENT_PATH={p} file_path={p} FILE_CONTENT={shlex.quote(text)}\n"
    if language in ("javascript", "typescript"):
        return (f"globalThis.FILE_CONTENT_PATH = globalThis.file_path = {json.dumps(path)};\n"
                f"globalThis.FILE_CONTENT = {json.dumps(text)};\n")
    return None
