"""Hook-side event recording: append-only JSON lines, one file per session (standard library only).

Why not write to SQLite from the hook: importing SQLAlchemy alone takes ~160 ms here, more than a
hook's whole budget, and a hook must never wait on a database lock held by the server. A line
appended with O_APPEND is durable and cheap; the spool is moved into the database (dedup, the
1,000-event cap, indexing for ctx_search) by `memory.ingest`, which runs when the server searches
and at PreCompact / SessionStart.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..datadir import open_private, private_dir
from .model import Event

try:
    import fcntl
except ImportError:  # Windows: no flock; there a drain racing an append can still lose that append
    fcntl = None  # type: ignore[assignment]  # the module is optional: checked before each use


SPOOL_DIR = "spool"


def spool_dir(home: Path) -> Path:
    return home / SPOOL_DIR


def session_file(home: Path, session_id: str) -> Path:
    """The spool file a session's events are appended to."""
    # Session ids come from clients; hash them so any string makes a safe file name.
    digest = hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:24]
    return spool_dir(home) / f"{digest}.jsonl"


def append(home: Path, client: str, session_id: str, events: Iterable[Event], project: str | None = None) -> int:
    """Append events (already redacted) for a session; returns how many were written.

    `project`: the project directory the hook resolved, so purging a project removes its events.
    """
    now = time.time()
    lines = []
    for ev in events:
        row = asdict(ev)
        row["time"] = ev.time or now
        row["client"] = client
        row["session_id"] = session_id
        row["project"] = project
        lines.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    if not lines:
        return 0
    # "replace": JSON input may carry a lone surrogate (`\ud800`), which UTF-8 cannot encode; one odd
    # character must not cost the call's events.
    data = "".join(lines).encode("utf-8", "replace")
    path = session_file(home, session_id)
    private_dir(home, SPOOL_DIR)
    while True:
        # One write call with O_APPEND: concurrent hooks of the same session never interleave lines.
        fd = open_private(path, os.O_WRONLY | os.O_APPEND)
        try:
            # `drain` renames the file, then waits for LOCK_EX before reading it. A hook that opened the
            # old name must not write after that read (its lines would be deleted with the taken file):
            # it writes under LOCK_SH, and only while the name still leads to the file it opened.
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_SH)
                if not _still_named(fd, path):
                    continue  # taken meanwhile: open the new file under the name
            os.write(fd, data)
        finally:
            os.close(fd)
        return len(lines)


def _still_named(fd: int, path: Path) -> bool:
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _wait_for_writers(path: Path) -> None:
    """Block until hooks that opened `path` under its old name have finished their write."""
    if fcntl is None:
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for one write at most; released by close
    finally:
        os.close(fd)


def _claimable(path: Path) -> bool:
    """A spool file, or a taken one whose taker died before deleting it (crash mid-ingest)."""
    if path.suffix == ".jsonl":
        return True
    parts = path.name.split(".")  # <stem>.<ns>.<pid>.taking
    pid = int(parts[-2]) if len(parts) >= 4 and parts[-2].isdigit() else None
    if pid is None:
        return False
    if pid == os.getpid():
        return True  # our own leftover from an ingest that failed before committing
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def pending(home: Path) -> bool:
    """Whether anything waits to be ingested (a directory listing: readers call it before every read)."""
    try:
        return any(p.suffix in (".jsonl", ".taking") for p in spool_dir(home).iterdir())
    except OSError:
        return False


def drain(home: Path) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
    """Take every spool file; the caller deletes each taken file once its rows are committed.

    A file is renamed before reading, so hooks appending meanwhile start a new one, and two
    processes draining at once never both take the same file.
    """
    folder = spool_dir(home)
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix in (".jsonl", ".taking") and _claimable(p))
    except OSError:
        return
    for path in files:
        stem = path.name.split(".", 1)[0]
        taken = folder / f"{stem}.{time.monotonic_ns()}.{os.getpid()}.taking"
        try:
            os.replace(path, taken)
        except FileNotFoundError:
            continue  # another process took it
        _wait_for_writers(taken)
        rows = []
        for line in taken.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line after a crash; the rest is kept
        yield taken, rows
