"""Per-tool-call byte accounting for ctx_stats, without threading a counter through every service.

The MCP layer opens a meter around each tool call; services add what they take in (output
produced, pages fetched, files read) and what they index. Counting in async code only: the
context variable does not follow work handed to the database thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Meter:
    bytes_in: int = 0
    """Bytes the call took in: output its code produced, pages it fetched, files it read."""
    bytes_indexed: int = 0
    """Bytes it wrote into the knowledge base."""


_current: ContextVar[Meter | None] = ContextVar("context_kernel_meter", default=None)


def count(*, bytes_in: int = 0, bytes_indexed: int = 0) -> None:
    meter = _current.get()
    if meter is not None:
        meter.bytes_in += max(0, bytes_in)
        meter.bytes_indexed += max(0, bytes_indexed)


@contextmanager
def metering() -> Iterator[Meter]:
    meter = Meter()
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)


@dataclass(frozen=True)
class CallRecord:
    """One tool call as ctx_stats counts it (stats.py defines each figure); the MCP edge writes one per call."""

    session_id: str
    tool: str
    duration_ms: float
    bytes_in: int
    bytes_indexed: int
    bytes_returned: int
    is_error: bool
