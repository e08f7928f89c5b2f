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
