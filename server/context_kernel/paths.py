"""The project boundary: every path an agent names is resolved (symlinks included) and must stay inside."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import PathRefused


def resolve_in_project(project_dir: Path, path: str, want: str = "file") -> Path:
    """The real path of `path` (relative to the project), refused if it escapes the project.

    `want` is "file", "dir" or "any": what must exist there.
    """
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
    ok = {"file": real.is_file(), "dir": real.is_dir(), "any": real.exists()}[want]
    if not ok:
        noun = {"file": "file", "dir": "directory", "any": "file or directory"}[want]
        raise PathRefused(f"no such {noun}: {path}", path=path, resolved=str(real),
                          hint="check the path (relative paths start at the project directory)")
    return real
