"""Per-tool-call byte accounting for ctx_stats, without threading a counter through every service.

The MCP layer opens a meter around each tool call; services add what they take in (output
produced, pages fetched, files read) and what they index. Counting in async code only: the
context variable does not follow work handed to the database thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Meter:
    bytes_in: int = 0
    """Bytes the call took in: output its code produced, pages it fetched, files it read."""
    bytes_indexed: int = 0
    """Bytes it wrote into the knowledge base."""
    shown_whole: bool = False
    """The reply carried everything the call took in (a cell's whole output): it kept nothing out."""
    sources_in: dict[str, int] = field(default_factory=dict)
    """Bytes indexed per source label by this call."""
    sources_back: dict[str, int] = field(default_factory=dict)
    """Bytes of search hits this call's reply brought back, per source label."""

    def kept_out(self, bytes_returned: int) -> int:
        """What this call kept out of the context (records/stats.py defines it). Search hits in its reply
        (a batch's queries) are charged to the sources they came from, not to what it took in."""
        if self.shown_whole:
            return 0
        return max(0, self.bytes_in - max(0, bytes_returned - sum(self.sources_back.values())))


_current: ContextVar[Meter | None] = ContextVar("context_kernel_meter", default=None)


def count(*, bytes_in: int = 0, bytes_indexed: int = 0, shown_whole: bool = False,
          source: str | None = None, source_extra: int = 0) -> None:
    """Add to the current call's meter; `source`: the label `bytes_indexed` went under; `source_extra`: what that
    source took in beyond what was indexed (a fetched page's body is larger than its converted text)."""
    meter = _current.get()
    if meter is not None:
        meter.bytes_in += max(0, bytes_in)
        meter.bytes_indexed += max(0, bytes_indexed)
        meter.shown_whole = meter.shown_whole or shown_whole
        taken = max(0, bytes_indexed) + max(0, source_extra)
        if source is not None and taken > 0:
            meter.sources_in[source] = meter.sources_in.get(source, 0) + taken


def count_back(per_source: dict[str, int]) -> None:
    """Search hits sent back to the agent, in bytes per source label."""
    meter = _current.get()
    if meter is not None:
        for label, n in per_source.items():
            meter.sources_back[label] = meter.sources_back.get(label, 0) + n


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
    """One tool call as ctx_stats counts it (records/stats.py defines each figure); the MCP edge writes one per call."""

    session_id: str
    tool: str
    duration_ms: float
    bytes_in: int
    bytes_indexed: int
    bytes_returned: int
    is_error: bool
    bytes_kept_out: int = 0
    sources_in: dict[str, int] = field(default_factory=dict)
    sources_back: dict[str, int] = field(default_factory=dict)
    arguments: str | None = None
    """A conversation call's arguments as JSON, capped (records/conversation.py); None for other tools."""
    reply: str | None = None
    """…and the text it replied, capped."""
