"""The project boundary: every path an agent names is resolved (symlinks included) and must stay inside."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from .errors import PathRefused

Want = Literal["file", "dir", "any", "new-dir"]
# What each tool does with the path, for the message that refuses it.
_DOES = {"ctx_export": "writes", "ctx_index": "indexes"}
# Entries of a directory named in the refusal when a file was wanted: enough to pick one.
LISTED_ENTRIES = 5


def resolve_in_project(project_dir: Path, path: str, want: Want = "file", *, tool: str) -> Path:
    """The real path of `path` (relative to the project), refused if it escapes the project.

    `want` is what must be there: "file", "dir", "any", or "new-dir" (a directory, or nothing yet:
    the caller makes it). `tool` names the tool asking: the agent reads which call was refused, for
    which path it gave, not the directory we derived from it.
    """
    if not path or "\x00" in path:
        raise PathRefused(f"{tool}: the path is empty or contains a NUL byte", path=path,
                          hint="pass a path relative to the project directory")
    root = project_dir.resolve()
    raw = Path(path).expanduser()
    candidate = raw if raw.is_absolute() else root / raw
    real = Path(os.path.realpath(candidate))
    if real != root and root not in real.parents:
        via = " through a symlink" if Path(os.path.abspath(candidate)).is_relative_to(root) else ""
        raise PathRefused(
            f"{tool} refused {path!r}: it resolves{via} to {real}, outside the project directory {root}",
            path=path, resolved=str(real),
            hint=f"{tool} only {_DOES.get(tool, 'reads')} paths inside the project; use a path under {root}",
        )
    if want == "new-dir":
        # Anything on the way that exists must be a directory; the rest is made by the caller.
        existing = next(p for p in (real, *real.parents) if p.exists())
        if not existing.is_dir():
            raise PathRefused(f"{tool} refused {path!r}: {existing} is not a directory", path=path,
                              resolved=str(real), hint="name a directory, or a new one, under the project")
        return real
    if want == "file" and real.is_dir():
        raise PathRefused(f"{tool}: {path} is a directory, not a file", path=path, resolved=str(real),
                          hint=_directory_hint(real, path, tool))
    ok = {"file": real.is_file(), "dir": real.is_dir(), "any": real.exists()}[want]
    if not ok:
        noun = {"file": "file", "dir": "directory", "any": "file or directory"}[want]
        raise PathRefused(f"{tool}: no such {noun}: {path}", path=path, resolved=str(real),
                          hint="check the path (relative paths start at the project directory)")
    return real


def _directory_hint(real: Path, path: str, tool: str) -> str:
    """What to do with a directory given where one file was wanted: a few of its entries to pick from."""
    try:
        names = sorted(f"{entry.name}/" if entry.is_dir() else entry.name for entry in real.iterdir())
    except OSError:
        names = []
    shown = ", ".join(f"{path.rstrip('/')}/{name}" for name in names[:LISTED_ENTRIES])
    more = f" and {len(names) - LISTED_ENTRIES} more" if len(names) > LISTED_ENTRIES else ""
    holds = f"it holds {shown}{more}" if names else "it is empty"
    return (f"{holds}. {tool} reads one file: call it with one of them, or use ctx_execute with code that walks "
            f"the directory (its path: {real})")
