"""Semantic recall as the knowledge service sees it: wake the embedder, embed queries, find near chunks.

Built by the app only when the semantic extra is installed and not switched off (`status.py`
decides); the knowledge service works without one, lexically.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import numpy as np
import numpy.typing as npt

from ..store.db import Database
from ..store.vectors import Coverage, VectorRepository
from .embed_process import EmbeddingProcess
from .encoder import WINDOW_TOKENS
from .encoding import kinds_for, make_encoder, vector_model_id
from .files import ModelFiles
from .index import DenseHit, VectorIndex
from .worker import BATCH_CHUNKS, EmbeddingWorker

# Chunks per batch: the static table embeds a batch in one gather, the transformer in small steps
# (stopping waits for the batch in hand).
STATIC_BATCH = 64
# About how fast the static table embeds on a 2-core machine (bench/semantic_coverage.py: 5 MB in 5-6 s).
STATIC_BYTES_PER_S = 800_000.0
# Below this cosine a chunk found by meaning alone is noise for MiniLM (unrelated English text
# scores 0.1-0.25): such chunks never make a hit on their own.
DENSE_FLOOR = 0.25

F32 = npt.NDArray[np.float32]
log = logging.getLogger(__name__)


class SemanticRecall:
    def __init__(self, *, db: Database, files: ModelFiles, kinds: Sequence[str] | None = None,
                 nice: int | None = None, window_tokens: int = WINDOW_TOKENS, in_process: bool = False) -> None:
        self._db = db
        self.files = files
        static = files.kind == "static"
        self.encoder = make_encoder(files, window_tokens)
        self.vectors = VectorRepository(db.engine, kinds=kinds or kinds_for(files),
                                        model=vector_model_id(files, self.encoder.window_tokens))
        # nice 19 (and SCHED_IDLE in the child): embedding runs on what the machine leaves, so a kernel's
        # warm call keeps its latency; the static table still covers 5 MB in ~5 s on an idle core.
        self.worker: EmbeddingWorker | EmbeddingProcess
        if in_process:  # benchmarks and tests that time the embedding itself
            self.worker = EmbeddingWorker(run_sync=db.run_sync, repo=self.vectors, encoder=self.encoder,
                                          nice=19 if nice is None else nice,
                                          batch_chunks=STATIC_BATCH if static else BATCH_CHUNKS)
        else:
            self.worker = EmbeddingProcess(db_path=Path(str(db.engine.url.database)), files=files,
                                           kinds=kinds or kinds_for(files), nice=19 if nice is None else nice)
        self._index: VectorIndex | None = None
        self._complete_upto = 0
        one_blas_thread()

    def start(self) -> None:
        """Embed what earlier runs left without vectors (the thread starts here, not at construction)."""
        self.worker.wake()

    @property
    def ready(self) -> bool:
        """The table and the stored vectors are loaded: until then a search ranks by words (and says so)."""
        return self._index is not None

    def warm(self) -> None:
        """Load the table and every stored vector, off the store's thread (blocking: a worker thread).

        The first search in a new server paid this on its own time (130–170 ms for a 2–5 MB corpus,
        seconds for a large one); now it runs at start, and a search that comes earlier is answered
        by words. Reads use their own connections; the index is handed over whole when it is loaded.
        """
        try:
            self.encoder.load()
            index = VectorIndex(self.vectors, self.encoder.dim)
            index.sync()
            self.vectors.first_unembedded(0)  # warms SQLite's pages for covered()
        except Exception:
            log.exception("could not load the semantic index in advance")
            return
        self._index = index

    def indexed(self) -> None:
        self.worker.wake()

    def close(self) -> None:
        self.worker.stop()

    async def embed_queries(self, queries: list[str]) -> list[F32] | None:
        """The queries' vectors, or None while there is nothing to compare them with (or no model)."""
        if self.worker.failure is not None:
            return None
        # The model runs while the store answers whether any vectors exist: that read queues behind the
        # search's lexical ranking on the store's thread, and waiting for it first made the two serial.
        model = asyncio.ensure_future(anyio.to_thread.run_sync(lambda: [self.encoder.embed_query(q) for q in queries]))
        try:
            upto, _ = await self._db.run(self.vectors.state)
        except BaseException:
            model.cancel()
            raise
        vectors = await model
        return vectors if upto else None

    def covered(self) -> bool:
        """Whether every section of an embedded kind has its vectors (on the store's thread).

        Fusion ranks only a fully embedded index: a section with a vector next to one without was
        ranked by a mix of scores, and a partly embedded index ranked worse than words alone.
        Chunk ids only grow, so what was once complete up to an id stays so; only newer ids are read.
        """
        first, top = self.vectors.first_unembedded(self._complete_upto)
        if first is None:
            self._complete_upto = top
            return True
        self._complete_upto = first - 1
        return False

    def dense(self, query: F32, k: int, source: str | None = None, kind: str | None = None,
              among: frozenset[int] | None = None) -> list[DenseHit]:
        """The k nearest chunks by their best window (on the store's thread, like every read).
        `among`: only these chunks (the project's own, when other projects share the data dir)."""
        if self._index is None:  # not warmed (a benchmark or test calling directly): load it here
            self._index = VectorIndex(self.vectors, self.encoder.dim or len(query))
        self._index.sync()
        allowed = None
        if source or kind or among is not None:
            ids = np.asarray(self.vectors.chunk_ids(source, kind) if source or kind else sorted(among or ()),
                             dtype=np.int64)
            if among is not None and (source or kind):
                ids = ids[np.isin(ids, np.fromiter(among, dtype=np.int64, count=len(among)))]
            allowed = lambda chunks: np.isin(chunks, ids)  # noqa: E731 - a one-line closure over ids
        return [h for h in self._index.search(query, k, allowed) if h.score >= DENSE_FLOOR]

    def best_windows(self, query: F32) -> Callable[[list[int]], dict[int, DenseHit]]:
        """For fusion: the best window of chunks the lexical side found (after `dense`, same thread)."""
        def lookup(chunk_ids: list[int]) -> dict[int, DenseHit]:
            return self._index.best_windows(query, chunk_ids) if self._index is not None else {}
        return lookup

    async def backlog_line(self) -> str:
        """ctx_stats: how many sections still wait for their vectors, and at what speed they are embedded."""
        failure = self.worker.failure
        if failure is not None:
            return f"Semantic search: off ({failure.message}); {failure.hint}"
        count, size = await self._db.run(self.vectors.backlog, self.worker.progress().cursor)
        if not count:
            return f"Semantic search: every section has its vectors ({self.files.name})."
        rate = self.worker.progress().bytes_per_s
        speed = f", embedding at {rate / 1024:.0f} KB/s (about {_duration(size / rate)} left)" if rate else ""
        return (f"Semantic search: {count} section(s) ({size / 1024:.0f} KB) waiting for their vectors{speed}; "
                "until then searches rank by words.")

    async def coverage(self, labels: list[str]) -> str:
        """One line for ctx_index's reply: when semantic search covers what was just indexed."""
        failure = self.worker.failure
        if failure is not None:
            return f"Semantic search is off ({failure.message}); {failure.hint}"
        progress = self.worker.progress()
        cov: Coverage = await self._db.run(self.vectors.coverage, labels, progress.cursor)
        if not cov.chunks:
            return "Semantic search: not embedded (this kind of content is searched by words)."
        if cov.embedded >= cov.chunks:
            return "Semantic search covers it now."
        # Before its first batch the embedder has no measured speed; the static table's is known well enough.
        rate = progress.bytes_per_s or (STATIC_BYTES_PER_S if self.files.kind == "static" else None)
        when = f"in about {_duration(cov.pending_bytes / rate)}" if rate else "once the background embedder reaches it"
        return (f"Semantic search covers it {when} ({cov.chunks - cov.embedded} of {cov.chunks} sections are being "
                "embedded in the background); until then ctx_search finds it by words.")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def one_blas_thread() -> None:
    """numpy's BLAS (OpenBLAS) in this process on the calling thread only.

    OpenBLAS starts a worker per core at the first matrix product (the vector index scores with one),
    and each spins for ~0.1 s after every call: after each search one kept a core busy, the core the
    lexical ranking and the user's kernels were waiting for (ctx_search's service at 100,000 chunks,
    2 cores, old and new code alternated: 19.9 → 14.5 ms). Only this process: the kernels' own numpy
    keeps its threads. The products here are a few thousand rows, too small for threads to pay.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
