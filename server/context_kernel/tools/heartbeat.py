"""Progress notifications for every tool call that takes a while: every few seconds while the call runs, what its
activity says (activity.py: the step it is on, the last line a cell printed), redacted. The SDK drops them when
the caller asked for no progress; a call shorter than the interval sends none."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import Context

from ..activity import Activity
from ..security.redact import redact_text

T = TypeVar("T")


async def reporting(context: Context[Any, Any], activity: Activity, interval: float, call: Awaitable[T]) -> T:
    """Await `call`, notifying `context`'s caller of `activity` every `interval` seconds meanwhile."""
    began = time.monotonic()

    async def beat() -> None:
        while True:
            await anyio.sleep(interval)
            elapsed = time.monotonic() - began
            try:
                await context.report_progress(elapsed, None, redact_text(activity.message(elapsed)))
            except Exception:  # noqa: BLE001 - a notification that cannot be sent must not fail the call
                return

    result: T | None = None
    error: BaseException | None = None
    async with anyio.create_task_group() as beats:
        beats.start_soon(beat)
        try:
            result = await call
        except BaseException as exc:  # noqa: BLE001 - re-raised below, outside the task group (not wrapped)
            error = exc
        finally:
            beats.cancel_scope.cancel()
    if error is not None:
        raise error
    return result  # type: ignore[return-value]
