"""Is a context-kernel server running? Hooks only redirect tools while one is.

A server writes `servers/<pid>` in its home when it starts and removes it when it stops; a hook
treats a file whose process is gone (kill -9, crash) as stale. Redirecting the agent to ctx tools
that no server answers would leave it stuck, so when in doubt we say "not alive".
"""

from __future__ import annotations

import os
from pathlib import Path


def servers_dir(home: Path) -> Path:
    return home / "servers"


def mark_alive(home: Path, project_dir: Path | None = None) -> Path:
    """Record this process as a live server; returns the file to remove at exit."""
    path = servers_dir(home) / str(os.getpid())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(project_dir or ""), encoding="utf-8")
    return path


def clear(path: Path) -> None:
    path.unlink(missing_ok=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _serves(entry: Path, project_dir: Path | None) -> bool:
    """Does the server of this file serve `project_dir`? One that recorded no project serves any."""
    if project_dir is None:
        return True
    try:
        served = entry.read_text(encoding="utf-8").strip()
    except OSError:
        return False
    if not served:
        return True
    # The agent may work in a subdirectory of the served project; compare real paths (symlinked /tmp).
    mine, theirs = project_dir.resolve(), Path(served).resolve()
    return mine == theirs or theirs in mine.parents


def server_alive(home: Path, project_dir: Path | None = None) -> bool:
    """True when a recorded server process still exists and serves `project_dir` (when given).

    Stale files (the process is gone) are removed on the way.
    """
    folder = servers_dir(home)
    try:
        entries = list(folder.iterdir())
    except OSError:
        return False
    alive = False
    for entry in entries:
        if not entry.name.isdigit():
            continue
        if not _pid_alive(int(entry.name)):
            entry.unlink(missing_ok=True)
        elif _serves(entry, project_dir):
            alive = True
    return alive
