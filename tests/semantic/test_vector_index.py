"""The in-memory vector index past its shortlist: more windows than it scores, as at 100,000 chunks.

Vectors are random (no model needed), stored in a real SQLite file through the repository the
embedder writes with; the expected answers are computed here from the stored float16 bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from context_kernel.knowledge.model import Chunk
from context_kernel.semantic.index import SHORTLIST, VectorIndex
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository, SourceSpec
from context_kernel.store.vectors import VectorRepository

DIM = 384
WINDOWS = 3 * SHORTLIST  # past the shortlist: only some windows are scored


def stored(tmp_path: Path, vectors: np.ndarray) -> tuple[Database, VectorRepository, list[int]]:
    """A chunk per vector, the vector stored as its one window; returns the chunk ids in order."""
    db = Database.open(tmp_path / "kb.sqlite3")
    chunks = [Chunk(f"t{i}", f"chunk {i}", "prose") for i in range(len(vectors))]
    KnowledgeRepository(db.engine).replace_sources([SourceSpec(label="s", kind="text", chunks=chunks)])
    with db.engine.connect() as conn:
        ids = [int(r[0]) for r in conn.exec_driver_sql("SELECT id FROM chunks ORDER BY seq")]
    repo = VectorRepository(db.engine, kinds=["text"], model="test")
    repo.add([(cid, 0, 7, v.astype(np.float16).tobytes()) for cid, v in zip(ids, vectors, strict=True)])
    return db, repo, ids


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def test_past_the_shortlist_the_nearest_chunks_are_found_and_scored_as_stored(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    vectors = unit(rng.normal(size=(WINDOWS, DIM)))
    db, repo, ids = stored(tmp_path, vectors)
    index = VectorIndex(repo, DIM)
    index.sync()
    exact = vectors.astype(np.float16).astype(np.float32)
    for target in (0, WINDOWS // 2, WINDOWS - 1):
        query = unit(vectors[target] + rng.normal(0, 0.02, DIM))
        hits = index.search(query, 10)
        assert hits[0].chunk_id == ids[target]  # the window the query was made from comes first
        cosine = exact @ query
        for hit in hits:  # int8 rounding: within 0.005 of the stored vector's cosine
            assert abs(hit.score - float(cosine[ids.index(hit.chunk_id)])) < 0.005
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    db.close()


def test_windows_tied_at_the_shortlists_farthest_distance_are_all_scored(tmp_path: Path) -> None:
    # Every window has the same sign bits, so all are at the same Hamming distance from the query:
    # taking any 1,024 of them could miss the best one; the tie at the shortlist's edge is scored whole.
    rng = np.random.default_rng(9)
    vectors = unit(np.abs(rng.normal(size=(WINDOWS, DIM))) + 0.05)
    db, repo, ids = stored(tmp_path, vectors)
    index = VectorIndex(repo, DIM)
    index.sync()
    best = WINDOWS - 7
    hits = index.search(vectors[best], 3)
    assert hits[0].chunk_id == ids[best]
    assert hits[0].score == pytest.approx(1.0, abs=0.005)
    db.close()
