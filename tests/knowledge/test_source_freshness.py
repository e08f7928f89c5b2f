"""What search returns follows the sources: duplicates once, deleted files gone, narrowed
directories pruned."""

from __future__ import annotations

from pathlib import Path

import pytest

from context_kernel.knowledge.service import KnowledgeService

pytestmark = pytest.mark.anyio


async def test_identical_content_under_three_sources_comes_back_once_naming_the_others(
        kb: KnowledgeService) -> None:
    text = "# Vendored licence\nPermission is hereby granted, free of charge, to any person obtaining a copy.\n"
    for label in ("vendor/a/LICENSE", "vendor/b/LICENSE", "vendor/c/LICENSE"):
        await kb.index_text(label=label, text=text, name="LICENSE.md")
    reply = await kb.search(["permission granted free of charge"], session_id="s")
    assert reply.text.count("Permission is hereby granted") == 1
    assert reply.hits == 1
    assert "vendor/b/LICENSE" in reply.text and "vendor/c/LICENSE" in reply.text


async def test_a_deleted_file_stops_being_returned(kb: KnowledgeService, tmp_path: Path) -> None:
    doc = tmp_path / "project" / "notes.md"
    doc.write_text("# Notes\nThe quokka is a small marsupial.\n")
    await kb.index(path="notes.md")
    assert "quokka" in (await kb.search(["quokka marsupial"], session_id="s1")).text
    doc.unlink()
    reply = await kb.search(["quokka marsupial"], session_id="s2")
    assert "small marsupial" not in reply.text
    assert "notes.md" in reply.text and "deleted" in reply.text


async def test_reindexing_a_directory_narrower_removes_the_files_it_no_longer_covers(
        kb: KnowledgeService, tmp_path: Path) -> None:
    docs = tmp_path / "project" / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\nThe axolotl regrows its limbs.\n")
    (docs / "tool.py").write_text("def axolotl_count():\n    return 3\n")
    await kb.index(path="docs")
    assert "axolotl_count" in (await kb.search(["axolotl"], session_id="s1")).text
    await kb.index(path="docs", include=["*.md"])
    reply = await kb.search(["axolotl"], session_id="s2")
    assert "regrows its limbs" in reply.text
    assert "axolotl_count" not in reply.text


async def test_a_file_indexed_after_a_search_is_watched_by_the_next(kb: KnowledgeService, tmp_path: Path) -> None:
    # The watched files are kept between searches while the index is unchanged; indexing must renew them.
    (tmp_path / "project" / "a.md").write_text("# A\nThe wombat digs burrows.\n")
    await kb.index(path="a.md")
    assert "wombat" in (await kb.search(["wombat burrows"], session_id="s1")).text
    later = tmp_path / "project" / "b.md"
    later.write_text("# B\nThe numbat eats termites.\n")
    await kb.index(path="b.md")
    later.write_text("# B\nThe numbat eats termites, and now ants too.\n")
    reply = await kb.search(["numbat termites"], session_id="s2")
    assert "now ants too" in reply.text and "re-indexed 1 changed file" in reply.text


async def test_a_changed_file_is_searched_as_it_is_now_even_when_nothing_else_changed(
        kb: KnowledgeService, tmp_path: Path) -> None:
    doc = tmp_path / "project" / "c.md"
    doc.write_text("# C\nThe bilby is nocturnal.\n")
    await kb.index(path="c.md")
    await kb.search(["bilby"], session_id="s1")
    doc.write_text("# C\nThe bilby is nocturnal and has long ears like a rabbit.\n")
    reply = await kb.search(["bilby rabbit ears"], session_id="s2")
    assert "long ears like a rabbit" in reply.text


async def test_an_empty_file_indexed_after_a_search_is_watched_too(kb: KnowledgeService, tmp_path: Path) -> None:
    # An empty file adds a source but no text: the full-text index does not change with it.
    (tmp_path / "project" / "a.md").write_text("# A\nThe echidna lays eggs.\n")
    await kb.index(path="a.md")
    await kb.search(["echidna"], session_id="s1")
    empty = tmp_path / "project" / "todo.md"
    empty.write_text("")
    await kb.index(path="todo.md")
    empty.write_text("# Todo\nFeed the platypus.\n")
    assert "Feed the platypus" in (await kb.search(["platypus"], session_id="s2")).text


async def test_a_deleted_empty_file_is_reported_dropped_once(kb: KnowledgeService, tmp_path: Path) -> None:
    # Dropping an empty file's source leaves the full-text index and the newest source id as they were.
    (tmp_path / "project" / "a.md").write_text("# A\nThe wombat digs burrows.\n")
    await kb.index(path="a.md")
    empty = tmp_path / "project" / "todo.md"
    empty.write_text("")
    await kb.index(path="todo.md")
    await kb.index(path="a.md", source="later")  # todo.md is no longer the newest source
    await kb.search(["wombat"], session_id="s1")
    empty.unlink()
    first = await kb.search(["wombat"], session_id="s2")
    again = await kb.search(["wombat burrows"], session_id="s3")
    assert "todo.md" in first.text and "deleted" in first.text
    assert "todo.md" not in again.text, again.text


async def test_a_file_added_to_an_indexed_folder_is_found_by_the_next_search(
        kb: KnowledgeService, tmp_path: Path) -> None:
    docs = tmp_path / "project" / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\nThe axolotl regrows its limbs.\n")
    (docs / "skip.log").write_text("the narwhal log line\n")
    await kb.index(path="docs", source="handbook", exclude=["*.log"])
    (docs / "b.md").write_text("# B\nThe pangolin is covered in scales.\n")
    (docs / "also.log").write_text("a pangolin line excluded by the folder's own options\n")
    reply = await kb.search(["pangolin scales"], session_id="s1")
    assert "The pangolin is covered in scales." in reply.text, reply.text
    assert "(indexed 1 file(s) added to indexed folders since: handbook/b.md)" in reply.text
    assert "excluded by the folder's own options" not in reply.text  # the walk keeps the index call's options
    again = await kb.search(["pangolin scales"], session_id="s2")
    assert "indexed 1 file(s)" not in again.text  # known now: not indexed twice


def test_a_folder_is_walked_again_at_most_every_few_seconds() -> None:
    from context_kernel.knowledge.new_files import RESCAN_S, NewFiles
    from context_kernel.store.indexed_dirs import IndexedDir

    now = [100.0]
    watch = NewFiles(clock=lambda: now[0])
    docs = IndexedDir("/p/docs", "", {}, None)
    assert watch.due([docs]) == [docs]
    now[0] += RESCAN_S / 2
    assert watch.due([docs]) == []
    now[0] += RESCAN_S / 2
    assert watch.due([docs]) == [docs]
