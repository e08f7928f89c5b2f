"""Snippets: windows of a chunk around the words that matched, so a hit shows its evidence."""

from __future__ import annotations

import re

from .terms import stem, sub_words

MAX_SNIPPET_CHARS = 1500
CONTEXT_CHARS = 240


class Matcher:
    """Decides whether a document word matches the query: same stem, a camelCase part's stem, or a substring."""

    def __init__(self, terms: list[str]) -> None:
        self.terms = terms
        self.stems = {stem(t) for t in terms}
        self._substrings = [t for t in terms if len(t) >= 4]
        self._memo: dict[str, str | None] = {}
        # Only words containing the start of a query stem can match: find those with one regex
        # instead of stemming every word of every candidate chunk.
        heads = sorted({s[:4] for s in self.stems if s} | {t[:4] for t in self._substrings}, key=len, reverse=True)
        self._heads = re.compile("|".join(re.escape(h) for h in heads), re.IGNORECASE) if heads else None

    def key(self, word: str) -> str | None:
        """The query stem this document word stands for, or None (memoised: documents repeat words)."""
        try:
            return self._memo[word]
        except KeyError:
            found = self._memo[word] = self._key(word)
            return found

    def _key(self, word: str) -> str | None:
        low = word.lower()
        s = stem(low)
        if s in self.stems:
            return s
        for part in sub_words(word):
            ps = stem(part)
            if ps in self.stems:
                return ps
        for term in self._substrings:
            if term in low:
                return stem(term)
        return None

    def positions(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, stem) of every matching word in `text`."""
        found: list[tuple[int, int, str]] = []
        if self._heads is None:
            return found
        last_end = -1
        n = len(text)
        for m in self._heads.finditer(text):
            if m.start() < last_end:
                continue  # inside a word already looked at
            start, end = m.start(), m.end()
            while start > 0 and _is_word_char(text[start - 1]):
                start -= 1
            while end < n and _is_word_char(text[end]):
                end += 1
            last_end = end
            k = self.key(text[start:end])
            if k is not None:
                found.append((start, end, k))
        return found


def _is_word_char(ch: str) -> bool:
    # The same characters as terms.WORD: letters and digits, not the underscore.
    return ch.isalnum()


def snippet(content: str, matcher: Matcher, limit: int = MAX_SNIPPET_CHARS) -> str:
    """Line-aligned windows around matches, densest first, up to `limit` chars, in document order."""
    if len(content) <= limit:
        return content
    hits = matcher.positions(content)
    if not hits:
        return content[:limit].rsplit("\n", 1)[0] + "\n…"
    windows: list[list[int]] = []
    for start, end, _ in hits:
        lo = content.rfind("\n", 0, max(0, start - CONTEXT_CHARS)) + 1
        hi = content.find("\n", min(len(content), end + CONTEXT_CHARS))
        hi = len(content) if hi == -1 else hi
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
            windows[-1][2] += 1
        else:
            windows.append([lo, hi, 1])
    chosen: list[list[int]] = []
    used = 0
    for win in sorted(windows, key=lambda w: -w[2]):
        size = win[1] - win[0]
        if used + size > limit:
            if not chosen:  # a single dense window larger than the limit: centre it on its matches
                chosen.append([win[0], win[0] + limit, win[2]])
            continue
        chosen.append(win)
        used += size
    chosen.sort()
    parts = [content[lo:hi].strip("\n") for lo, hi, _ in chosen]
    prefix = "…\n" if chosen[0][0] > 0 else ""
    suffix = "\n…" if chosen[-1][1] < len(content) else ""
    return prefix + "\n…\n".join(parts) + suffix
