"""Markdown chunks: one per H1–H4 section, titled by its heading breadcrumb `A > B > C`.

Invariants (tested as properties):

* the chunks partition the document: each content is a substring of the input, they follow
  each other in order without overlapping, and everything between two consecutive contents
  (and before the first, after the last) is whitespace. Concretely a content is a slice with
  its leading whitespace-only lines and trailing whitespace removed; whitespace-only slices are
  dropped;
* a fenced code block (``` or ~~~, CommonMark rules) lies whole inside one chunk, and nothing
  inside it is read as a heading;
* a chunk is at most `max_bytes` UTF-8 bytes, except a single fenced block that is larger on its
  own: it becomes one oversized chunk, because half a code sample is worse than a big hit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from context_kernel.knowledge.chunking.plain import (
    TITLE_CHARS,
    check_budget,
    is_blank,
    pack_lines,
    split_lines,
    title_from,
    trim,
    utf8_len,
)
from context_kernel.knowledge.model import MAX_CHUNK_BYTES, Chunk

SPLIT_LEVELS = 4
TOP_TITLE = "(top)"
UNTITLED = "(untitled)"

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
# Lines that cannot be the text of a setext heading: list items, quotes, tables, HTML, code.
_NOT_SETEXT_TEXT = re.compile(r"(?: {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)| {0,3}[>|<]| {4}|\t)")
_FRONT_MATTER_TITLE = re.compile(r"title:\s*['\"]?(.*?)['\"]?\s*$")


@dataclass(frozen=True)
class _Heading:
    line: int
    """First line of the heading (the text line of a setext heading)."""
    lines: int
    """1 for ATX, 2 for setext (text + underline)."""
    level: int
    text: str


@dataclass
class _Scan:
    fence: list[int]
    """Per line: the index of the fenced block it belongs to (delimiters included), or -1."""
    headings: list[_Heading]
    front_matter_end: int
    """Lines before this index are YAML/TOML front matter (0 when there is none)."""
    blank: list[bool]
    """Per line: whitespace only."""


@dataclass(frozen=True)
class _Block:
    text: str
    fenced: bool
    nonblank: int


def chunk_markdown(text: str, max_bytes: int = MAX_CHUNK_BYTES) -> list[Chunk]:
    """Chunks of a markdown document, in order; see the module docstring for the invariants.

    A section larger than `max_bytes` is split between blocks (paragraphs, fenced blocks) into
    parts that keep the section's title, suffixed " (part N)" from the second part on.
    """
    check_budget(max_bytes)
    lines = split_lines(text)
    scan = _scan(lines)
    chunks: list[Chunk] = []
    starts = [h.line for h in scan.headings]
    if not starts or starts[0] > 0:
        end = starts[0] if starts else len(lines)
        title = _preamble_title(lines[:end], scan.front_matter_end)
        chunks.extend(_section_chunks(lines, scan, 0, end, 0, title, max_bytes))
    stack: list[tuple[int, str]] = []
    for index, heading in enumerate(scan.headings):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.text))
        title = " > ".join(name for _, name in stack if name) or UNTITLED
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        chunks.extend(
            _section_chunks(lines, scan, heading.line, end, heading.lines, title, max_bytes)
        )
    return chunks


def _scan(lines: list[str]) -> _Scan:
    """Find fenced blocks, front matter and the H1–H4 headings outside them, in one pass."""
    fence = [-1] * len(lines)
    blank = [not line.strip() for line in lines]
    headings: list[_Heading] = []
    front_matter_end = _front_matter_end(lines)
    heading_lines: set[int] = set()
    open_fence: tuple[str, int] | None = None
    fence_count = 0
    for index in range(front_matter_end, len(lines)):
        body = lines[index].rstrip("\r\n")
        if open_fence is not None:
            fence[index] = fence_count
            closing = _FENCE_CLOSE.match(body)
            if closing and closing[1][0] == open_fence[0] and len(closing[1]) >= open_fence[1]:
                open_fence = None
                fence_count += 1
            continue
        opening = _FENCE_OPEN.match(body)
        if opening and not (opening[1][0] == "`" and "`" in opening[2]):
            open_fence = (opening[1][0], len(opening[1]))
            fence[index] = fence_count
            continue
        atx = _ATX.match(body)
        if atx:
            level = len(atx[1])
            if level <= SPLIT_LEVELS:
                name = plain_heading(_CLOSING_HASHES.sub("", (atx[2] or "").strip()).strip())
                headings.append(_Heading(index, 1, level, name[:TITLE_CHARS]))
            heading_lines.add(index)
            continue
        if (
            _SETEXT.match(body)
            and index - 1 >= front_matter_end
            and _is_setext_text(lines, fence, heading_lines, index - 1)
        ):
            level = 1 if body.strip()[0] == "=" else 2
            headings.append(_Heading(index - 1, 2, level, lines[index - 1].strip()[:TITLE_CHARS]))
            heading_lines.update((index - 1, index))
    return _Scan(fence, headings, front_matter_end, blank)


_LINK = re.compile(r"!?\[([^\]]*)\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"]*\")?\)")
_STRONG = re.compile(r"\*\*")


def plain_heading(text: str) -> str:
    """A heading as a title: link text without its URL (`[Panics](https://…#panics-3)`), no bold marks."""
    if "[" in text:
        text = _LINK.sub(lambda m: m.group(1), text)
    return " ".join(_STRONG.sub("", text).split())


def _is_setext_text(lines: list[str], fence: list[int], headings: set[int], index: int) -> bool:
    """Is line `index` a one-line paragraph that an underline below turns into a heading?

    Multi-line setext headings are left alone: they are rare and easily confused with a
    paragraph followed by a thematic break.
    """
    if index < 0 or fence[index] >= 0 or index in headings or is_blank(lines[index]):
        return False
    if _NOT_SETEXT_TEXT.match(lines[index]):
        return False
    before = index - 1
    return before < 0 or is_blank(lines[before]) or before in headings or fence[before] >= 0


def _front_matter_end(lines: list[str]) -> int:
    if not lines or lines[0].rstrip() not in ("---", "+++"):
        return 0
    closers = ("---", "...") if lines[0].rstrip() == "---" else ("+++",)
    for index in range(1, len(lines)):
        if lines[index].rstrip() in closers:
            return index + 1
    return 0


def _preamble_title(lines: list[str], front_matter_end: int) -> str:
    for line in lines[1:front_matter_end]:
        found = _FRONT_MATTER_TITLE.match(line.strip())
        if found and found[1]:
            return found[1][:TITLE_CHARS]
    first = title_from("".join(lines[front_matter_end:]))
    if not first or first.startswith(("```", "~~~")):
        return TOP_TITLE
    return first


def _section_chunks(
    lines: list[str], scan: _Scan, start: int, end: int, heading_lines: int, title: str,
    max_bytes: int,
) -> list[Chunk]:
    parts = _pack(_blocks(lines, scan.fence, scan.blank, start, end, heading_lines), max_bytes)
    chunks: list[Chunk] = []
    for blocks in parts:
        content = trim("".join(block.text for block in blocks))
        if not content:
            continue
        nonblank = sum(block.nonblank for block in blocks)
        code = sum(block.nonblank for block in blocks if block.fenced)
        suffix = f" (part {len(chunks) + 1})" if chunks else ""
        chunks.append(Chunk(title + suffix, content, "code" if 2 * code >= nonblank else "prose"))
    return chunks


def _blocks(
    lines: list[str], fence: list[int], blank: list[bool], start: int, end: int, heading_lines: int
) -> list[_Block]:
    """The section's heading, paragraphs and fenced blocks, each with its trailing blank lines.

    These are the places a large section may be split; a fenced block is one block whatever
    blank lines it contains.
    """
    blocks: list[_Block] = []
    index = start
    while index < end:
        stop = index + 1
        if index == start and heading_lines:
            stop = index + heading_lines
        elif fence[index] >= 0:
            while stop < end and fence[stop] == fence[index]:
                stop += 1
        elif not blank[index]:
            while stop < end and fence[stop] < 0 and not blank[stop]:
                stop += 1
        while stop < end and fence[stop] < 0 and blank[stop]:
            stop += 1
        nonblank = stop - index - sum(blank[index:stop])
        blocks.append(_Block("".join(lines[index:stop]), fence[index] >= 0, nonblank))
        index = stop
    return blocks


def _pack(blocks: list[_Block], max_bytes: int) -> list[list[_Block]]:
    """Blocks grouped greedily into parts of at most `max_bytes`.

    A paragraph larger than the budget is cut at line boundaries (a line, at the budget); a
    fenced block larger than the budget stays whole, alone in its part.
    """
    parts: list[list[_Block]] = []
    current: list[_Block] = []
    size = 0
    for block in blocks:
        block_size = utf8_len(block.text)
        if size + block_size > max_bytes and current:
            parts.append(current)
            current, size = [], 0
        if block_size <= max_bytes:
            current.append(block)
            size += block_size
        elif block.fenced:
            parts.append([block])
        else:
            for piece in pack_lines(split_lines(block.text), max_bytes):
                parts.append([_Block(piece, False, 1 if piece.strip() else 0)])
    if current:
        parts.append(current)
    return parts
