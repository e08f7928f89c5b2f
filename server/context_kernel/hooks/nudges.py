"""Once-per-session nudges: a marker file per (session, tool), created with O_EXCL.

Hooks are separate processes and several may run at once (an agent can call tools in parallel),
so "have we already said this?" must be answered by the file system atomically: the first
process to create the marker nudges, every other one sees EEXIST and stays quiet.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from ..datadir import open_private, private_dir

# Markers older than this belong to sessions long gone; SessionStart sweeps them.
MAX_AGE_S = 14 * 24 * 3600


def nudged_dir(home: Path) -> Path:
    return home / "hooks" / "nudged"


def marker(home: Path, session_id: str, key: str) -> Path:
    # Session ids come from clients: hash them so any string makes a safe file name.
    digest = hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:24]
    safe_key = "".join(c if c.isalnum() or c in "-_" else "_" for c in key)[:40]
    return nudged_dir(home) / f"{digest}-{safe_key}"


def claim(home: Path, session_id: str, key: str) -> bool:
    """True exactly once per (session, key), across processes.

    Any failure to record the claim (read-only or full disk) answers False: better to stay
    silent than to repeat the nudge on every tool call.
    """
    path = marker(home, session_id, key)
    try:
        private_dir(home, str(path.parent.relative_to(home)))
        fd = open_private(path, os.O_WRONLY | os.O_EXCL)
    except OSError:  # FileExistsError included: someone nudged first
        return False
    os.close(fd)
    return True


def prune(home: Path, max_age_s: float = MAX_AGE_S, now: float | None = None) -> int:
    """Remove markers older than `max_age_s`; returns how many went."""
    cutoff = (time.time() if now is None else now) - max_age_s
    removed = 0
    try:
        entries = list(os.scandir(nudged_dir(home)))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed
