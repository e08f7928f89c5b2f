"""Plain text that has a structure of its own: outlines (man pages, text manuals) and conversations.

Without markdown headings such text was cut into blank-line sections merged up to 4 KB, titled by
their first line (`SORT(1)   User Commands   SORT(1)`): a hit was a page of unrelated options
under a title that named none of them. Here a section is a unit of the text's own structure:

* **Outlines**: a line that owns the more indented lines right below it is a heading — a man
  page's `NAME` / `OPTIONS`, an option's `-n, --numeric-sort` over its indented description. A
  chunk is one heading's own text (or consecutive small siblings packed together), titled by the
  path of headings above it: `SORT(1) > DESCRIPTION > -n, --numeric-sort`.
* **Conversations**: `user:` / `assistant:` turns at the start of a line, or JSON Lines of
  `{"role", "content"}` messages; a chunk is a turn (or consecutive short turns), titled by the
  speaker and its first words, long turns split at blank lines.

Outline and turn chunks are substrings of the input (trimmed), in document order, and cover every
non-blank line once, like `chunk_text`'s sections; JSON Lines chunks are the messages' decoded text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from context_kernel.knowledge.chunking.plain import TITLE_CHARS, pack_lines, split_lines, trim, utf8_len
from context_kernel.knowledge.model import MAX_CHUNK_BYTES, Chunk

# Consecutive small units are packed up to this size: a hit should be a passage an agent reads in
# one glance (an option and its description), not the page around it.
TARGET_BYTES = 1200
HEADING_CHARS = 100
MAX_TITLE_NAMES = 4
MIN_HEADINGS = 3
_TURN = re.compile(r"^(user|assistant|system|human|ai|tool|bot|agent|developer|model)\s*:\s?", re.IGNORECASE)
MIN_TURNS = 4


@dataclass
class _Unit:
    start: int
    """First line index (its heading, for an outline unit)."""
    end: int
    path: tuple[str, ...]
    """Headings above the unit and its own."""


def chunk_structured(text: str, max_bytes: int = MAX_CHUNK_BYTES) -> list[Chunk] | None:
    """Chunks by the text's own structure, or None when it has none this module knows."""
    return _jsonl_turns(text, max_bytes) or _turns(text, max_bytes) or _outline(text, max_bytes)


# --- outlines ---------------------------------------------------------------------------------

def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _outline(text: str, max_bytes: int) -> list[Chunk] | None:
    lines = split_lines(text)
    blank = [not line.strip() for line in lines]
    heads = [i for i in range(len(lines) - 1) if _is_heading(lines, blank, i)]
    top = [i for i in heads if _indent(lines[i]) == 0]
    indented = sum(1 for i, line in enumerate(lines) if not blank[i] and _indent(line) > 0)
    nonblank = len(lines) - sum(blank)
    if len(top) < MIN_HEADINGS or indented < 0.3 * nonblank:
        return None
    root = _page_title(lines)
    units: list[_Unit] = []
    first = next((i for i, b in enumerate(blank) if not b), len(lines))
    if heads and heads[0] > first:
        units.append(_Unit(first, heads[0], (root,) if root else ()))
    stack: list[tuple[int, str]] = []
    for n, i in enumerate(heads):
        depth = _indent(lines[i])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, " ".join(lines[i].split())[:TITLE_CHARS]))
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        units.append(_Unit(i, end, ((root,) if root else ()) + tuple(name for _, name in stack)))
    return _pack(text, lines, units, max_bytes)


def _is_heading(lines: list[str], blank: list[bool], i: int) -> bool:
    """A short line that opens a block of more indented lines right below it, and is not the last
    line of a paragraph (the line above is blank, less indented, or a heading's own line)."""
    if blank[i] or blank[i + 1] or len(lines[i].strip()) > HEADING_CHARS:
        return False
    if _indent(lines[i + 1]) <= _indent(lines[i]):
        return False
    return i == 0 or blank[i - 1] or _indent(lines[i - 1]) < _indent(lines[i])


def _page_title(lines: list[str]) -> str:
    """A man page's header line `SORT(1)   User Commands   SORT(1)` names the page by its first field."""
    for line in lines[:3]:
        if line.strip():
            fields = re.split(r"\s{3,}", line.strip())
            return fields[0][:TITLE_CHARS] if len(fields) >= 2 else ""
    return ""


def _pack(text: str, lines: list[str], units: list[_Unit], max_bytes: int) -> list[Chunk]:
    """Consecutive small units under the same parent become one chunk; a unit over `max_bytes` is
    cut at blank lines into parts."""
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    size = [utf8_len(text[starts[u.start]:starts[u.end]]) for u in units]
    chunks: list[Chunk] = []
    group: list[int] = []

    def flush() -> None:
        if not group:
            return
        first, last = units[group[0]], units[group[-1]]
        content = trim(text[starts[first.start]:starts[last.end]])
        if content:
            title = " > ".join(first.path) or "(untitled)"
            if len(group) > 1:  # the packed siblings by name: the title is what a hit is recognised by
                names = [units[g].path[-1] for g in group if units[g].path]
                title += "; " + "; ".join(names[1:MAX_TITLE_NAMES]) + (" …" if len(names) > MAX_TITLE_NAMES else "")
            chunks.append(Chunk(title[:3 * TITLE_CHARS], content, "prose"))
        group.clear()

    for n, unit in enumerate(units):
        if size[n] > max_bytes:
            flush()
            chunks.extend(_parts(lines[unit.start:unit.end], " > ".join(unit.path) or "(untitled)", max_bytes))
            continue
        lead = units[group[0]] if group else None
        if lead and (not _packs_with(lead.path, unit.path, nested=_indent(lines[lead.start]) > 0)
                     or sum(size[g] for g in group) + size[n] > TARGET_BYTES):
            flush()
        group.append(n)
    flush()
    return chunks


def _packs_with(first: tuple[str, ...], path: tuple[str, ...], nested: bool) -> bool:
    """A unit joins a chunk that began with its sibling, or with an item heading above it (`nested`:
    an indented heading, not a page section): an option's `Example:` stays with the option it shows
    (alone it outranked the option's description)."""
    return path[:-1] == first[:-1] or (nested and path[:len(first)] == first)


def _parts(lines: list[str], title: str, max_bytes: int) -> list[Chunk]:
    """A unit too large for one chunk: its blank-line paragraphs packed up to `max_bytes`, a paragraph
    larger than that cut between its lines (never inside one)."""
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        current.append(line)
        if not line.strip():
            paragraphs.append("".join(current))
            current = []
    if current:
        paragraphs.append("".join(current))
    pieces_in = [piece for p in paragraphs
                 for piece in (pack_lines(split_lines(p), max_bytes) if utf8_len(p) > max_bytes else [p])]
    pieces = [trim(p) for p in pack_lines(pieces_in, max_bytes)]
    pieces = [p for p in pieces if p]
    return [Chunk(title[:3 * TITLE_CHARS] + (f" (part {n})" if n > 1 else ""), p, "prose")
            for n, p in enumerate(pieces, 1)]


# --- conversations ----------------------------------------------------------------------------

def _turns(text: str, max_bytes: int) -> list[Chunk] | None:
    """`user:` / `assistant:` at the start of a line open a turn that runs to the next one."""
    lines = split_lines(text)
    opens = [i for i, line in enumerate(lines) if _TURN.match(line)]
    if len(opens) < MIN_TURNS or len({_TURN.match(lines[i])[1].lower() for i in opens}) < 2:  # type: ignore[index]
        return None
    units = []
    if opens[0] > 0 and any(line.strip() for line in lines[:opens[0]]):
        units.append(_Unit(0, opens[0], ("(before the conversation)",)))
    for n, i in enumerate(opens):
        end = opens[n + 1] if n + 1 < len(opens) else len(lines)
        units.append(_Unit(i, end, (_turn_title(n + 1, lines[i]),)))
    return _pack_turns(text, lines, units, max_bytes)


def _turn_title(number: int, first_line: str) -> str:
    match = _TURN.match(first_line)
    speaker = match[1].lower() if match else "turn"
    words = " ".join(first_line[match.end() if match else 0:].split())
    return f"{speaker} (turn {number}): {words[:60]}".rstrip(": ")


def _pack_turns(text: str, lines: list[str], units: list[_Unit], max_bytes: int) -> list[Chunk]:
    # Turns are packed like siblings of one outline: all share the (empty) parent path.
    flat = [_Unit(u.start, u.end, ("",) + u.path) for u in units]
    chunks = _pack(text, lines, flat, max_bytes)
    return [Chunk(c.title.removeprefix(" > "), c.content, c.kind) for c in chunks]


def _jsonl_turns(text: str, max_bytes: int) -> list[Chunk] | None:
    """JSON Lines of chat messages (`{"role": ..., "content": ...}`): each message's decoded text."""
    head = text.lstrip()[:1]
    if head != "{":
        return None
    messages: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            return None
        if not isinstance(item, dict) or "role" not in item or not isinstance(item.get("content"), str):
            return None
        messages.append((str(item["role"]), item["content"]))
    if len(messages) < MIN_TURNS:
        return None
    rendered = "".join(f"{role}: {content.rstrip()}\n\n" for role, content in messages)
    return _turns(rendered, max_bytes) or None
