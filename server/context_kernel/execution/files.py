"""ctx_execute_file's file access: the project boundary check and FILE_CONTENT for each language.

Kernels we did not write (ipykernel, IRkernel) get a silent preamble cell in their own language;
our own kernels (shell, JavaScript/TypeScript, the script languages) define the variables
themselves from the cell metadata `context_kernel.file_path`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..errors import PathRefused


def resolve_in_project(project_dir: Path, path: str) -> Path:
    """The real path of `path` (relative to the project), refused if it escapes the project."""
    if not path or "\x00" in path:
        raise PathRefused("the path is empty or contains a NUL byte", path=path,
                          hint="pass a file path relative to the project directory")
    root = project_dir.resolve()
    raw = Path(path).expanduser()
    candidate = raw if raw.is_absolute() else root / raw
    real = Path(os.path.realpath(candidate))
    if real != root and root not in real.parents:
        via = " through a symlink" if Path(os.path.abspath(candidate)).is_relative_to(root) else ""
        raise PathRefused(
            f"refused: {path} resolves{via} to {real}, outside the project directory {root}",
            path=path, resolved=str(real),
            hint="ctx_execute_file only reads files inside the project; use a path under the project directory",
        )
    if not real.is_file():
        raise PathRefused(f"no such file: {path}", path=path, resolved=str(real),
                          hint="check the path (relative paths start at the project directory)")
    return real


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
