"""The fetch service's cache housekeeping on a real SQLite file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from context_kernel.knowledge.service import KnowledgeService
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository
from context_kernel.web.service import KEEP_FETCHED_S, FetchService

pytestmark = pytest.mark.anyio


async def test_fetched_content_older_than_14_days_is_removed_at_start(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "kb.sqlite3")
    try:
        repo = KnowledgeRepository(db.engine)
        knowledge = KnowledgeService(db=db, repo=repo, project_dir=tmp_path, search_budget=4096)
        await knowledge.index_text(label="https://old.example/page", text="# Old\nold page", kind="fetch")
        await knowledge.index_text(label="notes", text="# Notes\nmine, not fetched", kind="text")
        later = time.time() + KEEP_FETCHED_S + 60
        service = FetchService(knowledge=knowledge, fetcher=None,  # type: ignore[arg-type]
                               clock=lambda: later)
        assert await service.remove_stale() == 1
        assert repo.get_source("https://old.example/page") is None
        assert repo.get_source("notes") is not None
        fresh = FetchService(knowledge=knowledge, fetcher=None)  # type: ignore[arg-type]
        await knowledge.index_text(label="https://new.example/", text="# New\nnew page", kind="fetch")
        assert await fresh.remove_stale() == 0
    finally:
        db.close()
