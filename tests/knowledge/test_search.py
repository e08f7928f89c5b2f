"""Search on a real SQLite file: ranking, fuzzy correction, snippets, re-indexing, hostile queries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_kernel.knowledge.fuzzy import one_edit
from context_kernel.knowledge.search import search
from context_kernel.knowledge.service import KnowledgeService
from context_kernel.knowledge.snippets import Matcher, snippet
from context_kernel.store.db import Database
from context_kernel.store.knowledge import KnowledgeRepository

pytestmark = pytest.mark.anyio


async def titles(kb: KnowledgeService, query: str, **kw: object) -> list[str]:
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), query, **kw))  # type: ignore[arg-type]
    return [h.chunk.title for h in result.hits]


async def test_a_title_match_beats_a_body_match(kb: KnowledgeService) -> None:
    await kb.index_text(label="doc", name="doc.md", text=(
        "# Networking\nThe proxy settings live in the config file. Retries are handled elsewhere.\n\n"
        "# Retries\nBack off exponentially.\n"))
    assert (await titles(kb, "retries"))[0] == "Retries"


async def test_a_phrase_beats_scattered_words(kb: KnowledgeService) -> None:
    await kb.index_text(label="a", name="a.md", text=(
        "# Scattered\nThe connection was slow. Later, a pool of workers was idle, and a timeout was set.\n"))
    await kb.index_text(label="b", name="b.md", text=(
        "# Together\nConfigure the connection pool timeout with the pool_timeout option.\n"))
    assert (await titles(kb, "connection pool timeout"))[0] == "Together"


async def test_a_partial_identifier_finds_the_full_one_through_trigrams(kb: KnowledgeService) -> None:
    await kb.index_text(label="react", name="react.md", text="# Hooks\nCall useEffect to synchronise with the DOM.\n")
    await kb.index_text(label="other", name="other.md", text="# Other\nNothing about hooks here at all.\n")
    assert await titles(kb, "useEff") == ["Hooks"]


async def test_a_misspelt_word_is_corrected_against_the_vocabulary(kb: KnowledgeService) -> None:
    await kb.index_text(label="k8s", name="k8s.md", text="# Cluster\nDeploy the service to kubernetes with kubectl.\n")
    await kb.index_text(label="misc", name="misc.md", text="# Misc\nUnrelated words about gardening.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "kuberntes"))
    assert [h.chunk.title for h in result.hits] == ["Cluster"]
    assert result.corrections == {"kuberntes": "kubernetes"}


async def test_snippets_are_windows_around_stemmed_matches(kb: KnowledgeService) -> None:
    filler = "Nothing to see in this line at all.\n" * 80
    text = "# Log\n" + filler + "The workers were running migrations when it failed.\n" + filler
    await kb.index_text(label="log", name="log.md", text=text)
    reply = await kb.search(["run migration"], session_id="s")
    assert "were running migrations" in reply.text
    # A lone hit may fill the reply's budget; cut to a share smaller than the chunk, it keeps the match.
    chunks = await kb.db.run(lambda: KnowledgeRepository(kb.db.engine).source_chunks("log"))  # type: ignore[attr-defined]
    chunk = next(c for c in chunks if "migrations" in c.content)
    cut = snippet(chunk.content, Matcher(["run", "migration"]), limit=1500)
    assert "were running migrations" in cut and cut.count("Nothing to see") < 20


async def test_reindexing_a_label_replaces_its_chunks(kb: KnowledgeService) -> None:
    await kb.index_text(label="notes", name="n.md", text="# Old\nzebra crossing\n")
    await kb.index_text(label="notes", name="n.md", text="# New\nyak shaving\n")
    assert await titles(kb, "zebra") == []
    assert await titles(kb, "yak") == ["New"]


async def test_a_changed_file_is_reindexed_when_searched(kb: KnowledgeService, tmp_path: Path) -> None:
    doc = tmp_path / "project" / "guide.md"
    doc.write_text("# Setup\nInstall with pip.\n")
    await kb.index_path("guide.md")
    doc.write_text("# Setup\nInstall with conda instead.\n")
    os.utime(doc, (doc.stat().st_atime, doc.stat().st_mtime + 5))
    reply = await kb.search(["conda"], session_id="s")
    assert "re-indexed 1 changed file" in reply.text and "conda instead" in reply.text


async def test_a_chunk_is_sent_once_per_session_then_only_named(kb: KnowledgeService) -> None:
    await kb.index_text(label="doc", name="d.md", text="# Alpha\nThe alpha section body.\n")
    first = await kb.search(["alpha"], session_id="s1")
    second = await kb.search(["alpha"], session_id="s1")
    other = await kb.search(["alpha"], session_id="s2")
    assert "The alpha section body." in first.text
    assert "already sent in search call 1" in second.text and "The alpha section body." not in second.text
    assert "The alpha section body." in other.text


async def test_the_reply_stays_within_the_byte_budget(kb: KnowledgeService) -> None:
    for i in range(20):
        await kb.index_text(label=f"doc{i}", name=f"d{i}.md", text=f"# Part {i}\n" + "budget words here. " * 150)
    reply = await kb.search(["budget words"], session_id="s", limit=20)
    assert reply.sent_bytes <= 6144 + 200
    # Twenty hits cannot each get a useful share: the lower-ranked ones are left out, and it says so.
    assert 5 <= reply.text.count("### Part") < 20
    assert "left out to stay within" in reply.text


HOSTILE = ['"', '""', '"unbalanced', "*", "a*", "NEAR(a b)", "^start", "(((", ")", "a AND OR NOT b", "col:val",
           "x" * 10_000, "🙂🚀 emoji", "中文 検索 한국어", "-", "'; DROP TABLE chunks; --", "\x00", "a - - b", "{a b}"]


@pytest.mark.parametrize("query", HOSTILE)
async def test_hostile_queries_never_raise(kb: KnowledgeService, query: str) -> None:
    await kb.index_text(label="doc", name="d.md", text="# Title\nSome text with 中文 and emoji 🙂 and NEAR words.\n")
    reply = await kb.search([query], session_id="s")
    assert reply.text.startswith(f"## {query}")  # a normal reply, headed by the query, not an error


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=300))
def test_any_query_string_searches_without_raising(tmp_path_factory: pytest.TempPathFactory, query: str) -> None:
    path = tmp_path_factory.getbasetemp() / "hostile.sqlite3"
    db = Database.open(path)
    try:
        repo = KnowledgeRepository(db.engine)
        if repo.get_source("doc") is None:
            from context_kernel.knowledge.chunking import chunk_document

            repo.replace_source(label="doc", kind="text", chunks=chunk_document("# T\nsome words here\n", name="d.md"))
        search(repo, query)
    finally:
        db.close()


async def test_the_source_name_counts_as_the_documents_title(kb: KnowledgeService) -> None:
    # Reference pages title their sections `Parameters`, `Notes`...: the page's name is in the label.
    await kb.index_text(label="docs/sql-cluster.md", name="sql-cluster.md",
                        text="## Parameters\nFULL vacuum first, full.\n")
    await kb.index_text(label="docs/sql-vacuum.md", name="sql-vacuum.md",
                        text="## Parameters\nFULL selects a full vacuum, which reclaims more space on disk.\n")
    hits = await titles(kb, "vacuum full")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "vacuum full"))
    assert hits == ["Parameters", "Parameters"]
    assert result.hits[0].chunk.label == "docs/sql-vacuum.md"


async def test_the_section_defining_an_identifier_beats_one_that_mentions_it_more(kb: KnowledgeService) -> None:
    # Reference text defines a name at the head of a line (`name` (`type`), then what it does);
    # guides mention it more often and would otherwise win on counts alone.
    await kb.index_text(label="guide", name="guide.md", text=(
        "# Bulk loading\nRaise `max_wal_size` before a bulk load: a larger max_wal_size means fewer "
        "checkpoints, and max_wal_size can go back down afterwards.\n"))
    await kb.index_text(label="reference", name="reference.md", text=(
        "# Checkpoints\nSettings of the checkpointer.\n\n`max_wal_size` (`integer`)\n\n"
        "Maximum size to let the WAL grow during automatic checkpoints.\n"))
    assert (await titles(kb, "max_wal_size"))[0] == "Checkpoints"


async def test_a_misspelling_that_stems_far_from_its_word_is_corrected_by_its_one_edit_neighbours(
        kb: KnowledgeService) -> None:
    # `numric` stems to itself and `numeric` to `numer` (three edits apart): the stem comparison
    # finds nothing close, the typed word's one-edit neighbour `numeric` is indexed.
    await kb.index_text(label="types", name="types.md", text=(
        "# Numeric types\nThe type numeric can store numbers with a very large number of digits: a column of "
        "it can hold many.\n"))
    await kb.index_text(label="misc", name="misc.md", text="# Misc\nUnrelated words about gardening.\n")
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine), "how many digits can a numric column hold"))
    assert [h.chunk.title for h in result.hits] == ["Numeric types"]
    assert result.corrections == {"numric": "numeric"} and "numric" not in result.missing


async def test_a_question_of_many_words_the_index_lacks_is_not_respelled(kb: KnowledgeService) -> None:
    # Respelling costs ~25 ms a word on a real vocabulary: a question in everyday words the manual never
    # uses (four here, besides `numric`) is not a typo away from it, so none of its words is respelled.
    await kb.index_text(label="types", name="types.md", text=(
        "# Numeric types\nThe type numeric can store numbers with a very large number of digits.\n"))
    db: Database = kb.db  # type: ignore[attr-defined]
    result = await db.run(lambda: search(KnowledgeRepository(db.engine),
                                         "would grandma's numric piggybank overflow someday"))
    assert "numric" not in result.corrections and "numric" in result.missing


def test_one_edit_neighbours_cover_deletion_transposition_substitution_and_insertion() -> None:
    near = one_edit("numric")
    assert {"numeric", "nuric", "nmuric", "numrix"} <= near and "numric" not in near
