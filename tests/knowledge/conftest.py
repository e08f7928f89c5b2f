"""The `kb` fixture shared by the knowledge tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from context_kernel.knowledge.service import KnowledgeService
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository


@pytest.fixture
async def kb(tmp_path: Path) -> AsyncIterator[KnowledgeService]:
    """A knowledge service on a real SQLite file in tmp_path (its database also at `kb.db`)."""
    db = Database.open(tmp_path / "kb.sqlite3")
    (tmp_path / "project").mkdir(exist_ok=True)
    service = KnowledgeService(db=db, repo=KnowledgeRepository(db.engine), project_dir=tmp_path / "project",
                               search_budget=6144)
    service.db = db  # type: ignore[attr-defined]
    try:
        yield service
    finally:
        db.close()
