"""The hits a reply shows: a later hit that brings the query's other words passes the one just above it."""

from __future__ import annotations

import pytest

from context_kernel.knowledge.rank import diversify
from context_kernel.knowledge.search import search
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.knowledge.snippets import Matcher
from context_kernel.store.db import Database
from context_kernel.store.knowledge import ChunkRow, KnowledgeRepository

pytestmark = pytest.mark.anyio


def row(cid: int, title: str, content: str) -> ChunkRow:
    return ChunkRow(cid, cid, f"doc{cid}", 0, title, content, "prose", 0.0)


def test_the_second_hit_brings_the_concept_the_first_lacks() -> None:
    chunks = {1: row(1, "Exit status of pipelines", "With pipefail the status is the last command to fail."),
              2: row(2, "Pipelines", "pipefail changes the status of a pipeline."),
              3: row(3, "Unset variables", "nounset makes an unset variable an error."),
              4: row(4, "Other", "nothing of either.")}
    matcher = Matcher(["pipefail", "nounset"], {"pipefail": 2.0, "nounset": 2.0})
    ranked = [(1, 1.0), (2, 0.9), (3, 0.8), (4, 0.7)]
    assert [cid for cid, _ in diversify(ranked, chunks, matcher, limit=2)] == [1, 3, 2, 4]


def test_a_hit_far_below_or_adding_nothing_does_not_pass() -> None:
    chunks = {1: row(1, "A", "pipefail"), 2: row(2, "B", "pipefail again"), 3: row(3, "C", "nounset")}
    matcher = Matcher(["pipefail", "nounset"], {"pipefail": 2.0, "nounset": 2.0})
    assert [c for c, _ in diversify([(1, 1.0), (2, 0.9), (3, 0.2)], chunks, matcher, 2)] == [1, 2, 3]  # too far below
    same = {1: row(1, "A", "pipefail nounset"), 2: row(2, "B", "pipefail"), 3: row(3, "C", "nounset")}
    assert [c for c, _ in diversify([(1, 1.0), (2, 0.9), (3, 0.8)], same, matcher, 2)] == [1, 2, 3]  # nothing new
    assert diversify([(1, 1.0), (2, 0.9)], chunks, matcher, 1) == [(1, 1.0), (2, 0.9)]


async def test_a_two_concept_question_gets_a_passage_for_each(kb: KnowledgeService) -> None:
    """Through the search itself: two sections on the first concept no longer fill the reply."""
    for n in range(2):
        await kb.index_text(label=f"pipefail-{n}", name=f"pipefail-{n}.md", text=(
            f"# Pipelines and pipefail, part {n}\nWith set -o pipefail a pipeline fails when any command in it "
            "fails; pipefail is off by default. Strict scripts set pipefail and errexit together.\n"))
    await kb.index_text(label="nounset", name="nounset.md", text=(
        "# Shell options\nMany options change how the shell runs a script, and most of them are off by "
        "default; the manual lists each with its letter. Among them, nounset makes expanding an unset "
        "variable an error, and strict scripts set it together with errexit.\n"))
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "strict scripts: pipefail and nounset",
                                         limit=2))
    assert "nounset" in {h.chunk.label for h in result.hits}
