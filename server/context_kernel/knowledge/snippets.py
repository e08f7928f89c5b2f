"""Snippets: windows of a chunk around the words that matched, so a hit shows its evidence."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from .terms import stem, sub_words

MAX_SNIPPET_CHARS = 1500
CONTEXT_CHARS = 240


class Matcher:
    """Decides whether a document word matches the query: same stem, a camelCase part's stem, or a substring."""

    def __init__(self, terms: list[str], weights: dict[str, float] | None = None) -> None:
        self.terms = terms
        self.stems = {stem(t) for t in terms}
        self.weights = weights or {}
        """Stem → how much finding it says (its rarity in the index); 1.0 for stems not given."""
        self._substrings = [t for t in terms if len(t) >= 4]
        self._memo: dict[str, str | None] = {}
        # Only words containing the start of a query stem can match: find those with one regex
        # instead of stemming every word of every candidate chunk.
        # Only words containing the start of a query stem can match: find those with one regex
        # instead of stemming every word of every candidate chunk. Heads are lower case and the regex
        # runs on the lower-cased text: IGNORECASE made the scan ~5x slower.
        heads = sorted({s[:4] for s in self.stems if s} | {t[:4] for t in self._substrings}, key=len, reverse=True)
        self._heads = re.compile("|".join(re.escape(h) for h in heads)) if heads else None
        self._heads_any_case = re.compile(self._heads.pattern, re.IGNORECASE) if self._heads else None

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
        if self._heads is None or self._heads_any_case is None:
            return found
        low = text.lower()
        # A few characters lower-case into two (`İ`): offsets in `low` would drift from `text`.
        scan = self._heads.finditer(low) if len(low) == len(text) else self._heads_any_case.finditer(text)
        key, tail = self.key, _WORD_TAIL.match
        last_end = -1
        for m in scan:
            start = m.start()
            if start < last_end:
                continue  # inside a word already looked at
            while start > 0 and text[start - 1].isalnum():  # letters and digits, as terms.WORD: not `_`
                start -= 1
            rest = tail(text, m.end())  # `[^\W_]*` always matches, if only the empty string
            end = last_end = rest.end() if rest else m.end()
            k = key(text[start:end])
            if k is not None:
                found.append((start, end, k))
        return found


_WORD_TAIL = re.compile(r"[^\W_]*")


def share_out(wants: list[int], budget: int) -> list[int]:
    """Split `budget` between hits wanting `wants` chars: equal shares, and what a small hit does
    not need goes to the larger ones (water-filling), in the hits' order."""
    given = [0] * len(wants)
    left, pending = budget, len(wants)
    for i in sorted(range(len(wants)), key=lambda i: wants[i]):
        given[i] = max(0, min(wants[i], left // pending))
        left -= given[i]
        pending -= 1
    return given


def snippet(content: str, matcher: Matcher, limit: int = MAX_SNIPPET_CHARS) -> str:
    """Line-aligned windows around matches, densest first, up to `limit` chars, in document order.

    Dense means holding more of the query's distinct words, then more matches. A window larger
    than the limit is narrowed to its densest run of whole lines: a cut never falls inside a line
    (half a line of code is worse than none).
    """
    if len(content) <= limit:
        return content
    hits = matcher.positions(content)
    if not hits:
        return _whole_lines(content, 0, limit) + "\n…"
    return render(content, word_windows(content, hits, limit, matcher.weights))


def word_windows(content: str, hits: list[tuple[int, int, str]], limit: int,
                 weights: dict[str, float] | None = None) -> list[tuple[int, int]]:
    """The spans snippet() shows for these matches, up to `limit` chars in all: first the window holding
    the most (rare) query words, then those adding words the chosen ones lack."""
    def weigh(found: set[str]) -> float:
        # fsum: exact whatever order a set of words is iterated in (it differs between processes), so
        # windows of equal weight tie the same way in every server.
        return math.fsum(weights.get(k, 1.0) for k in found) if weights else float(len(found))

    windows: list[list[int]] = []
    keys: list[set[str]] = []
    for start, end, key in hits:
        lo = content.rfind("\n", 0, max(0, start - CONTEXT_CHARS)) + 1
        hi = content.find("\n", min(len(content), end + CONTEXT_CHARS))
        hi = len(content) if hi == -1 else hi
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
            windows[-1][2] += 1
            keys[-1].add(key)
        else:
            windows.append([lo, hi, 1])
            keys.append({key})
    chosen: list[tuple[int, int]] = []
    used = 0
    covered: set[str] = set()
    left = list(range(len(windows)))
    while left:
        # Greedy cover: the window adding the most weight of query words not shown yet, then the most
        # matches. A question naming two things gets a passage for each, not two for the first.
        w = max(left, key=lambda w: (weigh(keys[w] - covered), weigh(keys[w]), windows[w][2], -w))
        left.remove(w)
        lo, hi, _ = windows[w]
        if used + hi - lo > limit:
            if not chosen:
                chosen.append(_densest_lines(content, lo, hi, hits, limit, weigh))
                used = chosen[0][1] - chosen[0][0]
                covered |= keys[w]
            continue
        chosen.append((lo, hi))
        used += hi - lo
        covered |= keys[w]
    return chosen


def render(content: str, spans: list[tuple[int, int]]) -> str:
    """Spans of `content` in document order, "…" where text is left out."""
    chosen = sorted(spans)
    parts = [content[lo:hi].strip("\n") for lo, hi in chosen]
    prefix = "…\n" if chosen[0][0] > 0 else ""
    suffix = "\n…" if chosen[-1][1] < len(content) else ""
    return prefix + "\n…\n".join(parts) + suffix


def _whole_lines(content: str, lo: int, limit: int) -> str:
    piece = content[lo:lo + limit]
    if lo + limit < len(content) and "\n" in piece:
        piece = piece.rsplit("\n", 1)[0]
    return piece


def _densest_lines(content: str, lo: int, hi: int, hits: list[tuple[int, int, str]], limit: int,
                   weigh: Callable[[set[str]], float] = len) -> tuple[int, int]:
    """The run of whole lines in [lo, hi) of at most `limit` chars holding the most distinct query
    words, then the most matches."""
    starts = [lo]
    while True:
        nl = content.find("\n", starts[-1], hi)
        if nl == -1:
            break
        starts.append(nl + 1)
    ends = [*starts[1:], hi]
    per_line: list[list[str]] = [[] for _ in starts]
    line = 0
    for start, _, key in hits:
        if not lo <= start < hi:
            continue
        while line + 1 < len(starts) and starts[line + 1] <= start:
            line += 1
        per_line[line].append(key)
    best: tuple[float, int, int, int] = (-1.0, -1, 0, 0)
    first = 0
    counts: dict[str, int] = {}
    total = 0
    for last in range(len(starts)):
        for key in per_line[last]:
            counts[key] = counts.get(key, 0) + 1
            total += 1
        while first < last and ends[last] - starts[first] > limit:
            for key in per_line[first]:
                counts[key] -= 1
                if not counts[key]:
                    del counts[key]
                total -= 1
            first += 1
        if counts and ends[last] - starts[first] <= limit and (weigh(set(counts)), total) > best[:2]:
            best = (weigh(set(counts)), total, first, last)
    if best[0] < 0:
        # Every matching line is longer than the limit (a prose paragraph on one line): the only
        # cut that must fall inside a line, made at spaces, around the first match.
        first_hit = next(start for start, _, _ in hits if lo <= start < hi)
        begin = max(lo, first_hit - limit // 4)
        if begin > lo:
            space = content.find(" ", begin, first_hit)
            begin = space + 1 if space != -1 else begin
        end = min(hi, begin + limit)
        if end < hi:
            space = content.rfind(" ", first_hit, end)
            end = space if space > first_hit else end
        return begin, end
    return starts[best[2]], ends[best[3]]
