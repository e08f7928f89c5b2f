"""Review: a hook appending to the spool while the server drains it must not lose its event.

The interleaving is forced, not hoped for: a trace function stops the appending thread right after
it opened the spool file (the real `spool.append`, nothing replaced), the main thread drains and
deletes what it took, then the appender goes on.
"""

from __future__ import annotations

import inspect
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from context_kernel.hooks import spool
from context_kernel.hooks.model import Event


def _pause_after_open(opened: threading.Event, resume: threading.Event) -> Any:
    lines, first = inspect.getsourcelines(spool.append)
    open_line = first + next(i for i, line in enumerate(lines) if "os.open(" in line)

    def local(frame: FrameType, event: str, arg: object) -> Any:
        if event == "line" and frame.f_lineno > open_line and not opened.is_set():
            opened.set()
            resume.wait(30)
        return local

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code is spool.append.__code__ else None

    return tracer


def _drain_all(home: Path) -> list[str]:
    found = []
    for taken, rows in spool.drain(home):
        found += [row["data"] for row in rows]
        taken.unlink()  # what `memory.ingest` does once the rows are committed
    return found


def test_an_event_appended_while_the_spool_is_drained_is_kept(tmp_path: Path) -> None:
    spool.append(tmp_path, "claude-code", "s1", [Event("file_read", "files", "a.py")])
    opened, resume = threading.Event(), threading.Event()
    tracer = _pause_after_open(opened, resume)

    def append_late() -> None:
        sys.settrace(tracer)
        try:
            spool.append(tmp_path, "claude-code", "s1", [Event("file_edit", "files", "b.py")])
        finally:
            sys.settrace(None)

    writer = threading.Thread(target=append_late)
    writer.start()
    try:
        assert opened.wait(30)
        drained = _drain_all(tmp_path)
    finally:
        resume.set()
        writer.join(30)
    assert not writer.is_alive()
    drained += _drain_all(tmp_path)
    assert sorted(drained) == ["a.py", "b.py"]
