"""Snippets keep the answer: a hit grows to its share of the reply budget, windows are chosen by
the densest matches, and no line is cut."""

from __future__ import annotations

import pytest

from context_kernel.knowledge.service import KnowledgeService
from context_kernel.knowledge.snippets import Matcher, share_out, snippet

pytestmark = pytest.mark.anyio


async def test_a_lone_hit_grows_past_1500_characters_to_keep_the_answer(kb: KnowledgeService) -> None:
    body = ("Retry backoff is configured per client.\n"
            + "".join(f"Paragraph {n} talks about unrelated transport details at length.\n" for n in range(45))
            + "```python\nclient = Client(attempts=7)\n```\n")
    assert 2500 < len(body) < 4000
    await kb.index_text(label="doc", name="doc.md", text="# Retry backoff\n" + body)
    reply = await kb.search(["retry backoff configured"], session_id="s")
    assert "client = Client(attempts=7)" in reply.text
    assert reply.sent_bytes <= 6144


async def test_the_budget_is_shared_and_small_hits_leave_room_to_the_large() -> None:
    assert share_out([100, 5000, 5000], 3000) == [100, 1450, 1450]
    assert share_out([100, 200], 3000) == [100, 200]
    assert sum(share_out([4000] * 5, 6000)) <= 6000


def test_a_dense_window_larger_than_the_limit_is_cut_at_line_ends() -> None:
    code = "".join(f"    value_{n} = compute_total(items_{n}, weight={n})  # total\n" for n in range(60))
    text = snippet(code, Matcher(["compute", "total"]), limit=600)
    lines = [line for line in text.splitlines() if line != "…"]
    assert lines and all(line + "\n" in code for line in lines)
    assert len(text) <= 600 + 4


def test_the_window_holding_more_of_the_query_words_wins_over_a_repeated_one() -> None:
    filler = "Nothing relevant on this line whatsoever.\n" * 30
    text = (filler + "pool pool pool pool pool pool\n" + filler
            + "the pool timeout is 30 seconds\n" + filler)
    out = snippet(text, Matcher(["pool", "timeout"]), limit=400)
    assert "the pool timeout is 30 seconds" in out
