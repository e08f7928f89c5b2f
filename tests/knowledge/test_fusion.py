"""Hybrid fusion on a real SQLite file, with dense hits given (what the model would return)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from context_kernel.knowledge.fusion import Fusion, hybrid_search, window_snippet
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.knowledge.snippets import Matcher
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

pytestmark = pytest.mark.anyio

ABOUT_ERRORS = [f"# Errors {i}\nHow errors are reported, logged and raised: messages, hints and error codes ({i}). "
                "A handler may catch an error, look at its details and decide whether to retry, report it to "
                "the client or log it and go on.\n" for i in range(6)]
CODES = "# Error codes\n" + "".join(f"`42P{i:02d}` | `condition_{i}`\n" for i in range(1, 20))


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
    # (with ranks alone the neighbours lead; the code's section still comes second, as the only hit that
    # brings the query's `42P01`: rank.diversify)
    assert (await db.run(run, Fusion(method="rrf")))[0] != "codes"


async def test_a_section_that_is_only_a_heading_does_not_take_a_place_from_one_with_text(
        kb: KnowledgeService) -> None:
    await kb.index_text(label="cluster", name="cluster.md", text=(
        "# CLUSTER\nCLUSTER — cluster a table according to an index\n\n"
        "# Description\nCLUSTER instructs the server to cluster the table specified by table_name based on "
        "the index specified by index_name. When a table is clustered, it is physically reordered based on "
        "the index information. Clustering is a one-time operation.\n"))
    await kb.index_text(label="other", name="other.md", text="# Other\nA page about something else entirely, "
                        "long enough to be a real section of text that answers another question.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    repo = KnowledgeRepository(db.engine)

    def run() -> list[str]:
        ids = {c.title: c.id for c in repo.chunks(list(range(1, 50))).values()}
        dense = [Dense(ids["CLUSTER"], 0.70), Dense(ids["Description"], 0.55), Dense(ids["Other"], 0.30)]
        return [h.chunk.title for h in hybrid_search(repo, "cluster a table on an index", dense, limit=1).hits]

    assert await db.run(run) == ["Description"]


def test_a_window_snippet_also_shows_the_exact_code_asked_for_when_it_lies_outside_the_window() -> None:
    rows = "\n".join(f"`{40000 + i}` | `condition_number_{i}`" for i in range(200))
    content = "Serialization failures are reported with a class 40 code; retry the transaction.\n" + rows
    code_at = content.index("40150")
    window = (0, 80)  # where the model found the meaning: the prose at the top
    limit = 1200
    with_words = window_snippet(content, *window, limit, Matcher(["40150"]))
    assert "retry the transaction" in with_words and "`40150` | `condition_number_150`" in with_words
    assert len(with_words) <= limit + 10
    assert content[code_at:code_at + 5] not in window_snippet(content, *window, limit)  # the window alone
