"""Hybrid fusion on a real SQLite file, with dense hits given (what the model would return)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from context_kernel.knowledge.fusion import Fusion, hybrid_search
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

pytestmark = pytest.mark.anyio

ABOUT_ERRORS = [f"# Errors {i}\nHow errors are reported, logged and raised: messages, hints and error codes ({i}).\n"
                for i in range(6)]
CODES = "# Error codes\n`42P01` | `undefined_table`\n`42P02` | `undefined_parameter`\n"


@dataclass(frozen=True)
class Dense:
    chunk_id: int
    score: float
    start: int = 0
    stop: int = 0


async def test_a_lexical_winner_far_ahead_is_not_pushed_out_by_semantic_neighbours(kb: KnowledgeService) -> None:
    # The one section holding the code is far ahead by words; the model prefers six sections that
    # talk about errors in general, several of which also match a word. Ranks alone (RRF) gave
    # those neighbours, found by both lists, the top places; scores keep the clear lexical winner.
    for i, text in enumerate(ABOUT_ERRORS):
        await kb.index_text(label=f"errors-{i}", name=f"errors-{i}.md", text=text)
    await kb.index_text(label="codes", name="codes.md", text=CODES)
    db: Database = kb.db  # type: ignore[attr-defined]
    repo = KnowledgeRepository(db.engine)

    def run(fusion: Fusion) -> list[str]:
        ids = {c.label: c.id for c in repo.chunks(list(range(1, 50))).values()}
        dense = [Dense(ids[f"errors-{i}"], 0.62 - 0.01 * i) for i in range(6)] + [Dense(ids["codes"], 0.40)]
        result = hybrid_search(repo, "error code 42P01", dense, limit=2, fusion=fusion)
        return [h.chunk.label for h in result.hits]

    assert (await db.run(run, Fusion()))[0] == "codes"
    assert "codes" not in await db.run(run, Fusion(method="rrf"))
