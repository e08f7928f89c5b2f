"""Progress notifications for every tool call that takes a while: every few seconds while the call runs, what its
activity says (activity.py: the step it is on, the last line a cell printed), redacted. The SDK drops them when
the caller asked for no progress; a call shorter than the interval sends none."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context

from ..activity import Activity
from ..security.redact import redact_text

T = TypeVar("T")


async def reporting(context: Context[Any, Any], activity: Activity, interval: float, call: Awaitable[T]) -> T:
    """Await `call`, notifying `context`'s caller of `activity` every `interval` seconds meanwhile.

    A call shorter than `interval` (nearly all of them) costs a timer, not a task: the notifying task starts
    only when the timer fires (a task group per call added ~0.5 ms to a warm shell call)."""
    loop = asyncio.get_running_loop()
    began = time.monotonic()
    beats: asyncio.Task[None] | None = None

    async def beat() -> None:
        while True:
            elapsed = time.monotonic() - began
            try:
                await context.report_progress(elapsed, None, redact_text(activity.message(elapsed)))
            except Exception:  # noqa: BLE001 - a notification that cannot be sent must not fail the call
                return
            await asyncio.sleep(interval)

    def start() -> None:
        nonlocal beats
        beats = loop.create_task(beat())

    timer = loop.call_later(interval, start)
    try:
        return await call
    finally:
        timer.cancel()
        if beats is not None:
            beats.cancel()
