"""The trigram index is built after the porter index (migration 004): nothing is missed, nothing corrupts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from sqlalchemy import text

from context_kernel.knowledge.model import Chunk
from context_kernel.knowledge.search import search
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.store.db import Database, open_engine
from context_kernel.store.knowledge import KnowledgeRepository, SourceSpec
from context_kernel.store.migrations import MIGRATIONS

pytestmark = pytest.mark.anyio


def _spec(label: str, *contents: str) -> SourceSpec:
    return SourceSpec(label=label, kind="text", chunks=[Chunk(f"part {i}", c, "prose") for i, c in enumerate(contents)])


def _integrity(repo: KnowledgeRepository) -> None:
    # FTS5's own check against the content table (rank 1): raises "database disk image is
    # malformed" if an index and the chunks disagree. Meaningful once the catch-up has run.
    repo.catch_up_trigram()
    assert repo.trigram_backlog() == 0
    with repo._engine.begin() as conn:
        for fts in ("chunks_porter", "chunks_trigram"):
            conn.execute(text(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)"))


def test_replacing_a_source_before_the_catch_up_keeps_both_indexes_sound(tmp_path: Path) -> None:
    repo = KnowledgeRepository(open_engine(tmp_path / "kb.sqlite3"))
    repo.replace_sources([_spec("a", "the useEffectHook runs after render", "second part")])
    assert repo.trigram_backlog() == 2
    repo.replace_sources([_spec("a", "now it mentions useLayoutEffectHook instead")])  # deletes unindexed rows
    assert repo.catch_up_trigram() == 1 and repo.trigram_backlog() == 0
    _integrity(repo)
    assert [h.chunk.label for h in search(repo, "LayoutEffectHo").hits] == ["a"]
    repo.replace_sources([_spec("a", "third version")])  # now deleting rows the trigram index has
    _integrity(repo)


def test_a_substring_search_right_after_indexing_finds_the_new_text(tmp_path: Path) -> None:
    repo = KnowledgeRepository(open_engine(tmp_path / "kb.sqlite3"))
    repo.replace_sources([_spec("hooks", "Call useLayoutEffectHook before paint.")])
    assert repo.trigram_backlog() == 1
    result = search(repo, "LayoutEff")
    assert [h.chunk.label for h in result.hits] == ["hooks"]
    assert repo.trigram_backlog() == 0


def test_a_database_from_before_migration_4_keeps_its_trigram_index(tmp_path: Path) -> None:
    from context_kernel.store import migrations

    path = tmp_path / "old.sqlite3"
    old = migrations.MIGRATIONS[:3]
    from sqlalchemy import create_engine  # open_engine migrates to the latest: build version 3 by hand

    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at REAL)"))
        for version, step in enumerate(old, start=1):
            step(conn)
            conn.execute(text("INSERT INTO _migrations VALUES (:v, :n, 0)"), {"v": version, "n": step.__name__})
        conn.execute(text("INSERT INTO sources (label, kind, indexed_at) VALUES ('old', 'text', 0)"))
        conn.execute(text("INSERT INTO chunks (source_id, seq, title, content, kind) "
                          "VALUES (1, 0, 't', 'legacyIdentifierName here', 'prose')"))
        for fts in ("chunks_porter", "chunks_trigram"):  # version 3 indexed both at once
            conn.execute(text(f"INSERT INTO {fts}(rowid, title, content) SELECT id, title, content FROM chunks"))
    engine.dispose()
    repo = KnowledgeRepository(open_engine(path))  # runs migration 4
    assert len(MIGRATIONS) >= 4 and repo.trigram_backlog() == 0
    assert [h.chunk.label for h in search(repo, "IdentifierNa").hits] == ["old"]
    repo.replace_sources([_spec("old", "replaced")])  # the old row leaves both indexes
    _integrity(repo)


async def test_the_service_queues_one_background_catch_up_at_a_time(tmp_path: Path) -> None:
    queued: list[Callable[[], Awaitable[None]]] = []
    db = Database.open(tmp_path / "kb.sqlite3")
    try:
        repo = KnowledgeRepository(db.engine)
        service = KnowledgeService(db=db, repo=repo, project_dir=tmp_path, search_budget=6144, spawn=queued.append)
        await service.index_text(label="one", text="# One\n\nalphaBetaGamma")
        await service.index_text(label="two", text="# Two\n\ndeltaEpsilon")
        assert len(queued) == 1 and repo.trigram_backlog() == 2
        await queued[0]()
        assert repo.trigram_backlog() == 0
        await service.index_text(label="three", text="# Three\n\nzetaEta")
        assert len(queued) == 2  # a new catch-up once the previous one has started
    finally:
        db.close()
