"""A small programmatic face of the knowledge base for benchmarks (no MCP, no session budget)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from ..store.db import Database
from ..store.knowledge import KnowledgeRepository
from .search import search
from .service import KnowledgeService


@dataclass(frozen=True)
class BenchHit:
    source: str
    title: str
    content: str


class BenchIndex:
    def __init__(self, db: Database, project_dir: Path) -> None:
        self._db = db
        self._repo = KnowledgeRepository(db.engine)
        self._service = KnowledgeService(db=db, repo=self._repo, project_dir=project_dir, search_budget=1 << 20)

    async def index_text(self, label: str, text: str, name: str = "") -> None:
        await self._service.index_text(label=label, text=text, name=name)

    async def search(self, query: str, limit: int = 10) -> list[BenchHit]:
        result = await self._db.run(search, self._repo, query, limit=limit)
        return [BenchHit(h.chunk.label, h.chunk.title, h.chunk.content) for h in result.hits]


@asynccontextmanager
async def open_bench_index(db_path: Path) -> AsyncIterator[BenchIndex]:
    db = await anyio.to_thread.run_sync(Database.open, Path(db_path))
    try:
        yield BenchIndex(db, Path(db_path).parent)
    finally:
        db.close()
