"""The knowledge service behind ctx_index and ctx_search (and indexing of large outputs, fetched
pages, batch results and hook events: everything that enters the knowledge base goes through it).

SQL runs on the store's worker thread; reading, walking, hashing and chunking files run on anyio's
worker threads, so the database thread only ever waits for SQLite. A search is one hop there.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import InvalidRequest
from ..metering import count, count_back, metering
from ..paths import resolve_in_project
from ..security.call_guard import DenyGuard
from ..store.db import Database
from ..store.knowledge import KnowledgeRepository, SourceRow, SourceSpec, delete_older_than
from .freshness import changed_files
from .fusion import BestWindows, hybrid_search
from .model import Chunk
from .reply import render, snippet_chars
from .search import LexicalRanking, SearchResult, rank_lexical, search, spelled_query
from .site_sections import SiteSections

if TYPE_CHECKING:  # numpy and the model: only when the semantic extra is installed and on
    from ..semantic.index import DenseHit
    from ..semantic.service import SemanticRecall

MAX_QUERIES = 10
# What ctx_search looks through: this project's sources, or every project's in the data dir.
SCOPES = ("project", "all")
BATCH_BYTES = 4 * 1024 * 1024
# How many nearest chunks semantic recall hands to fusion per query.
DENSE_DEPTH = 30
STARTING_NOTE = ("Semantic search covers it in a few seconds (the server is still starting it); until then "
                 "ctx_search finds it by words.")
LOADING_NOTE = "(ranked by words only: semantic search is still loading its vectors, which takes seconds)"
PENDING_NOTE = ("(ranked by words only: some sections are still being embedded for semantic search, "
                "which takes seconds; ask again for meaning-based ranking)")


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


@dataclass
class SearchReply:
    text: str
    hits: int
    sent_bytes: int
    back: dict[str, int] = field(default_factory=dict)
    """bytes of the hits sent, per source label (what ctx_stats nets out of 'kept out')"""


Ingest = Callable[[], Awaitable[object]]


class KnowledgeService:
    def __init__(self, *, db: Database, repo: KnowledgeRepository, project_dir: Path, search_budget: int,
                 guard: DenyGuard | None = None,
                 spawn: Callable[[Callable[[], Coroutine[Any, Any, None]]], None] | None = None,
                 forgotten_before: Callable[[], float] | None = None,
                 semantic: SemanticRecall | None = None) -> None:
        self._ingest: Ingest | None = None
        # Sections sent before this time count as forgotten (a compaction, the resend period).
        self._forgotten_before = forgotten_before or (lambda: 0.0)
        self._semantic = semantic
        self._semantic_coming = False
        self._semantic_attached = anyio.Event()
        self._site_sections = SiteSections()
        self._db = db
        self._repo = repo
        self._project_dir = project_dir
        self._budget = search_budget
        self._guard = guard
        self._spawn = spawn
        self._catch_up_queued = False
        self._calls: dict[str, int] = {}

    def semantic_loading(self) -> None:
        """Semantic recall is being set up (its imports and table take a few hundred ms at start):
        searches meanwhile rank by words and say so."""
        self._semantic_coming = True

    def attach_semantic(self, semantic: SemanticRecall | None) -> None:
        self._semantic = semantic
        self._semantic_coming = False
        self._semantic_attached.set()

    async def semantic_line(self) -> str:
        """ctx_stats' line on semantic search: off, starting, or the sections still waiting for vectors."""
        if self._semantic is not None:
            return await self._semantic.backlog_line()
        if self._semantic_coming:
            return "Semantic search: starting (searches rank by words until it has loaded)."
        return "Semantic search: off (the semantic extra is not installed or CONTEXT_KERNEL_SEMANTIC=0); words only."

    async def semantic_started(self) -> SemanticRecall | None:
        """Semantic recall once it has started (None: off, missing or broken)."""
        if self._semantic_coming:
            await self._semantic_attached.wait()
        return self._semantic

    def ingest_before_reads(self, ingest: Ingest) -> None:
        """Hook events spooled since the last call become searchable before any search (wired by the app)."""
        self._ingest = ingest

    # -- indexing ------------------------------------------------------------------------------

    async def index(self, *, content: str | None = None, path: str | None = None, source: str | None = None,
                    include: list[str] | None = None, exclude: list[str] | None = None, max_depth: int | None = None,
                    max_files: int = 1000, respect_gitignore: bool = True,
                    session_id: str | None = None) -> IndexReport:
        """ctx_index: text under a label, or a file, or a directory tree."""
        if (content is None) == (path is None):
            raise InvalidRequest("give exactly one of content or path",
                                 hint="content= for text you have, path= for a file or directory in the project")
        if content is None:
            assert path is not None
            return await self.index_path(path, source=source, include=include, exclude=exclude, max_depth=max_depth,
                                         max_files=max_files, respect_gitignore=respect_gitignore,
                                         session_id=session_id)
        label = source or "text-" + hashlib.sha256(content.encode("utf-8", "replace")).hexdigest()[:10]
        row = await self.index_text(label=label, text=content, session_id=session_id)
        return IndexReport(sources=[row], root_label=label)

    async def index_text(self, *, label: str, text: str, name: str = "", kind: str = "text",
                         origin: str | None = None, session_id: str | None = None,
                         mtime: float | None = None) -> SourceRow:
        """Secrets in `text` are replaced before it is chunked (`_spec`), whatever it came from."""
        spec = await anyio.to_thread.run_sync(self._spec, label, text, name, kind, origin, session_id, mtime)
        row = (await self._db.run(self._repo.replace_sources, [spec]))[0]
        count(bytes_indexed=row.bytes, source=row.label)
        self._trigram_later()
        return row

    def _trigram_later(self) -> None:
        """Build the trigram index (and the vectors) of what was just indexed after the reply."""
        if self._semantic is not None:
            self._semantic.indexed()  # wakes the background embedder; never waits for it
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

    def _spec(self, label: str, text: str, name: str, kind: str, origin: str | None, session_id: str | None,
              mtime: float | None) -> SourceSpec:
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

    async def semantic_coverage(self, labels: list[str]) -> str | None:
        """For ctx_index's reply: when semantic search covers these sources (None: semantic is not on)."""
        if self._semantic is None and self._semantic_coming:
            return STARTING_NOTE
        return await self._semantic.coverage(labels) if self._semantic is not None else None

    async def stem_frequencies(self, stems: list[str]) -> dict[str, int]:
        return await self._db.run(self._repo.stem_frequencies, stems)

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
        from .walk import walk  # see _spec

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
        for (file, label), file_size in zip(labelled, sizes, strict=True):
            batch.append((file, label))
            size += file_size
            if size >= BATCH_BYTES:
                report.sources += await self._index_files(batch, session_id)
                batch, size = [], 0
        if batch:
            report.sources += await self._index_files(batch, session_id)
        if not any(why.startswith("over max_files") for why in report.skipped):
            # A narrower include/exclude (or a deleted file) must not leave the old files searchable.
            # A walk cut short by max_files did not look at every file, so it removes nothing.
            report.removed = await self._prune_under(real, {s.label for s in report.sources})
        indexed = sum(s.bytes for s in report.sources)
        count(bytes_in=indexed)
        for s in report.sources:
            count(bytes_indexed=s.bytes, source=s.label)
        self._trigram_later()
        return report

    async def _index_files(self, files: list[tuple[Path, str]], session_id: str | None) -> list[SourceRow]:
        def specs() -> list[SourceSpec]:
            made = []
            for path, label in files:
                text = path.read_bytes().decode("utf-8", "replace")
                made.append(self._spec(label, text, path.name, "file", str(path), session_id, path.stat().st_mtime))
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

    async def _apply_stale(self, changed: list[tuple[SourceRow, str, float]],
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

    async def purge(self, *, scope: str, session_id: str) -> dict[str, int]:
        if scope == "project":
            return await self._db.run(lambda: self._repo.purge(project_dir=str(self._project_dir)))
        owner = await self._db.run(self._repo.session_project, session_id)
        if owner is not None and owner != str(self._project_dir):
            raise InvalidRequest(f"session {session_id} worked in another project ({owner}); nothing deleted",
                                 hint="purge it from a server started in that project, or leave sessionId out "
                                      "to purge this session")
        self._calls.pop(session_id, None)
        return await self._db.run(lambda: self._repo.purge(session_id=session_id))

    async def cached_source(self, label: str) -> SourceRow | None:
        """The source indexed under `label` (the fetch cache asks before refetching a page)."""
        return await self._db.run(self._repo.get_source, label)

    async def remove_older_than(self, cutoff: float, kind: str) -> int:
        """Drop sources of `kind` indexed before `cutoff` (fetched pages expire after 14 days)."""
        return await self._db.run(delete_older_than, self._db.engine, cutoff, kind)

    # -- search --------------------------------------------------------------------------------

    async def search(self, queries: list[str], *, session_id: str, source: str | None = None, limit: int = 3,
                     content_type: str | None = None, sort: str = "relevance", scope: str = "project") -> SearchReply:
        """`scope`: "project" searches this project's sources; "all" every project's in the data dir,
        each hit's label naming its project."""
        wanted = [q for q in queries if q.strip()][:MAX_QUERIES]
        if not wanted:
            raise InvalidRequest("queries is empty", hint="pass one or more search strings: queries=[\"...\"]")
        if scope not in SCOPES:
            raise InvalidRequest(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}",
                                 hint='scope="project" (the default) or scope="all" to search every project')
        if self._ingest is not None:
            await self._ingest()
        repo = self._repo if scope == "project" else self._repo.everywhere()
        # Freshness is the current project's: another project's files are its own server's to re-index.
        watched = await self._db.run(self._repo.file_sources, source)
        notes: list[str] = []
        chars = snippet_chars(self._budget, limit)

        def fuse(q: str, dense: list[DenseHit], windows: BestWindows, lexical: LexicalRanking | None) -> SearchResult:
            return hybrid_search(repo, q, dense, limit=limit, source=source, kind=content_type, sort=sort,
                                 snippet_chars=chars, best_windows=windows, lexical=lexical)

        def lexical_hop(lexicals: list[LexicalRanking | None] | None = None) -> list[SearchResult]:
            return [search(repo, q, limit=limit, source=source, kind=content_type, sort=sort,
                           snippet_chars=chars, lexical=lexicals[i] if lexicals else None)
                    for i, q in enumerate(wanted)]

        async def ranked() -> list[SearchResult]:
            if self._semantic is None:
                if self._semantic_coming and LOADING_NOTE not in notes:
                    notes.append(LOADING_NOTE)
                return await self._db.run(lexical_hop)
            results, note = await self._hybrid(self._semantic, repo, wanted, source, content_type, lexical_hop, fuse)
            if note and note not in notes:
                notes.append(note)
            return results

        # Indexed files are checked for changes (stat calls on a thread) while the search runs: with
        # thousands of files that is ~10 ms, paid only when one changed (the search then runs again).
        sweep = asyncio.get_running_loop().run_in_executor(None, changed_files, watched) if watched else None
        try:
            results = await ranked()
        finally:
            # The search's own error, if any, is what the caller hears; the sweep's result is then unwanted.
            stale = await sweep if sweep is not None else ([], [])
        if stale[0] or stale[1]:
            reindexed, dropped = await self._apply_stale(*stale)
            if reindexed:
                notes.append(f"(re-indexed {len(reindexed)} changed file(s) first: {', '.join(reindexed[:5])})")
            if dropped:
                notes.append(f"(dropped {len(dropped)} deleted file(s) from the index: {', '.join(dropped[:5])})")
            results = await ranked()
        call_no = self._calls[session_id] = self._calls.get(session_id, 0) + 1
        since = self._forgotten_before()

        def rendered() -> SearchReply:
            # What this session was already sent, and the record of what it is sent now.
            already = self._repo.sent(session_id, [h.chunk.id for r in results for h in r.hits], since=since)
            text, sent_ids, shown, back = render(results, already, self._budget, notes, content_type,
                                                 projects=scope == "all")
            self._repo.mark_sent(session_id, sent_ids, call_no)
            return SearchReply(text=text, hits=shown, sent_bytes=len(text.encode()), back=back)

        reply = await self._db.run(rendered)
        count_back(reply.back)
        return reply

    async def _hybrid(self, semantic: SemanticRecall, repo: KnowledgeRepository, wanted: list[str],
                      source: str | None, kind: str | None,
                      lexical_hop: Callable[[list[LexicalRanking | None]], list[SearchResult]],
                      fuse: Callable[[str, list[DenseHit], BestWindows, LexicalRanking | None], SearchResult],
                      ) -> tuple[list[SearchResult], str | None]:
        """Words and meaning: the lexical rankings on the database thread while the model embeds the
        queries (so neither waits for the other), then dense recall and fusion in one more hop.
        Also a note when the ranking is by words only (vectors still loading, or sections without them)."""
        # A task, not a task group: errors reach the caller as themselves, not in an ExceptionGroup.
        embedding = asyncio.ensure_future(semantic.embed_queries(wanted))
        def lexical_and_coverage() -> tuple[list[LexicalRanking | None], bool]:
            return [rank_lexical(repo, q, source=source, kind=kind) for q in wanted], semantic.covered()

        try:
            lexicals, covered = await self._db.run(lexical_and_coverage)
        except BaseException:
            embedding.cancel()
            raise
        vectors = await embedding
        if not semantic.ready:  # the server just started and is still loading the vectors: words only
            return await self._db.run(lexical_hop, lexicals), LOADING_NOTE
        if vectors is None or not covered:
            # Nothing embedded yet, or not everything: a section with a vector is never ranked against
            # one without (a partly embedded index ranked worse than words alone). Words only.
            return await self._db.run(lexical_hop, lexicals), PENDING_NOTE if vectors is not None else None
        # A respelled query is embedded again as corrected: the model must read the words meant.
        respelled = [i for i, lexical in enumerate(lexicals) if lexical is not None and lexical.corrections]
        if respelled:
            spelled = [spelled_query(wanted[i], lexical) for i in respelled if (lexical := lexicals[i]) is not None]
            for i, vector in zip(respelled, await semantic.embed_queries(spelled) or [], strict=False):
                vectors[i] = vector
        found = vectors
        return await self._db.run(lambda: [fuse(q, semantic.dense(found[i], DENSE_DEPTH, source, kind,
                                                                  repo.own_chunk_ids()),
                                                semantic.best_windows(found[i]), lexicals[i])
                                           for i, q in enumerate(wanted)]), None


def _redacted_chunks(chunks: list[Chunk], text: str) -> tuple[list[Chunk], str]:
    """Blocking: a worker thread."""
    from ..security.redact import STORE_WHOLE_LIMIT, redact_output  # see KnowledgeService._spec

    clean = [replace(c, title=redact_output(c.title), content=redact_output(c.content, whole_limit=STORE_WHOLE_LIMIT))
             for c in chunks]
    return clean, redact_output(text, whole_limit=STORE_WHOLE_LIMIT)
