"""What a tool call is doing right now, for the progress notifications a long call sends (tools/server.py).

The MCP layer opens an activity around each tool call and, while the call runs, sends a notification every
few seconds saying what the activity says: services name the step they are on (`doing("indexed 120 of 400
files")`) and cells and batch commands the last line they printed (`printed(...)`), without a progress
callback threaded through every service. The holder is a mutable object in a context variable, so a step named
on a worker thread (which runs with a copy of the context) reaches it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

# The last output line in a notification: a glimpse, not a stream (the notification is redacted too).
MAX_LINE_BYTES = 200


@dataclass
class Activity:
    what: str = ""
    line: str = ""

    def message(self, elapsed: float) -> str:
        """e.g. `running cell (12 s); last line: epoch 3 loss 0.21`."""
        text = f"{self.what or 'working'} ({elapsed:.0f} s)"
        if self.line:
            text += f"; last line: {_clip(self.line)}"
        return text


_current: ContextVar[Activity | None] = ContextVar("context_kernel_activity", default=None)


@contextmanager
def tracking(what: str = "") -> Iterator[Activity]:
    """Open the activity of one tool call (the MCP layer does, around each call); `what`: until a step is named."""
    activity = Activity(what)
    token = _current.set(activity)
    try:
        yield activity
    finally:
        _current.reset(token)


def doing(what: str) -> None:
    """Name the step the current call is on (no-op outside a tool call)."""
    activity = _current.get()
    if activity is not None:
        activity.what = what


def printed(text: str) -> None:
    """A cell or command printed `text`: its last non-empty line becomes the activity's line."""
    activity = _current.get()
    if activity is None or not text:
        return
    end = len(text)
    while end > 0:
        start = text.rfind("\n", 0, end - 1) + 1
        line = text[start:end].strip()
        if line:
            activity.line = line[:MAX_LINE_BYTES * 2]
            return
        end = start - 1 if start > 0 else 0


def _clip(line: str) -> str:
    data = line.encode("utf-8", "replace")
    return line if len(data) <= MAX_LINE_BYTES else data[:MAX_LINE_BYTES - 3].decode("utf-8", "ignore") + "…"
