"""When the agent's client last compacted its context, per project: a marker file's mtime.

The search reply sends a section once per session and afterwards only names it. After the client
compacts its context (PreCompact, SessionStart with source=compact) the agent no longer has those
sections, so they must count as forgotten. Hooks and the server are separate processes, and hook
session ids are not MCP session ids: the marker is per project, written by the hook, read by the
server at each search (one stat). Standard library only: the hook path imports it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..datadir import open_private, private_dir


def marker(home: Path, project_dir: Path) -> Path:
    # The resolved path, so the hook (which finds the project from the agent's cwd) and the server
    # (given it at start) name the same file; hashed so any path makes a safe file name.
    digest = hashlib.sha256(str(project_dir.resolve()).encode("utf-8", "replace")).hexdigest()[:24]
    return home / "hooks" / "compacted" / digest


def mark_compacted(home: Path, project_dir: Path) -> None:
    path = marker(home, project_dir)
    private_dir(home, "hooks/compacted")
    os.close(open_private(path, os.O_WRONLY))
    os.utime(path)  # touch() leaves an existing file's mtime alone on some file systems


def last_compacted(home: Path, project_dir: Path) -> float | None:
    """The time of the project's last compaction, or None if none was reported."""
    try:
        return marker(home, project_dir).stat().st_mtime
    except OSError:
        return None
