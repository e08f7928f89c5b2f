"""The knowledge service behind ctx_index and ctx_search (and indexing of large outputs, fetched
pages, batch results and hook events: everything that enters the knowledge base goes through it).

SQL runs on the store's worker thread; reading, walking, hashing and chunking files run on anyio's
worker threads, so the database thread only ever waits for SQLite. A search is one hop there.
The indexing path itself is the Indexer's (indexing.py); the service hands ctx_index's calls to it.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import InvalidRequest
from ..metering import count_back
from ..security.call_guard import DenyGuard
from ..store.db import Database
from ..store.knowledge import KnowledgeRepository
from ..store.sources import SourceRow, delete_older_than
from .freshness import changed_files
from .fusion import BestWindows, hybrid_search
from .indexing import Indexer, IndexReport
from .model import Chunk
from .reply import render, snippet_chars
from .search import LexicalRanking, SearchResult, rank_lexical, search, spelled_query

if TYPE_CHECKING:  # numpy and the model: only when the semantic extra is installed and on
    from ..semantic.index import DenseHit
    from ..semantic.service import SemanticRecall

MAX_QUERIES = 10
# What ctx_search looks through: this project's sources, or every project's in the data dir.
SCOPES = ("project", "all")
# How many nearest chunks semantic recall hands to fusion per query.
DENSE_DEPTH = 30
STARTING_NOTE = ("Semantic search covers it in a few seconds (the server is still starting it); until then "
                 "ctx_search finds it by words.")
LOADING_NOTE = "(ranked by words only: semantic search is still loading its vectors, which takes seconds)"
PENDING_NOTE = ("(ranked by words only: some sections are still being embedded for semantic search, "
                "which takes seconds; ask again for meaning-based ranking)")


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
        self._db = db
        self._repo = repo
        self._project_dir = project_dir
        self._budget = search_budget
        self._indexer = Indexer(db=db, repo=repo, project_dir=project_dir, guard=guard, spawn=spawn,
                                indexed=self._wake_embedder)
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
        """Secrets in `text` are replaced before it is chunked, whatever it came from."""
        return await self._indexer.index_text(label=label, text=text, name=name, kind=kind, origin=origin,
                                              session_id=session_id, mtime=mtime)

    async def index_chunks(self, *, label: str, chunks: list[Chunk], text: str, kind: str,
                           session_id: str | None = None, origin: str | None = None,
                           project_dir: str | None = None) -> SourceRow:
        """Index chunks made by the caller (batch outputs: one titled group per command; a session's
        hook events, filed under the project the hooks saw), their secrets replaced first."""
        return await self._indexer.index_chunks(label=label, chunks=chunks, text=text, kind=kind,
                                                session_id=session_id, origin=origin, project_dir=project_dir)

    async def index_path(self, path: str, *, source: str | None = None, include: list[str] | None = None,
                         exclude: list[str] | None = None, max_depth: int | None = None, max_files: int = 1000,
                         respect_gitignore: bool = True, session_id: str | None = None) -> IndexReport:
        """A file or a directory tree in the project, each file under its path (or under `source`)."""
        return await self._indexer.index_path(path, source=source, include=include, exclude=exclude,
                                              max_depth=max_depth, max_files=max_files,
                                              respect_gitignore=respect_gitignore, session_id=session_id)

    def _wake_embedder(self) -> None:
        """After each indexing call: what was just indexed waits for vectors (never waits for them)."""
        if self._semantic is not None:
            self._semantic.indexed()

    async def semantic_coverage(self, labels: list[str]) -> str | None:
        """For ctx_index's reply: when semantic search covers these sources (None: semantic is not on)."""
        if self._semantic is None and self._semantic_coming:
            return STARTING_NOTE
        return await self._semantic.coverage(labels) if self._semantic is not None else None

    async def stem_frequencies(self, stems: list[str]) -> dict[str, int]:
        return await self._db.run(self._repo.stem_frequencies, stems)

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
        added = await self._indexer.pick_up_new_files(session_id)
        # Freshness is the current project's: another project's files are its own server's to re-index.
        watched = await self._db.run(self._repo.file_sources, source)
        notes: list[str] = [f"(indexed {len(added)} file(s) added to indexed folders since: "
                            f"{', '.join(added[:5])})"] if added else []
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
            reindexed, dropped = await self._indexer.apply_stale(*stale)
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
            # The same text sent under another label (a file indexed twice) is named, not sent again.
            twins = self._repo.sent_twins(session_id, [(h.chunk.id, h.chunk.content) for r in results
                                                       for h in r.hits if h.chunk.id not in already], since=since)
            text, sent_ids, shown, back = render(results, already, self._budget, notes, content_type,
                                                 projects=scope == "all", twins=twins)
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

