"""The indexing path of the knowledge service: text, caller-made chunks, a file or a directory tree into
the index, and file sources re-indexed or dropped when a search finds them changed.

SQL runs on the store's worker thread; reading, walking, hashing and chunking files run on anyio's
worker threads, so the database thread only ever waits for SQLite.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from ..activity import doing
from ..metering import count, metering
from ..paths import resolve_in_project
from ..security.call_guard import DenyGuard
from ..store.db import Database
from ..store.indexed_dirs import IndexedDirRepository
from ..store.knowledge import KnowledgeRepository
from ..store.sources import SourceRow, SourceSpec
from .model import Chunk
from .new_files import MAX_WATCHED_FILES, NewFiles, added_files
from .site_sections import SiteSections

BATCH_BYTES = 4 * 1024 * 1024


@dataclass
class IndexReport:
    sources: list[SourceRow] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    root_label: str = ""
    removed: list[str] = field(default_factory=list)
    """Labels of files indexed from this directory before that this walk no longer covers."""

    @property
    def sections(self) -> int:
        return sum(s.chunk_count for s in self.sources)

    @property
    def code_sections(self) -> int:
        return sum(s.code_chunks for s in self.sources)


class Indexer:
    """Everything that enters the knowledge base goes through here (the service hands its calls on).

    `indexed` runs after each indexing call, before the trigram catch-up is queued: the service
    wakes semantic recall's background embedder with it.
    """

    def __init__(self, *, db: Database, repo: KnowledgeRepository, project_dir: Path, guard: DenyGuard | None = None,
                 spawn: Callable[[Callable[[], Coroutine[Any, Any, None]]], None] | None = None,
                 indexed: Callable[[], None] | None = None) -> None:
        self._site_sections = SiteSections()
        self._db = db
        self._repo = repo
        self._project_dir = project_dir
        self._guard = guard
        self._spawn = spawn
        self._indexed = indexed
        self._catch_up_queued = False
        self._dirs = IndexedDirRepository(repo.engine)
        self._new_files = NewFiles()

    async def index_text(self, *, label: str, text: str, name: str = "", kind: str = "text",
                         origin: str | None = None, session_id: str | None = None,
                         mtime: float | None = None) -> SourceRow:
        """Secrets in `text` are replaced before it is chunked (`spec`), whatever it came from."""
        spec = await anyio.to_thread.run_sync(self.spec, label, text, name, kind, origin, session_id, mtime)
        row = (await self._db.run(self._repo.replace_sources, [spec]))[0]
        count(bytes_indexed=row.bytes, source=row.label)
        self._trigram_later()
        return row

    def _trigram_later(self) -> None:
        """Build the trigram index (and the vectors) of what was just indexed after the reply."""
        if self._indexed is not None:
            self._indexed()  # wakes the background embedder; never waits for it
        self._trigram_catch_up()

    def _trigram_catch_up(self) -> None:
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

    def spec(self, label: str, text: str, name: str, kind: str, origin: str | None, session_id: str | None,
             mtime: float | None) -> SourceSpec:
        """Blocking (a worker thread): the source `text` makes, chunked with its secrets replaced."""
        # Imported where indexing needs them: a new server's first search is answered before they are (app.py).
        from ..security.redact import STORE_WHOLE_LIMIT, redact_output
        from .chunking import chunk_document

        data = text.encode("utf-8", "replace")  # hashed as read: the staleness sweep compares the file's bytes
        # Nothing enters the index with its secrets.
        chunks = chunk_document(redact_output(text, whole_limit=STORE_WHOLE_LIMIT), name=name)
        if kind == "fetch":
            chunks = self._site_sections.first_copies(origin, label, chunks)
        return SourceSpec(label=label, kind=kind, chunks=chunks, origin=origin,
                          content_hash="sha256:" + hashlib.sha256(data).hexdigest(), mtime=mtime, size=len(data),
                          session_id=session_id, project_dir=str(self._project_dir))

    async def index_chunks(self, *, label: str, chunks: list[Chunk], text: str, kind: str,
                           session_id: str | None = None, origin: str | None = None,
                           project_dir: str | None = None) -> SourceRow:
        """Index chunks made by the caller (batch outputs: one titled group per command; a session's
        hook events, filed under the project the hooks saw), their secrets replaced first."""
        chunks, text = await anyio.to_thread.run_sync(_redacted_chunks, chunks, text)
        data = text.encode("utf-8", "replace")
        digest = await anyio.to_thread.run_sync(lambda: hashlib.sha256(data).hexdigest())
        spec = SourceSpec(label=label, kind=kind, chunks=chunks, origin=origin, size=len(data),
                          content_hash="sha256:" + digest, session_id=session_id,
                          project_dir=project_dir or str(self._project_dir))
        row = (await self._db.run(self._repo.replace_sources, [spec]))[0]
        count(bytes_indexed=row.bytes, source=row.label)
        self._trigram_later()
        return row

    async def index_path(self, path: str, *, source: str | None = None, include: list[str] | None = None,
                         exclude: list[str] | None = None, max_depth: int | None = None, max_files: int = 1000,
                         respect_gitignore: bool = True, session_id: str | None = None) -> IndexReport:
        if self._guard is not None:
            self._guard.check_path(path)
        real = resolve_in_project(self._project_dir, path, want="any", tool="ctx_index")
        report = IndexReport()
        if real.is_file():
            label = source or self._relative(real)
            report.root_label = label
            report.sources.append(await self._index_file(real, label, session_id))
            count(bytes_in=report.sources[-1].bytes)  # index_text counted it as indexed
            return report
        from .walk import walk  # see spec

        doing(f"listing the files under {path}")
        found = await anyio.to_thread.run_sync(lambda: walk(real, include=include, exclude=exclude,
                                                            max_depth=max_depth, max_files=max_files,
                                                            respect_gitignore=respect_gitignore))
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
        sizes = await anyio.to_thread.run_sync(lambda: [f.stat().st_size for f, _ in labelled])
        for done, ((file, label), file_size) in enumerate(zip(labelled, sizes, strict=True)):
            batch.append((file, label))
            size += file_size
            if size >= BATCH_BYTES:
                doing(f"indexing {path}: {done + 1 - len(batch)} of {len(labelled)} files done")
                report.sources += await self.index_files(batch, session_id)
                batch, size = [], 0
        if batch:
            report.sources += await self.index_files(batch, session_id)
        if not any(why.startswith("over max_files") for why in report.skipped):
            # A narrower include/exclude (or a deleted file) must not leave the old files searchable.
            # A walk cut short by max_files did not look at every file, so it removes nothing.
            report.removed = await self._prune_under(real, {s.label for s in report.sources})
            if len(labelled) <= MAX_WATCHED_FILES:  # a search picks up the files added later (new_files.py)
                options = {"include": include, "exclude": exclude, "max_depth": max_depth,
                           "respect_gitignore": respect_gitignore}
                await self._db.run(self._dirs.remember, str(self._project_dir),
                                   str(real), source or "", options, session_id)
        indexed = sum(s.bytes for s in report.sources)
        count(bytes_in=indexed)
        for s in report.sources:
            count(bytes_indexed=s.bytes, source=s.label)
        self._trigram_later()
        return report

    async def index_files(self, files: list[tuple[Path, str]], session_id: str | None) -> list[SourceRow]:
        """One batch of files (path, label) in one transaction; the caller counts and catches up."""
        def specs() -> list[SourceSpec]:
            made = []
            for path, label in files:
                text = path.read_bytes().decode("utf-8", "replace")
                made.append(self.spec(label, text, path.name, "file", str(path), session_id, path.stat().st_mtime))
            return made

        return await self._db.run(self._repo.replace_sources, await anyio.to_thread.run_sync(specs))

    async def _index_file(self, path: Path, label: str, session_id: str | None) -> SourceRow:
        data, mtime = await anyio.to_thread.run_sync(lambda: (path.read_bytes(), path.stat().st_mtime))
        return await self.index_text(label=label, text=data.decode("utf-8", "replace"), name=path.name,
                                     kind="file", origin=str(path), session_id=session_id, mtime=mtime)

    async def _prune_under(self, root: Path, kept: set[str]) -> list[str]:
        rows = await self._db.run(self._repo.sources, None, ["file"])
        prefix = str(root) + os.sep
        gone = [r.label for r in rows if r.origin and r.origin.startswith(prefix) and r.label not in kept]
        if gone:
            await self._db.run(self._repo.delete_sources, gone)
        return gone

    def _relative(self, path: Path) -> str:
        root = self._project_dir.resolve()
        return "." if path == root else str(path.relative_to(root))

    async def pick_up_new_files(self, session_id: str | None) -> list[str]:
        """Index the files added to the project's indexed directories since (knowledge/new_files.py): at most once
        every few seconds per directory. Returns their labels."""
        dirs = self._new_files.due(await self._db.run(self._dirs.of_project, str(self._project_dir)))
        if not dirs:
            return []
        known = {r.origin for r in await self._db.run(self._repo.file_sources, None) if r.origin}
        added = await anyio.to_thread.run_sync(added_files, dirs, known, self._project_dir)
        if self._guard is not None:
            added = [a for a in added if self._guard.path_denied_by(str(a[0])) is None]
        if not added:
            return []
        with metering() as inner:  # indexed on the search's time, not taken in by it (as apply_stale)
            rows = await self.index_files([(path, label) for path, label, _ in added], session_id)
        count(bytes_indexed=inner.bytes_indexed)
        self._trigram_later()
        return [r.label for r in rows]

    async def apply_stale(self, changed: list[tuple[SourceRow, str, float]],
                          gone: list[SourceRow]) -> tuple[list[str], list[str]]:
        """Re-index file sources whose file changed since they were indexed and drop those whose file
        is gone (found by the sweep at search time): (re-indexed labels, dropped labels)."""
        for row, text, mtime in changed:
            assert row.origin is not None
            # Re-indexed on the search's time, but not taken in by it: indexed, under no source of its own.
            with metering() as inner:
                await self.index_text(label=row.label, text=text, name=Path(row.origin).name, kind="file",
                                      origin=row.origin, session_id=row.session_id, mtime=mtime)
            count(bytes_indexed=inner.bytes_indexed)
        if gone:
            await self._db.run(self._repo.delete_sources, [row.label for row in gone])
        return [row.label for row, _, _ in changed], [row.label for row in gone]


def _redacted_chunks(chunks: list[Chunk], text: str) -> tuple[list[Chunk], str]:
    """Blocking: a worker thread."""
    from ..security.redact import STORE_WHOLE_LIMIT, redact_output  # see Indexer.spec

    clean = [replace(c, title=redact_output(c.title), content=redact_output(c.content, whole_limit=STORE_WHOLE_LIMIT))
             for c in chunks]
    return clean, redact_output(text, whole_limit=STORE_WHOLE_LIMIT)
