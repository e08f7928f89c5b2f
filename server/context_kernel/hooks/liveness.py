"""Is a context-kernel server running? Hooks only redirect tools while one is.

A server writes `servers/<pid>` in its home when it starts and removes it when it stops; a hook
treats a file whose process is gone (kill -9, crash) as stale. Redirecting the agent to ctx tools
that no server answers would leave it stuck, so when in doubt we say "not alive".
"""

from __future__ import annotations

import os
from pathlib import Path

from ..datadir import private_dir, write_private

SERVERS_DIR = "servers"


def servers_dir(home: Path) -> Path:
    return home / SERVERS_DIR


def _start_time(pid: int) -> str | None:
    """When the process started (Linux /proc, clock ticks since boot); None where unknown.

    A pid alone is not an identity: after a crash the number can be reused by any process, which
    would make a dead server look alive. The start time tells the two apart.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the command name before ")" may contain spaces
    return fields[19] if len(fields) > 19 else None  # field 22 of proc(5); fields here start at 3


def mark_alive(home: Path, project_dir: Path | None = None) -> Path:
    """Record this process as a live server; returns the file to remove at exit."""
    path = Path(private_dir(home, SERVERS_DIR)) / str(os.getpid())
    started = _start_time(os.getpid())
    write_private(path, (f"{project_dir or ''}\n" + (f"start={started}\n" if started else "")).encode("utf-8"))
    return path


def _read(entry: Path) -> tuple[str, str | None] | None:
    """(project, start time) recorded in a server file; None if it cannot be read."""
    try:
        lines = entry.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    project = lines[0].strip() if lines else ""
    start = next((line[6:].strip() for line in lines[1:] if line.startswith("start=")), None)
    return project, start


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


def _serves(served: str, project_dir: Path | None) -> bool:
    """Does a server that recorded `served` serve `project_dir`? One that recorded no project serves any."""
    if project_dir is None:
        return True
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
        pid = int(entry.name)
        recorded = _read(entry)
        if recorded is None:
            continue
        served, started = recorded
        now_started = _start_time(pid) if started else None
        if not _pid_alive(pid) or (started and now_started and now_started != started):
            entry.unlink(missing_ok=True)  # gone, or the pid now belongs to another process
        elif _serves(served, project_dir):
            alive = True
    return alive
