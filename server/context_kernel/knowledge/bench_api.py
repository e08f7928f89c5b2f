"""A small programmatic face of the knowledge base for benchmarks (no MCP, no session budget)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from ..store.db import Database
from ..store.knowledge import KnowledgeRepository
from .fusion import hybrid_search
from .search import search
from .service import DENSE_DEPTH, KnowledgeService

if TYPE_CHECKING:
    from ..semantic.service import SemanticRecall


@dataclass(frozen=True)
class BenchHit:
    source: str
    title: str
    content: str


class BenchIndex:
    def __init__(self, db: Database, project_dir: Path, semantic: SemanticRecall | None = None) -> None:
        self._db = db
        self._repo = KnowledgeRepository(db.engine)
        self._semantic = semantic
        self._service = KnowledgeService(db=db, repo=self._repo, project_dir=project_dir, search_budget=1 << 20,
                                         semantic=semantic)

    async def index_text(self, label: str, text: str, name: str = "") -> None:
        await self._service.index_text(label=label, text=text, name=name)

    async def wait_embedded(self, timeout: float = 3600.0) -> bool:
        """With semantic recall: until the background embedder has embedded everything indexed."""
        if self._semantic is None:
            return True
        return await anyio.to_thread.run_sync(self._semantic.worker.wait_idle, timeout)

    async def search(self, query: str, limit: int = 10) -> list[BenchHit]:
        semantic = self._semantic
        vectors = await semantic.embed_queries([query]) if semantic is not None else None
        if semantic is None or vectors is None:
            result = await self._db.run(search, self._repo, query, limit=limit)
        else:
            vec = vectors[0]
            result = await self._db.run(lambda: hybrid_search(self._repo, query, semantic.dense(vec, DENSE_DEPTH),
                                                              limit=limit, best_windows=semantic.best_windows(vec)))
        return [BenchHit(h.chunk.label, h.chunk.title, h.chunk.content) for h in result.hits]


@asynccontextmanager
async def open_bench_index(db_path: Path, semantic: bool = False) -> AsyncIterator[BenchIndex]:
    """semantic=True: hybrid search with the default model, embedded at normal priority (a benchmark waits for it)."""
    db = await anyio.to_thread.run_sync(Database.open, Path(db_path))
    recall = None
    if semantic:
        from ..semantic.files import default_model
        from ..semantic.service import SemanticRecall

        recall = SemanticRecall(db=db, files=default_model(), nice=0)
    try:
        yield BenchIndex(db, Path(db_path).parent, recall)
    finally:
        if recall is not None:
            recall.close()
        db.close()
