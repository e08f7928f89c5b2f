"""Tables in an output, for an intent that asks for an extreme ("the heaviest penguin", "the deepest quake", "our
most recent hire", "the biggest directory"): the row holding the extreme value of the column the intent names,
with the header line that says what its numbers are.

A table is a run of lines with a header: printed frames (pandas, R — a wide frame wrapped into blocks of columns,
each with its own header), `ps`/`df`/`column -t` style columns, CSV, and headerless tab- or space-separated
listings (`du`). A cell's value is found under its header name by position (pandas, R and the tools right-align
numbers under their names) or, for CSV and tab-separated lines, by field. Values read as numbers with their unit
(`712M`, `12%`, `4.5k`) or as ISO dates and times, so "latest" and "earliest" work on dates.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import datetime

from .terms import stem, words

# The adjective, which way it points, and the column names it usually means (a named column wins).
_UP, _DOWN = 1, -1
SUPERLATIVES: dict[str, tuple[int, tuple[str, ...]]] = {
    "deepest": (_UP, ("depth",)), "shallowest": (_DOWN, ("depth",)),
    "heaviest": (_UP, ("mass", "weight")), "lightest": (_DOWN, ("mass", "weight")),
    "strongest": (_UP, ("mag", "magnitude", "strength")), "weakest": (_DOWN, ("mag", "magnitude", "strength")),
    "slowest": (_UP, ("latency", "duration", "elapsed", "time", "ms", "p99", "p95", "seconds")),
    "fastest": (_DOWN, ("latency", "duration", "elapsed", "time", "ms", "p99", "p95", "seconds")),
    "longest": (_UP, ("duration", "length", "elapsed", "time")), "shortest": (_DOWN, ("duration", "length")),
    "biggest": (_UP, ("size", "bytes", "total", "used", "count", "amount")),
    "largest": (_UP, ("size", "bytes", "total", "used", "count", "amount")),
    "smallest": (_DOWN, ("size", "bytes", "total", "used", "count", "amount")),
    "highest": (_UP, ()), "lowest": (_DOWN, ()), "most": (_UP, ()), "least": (_DOWN, ()), "top": (_UP, ()),
    "maximum": (_UP, ()), "max": (_UP, ()), "minimum": (_DOWN, ()), "min": (_DOWN, ()),
    "latest": (_UP, ("date", "time", "created", "updated", "timestamp")),
    "newest": (_UP, ("date", "time", "created", "updated", "timestamp")),
    "recent": (_UP, ("date", "time", "created", "updated", "timestamp")),
    "oldest": (_DOWN, ("date", "time", "created", "timestamp")),
    "earliest": (_DOWN, ("date", "time", "created", "timestamp")),
    "busiest": (_UP, ("cpu", "load", "requests", "count")), "hungriest": (_UP, ("mem", "rss", "memory")),
    "best": (_UP, ("score", "accuracy")), "worst": (_DOWN, ("score", "accuracy")),
}
# How many rows with the most extreme values are kept (a total line, then the one asked for, then the next).
TOP_ROWS = 3
MIN_ROWS = 3
_UNITS = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15, "ki": 2**10, "mi": 2**20, "gi": 2**30,
          "ti": 2**40, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "%": 1.0, "b": 1.0, "ms": 1.0, "s": 1.0}
_VALUE = re.compile(r"^[$€£]?(-?\d+(?:[.,]\d+)?)([A-Za-z%]{0,3})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?$")
_CELL = re.compile(r"\S+")


@dataclass(frozen=True)
class _Column:
    header: int
    """The header line's index."""
    rows: list[int]
    values: dict[int, float]
    """Row line → its value in the column."""
    fit: float


def superlative(intent: str) -> tuple[int, list[str], list[str]] | None:
    """(direction, the column names the adjective suggests, the intent's other words) or None."""
    found = None
    others = []
    for word in words(intent.lower()):
        if word in SUPERLATIVES and found is None:
            found = SUPERLATIVES[word]
        else:
            others.append(word)
    return (found[0], list(found[1]), others) if found else None


def extreme_rows(lines: list[str], intent: str) -> list[int]:
    """Line indices to show for an intent asking for an extreme: the header and the rows with the extreme values
    of the column it means (of the best-fitting table); [] when it asks for none or no table fits."""
    asked = superlative(intent)
    if asked is None:
        return []
    direction, hints, others = asked
    best: _Column | None = None
    for column in _columns(lines, hints, others):
        if best is None or column.fit > best.fit:
            best = column
    if best is None:
        return []
    ranked = sorted(best.values, key=lambda i: (-direction * best.values[i], i))[:TOP_ROWS]
    return sorted({best.header, *ranked} - {-1})


def _columns(lines: list[str], hints: list[str], others: list[str]) -> list[_Column]:
    """Numeric columns of every table in `lines`, each with how well its name fits the intent."""
    found: list[_Column] = []
    i, n = 0, len(lines)
    while i < n:
        header = lines[i]
        if not header.strip():
            i += 1
            continue
        end, flush = i + 1, 0  # rows so far, and how many of them start at the margin (with their index)
        while end < n and lines[end].strip() and not _is_header_like(lines[end], header, end - i - 1, flush):
            flush += lines[end][:1] not in " \t"
            end += 1
        rows = list(range(i + 1, end))
        if len(rows) >= MIN_ROWS:
            found += _block_columns(lines, i, rows, hints, others)
        i = end
    if not found:  # a headerless listing (`du`): one numeric field per line
        found += _headerless(lines, hints)
    return found


def _is_header_like(line: str, header: str, rows: int, flush: int) -> bool:
    """A wrapped frame's next block starts with a line like its header: the same, or ending with pandas' `\\`, or
    (R, which prints the blocks without a blank line between) indented with a word first where the rows so far
    start with their index."""
    if line == header or (line.rstrip().endswith("\\") and not line[:1].isdigit()):
        return True
    first = line.split(None, 1)[0] if line.strip() else ""
    return rows >= MIN_ROWS and line[:1] == " " and flush > 0.8 * rows and _value(first) is None


def _names(header: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each header cell: whitespace-separated, or CSV fields (start = field number)."""
    if header.count(",") >= 2 and "  " not in header.strip():
        return [(name.strip().lower(), k, k) for k, name in enumerate(next(csv.reader([header])))]
    if "\t" in header:
        return [(name.strip().lower(), k, k) for k, name in enumerate(header.split("\t"))]
    return [(m.group(0).lower(), m.start(), m.end()) for m in _CELL.finditer(header) if m.group(0) != "\\"]


def _block_columns(lines: list[str], head: int, rows: list[int], hints: list[str],
                   others: list[str]) -> list[_Column]:
    header = lines[head]
    names = _names(header)
    if len(names) < 2 or sum(_value(name) is not None for name, _, _ in names) > len(names) / 2:
        return []  # a row of numbers is no header
    by_field = (header.count(",") >= 2 and "  " not in header.strip()) or "\t" in header
    columns = []
    for k, (name, start, end) in enumerate(names):
        fit = _fit(name, hints, others)
        if fit <= 0:
            continue
        values: dict[int, float] = {}
        for r in rows:
            cell = _field(lines[r], k, len(names)) if by_field else _under(lines[r], start, end)
            value = _value(cell) if cell is not None else None
            if value is not None:
                values[r] = value
        if len(values) >= max(MIN_ROWS, len(rows) // 2):
            columns.append(_Column(head, rows, values, fit))
    return columns


def _headerless(lines: list[str], hints: list[str]) -> list[_Column]:
    """`du`-style lines (`712M<TAB>/usr/share/doc`): the first field, when most lines start with a value."""
    values = {}
    for i, line in enumerate(lines):
        first = line.split(None, 1)[0] if line.strip() else ""
        value = _value(first)
        if value is not None:
            values[i] = value
    if len(values) < MIN_ROWS or len(values) < 0.8 * sum(1 for line in lines if line.strip()):
        return []
    return [_Column(-1, sorted(values), values, 0.5 if "size" in hints else 0.1)]


def _fit(name: str, hints: list[str], others: list[str]) -> float:
    """How well a column name fits: named by the intent (a word of it, or its start: `mag` for magnitude, `mem`
    for memory), else one of the adjective's usual names."""
    bare = re.sub(r"[^a-z0-9]+", " ", name).strip()
    parts = bare.split() or [bare]
    for word in others:
        for part in parts:
            if len(part) >= 3 and (word.startswith(part) or part.startswith(word) or stem(part) == stem(word)):
                return 2.0
    for hint in hints:
        if any(part.startswith(hint) or (len(part) >= 3 and hint.startswith(part)) for part in parts):
            return 1.0
    return 0.0


def _under(line: str, start: int, end: int) -> str | None:
    """The cell of `line` under a header name at [start, end): the token ending nearest its end (numbers are
    right-aligned), else the one overlapping it."""
    best, gap = None, 3
    for m in _CELL.finditer(line):
        if m.start() < end and m.end() > start - 1 and abs(m.end() - end) < gap:
            best, gap = m.group(0), abs(m.end() - end)
    return best


def _field(line: str, k: int, count: int) -> str | None:
    fields = next(csv.reader([line])) if "\t" not in line else line.split("\t")
    return fields[k].strip() if len(fields) == count else None


def _value(cell: str) -> float | None:
    """A number with its unit, or an ISO date/time as a timestamp; None for anything else."""
    text = cell.strip().strip("()[]\"'")
    if _DATE.match(text):
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    m = _VALUE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        return None
    return float(m.group(1).replace(",", ".")) * _UNITS[m.group(2).lower()]
