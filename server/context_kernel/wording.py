"""Counts in sentences people read: '1 section', '3 sections' (never '1 sections')."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun agreeing with it; `plural` for nouns that do not just take an s."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def size_text(n: float) -> str:
    """A byte count in the unit that reads best: '512 B', '55.6 KB', '113.1 MB', '2 MB', '1.2 GB' (1 KB = 1024 B)."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            # A whole number of its unit (a cap of 8 MB) reads without its `.0`.
            return f"{n:.0f} {unit}" if unit == "B" or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"
