"""Counts in sentences people read: '1 section', '3 sections' (never '1 sections')."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun agreeing with it; `plural` for nouns that do not just take an s."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
