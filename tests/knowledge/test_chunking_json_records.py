"""JSON arrays of records: a big record is a chunk of its own, titled by its id and name; small
items still batch. The invariants shared by all JSON chunks are also tested in test_chunking.py."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from context_kernel.knowledge.chunking import chunk_json
from context_kernel.knowledge.chunking.json_ import RECORD_BYTES
from context_kernel.knowledge.chunking.plain import TITLE_CHARS
from context_kernel.knowledge.model import MAX_CHUNK_BYTES
from context_kernel.knowledge.search import search
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

PAD = "p" * RECORD_BYTES  # makes any record big enough to stand alone


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def leaves(value: Any) -> list[str]:
    if isinstance(value, dict) and value:
        return [leaf for child in value.values() for leaf in leaves(child)]
    if isinstance(value, list) and value:
        return [leaf for child in value for leaf in leaves(child)]
    return [json.dumps(value)]


def record_of_size(target: int, ident: int) -> dict[str, Any]:
    """A record whose pretty-printed JSON is exactly `target` bytes."""
    record: dict[str, Any] = {"id": ident, "note": ""}
    record["note"] = "n" * (target - size(json.dumps(record, indent=2)))
    assert size(json.dumps(record, indent=2)) == target
    return record


@pytest.mark.parametrize(("record", "title"), [
    ({"id": 42, "title": "Fix login redirect", "body": PAD}, "issues > [id 42] Fix login redirect"),
    ({"number": 42, "title": "Fix login redirect", "body": PAD}, "issues > Fix login redirect"),
    ({"id": 42, "body": PAD}, "issues > [id 42]"),
    ({"id": "a1b2c3", "body": PAD}, "issues > a1b2c3"),
    ({"name": "  two\n  lines ", "body": PAD}, "issues > two lines"),
    ({"slug": "fix-login", "id": "x9", "body": PAD}, "issues > fix-login"),
    ({"id": True, "title": "", "body": PAD}, "issues > [3]"),
    ({"body": PAD}, "issues > [3]"),
    ({"title": "t" * 300, "body": PAD}, "issues > " + "t" * TITLE_CHARS),
])
def test_a_record_alone_is_titled_by_its_integer_id_and_its_name(record: dict[str, Any], title: str) -> None:
    chunks = chunk_json(json.dumps({"issues": [record] * 40}))
    assert len(chunks) == 40
    assert chunks[3].title == title
    assert json.loads(chunks[3].content) == record


@pytest.mark.parametrize(("record_bytes", "alone"), [
    (60, False),
    (RECORD_BYTES - 1, False),
    (RECORD_BYTES, True),
    (1000, True),
    (MAX_CHUNK_BYTES - 10, True),
])
def test_records_from_the_threshold_up_stand_alone_and_smaller_ones_batch(record_bytes: int, alone: bool) -> None:
    records = [record_of_size(record_bytes, i) for i in range(100)]
    chunks = chunk_json(json.dumps({"rows": records}))
    contents = [json.loads(c.content) for c in chunks]
    if alone:
        assert contents == records
        assert [c.title for c in chunks] == [f"rows > [id {i}]" for i in range(100)]
    else:
        assert all(isinstance(batch, list) and len(batch) > 1 for batch in contents)
        assert [r for batch in contents for r in batch] == records
        # Batches fill the whole budget: a table of small rows is not a chunk per few rows.
        assert all(size(c.content) > MAX_CHUNK_BYTES - record_bytes - 10 for c in chunks[:-1])


@pytest.mark.parametrize("item", [
    "s" * 600,                     # long strings
    ["row", 1, "x" * 600],         # rows of a table as arrays
    12345.678,                     # numbers
])
def test_big_items_that_are_not_records_still_batch(item: Any) -> None:
    array = [item] * 200
    chunks = chunk_json(json.dumps(array))
    assert all(isinstance(json.loads(c.content), list) for c in chunks)
    assert len(chunks) < 200 // 3
    assert [leaf for c in chunks for leaf in leaves(json.loads(c.content))] == leaves(array)


def test_small_records_between_big_ones_batch_in_order() -> None:
    def small(i: int) -> dict[str, Any]:
        return {"id": i, "name": f"n{i}"}

    def big(i: int) -> dict[str, Any]:
        return {"id": i, "name": f"big{i}", "body": "b" * 2000}

    array = [small(0), small(1), big(2), small(3), big(4), small(5), small(6), small(7)]
    chunks = chunk_json(json.dumps({"mixed": array}))
    assert [c.title for c in chunks] == [
        "mixed > [id 0..1]", "mixed > [id 2] big2", "mixed > [id 3] n3", "mixed > [id 4] big4", "mixed > [id 5..7]",
    ]
    assert [leaf for c in chunks for leaf in leaves(json.loads(c.content))] == leaves(array)


def test_a_record_larger_than_a_chunk_is_split_by_key_under_its_own_title() -> None:
    huge = {"id": 5, "title": "Crash on start", "body": "word " * 2000, "tail": 1}
    doc = {"issues": [{"id": 4, "title": "Other", "body": PAD}, huge]}
    chunks = chunk_json(json.dumps(doc))
    assert chunks[0].title == "issues > [id 4] Other"
    assert chunks[1].title == "issues > [id 5] Crash on start > id, title"
    assert all(c.title.startswith("issues > [id 5] Crash on start > ") for c in chunks[1:])
    assert chunks[-1].title == "issues > [id 5] Crash on start > tail"
    assert all(size(c.content) <= MAX_CHUNK_BYTES for c in chunks)


# Strings stay under 600 bytes as JSON (no control characters, which escape to 6 bytes): a
# string longer than a chunk is the documented exception, chunked as text.
letters = st.characters(blacklist_categories=("Cs", "Cc"))
words = st.text(letters, max_size=100)
small_records = st.dictionaries(
    st.sampled_from(["id", "name", "title", "n", "tags"]),
    st.integers() | words | st.lists(words, max_size=3) | st.none(),
    max_size=5,
)
# Mostly past RECORD_BYTES, some past 600 bytes (split by key under that budget).
big_records = st.fixed_dictionaries(
    {"id": st.integers(), "body": st.lists(st.text(letters, min_size=60, max_size=100), min_size=5, max_size=9)},
    optional={"title": words},
)
records = st.lists(small_records | big_records, max_size=12)


@settings(max_examples=80, deadline=None)
@given(records, st.sampled_from([600, MAX_CHUNK_BYTES]))
def test_arrays_of_records_keep_every_invariant_and_big_records_are_whole_chunks(
        array: list[dict[str, Any]], max_bytes: int) -> None:
    chunks = chunk_json(json.dumps({"records": array}), max_bytes)
    assert all(size(c.content) <= max_bytes and c.kind == "prose" for c in chunks)
    assert [leaf for c in chunks for leaf in leaves(json.loads(c.content))] == leaves({"records": array})
    if size(json.dumps(array, indent=2, ensure_ascii=False)) > max_bytes:  # else the array is one chunk
        contents = [c.content for c in chunks]
        for record in array:
            text = json.dumps(record, indent=2, ensure_ascii=False)
            if RECORD_BYTES <= size(text) <= max_bytes:
                assert text in contents


def issues(rng: random.Random) -> list[dict[str, Any]]:
    words = "parser client pool worker socket retry flush token cache header stream timeout".split()  # noqa: SIM905
    found = []
    for number in range(300, 0, -1):
        found.append({
            "number": number,
            "title": " ".join(rng.choice(words) for _ in range(7)).capitalize(),
            "state": rng.choice(["open", "closed"]),
            "user": {"login": f"dev{rng.randrange(40)}", "type": "User"},
            "body": " ".join(rng.choice(words) for _ in range(80)),
        })
    found[120]["title"] = "Memory leak in the streaming parser on a split UTF-8 sequence"
    return found


@pytest.mark.anyio
async def test_a_search_for_one_issue_returns_that_issue_whole_under_its_title(tmp_path: Path) -> None:
    array = issues(random.Random(3))
    db = Database.open(tmp_path / "kb.sqlite3")
    try:
        repo = KnowledgeRepository(db.engine)
        service = KnowledgeService(db=db, repo=repo, project_dir=tmp_path, search_budget=6144)
        await service.index_text(label="issues", text=json.dumps(array), name="issues.json")
        result = await db.run(lambda: search(repo, "memory leak streaming parser", limit=3))
    finally:
        db.close()
    hit = result.hits[0]
    assert hit.chunk.title == "Memory leak in the streaming parser on a split UTF-8 sequence"
    assert json.loads(hit.snippet) == array[120]
