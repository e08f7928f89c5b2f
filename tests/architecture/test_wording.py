"""Counts agree with their nouns in every reply that states one."""

from __future__ import annotations

from context_kernel.wording import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert [counted(n, "section") for n in (0, 1, 2)] == ["0 sections", "1 section", "2 sections"]
    assert counted(1, "older session") == "1 older session"
    assert counted(3, "index", "indices") == "3 indices" and counted(1, "index", "indices") == "1 index"
