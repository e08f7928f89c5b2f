"""The knowledge service behind ctx_index and ctx_search (and indexing of large outputs).

Indexing and search run on the store's worker thread: chunking is cheap next to the inserts,
and one hop per call keeps the event loop free.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..metering import count
from ..paths import resolve_in_project
from ..security.call_guard import DenyGuard
from ..store.db import Database
from ..store.knowledge import KnowledgeRepository, SourceRow, SourceSpec
from .chunking import chunk_document
from .model import Chunk
from .search import SearchResult, search
from .walk import walk

MAX_QUERIES = 10
BATCH_BYTES = 4 * 1024 * 1024


@dataclass
class IndexReport:
    sources: list[SourceRow] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    root_label: str = ""

    @property
    def sections(self) -> int:
        return sum(s.chunk_count for s in self.sources)

    @property
    def code_sections(self) -> int:
        return sum(s.code_chunks for s in self.sources)


@dataclass
class SearchReply:
    text: str
    hits: int
    sent_bytes: int


class KnowledgeService:
    def __init__(self, *, db: Database, repo: KnowledgeRepository, project_dir: Path, search_budget: int,
                 guard: DenyGuard | None = None, spawn: Callable[[Callable[[], Awaitable[None]]], None] | None = None
                 ) -> None:
        self._db = db
        self._repo = repo
        self._project_dir = project_dir
        self._budget = search_budget
        self._guard = guard
        self._spawn = spawn
        self._catch_up_queued = False
        self._calls: dict[str, int] = {}

    # -- indexing ------------------------------------------------------------------------------

    async def index_text(self, *, label: str, text: str, name: str = "", kind: str = "text",
                         origin: str | None = None, session_id: str | None = None,
                         mtime: float | None = None) -> SourceRow:
        row = await self._db.run(self._index_sync, label, text, name, kind, origin, session_id, mtime)
        count(bytes_indexed=row.bytes)
        self._trigram_later()
        return row

    def _trigram_later(self) -> None:
        """Build the trigram index of what was just indexed after the reply, off the caller's time.

        One catch-up is queued at a time; it runs on the database thread, so a search queued
        behind it sees a complete index (and `match` catches up itself if nothing was queued).
        """
        if self._spawn is None or self._catch_up_queued:
            return
        self._catch_up_queued = True

        async def catch_up() -> None:
            self._catch_up_queued = False
            await self._db.run(self._repo.catch_up_trigram)

        self._spawn(catch_up)

    def _index_sync(self, label: str, text: str, name: str, kind: str, origin: str | None,
                    session_id: str | None, mtime: float | None) -> SourceRow:
        return self._repo.replace_sources([self._spec(label, text, name, kind, origin, session_id, mtime)])[0]

    def _spec(self, label: str, text: str, name: str, kind: str, origin: str | None, session_id: str | None,
              mtime: float | None) -> SourceSpec:
        data = text.encode("utf-8", "replace")
        return SourceSpec(label=label, kind=kind, chunks=chunk_document(text, name=name), origin=origin,
                          content_hash="sha256:" + hashlib.sha256(data).hexdigest(), mtime=mtime, size=len(data),
                          session_id=session_id, project_dir=str(self._project_dir))

    async def index_chunks(self, *, label: str, chunks: list[Chunk], text: str, kind: str,
                           session_id: str | None = None, origin: str | None = None) -> SourceRow:
        """Index chunks made by the caller (batch outputs: one titled group per command)."""
        data = text.encode("utf-8", "replace")
        spec = SourceSpec(label=label, kind=kind, chunks=chunks, origin=origin, size=len(data),
                          content_hash="sha256:" + hashlib.sha256(data).hexdigest(), session_id=session_id,
                          project_dir=str(self._project_dir))
        row = (await self._db.run(self._repo.replace_sources, [spec]))[0]
        count(bytes_indexed=row.bytes)
        self._trigram_later()
        return row

    async def stem_frequencies(self, stems: list[str]) -> dict[str, int]:
        return await self._db.run(self._repo.stem_frequencies, stems)

    async def index_path(self, path: str, *, source: str | None = None, include: list[str] | None = None,
                         exclude: list[str] | None = None, max_depth: int | None = None, max_files: int = 1000,
                         respect_gitignore: bool = True, session_id: str | None = None) -> IndexReport:
        if self._guard is not None:
            self._guard.check_path(path)
        real = resolve_in_project(self._project_dir, path, want="any")
        report = IndexReport()
        if real.is_file():
            label = source or self._relative(real)
            report.root_label = label
            report.sources.append(await self._index_file(real, label, session_id))
            count(bytes_in=report.sources[-1].bytes)  # index_text counted it as indexed
            return report
        found = await self._db.run(lambda: walk(real, include=include, exclude=exclude, max_depth=max_depth,
                                                max_files=max_files, respect_gitignore=respect_gitignore))
        report.skipped = found.skipped
        if self._guard is not None:
            # A directory may hold files a Read rule denies (`.env`): leave them out, and say so.
            allowed = [f for f in found.files if self._guard.path_denied_by(str(f)) is None]
            if len(allowed) < len(found.files):
                report.skipped = {**report.skipped, "denied by a Read rule": len(found.files) - len(allowed)}
            found.files[:] = allowed
        report.root_label = source or self._relative(real)
        labelled = [(f, f"{source}/{f.relative_to(real)}" if source else self._relative(f)) for f in found.files]
        # Files go in batches of a few MB per transaction: one FTS5 segment per batch, not per file.
        batch: list[tuple[Path, str]] = []
        size = 0
        for file, label in labelled:
            batch.append((file, label))
            size += file.stat().st_size
            if size >= BATCH_BYTES:
                report.sources += await self._db.run(self._index_files, batch, session_id)
                batch, size = [], 0
        if batch:
            report.sources += await self._db.run(self._index_files, batch, session_id)
        indexed = sum(s.bytes for s in report.sources)
        count(bytes_in=indexed, bytes_indexed=indexed)
        self._trigram_later()
        return report

    def _index_files(self, files: list[tuple[Path, str]], session_id: str | None) -> list[SourceRow]:
        specs = []
        for path, label in files:
            text = path.read_bytes().decode("utf-8", "replace")
            specs.append(self._spec(label, text, path.name, "file", str(path), session_id, path.stat().st_mtime))
        return self._repo.replace_sources(specs)

    async def _index_file(self, path: Path, label: str, session_id: str | None) -> SourceRow:
        data = await self._db.run(path.read_bytes)
        stat = path.stat()
        return await self.index_text(label=label, text=data.decode("utf-8", "replace"), name=path.name,
                                     kind="file", origin=str(path), session_id=session_id, mtime=stat.st_mtime)

    def _relative(self, path: Path) -> str:
        root = self._project_dir.resolve()
        return "." if path == root else str(path.relative_to(root))

    async def refresh_stale(self, source: str | None = None) -> list[str]:
        """Re-index file sources whose file changed since they were indexed (checked at search time)."""
        refreshed = []
        for row in await self._db.run(self._repo.sources, source, ["file"]):
            if not row.origin:
                continue
            try:
                mtime = os.stat(row.origin).st_mtime
            except OSError:
                continue  # deleted or unreadable: keep what was indexed
            if mtime == row.mtime:
                continue
            data = await self._db.run(Path(row.origin).read_bytes)
            digest = "sha256:" + hashlib.sha256(data.decode("utf-8", "replace").encode("utf-8", "replace")).hexdigest()
            if digest != row.content_hash:
                await self.index_text(label=row.label, text=data.decode("utf-8", "replace"), name=Path(row.origin).name,
                                      kind="file", origin=row.origin, session_id=row.session_id, mtime=mtime)
                refreshed.append(row.label)
        return refreshed

    async def purge(self, *, scope: str, session_id: str) -> dict[str, int]:
        if scope == "project":
            return await self._db.run(lambda: self._repo.purge(project_dir=str(self._project_dir)))
        self._calls.pop(session_id, None)
        return await self._db.run(lambda: self._repo.purge(session_id=session_id))

    # -- search --------------------------------------------------------------------------------

    async def search(self, queries: list[str], *, session_id: str, source: str | None = None, limit: int = 3,
                     content_type: str | None = None, sort: str = "relevance") -> SearchReply:
        refreshed = await self.refresh_stale(source)
        results = [await self._db.run(lambda q=q: search(self._repo, q, limit=limit, source=source,
                                                          kind=content_type, sort=sort))
                   for q in queries[:MAX_QUERIES]]
        call_no = self._calls[session_id] = self._calls.get(session_id, 0) + 1
        all_ids = [h.chunk.id for r in results for h in r.hits]
        already = await self._db.run(self._repo.sent, session_id, all_ids)
        text, sent_ids, shown = render(results, already, self._budget, refreshed)
        await self._db.run(self._repo.mark_sent, session_id, sent_ids, call_no)
        return SearchReply(text=text, hits=shown, sent_bytes=len(text.encode()))


def render(results: list[SearchResult], already: dict[int, int], budget: int,
           refreshed: list[str]) -> tuple[str, list[int], int]:
    """The reply: hits grouped by query, within `budget` bytes; chunks sent before are only named."""
    parts: list[str] = []
    if refreshed:
        parts.append(f"(re-indexed {len(refreshed)} changed file(s) first: {', '.join(refreshed[:5])})")
    used = sum(len(p.encode()) for p in parts)
    sent: list[int] = []
    seen_now: set[int] = set()
    shown = 0
    left_out = 0
    for result in results:
        header = f"## {result.query}"
        if result.corrections:
            header += "\n(no match for " + ", ".join(f"'{a}' — searched '{b}'" for a, b in result.corrections.items())
            header += ")"
        if not result.hits:
            header += "\n(no results)"
        block = [header]
        for hit in result.hits:
            c = hit.chunk
            where = f"{c.title} — source: {c.label}"
            if c.id in already or c.id in seen_now:
                when = f"search call {already[c.id]}" if c.id in already else "this reply"
                entry = f"### {where}\n(already sent in {when}; not repeated)"
            else:
                entry = f"### {where}\n{hit.snippet}"
            size = len(entry.encode()) + 1
            if used + size > budget and shown:
                left_out += 1
                continue
            block.append(entry)
            used += size
            shown += 1
            if c.id not in already and c.id not in seen_now:
                sent.append(c.id)
                seen_now.add(c.id)
        parts.append("\n".join(block))
        used += len(header.encode())
    if left_out:
        parts.append(f"[{left_out} more hit(s) left out to stay within {budget // 1024} KB: narrow with source= "
                     "or a more specific query]")
    return "\n\n".join(parts), sent, shown
