"""A plain single-table BM25 baseline for the retrieval benchmark.

One SQLite FTS5 table, default tokenizer (unicode61, no stemming):

    CREATE VIRTUAL TABLE docs USING fts5(title, content)

holding the same chunks as the knowledge base (its own chunker, `chunk_document`, when it can be
imported; otherwise `fallback_chunks` below, a simple split at markdown headings). A query is
every word of the question, each quoted, OR-ed together, ranked by `bm25(docs)` (lower is
better; both columns weigh 1.0). No stop words, stemming, typo correction or reranking: this is
what "just put it in FTS5" gives.

    index = BaselineIndex()
    index.add("py-httpx", chunks)                 # chunks: objects with .title/.content, or pairs
    index.search("httpx http2 install", limit=10) # -> [(source, title, content), ...]
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from typing import Any

# unicode61's idea of a word: runs of letters and digits (underscore separates).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
MAX_CHUNK_BYTES = 4096

try:  # the knowledge base's chunker, so both sides search exactly the same chunks
    from context_kernel.knowledge.chunking import chunk_document as _chunk_document
except Exception:  # noqa: BLE001 - not written yet, or broken: fall back and say so
    _chunk_document = None

CHUNKER = "context_kernel.knowledge.chunking.chunk_document" if _chunk_document else "fallback (markdown headings)"


def chunk(text: str, name: str) -> list[tuple[str, str]]:
    """(title, content) pairs of a document, with the project's chunker when available."""
    if _chunk_document is not None:
        return [(c.title, c.content) for c in _chunk_document(text, name=name)]
    return fallback_chunks(text)


def fallback_chunks(text: str, max_bytes: int = MAX_CHUNK_BYTES) -> list[tuple[str, str]]:
    """Split at markdown headings (title = heading breadcrumb), then at blank lines to stay under max_bytes.

    Headings inside fenced code blocks are ignored. Used only while the real chunker is missing.
    """
    sections: list[tuple[str, list[str]]] = []
    trail: list[tuple[int, str]] = []
    lines: list[str] = []
    title = ""
    fence = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
        m = _HEADING.match(line) if fence is None else None
        if m:
            if any(s.strip() for s in lines):
                sections.append((title, lines))
            level = len(m.group(1))
            trail = [(lv, t) for lv, t in trail if lv < level] + [(level, m.group(2))]
            title = " > ".join(t for _, t in trail)
            lines = [line]
        else:
            lines.append(line)
    if any(s.strip() for s in lines):
        sections.append((title, lines))

    out: list[tuple[str, str]] = []
    for sec_title, sec_lines in sections:
        part: list[str] = []
        size = 0
        for para in "\n".join(sec_lines).split("\n\n"):
            n = len(para.encode()) + 2
            if part and size + n > max_bytes:
                out.append((sec_title, "\n\n".join(part)))
                part, size = [], 0
            part.append(para)
            size += n
        if part and any(p.strip() for p in part):
            out.append((sec_title, "\n\n".join(part)))
    return out


def fts_query(query: str) -> str:
    """Every distinct word of the question, quoted, OR-ed: `"httpx" OR "http2" OR "install"`."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        seen.setdefault(word.lower(), None)
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in seen)


def _pair(chunk_: Any) -> tuple[str, str]:
    if isinstance(chunk_, tuple | list):
        return str(chunk_[0]), str(chunk_[1])
    return str(chunk_.title), str(chunk_.content)


class BaselineIndex:
    """One FTS5 table of chunks; `source` is kept in a side table keyed by the same rowid."""

    def __init__(self, path: str = ":memory:") -> None:
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(title, content)")
        self._db.execute("CREATE TABLE IF NOT EXISTS chunk_source (id INTEGER PRIMARY KEY, source TEXT NOT NULL)")

    def add(self, source: str, chunks: Iterable[Any]) -> int:
        """Index the chunks of one source; returns how many were added."""
        n = 0
        with self._db:
            for chunk_ in chunks:
                title, content = _pair(chunk_)
                cur = self._db.execute("INSERT INTO chunk_source (source) VALUES (?)", (source,))
                self._db.execute("INSERT INTO docs (rowid, title, content) VALUES (?, ?, ?)",
                                 (cur.lastrowid, title, content))  # fmt: skip
                n += 1
        return n

    def search(self, query: str, limit: int = 10) -> list[tuple[str, str, str]]:
        match = fts_query(query)
        if not match:
            return []
        rows = self._db.execute(
            "SELECT s.source, d.title, d.content FROM docs AS d JOIN chunk_source AS s ON s.id = d.rowid "
            "WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
            (match, limit),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def close(self) -> None:
        self._db.close()
