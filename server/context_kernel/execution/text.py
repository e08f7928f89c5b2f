"""Text helpers for what the agent reads: ANSI stripping, head+tail trimming by whole lines, and
collapsing of repeats (a print flood of one line is that line and a count, not 8 KB of it).

Collapsing is for the reply only: the record is built from the kernel's messages, not from here,
and keeps every byte.
"""

from __future__ import annotations

import re
from collections import deque

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# A line repeated this many more times (or more) is shown once with a count; "ok" three times stays.
MIN_REPEATS = 3
# A run of one unit of 1-8 characters this long inside a line is shown as its start and a count.
MIN_RUN_CHARS = 200
_RUN = re.compile(r"(.{1,8}?)\1{15,}")
_MAX_COMPARED = 64 * 1024  # longer lines are not compared with the next: they are clipped anyway
_GALLOP_CAP = 1 << 20


class _Repeats(str):
    """A marker line that stands for `repeats` hidden copies (`hidden` bytes) of the line above it."""

    repeats: int
    hidden: int


def collapse_runs(line: str) -> str:
    """`=====…` or `abababab…` of MIN_RUN_CHARS or more become the run's start and a count."""
    if len(line) < MIN_RUN_CHARS:
        return line

    def one(match: re.Match[str]) -> str:
        run, unit = match.group(0), match.group(1)
        if len(run) < MIN_RUN_CHARS:
            return run
        return _run_marker(unit, len(run) // len(unit))

    return _RUN.sub(one, line)


def _run_marker(unit: str, count: int) -> str:
    return f"{unit * max(1, 16 // len(unit))}…[{unit!r} repeated {count:,} times]"


def _leading_run(line: str) -> tuple[str, int] | None:
    """(unit, copies) when the line opens with a long run: `print('x' * 10**6)` is counted whole,
    in a few comparisons, before the line is clipped to what the reply keeps."""
    for width in range(1, 9):
        unit = line[:width]
        if len(unit) == width and line.startswith(unit * 16):
            copies = _copies(line, 0, len(line), unit)
            if copies * width >= MIN_RUN_CHARS:
                return unit, copies
    return None


def _copies(data: str, start: int, end: int, line: str) -> int:
    """How many copies of `line` follow at data[start:end], in a few comparisons (galloping)."""
    count, k, block = 0, 1, line
    while True:
        if start + len(block) <= end and data.startswith(block, start):
            start += len(block)
            count += k
            if len(block) < _GALLOP_CAP:
                block, k = block + block, k * 2
        elif k > 1:
            k //= 2
            block = block[: len(line) * k]
        else:
            return count


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
        # Lines and bytes not shown because they repeat what is shown (not "cut": nothing is lost
        # to the reader but the count, which the marker gives).
        self.collapsed_lines = 0
        self.collapsed_bytes = 0
        self._run: tuple[str, int] | None = None  # the unfinished line is this unit, this many times
        self._last: str | None = None  # the last whole line added, to tell a repeat
        self._repeats = 0              # copies of it since, not added yet

    def feed(self, text: str) -> None:
        if not text:
            return
        self.total_bytes += _size(text)
        data = self._continue_run(self._partial + text)
        end = data.rfind("\n") + 1  # data[:end] is whole lines
        self._partial = data[end:]
        start = 0
        while start < end and not self._overflow:
            line_end = data.index("\n", start) + 1
            line = data[start:line_end]
            self._add(line)
            start = line_end
            if self._last is not None and (copies := _copies(data, start, end, line)):
                self.total_lines += copies  # a flood of one line: counted, not looped over
                self._repeats += copies
                start += copies * len(line)
        if start < end:
            start = self._skip(data, start, end)
            for line in data[start : end - 1].split("\n"):
                self._add(line + "\n")
        if len(self._partial) > self._tail_budget and not self._start_run():
            # A very long line with no newline yet: keep its start, count the rest as cut.
            self._partial = self._clip(self._partial)

    def _start_run(self) -> bool:
        """The unfinished line is one long run so far (`print('x' * 10**6)` arrives in pieces):
        count it as it comes instead of clipping it, so its marker gives the whole count."""
        run = _leading_run(self._partial)
        if run is None:
            return False
        unit, copies = run
        rest = self._partial[len(unit) * copies:]
        if not unit.startswith(rest):  # the run ended inside this line: its marker, then the rest
            counted = _run_marker(unit, copies)
            self.collapsed_bytes += _size(unit) * copies - _size(counted)
            self._partial = counted + rest
            return len(self._partial) <= self._tail_budget
        self._run, self._partial = (unit, copies), rest
        return True

    def _continue_run(self, data: str) -> str:
        """`data` with a pending run counted on; once the run ends, its marker stands for it."""
        if self._run is None:
            return data
        unit, copies = self._run
        more = _copies(data, 0, len(data), unit)
        copies, data = copies + more, data[len(unit) * more:]
        if unit.startswith(data) and "\n" not in data:
            self._run = (unit, copies)  # still going (or a piece of the unit is all that came)
            return data
        self._run = None
        marker = _run_marker(unit, copies)
        self.collapsed_bytes += _size(unit) * copies - _size(marker)
        return marker + data

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
        last = self._last
        if last is not None and _copies(data, start, cut, last) * len(last) == cut - start:
            # A flood of the last line: the copies are repeats, not lines the tail would lose.
            copies = (cut - start) // len(last)
            self.total_lines += copies
            self._repeats += copies
            return cut
        if self._repeats and last is not None:  # pending repeats precede what is skipped: cut too
            self.cut_lines += self._repeats
            self.cut_bytes += self._repeats * _size(last)
        self._repeats, self._last = 0, None
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
        if line == self._last:
            self._repeats += 1
            return
        self._flush_repeats()
        self._last = line if len(line) <= _MAX_COMPARED else None
        self._keep(line)

    def _flush_repeats(self) -> None:
        """Add the pending copies of the last line: as they are when few, else one marker line."""
        count, last = self._repeats, self._last
        self._repeats = 0
        if not count or last is None:
            return
        if count < MIN_REPEATS:
            for _ in range(count):
                self._keep(last)
            return
        marker = _Repeats(f"[… the line above repeated {count:,} more times]\n")
        marker.repeats, marker.hidden = count, count * _size(last)
        self.collapsed_lines += count
        self.collapsed_bytes += marker.hidden
        self._keep(marker)

    def _keep(self, line: str) -> None:
        if isinstance(line, _Repeats):
            pass  # our marker: neither clipped nor run-collapsed
        elif len(line) > self._tail_budget:
            if run := _leading_run(line):
                unit, copies = run
                marker = _run_marker(unit, copies)
                self.collapsed_bytes += _size(unit) * copies - _size(marker)
                line = marker + line[len(unit) * copies:]
            if len(line) > self._tail_budget:
                line = self._clip(line.rstrip("\n")) + "\n"
            line = self._shorten(line)
        elif len(line) >= MIN_RUN_CHARS:
            line = self._shorten(line)
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

    def _shorten(self, line: str) -> str:
        short = collapse_runs(line)
        self.collapsed_bytes += _size(line) - _size(short)
        return short

    def _push_tail(self, line: str) -> None:
        self._tail.append(line)
        self._tail_bytes += _size(line)
        while self._tail_bytes > self._tail_budget and len(self._tail) > 1:
            dropped = self._tail.popleft()
            self._tail_bytes -= _size(dropped)
            if isinstance(dropped, _Repeats):  # the copies it stood for are cut now
                self.collapsed_lines -= dropped.repeats
                self.collapsed_bytes -= dropped.hidden
                self.cut_lines += dropped.repeats
                self.cut_bytes += dropped.hidden
            else:
                self.cut_lines += 1
                self.cut_bytes += _size(dropped)

    @property
    def trimmed(self) -> bool:
        return (self.cut_lines > 0 or self.cut_bytes > 0 or self.collapsed_lines > 0 or self.collapsed_bytes > 0
                or self._repeats >= MIN_REPEATS or self._run is not None)

    def render(self, marker: str = "") -> str:
        """The kept text; a marker line stands where lines were cut, and one for each collapsed repeat."""
        self._flush_repeats()
        self._last = None  # what is fed after rendering is not a repeat of what was shown
        if self._run is not None:  # the output ended inside a run
            unit, copies = self._run
            counted = _run_marker(unit, copies)
            self.collapsed_bytes += _size(unit) * copies - _size(counted)
            self._run, self._partial = None, counted + self._partial
        partial = self._partial
        if len(partial) >= MIN_RUN_CHARS:  # the last line, still without its newline
            partial = collapse_runs(partial)
            self.collapsed_bytes += _size(self._partial) - _size(partial)
            self._partial = partial
        tail = "".join(self._tail) + partial
        head = "".join(self._head)
        if not self.cut_lines:
            text = head + tail
            if (self.collapsed_lines or self.collapsed_bytes) and marker:
                text += ("" if text.endswith("\n") or not text else "\n") + f"[repeats collapsed{marker}]\n"
            return text
        note = (
            f"\n[{self.cut_lines} lines / {self.cut_bytes / 1024:.1f} KB cut — showing first "
            f"{len(self._head)} + last {len(self._tail)} lines{marker}]\n"
        )
        return head.rstrip("\n") + note + tail

    def __len__(self) -> int:
        return self.total_bytes

