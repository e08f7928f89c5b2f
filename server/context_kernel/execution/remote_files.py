"""FILE_CONTENT for a kernel that cannot see the server's disk (one on a kernel gateway).

ctx_execute_file reads the file here and sends its text inside a silent cell of the kernel's
language (its Language's `file_text_code`, kernels/file_content.py), defining what the local preambles
define by reading the file in the kernel: FILE_CONTENT_PATH and file_path (the path on the server, for
messages) and FILE_CONTENT.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidRequest

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
