"""Text helpers for what the agent reads: ANSI stripping, head+tail trimming by whole lines."""

from __future__ import annotations

import re
from collections import deque

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _size(line: str) -> int:
    return len(line.encode("utf-8", "replace"))


class HeadTail:
    """Keeps whole lines of a stream within `budget` bytes: all of it if it fits, else head + tail.

    Memory stays bounded by about twice the budget whatever is fed. The head keeps 60 % of the
    budget, the tail 40 % (the reference's split): the start shows what ran, the end how it ended.
    """

    def __init__(self, budget: int) -> None:
        self.budget = max(budget, 256)
        self._head_budget = int(self.budget * 0.6)
        self._tail_budget = self.budget - self._head_budget
        self._head: list[str] = []
        self._head_bytes = 0
        self._tail: deque[str] = deque()
        self._tail_bytes = 0
        self._partial = ""
        self._overflow = False
        self.total_lines = 0
        self.total_bytes = 0
        self.cut_lines = 0
        self.cut_bytes = 0

    def feed(self, text: str) -> None:
        if not text:
            return
        self.total_bytes += _size(text)
        data = self._partial + text
        end = data.rfind("\n") + 1  # data[:end] is whole lines
        self._partial = data[end:]
        start = 0
        while start < end and not self._overflow:
            line_end = data.index("\n", start) + 1
            self._add(data[start:line_end])
            start = line_end
        if start < end:
            start = self._skip(data, start, end)
            for line in data[start : end - 1].split("\n"):
                self._add(line + "\n")
        if len(self._partial) > self._tail_budget:
            # A very long line with no newline yet: keep its start, count the rest as cut.
            self._partial = self._clip(self._partial)

    def _skip(self, data: str, start: int, end: int) -> int:
        """Count, without keeping, the whole lines of data[start:end] that the tail would drop anyway.

        Past the head, the tail keeps the last lines that fit its budget: lines followed by at
        least that much text cannot be among them (unless that text is one line long enough to be
        clipped: then nothing is skipped). Returns where the lines worth adding begin. A flood of
        short lines then costs a few calls per chunk, not several per line.
        """
        cut = data.rfind("\n", start, max(start, end - self._tail_budget)) + 1
        if cut <= start or data.find("\n", cut, cut + self._tail_budget) < 0:
            return start
        skipped = data.count("\n", start, cut)
        self.total_lines += skipped
        self.cut_lines += skipped
        self.cut_bytes += _size(data[start:cut])
        return cut

    def _clip(self, line: str) -> str:
        keep = self._tail_budget // 2
        cut = line[keep:]
        self.cut_bytes += _size(cut)
        return line[:keep] + f" …[{len(cut)} chars of this line cut]"

    def _add(self, line: str) -> None:
        self.total_lines += 1
        if len(line) > self._tail_budget:
            line = self._clip(line.rstrip("\n")) + "\n"
        size = _size(line)
        if not self._overflow:
            if self._head_bytes + size <= self.budget:
                self._head.append(line)
                self._head_bytes += size
                return
            self._overflow = True
            # Move everything past the head's share into the tail.
            keep: list[str] = []
            kept = 0
            for existing in self._head:
                s = _size(existing)
                if kept + s > self._head_budget:
                    break
                keep.append(existing)
                kept += s
            for moved in self._head[len(keep):]:
                self._push_tail(moved)
            self._head, self._head_bytes = keep, kept
        self._push_tail(line)

    def _push_tail(self, line: str) -> None:
        self._tail.append(line)
        self._tail_bytes += _size(line)
        while self._tail_bytes > self._tail_budget and len(self._tail) > 1:
            dropped = self._tail.popleft()
            self._tail_bytes -= _size(dropped)
            self.cut_lines += 1
            self.cut_bytes += _size(dropped)

    @property
    def trimmed(self) -> bool:
        return self.cut_lines > 0 or self.cut_bytes > 0

    def render(self, marker: str = "") -> str:
        """The kept text; a marker line stands where lines were cut."""
        tail = "".join(self._tail) + self._partial
        head = "".join(self._head)
        if not self.cut_lines:
            return head + tail
        note = (
            f"\n[{self.cut_lines} lines / {self.cut_bytes / 1024:.1f} KB cut — showing first "
            f"{len(self._head)} + last {len(self._tail)} lines{marker}]\n"
        )
        return head.rstrip("\n") + note + tail

    def __len__(self) -> int:
        return self.total_bytes


def compact_traceback(lines: list[str], max_lines: int = 30) -> str:
    """A traceback the agent can read: ANSI stripped, blank lines dropped, long ones cut in the middle."""
    text = strip_ansi("\n".join(lines))
    rows = [r for r in text.splitlines() if r.strip() and not set(r.strip()) <= {"-"}]
    if len(rows) > max_lines:
        rows = rows[:5] + [f"... ({len(rows) - max_lines + 5} traceback lines cut) ..."] + rows[-(max_lines - 5):]
    return "\n".join(rows)
