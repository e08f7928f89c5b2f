"""What the semantic tests share: two texts, a knowledge service with semantic recall on a real
SQLite file, and the wait until every section is embedded and loaded."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from context_kernel.knowledge.service import KnowledgeService
from context_kernel.semantic.files import ModelFiles
from context_kernel.semantic.service import SemanticRecall
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

WAIT_S = 120.0

VACUUM = ("# Routine vacuuming\n\nAn UPDATE or DELETE of a row does not immediately remove the old version of "
          "the row. The space is reclaimed later by VACUUM, which marks dead tuples as reusable.\n")
GARDEN = ("# Tomatoes\n\nWater the plants every morning and give them a stake to climb. Pinch the side shoots "
          "so that the fruit ripens before the first frost.\n")


@asynccontextmanager
async def recall(tmp_path: Path, files: ModelFiles) -> AsyncIterator[tuple[KnowledgeService, SemanticRecall,
                                                                           Database]]:
    db = Database.open(tmp_path / "kb.sqlite3")
    (tmp_path / "project").mkdir(exist_ok=True)
    semantic = SemanticRecall(db=db, files=files, nice=0)
    service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=tmp_path / "project",
                               search_budget=6144, semantic=semantic)
    try:
        yield service, semantic, db
    finally:
        semantic.close()
        db.close()


async def settled(semantic: SemanticRecall) -> None:
    """Every section embedded and the vectors loaded, as a server has them a few seconds after starting."""
    assert await anyio.to_thread.run_sync(semantic.worker.wait_idle, WAIT_S), "the embedder did not finish"
    await anyio.to_thread.run_sync(semantic.warm)
