"""Plain text chunks (blank-line sections, or 20-line windows for logs) and the size-bounded
line splitting that the other chunkers share.

Invariants of `chunk_text` (tested as properties):

* every chunk's content is a substring of the input, whitespace-only lines at its start and
  whitespace at its end removed, and no content is empty or whitespace-only;
* chunks come in document order, and every non-blank input line appears whole in at least one
  chunk (a line longer than `max_bytes` appears as consecutive pieces instead);
* sections never overlap; consecutive windows share `WINDOW_OVERLAP` lines, so in window mode
  a line may appear in two chunks;
* no chunk is larger than `max_bytes` UTF-8 bytes.
"""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate, compress, count

from context_kernel.knowledge.model import MAX_CHUNK_BYTES, Chunk

WINDOW_LINES = 20
WINDOW_OVERLAP = 2
# A window of very short lines (`yes`, a column of numbers) keeps growing to this size: 8 MB of
# 2-byte lines made 200,000 chunks of 40 bytes, and indexing them outlasted the cell's timeout.
MIN_WINDOW_BYTES = 512
# A blank-line section longer than this is a log or a listing, not a paragraph: window it.
SECTION_MAX_LINES = 3 * WINDOW_LINES
TITLE_CHARS = 80
# The smallest budget that always fits one UTF-8 character, so splitting always progresses.
MIN_CHUNK_BYTES = 4


def utf8_len(text: str) -> int:
    # surrogatepass: text decoded with surrogateescape must be measurable, not a crash.
    return len(text.encode("utf-8", "surrogatepass"))


def check_budget(max_bytes: int) -> None:
    if max_bytes < MIN_CHUNK_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_CHUNK_BYTES}, got {max_bytes}")


def split_lines(text: str) -> list[str]:
    """Lines with their "\\n" kept, so that joining them gives `text` back.

    Only "\\n" ends a line: `str.splitlines` also breaks at form feeds and U+2028, which would
    make line numbers disagree with every editor and with `ast`.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def is_blank(line: str) -> bool:
    return not line.strip()


def trim(text: str) -> str:
    """`text` without its leading whitespace-only lines and its trailing whitespace.

    Indentation of the first kept line stays (it matters in code), and the result is always a
    substring of `text`, which is what the chunkers' invariants are stated in terms of.
    """
    text = text.rstrip()
    if not text:
        return ""
    first = len(text) - len(text.lstrip())
    return text[text.rfind("\n", 0, first) + 1 :]


def title_from(text: str) -> str:
    """The first non-blank line, as a title an agent can recognise."""
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:TITLE_CHARS].rstrip()
    return ""


def split_bytes(text: str, max_bytes: int) -> list[str]:
    """`text` cut into pieces of at most `max_bytes` UTF-8 bytes, never inside a character."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return [text]
    pieces: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + max_bytes, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # a continuation byte: back off
            end -= 1
        pieces.append(data[start:end].decode("utf-8", "surrogatepass"))
        start = end
    return pieces


def pack_lines(lines: Sequence[str], max_bytes: int) -> list[str]:
    """Consecutive lines joined greedily into parts of at most `max_bytes`.

    A line longer than the budget becomes pieces of its own. Joining the parts gives the lines
    back exactly, so callers keep their partition invariant.
    """
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        line_size = utf8_len(line)
        if size + line_size > max_bytes and current:
            parts.append("".join(current))
            current, size = [], 0
        if line_size > max_bytes:
            parts.extend(split_bytes(line, max_bytes))
            continue
        current.append(line)
        size += line_size
    if current:
        parts.append("".join(current))
    return parts


def chunk_text(text: str, max_bytes: int = MAX_CHUNK_BYTES) -> list[Chunk]:
    """Chunks of plain text: blank-line sections merged up to `max_bytes`, else line windows.

    A text without blank lines (a log) is always windowed, titled `lines A-B`; so is any section
    that is too big or too long to be a paragraph. Merged sections are titled by their first
    line. See the module docstring for the invariants.
    """
    check_budget(max_bytes)
    # Lines are handled as offsets into the text, computed by iterators that run at C speed: a
    # flood of short lines (8 MB of `yes` is 4 million lines) took seconds in a loop over line
    # strings, and the reply to the cell waits for its output to be indexed.
    bodies = text.split("\n")  # the lines without their "\n"
    if not bodies[-1]:
        bodies.pop()  # the text ends with "\n" (or is empty): no line after it, as in split_lines
    unended = bool(bodies) and not text.endswith("\n")  # the last line lacks its "\n"
    chars = [0, *accumulate(map((1).__add__, map(len, bodies)))]  # where each line starts in `text`
    chars[-1] -= unended
    if text.isascii():
        offsets = chars  # byte offsets are character offsets
    else:
        offsets = [0, *accumulate(map(lambda body: utf8_len(body) + 1, bodies))]
        offsets[-1] -= unended
    blank = compress(count(), map(operator.not_, map(str.strip, bodies)))
    blocks = _blocks(blank, len(bodies))
    chunks: list[Chunk] = []
    pending: list[tuple[int, int]] = []

    def flush() -> None:
        if pending:
            content = trim(text[chars[pending[0][0]] : chars[pending[-1][1]]])
            chunks.append(Chunk(title_from(content), content, "prose"))
            pending.clear()

    for start, end in blocks:
        reasonable = (
            len(blocks) > 1
            and offsets[end] - offsets[start] <= max_bytes
            and end - start <= SECTION_MAX_LINES
        )
        if not reasonable:
            flush()
            chunks.extend(_windows(text, chars, offsets, start, end, max_bytes))
            continue
        if pending and offsets[end] - offsets[pending[0][0]] > max_bytes:
            flush()
        pending.append((start, end))
    flush()
    return chunks


def _blocks(blank: Iterable[int], count_: int) -> list[tuple[int, int]]:
    """Maximal runs of non-blank lines, as [start, end) line indexes, from the blank lines' indexes
    (in order) and the number of lines."""
    blocks: list[tuple[int, int]] = []
    start = 0
    for index in blank:
        if index > start:
            blocks.append((start, index))
        start = index + 1
    if start < count_:
        blocks.append((start, count_))
    return blocks


def _windows(
    text: str, chars: Sequence[int], offsets: Sequence[int], start: int, end: int, max_bytes: int
) -> list[Chunk]:
    """Windows of WINDOW_LINES lines (more while under MIN_WINDOW_BYTES) over [start, end),
    overlapping by WINDOW_OVERLAP. `chars` and `offsets`: where each line starts in `text`, in
    characters and in UTF-8 bytes.

    The overlap keeps a match that straddles a window edge findable in one chunk. A window stops
    early when the byte budget is reached; a line over budget is cut into its own pieces.
    """
    chunks: list[Chunk] = []
    first = start
    while first < end:
        if offsets[first + 1] - offsets[first] > max_bytes:
            pieces = [trim(p) for p in split_bytes(text[chars[first]:chars[first + 1]], max_bytes)]
            pieces = [p for p in pieces if p.strip()]
            for number, piece in enumerate(pieces, 1):
                suffix = f" (part {number})" if len(pieces) > 1 else ""
                chunks.append(Chunk(f"line {first + 1}{suffix}", piece, "prose"))
            first += 1
            continue
        # The window grows while it has fewer than WINDOW_LINES lines or MIN_WINDOW_BYTES bytes, and
        # the next line fits the budget: each bound is where a monotone condition turns, found by
        # bisection (a loop line by line took seconds over the 4 million lines of 8 MB of `yes`).
        grown = max(first + WINDOW_LINES, bisect_left(offsets, offsets[first] + MIN_WINDOW_BYTES, first + 1))
        fits = bisect_right(offsets, offsets[first] + max_bytes, first + 1) - 1
        last = max(first + 1, min(end, grown, fits))
        content = trim(text[chars[first]:chars[last]])
        if content:
            chunks.append(Chunk(f"lines {first + 1}-{last}", content, "prose"))
        if last >= end:
            break
        if offsets[last + 1] - offsets[last] > max_bytes:
            first = last  # the next line is cut on its own; overlapping into it cannot help
        else:
            first = max(last - WINDOW_OVERLAP, first + 1)
    return chunks
