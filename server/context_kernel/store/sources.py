"""The sources table: a source's row, what indexing one is made of, writing it with its chunks, deleting
sources with theirs, and the words a source's name offers a search.

The knowledge repository (knowledge.py) reads and scopes them; retention deletes through
`delete_sources_where` too, so the full-text indexes always lose a source's chunks with it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy import Connection, Engine, text

from ..knowledge.model import Chunk
from .db import write


@dataclass(frozen=True)
class SourceRow:
    id: int
    label: str
    kind: str
    origin: str | None
    content_hash: str | None
    mtime: float | None
    bytes: int
    chunk_count: int
    code_chunks: int
    session_id: str | None
    project_dir: str | None
    indexed_at: float


@dataclass(frozen=True)
class SourceSpec:
    label: str
    kind: str
    chunks: Sequence[Chunk]
    origin: str | None = None
    content_hash: str | None = None
    mtime: float | None = None
    size: int = 0
    session_id: str | None = None
    project_dir: str | None = None


def owned(spec: SourceSpec, project: str) -> SourceSpec:
    """A spec filed under the repository's project unless it names its own (hook memory's sessions)."""
    return spec if spec.project_dir is not None else replace(spec, project_dir=project)


def write_source(conn: Connection, spec: SourceSpec) -> SourceRow:
    """Index chunks under the spec's label in its project, replacing whatever the label held there."""
    delete_sources_where(conn, "label = :label AND project_dir IS :project",
                         {"label": spec.label, "project": spec.project_dir})
    chunks = spec.chunks
    result = conn.execute(text(
        "INSERT INTO sources (label, kind, origin, content_hash, mtime, bytes, chunk_count, code_chunks, "
        "session_id, project_dir, indexed_at) VALUES (:label, :kind, :origin, :hash, :mtime, :bytes, "
        ":count, :code, :session, :project, :now)"), {
        "label": spec.label, "kind": spec.kind, "origin": spec.origin, "hash": spec.content_hash,
        "mtime": spec.mtime, "bytes": spec.size, "count": len(chunks), "code": sum(c.kind == "code" for c in chunks),
        "session": spec.session_id, "project": spec.project_dir, "now": time.time(),
    })
    source_id = int(result.lastrowid)
    if chunks:
        # The driver's executemany with plain tuples: SQLAlchemy's text() builds a parameter dict per
        # row, a fifth of the write's time for a large document.
        conn.exec_driver_sql(
            "INSERT INTO chunks (source_id, seq, title, content, kind) VALUES (?, ?, ?, ?, ?)",
            [(source_id, i, c.title, c.content, c.kind) for i, c in enumerate(chunks)])
        # The trigram index follows in catch_up_trigram (migration 004 says why).
        conn.execute(text("INSERT INTO chunks_porter(rowid, title, content) SELECT id, title, content FROM chunks "
                          "WHERE source_id = :sid"), {"sid": source_id})
    row = conn.execute(text("SELECT * FROM sources WHERE id = :id"), {"id": source_id}).mappings().one()
    return SourceRow(**row)


def delete_sources_where(conn: Connection, where: str, params: dict[str, object]) -> int:
    """Delete the sources matching a WHERE clause (our own SQL, never user text) with their chunks."""
    # Chunks first, explicitly, so the FTS delete triggers run for every row.
    ids = [r[0] for r in conn.execute(text(f"SELECT id FROM sources WHERE {where}"), params)]
    for sid in ids:
        conn.execute(text("DELETE FROM chunks WHERE source_id = :id"), {"id": sid})
        conn.execute(text("DELETE FROM sources WHERE id = :id"), {"id": sid})
    return len(ids)


def delete_older_than(engine: Engine, cutoff: float, kind: str) -> int:
    """Remove sources of `kind` indexed before `cutoff` (fetched pages are kept 14 days)."""
    with write(engine) as conn:
        return delete_sources_where(conn, "indexed_at < :cutoff AND kind = :kind", {"cutoff": cutoff, "kind": kind})


_GENERIC_NAMES = frozenset({"index", "readme", "main", "mod", "lib", "page", "default", "home", "intro",
                            "introduction", "overview", "contents", "toc", "output", "text"})
_EXTENSIONS = frozenset({"html", "htm", "xhtml", "md", "markdown", "mdx", "txt", "text", "rst", "adoc", "log", "json",
                         "jsonl", "ndjson", "yaml", "yml", "toml", "csv", "tsv", "xml", "ipynb", "gz", "py", "js",
                         "ts", "go", "rs", "rb", "c", "h", "java", "sh", "out"})
_NAME_PART = re.compile(r"[^\W_]+")


def name_words(label: str) -> set[str]:
    """The words that name a source: its file name's, without extensions and section numbers (`sort.1.txt`),
    or its folder's when the file is an `index.html`, a README, … (lower case)."""
    parts = [p for p in re.split(r"[/\\]", label.split("?", 1)[0].rstrip("/")) if p]
    if not parts:
        return set()
    base = parts[-1].lower()
    if "." in base and base.rsplit(".", 1)[1] in _EXTENSIONS:
        base = base.rsplit(".", 1)[0]
    while "." in base and base.rsplit(".", 1)[1].isdigit():  # a man page's section: `umount.8`
        base = base.rsplit(".", 1)[0]
    if base in _GENERIC_NAMES and len(parts) > 1:
        base = parts[-2].lower()
    return {w for w in _NAME_PART.findall(base) if len(w) >= 2 and not w.isdigit()}
