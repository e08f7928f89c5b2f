"""Live notebooks: while a session runs, its notebook is rewritten after its calls, so a teacher or a lead
watches the agent work in JupyterLab (File > Reload from disk, or an extension that follows the file) instead of
waiting for `ctx_export`. One folder per session under `Settings.live_dir`, written as an export is (the same
cells, ids and metadata), each file replaced whole (datadir.write_private renames a finished file over it).

A session's notebook is written at most once a second: the first call is written right away, the calls that come
within the second after it are written together when it has passed. An export reads the whole session, so a
long session's rewrite costs more: the pause after a rewrite is ten times what it took (BUSY_FACTOR), and it
runs after the reply, in the background, off the agent's path."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from ..records.conversation import CONVERSATION_TOOLS
from .service import ExportService

log = logging.getLogger(__name__)
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]

MIN_INTERVAL_S = 1.0
# The pause after a rewrite, as a multiple of what it took: a session whose export takes 0.3 s is rewritten at
# most every 3 s, so watching costs at most a tenth of a core however long the session grows.
BUSY_FACTOR = 10.0
# The calls that change a session's story: its cells and what it read.
LIVE_TOOLS = CONVERSATION_TOOLS | {"ctx_execute", "ctx_execute_file"}


class LiveNotebooks:
    def __init__(self, export: ExportService, directory: Path, spawn: Spawn,
                 min_interval_s: float = MIN_INTERVAL_S) -> None:
        self._export = export
        self._dir = directory
        self._spawn = spawn
        self._min_interval_s = min_interval_s
        self._dirty: set[str] = set()
        self._writing: set[str] = set()
        self._next: dict[str, float] = {}  # when a session's notebook may be written again

    def path_of(self, session_id: str) -> Path:
        """The folder a session's live notebooks are written in."""
        return self._dir / re.sub(r"[^A-Za-z0-9_.-]+", "-", session_id)[:60]

    def touch(self, tool: str, session_id: str) -> None:
        """A call of `tool` was recorded for the session: its notebook is due (written in the background)."""
        if tool not in LIVE_TOOLS:
            return
        self._dirty.add(session_id)
        if session_id not in self._writing:
            self._writing.add(session_id)
            self._spawn(partial(self._write, session_id))

    async def _write(self, session_id: str) -> None:
        try:
            while session_id in self._dirty:
                wait = self._next.get(session_id, 0.0) - time.monotonic()
                if wait > 0:
                    await anyio.sleep(wait)
                self._dirty.discard(session_id)
                began = time.monotonic()
                try:
                    await self._export.export(session_id, str(self.path_of(session_id)), confined=False)
                except Exception:  # a live view that failed must not fail the session: logged
                    log.warning("could not write the live notebook of session %s", session_id, exc_info=True)
                done = time.monotonic()
                # A long session's export takes longer: at most a tenth of the time goes to rewriting it.
                self._next[session_id] = done + max(self._min_interval_s, BUSY_FACTOR * (done - began))
        finally:
            self._writing.discard(session_id)


def prune(directory: Path, days: float, now: float | None = None) -> int:
    """Delete the live folders of sessions not written for `days` (0: keep all), as retention deletes their
    records; returns how many went. Blocking: run it off the event loop."""
    import shutil

    if days <= 0:
        return 0
    cutoff = (time.time() if now is None else now) - days * 86_400
    removed = 0
    try:
        folders = [p for p in directory.iterdir() if p.is_dir()]
    except OSError:
        return 0  # none written yet
    for folder in folders:
        try:
            newest = max((p.stat().st_mtime for p in folder.iterdir()), default=0.0)
        except OSError:
            continue  # going meanwhile (another server's pass)
        if newest < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed
