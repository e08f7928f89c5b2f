"""ctx_execute_file's file access: the project boundary check and FILE_CONTENT for each language.

Kernels we did not write (ipykernel, IRkernel) get a silent preamble cell in their own language;
our own kernels (shell, JavaScript/TypeScript, the script languages) define the variables
themselves from the cell metadata `context_kernel.file_path`.
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


def _python(path: str) -> str:
    p = repr(path)
    return (
        f"FILE_CONTENT_PATH = file_path = {p}\n"
        f"with open({p}, encoding='utf-8', errors='replace') as _ck_fh:\n"
        "    FILE_CONTENT = _ck_fh.read()\n"
        "del _ck_fh\n"
    )


def _r(path: str) -> str:
    from ..kernels.preludes_r import r_file_prelude

    return r_file_prelude(path)


_PREAMBLES = {"python": _python, "r": _r}


def preamble(language: str, path: str) -> str | None:
    """Code defining FILE_CONTENT, FILE_CONTENT_PATH and file_path, or None if the kernel does it."""
    make = _PREAMBLES.get(language)
    return make(path) if make else None
