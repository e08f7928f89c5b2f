"""The hash ctx_execute_file records for the file a cell read (export and replay name it).

What defines FILE_CONTENT in each language lives in `context_kernel.kernels.file_content`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()
