"""Source code chunks: one per top-level definition, titled `def name`, `class Name`, `fn name`.

Python is split with `ast`; JavaScript/TypeScript, Go, Rust and Ruby with a cheap regex over
definitions that start in column 0 (a definition then runs until the next one). Decorators and
the comment lines directly above a definition belong to it. Code between definitions (imports,
constants, `if __name__ == "__main__":`) is titled `(module)`; a comment-only stretch between
definitions goes with the definition below it. Other languages are chunked as plain text.

Invariants (tested as properties), the same as for markdown:

* the chunks partition the source: each content is a substring of the input, in order, without
  overlap, and only whitespace lies between consecutive contents;
* every chunk is at most `max_bytes` UTF-8 bytes: a larger definition is split at its members
  (a class's methods, `class Name > def method`), then at line boundaries (" (part N)").

All chunks are kind "code".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from context_kernel.knowledge.chunking.plain import (
    check_budget,
    chunk_text,
    is_blank,
    pack_lines,
    split_lines,
    trim,
    utf8_len,
)
from context_kernel.knowledge.model import MAX_CHUNK_BYTES, Chunk

MODULE_TITLE = "(module)"

LANGUAGE_ALIASES = {
    "py": "python", "python3": "python", "js": "javascript", "node": "javascript",
    "jsx": "javascript", "ts": "typescript", "tsx": "typescript", "golang": "go", "rs": "rust",
    "rb": "ruby",
}

_JS = (
    re.compile(
        r"(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?"
        r"(?P<kw>function\*?|class|interface|enum|namespace)\s*(?P<name>[\w$]*)"
    ),
    re.compile(r"(?:export\s+)?(?:declare\s+)?(?P<kw>type)\s+(?P<name>[\w$]+)\s*(?:<[^=]*>)?\s*="),
    # Arrow functions and function expressions bound at top level; any exported binding.
    re.compile(
        r"(?:export\s+)?(?P<kw>const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*"
        r"(?:async\b\s*)?(?:function\b|\(|[\w$]+\s*=>)"
    ),
    re.compile(r"export\s+(?P<kw>const|let|var)\s+(?P<name>[\w$]+)"),
    re.compile(r"export\s+(?P<kw>default)\b(?P<name>)"),
)
_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "python": (re.compile(r"(?P<kw>(?:async\s+)?def|class)\s+(?P<name>\w+)"),),
    "javascript": _JS,
    "typescript": _JS,
    "go": (
        re.compile(r"(?P<kw>func)\s+(?:\((?P<recv>[^)]*)\)\s*)?(?P<name>\w+)"),
        re.compile(r"(?P<kw>type)\s+(?P<name>\w+)"),
    ),
    "rust": (
        re.compile(
            r"(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|default|extern(?:\s+\"[^\"]*\")?)\s+)*"
            r"(?P<kw>fn|struct|enum|trait|union|type|macro_rules!)\s*(?P<name>\w+)"
        ),
        re.compile(r"(?:pub(?:\([^)]*\))?\s+)?(?P<kw>mod)\s+(?P<name>\w+)\s*\{"),
        re.compile(r"(?:unsafe\s+)?(?P<kw>impl)\b(?:\s*<[^>]*>)?\s*(?P<name>[^{]*?)\s*(?:\{.*)?$"),
    ),
    "ruby": (re.compile(r"(?P<kw>def|class|module)\s+(?P<name>[\w:.]+[?!=]?)"),),
}
# Lines that introduce the definition below them: comments, doc comments, decorators, attributes.
_LEADERS: dict[str, tuple[str, ...]] = {
    "python": ("#", "@"),
    "javascript": ("//", "/*", "*", "@"),
    "typescript": ("//", "/*", "*", "@"),
    "go": ("//", "/*", "*"),
    "rust": ("//", "/*", "*", "#["),
    "ruby": ("#",),
}


@dataclass
class _Def:
    start: int
    """First line (0-based), decorators and leading comments included."""
    end: int
    """Line after the last one."""
    title: str
    members: list[_Def] = field(default_factory=list)
    """Definitions inside it, for splitting it when it is too large."""
    gap: bool = False
    """Code between definitions rather than a definition."""


def chunk_code(text: str, language: str, max_bytes: int = MAX_CHUNK_BYTES) -> list[Chunk]:
    """Chunks of a source file, one per top-level definition; see the module docstring."""
    check_budget(max_bytes)
    lang = LANGUAGE_ALIASES.get(language.lower(), language.lower())
    lines = split_lines(text)
    defs = _python_defs(text, lines) if lang == "python" else None
    if defs is None and lang in _PATTERNS:
        defs = _regex_defs(lines, lang, 0, len(lines), nested=False)
    if defs is None:
        return [Chunk(chunk.title, chunk.content, "code") for chunk in chunk_text(text, max_bytes)]
    leaders = _LEADERS[lang]
    chunks: list[Chunk] = []
    for segment in _layout(lines, defs, 0, len(lines), MODULE_TITLE, leaders):
        _emit(lines, segment, max_bytes, leaders, chunks)
    return chunks


def _python_defs(text: str, lines: Sequence[str]) -> list[_Def] | None:
    # ast also ends lines at a lone "\r"; our line numbers would disagree with its own.
    if "\r" in text.replace("\r\n", ""):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # not Python after all, or broken: the regex still finds the defs
    return _ast_defs(tree.body, lines, 0, "")


def _ast_defs(body: list[ast.stmt], lines: Sequence[str], floor: int, prefix: str) -> list[_Def]:
    defs: list[_Def] = []
    for node in body:
        end = node.end_lineno or node.lineno
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            keyword = {ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def"}.get(type(node), "class")
            title = f"{prefix}{keyword} {node.name}"
            members = _ast_defs(node.body, lines, node.lineno, f"{title} > ") if keyword == "class" else []
            defs.append(_Def(_attach_leaders(lines, first, floor, ("#",)), end, title, members))
        floor = end  # comments attach to the next definition, never across code
    return defs


def _regex_defs(lines: Sequence[str], lang: str, lo: int, hi: int, *, nested: bool, prefix: str = "") -> list[_Def]:
    """Definitions found by regex in [lo, hi): at column 0, or (nested) at the shallowest indent."""
    found: list[tuple[int, int, str]] = []
    for index in range(lo, hi):
        body = lines[index].lstrip(" \t")
        indent = len(lines[index]) - len(body)
        if (indent > 0) == nested and (title := _match(lang, body)):
            found.append((index, indent, title))
    if nested and found:
        depth = min(indent for _, indent, _ in found)
        found = [entry for entry in found if entry[1] == depth]
    starts: list[int] = []
    floor = lo
    for index, _, _ in found:
        starts.append(_attach_leaders(lines, index, floor, _LEADERS[lang]))
        floor = index + 1
    defs: list[_Def] = []
    for number, (index, _, title) in enumerate(found):
        end = starts[number + 1] if number + 1 < len(found) else hi
        members = [] if nested else _regex_defs(lines, lang, index + 1, end, nested=True, prefix=f"{title} > ")
        defs.append(_Def(starts[number], end, prefix + title, members))
    return defs


def _match(lang: str, body: str) -> str:
    for pattern in _PATTERNS[lang]:
        found = pattern.match(body)
        if found:
            name = found["name"].strip()
            if found.groupdict().get("recv"):  # a Go method: name it Type.Method
                receiver = found["recv"].split()[-1].lstrip("*").split("[")[0]
                name = f"{receiver}.{name}"
            return f"{found['kw']} {name}".strip()
    return ""


def _attach_leaders(lines: Sequence[str], first: int, floor: int, leaders: tuple[str, ...]) -> int:
    """Move a definition's start up over the comment and decorator lines directly above it."""
    start = first
    while start > floor and lines[start - 1].strip().startswith(leaders):
        start -= 1
    return start


def _layout(
    lines: Sequence[str], defs: list[_Def], lo: int, hi: int, gap_title: str, leaders: tuple[str, ...]
) -> list[_Def]:
    """Definitions and the gaps between them, covering [lo, hi) exactly.

    A gap of only comments joins the definition below it (or above, at the end): a section
    banner or a commented-out helper belongs with code, not in a chunk of its own.
    """
    segments: list[_Def] = []
    cursor = lo
    for definition in defs:
        if definition.start > cursor:
            segments.append(_Def(cursor, definition.start, gap_title, gap=True))
        segments.append(definition)
        cursor = definition.end
    if cursor < hi:
        segments.append(_Def(cursor, hi, gap_title, gap=True))
    merged: list[_Def] = []
    for index, segment in enumerate(segments):
        following = segments[index + 1] if index + 1 < len(segments) else None
        if segment.gap and _only_comments(lines[segment.start : segment.end], leaders):
            if following is not None and not following.gap:
                following.start = segment.start
                continue
            if merged and not merged[-1].gap:
                merged[-1].end = segment.end
                continue
        merged.append(segment)
    return merged


def _only_comments(lines: Sequence[str], leaders: tuple[str, ...]) -> bool:
    return all(is_blank(line) or line.strip().startswith(leaders) for line in lines)


def _emit(lines: Sequence[str], segment: _Def, max_bytes: int, leaders: tuple[str, ...], out: list[Chunk]) -> None:
    text = "".join(lines[segment.start : segment.end])
    if utf8_len(text) <= max_bytes:
        if content := trim(text):
            out.append(Chunk(segment.title, content, "code"))
        return
    if segment.members:
        for part in _layout(lines, segment.members, segment.start, segment.end, segment.title, leaders):
            _emit(lines, part, max_bytes, leaders, out)
        return
    parts = [content for part in pack_lines(lines[segment.start : segment.end], max_bytes) if (content := trim(part))]
    for number, content in enumerate(parts, 1):
        suffix = f" (part {number})" if number > 1 else ""
        out.append(Chunk(segment.title + suffix, content, "code"))
