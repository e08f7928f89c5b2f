"""The SQLite store on real database files."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import inspect, text

from context_kernel.store.db import Database, open_engine
from context_kernel.store.executions import ExecutionEnd, ExecutionRepository, ExecutionStart
from context_kernel.store.migrations import MIGRATIONS


def test_a_blank_database_migrates_to_every_table_and_index(tmp_path: Path) -> None:
    engine = open_engine(tmp_path / "blank.sqlite3")
    try:
        insp = inspect(engine)
        tables = set(insp.get_table_names())
        assert {"sessions", "executions", "outputs", "_migrations", "sources", "chunks",
                "sent_chunks", "chunks_porter", "chunks_trigram", "chunks_vocab", "chunk_vectors",
                "vector_state"} <= tables
        assert {ix["name"] for ix in insp.get_indexes("executions")} >= {"executions_session"}
        assert {ix["name"] for ix in insp.get_indexes("outputs")} >= {"outputs_execution"}
        assert {ix["name"] for ix in insp.get_indexes("chunks")} >= {"chunks_source"}
        assert {ix["name"] for ix in insp.get_indexes("chunk_vectors")} >= {"chunk_vectors_chunk"}
        with engine.connect() as conn:
            triggers = {r[0] for r in conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))}
            fts = {r[0]: r[1] for r in conn.execute(text(
                "SELECT name, sql FROM sqlite_master WHERE name IN ('chunks_porter', 'chunks_trigram')"))}
            versions = [r[0] for r in conn.execute(text("SELECT version FROM _migrations ORDER BY version"))]
            mode = conn.execute(text("PRAGMA journal_mode")).scalar()
        assert versions == list(range(1, len(MIGRATIONS) + 1))
        assert triggers == {"chunks_ad", "sources_ad_vectors"}
        assert "porter unicode61" in fts["chunks_porter"] and "trigram" in fts["chunks_trigram"]
        assert mode == "wal"
    finally:
        engine.dispose()


def test_migrating_twice_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "twice.sqlite3"
    open_engine(path).dispose()
    engine = open_engine(path)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM _migrations")).scalar() == len(MIGRATIONS)
    engine.dispose()


def test_an_execution_is_pending_until_finished_and_keeps_outputs_in_order(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "rec.sqlite3")
    try:
        repo = ExecutionRepository(db.engine)
        repo.touch_session("s1", client="test 1.0", transport="stdio", project_dir="/p")
        eid = repo.start(ExecutionStart(session_id="s1", tool="ctx_execute", code="print(1)", language="python"))
        row = repo.get(eid)
        assert row is not None and row.status == "pending" and row.ended_at is None
        repo.add_outputs(eid, 0, [{"output_type": "stream", "name": "stdout", "text": "a\n"}])
        repo.add_outputs(eid, 1, [{"output_type": "stream", "name": "stderr", "text": "ü\n"},
                                  {"output_type": "execute_result", "data": {"text/plain": "1"}, "metadata": {},
                                   "execution_count": 1}])
        repo.finish(eid, ExecutionEnd(status="ok", bytes_produced=5, bytes_returned=2, returned_text="a",
                                      returned_kind="full"))
        row = repo.get(eid)
        assert row is not None and row.status == "ok" and row.duration_ms is not None and row.bytes_returned == 2
        outs = repo.outputs(eid)
        assert [o.get("name", o["output_type"]) for o in outs] == ["stdout", "stderr", "execute_result"]
        assert json.dumps(outs[1], ensure_ascii=False).count("ü") == 1
        assert [r.id for r in repo.for_session("s1")] == [eid]
    finally:
        db.close()
