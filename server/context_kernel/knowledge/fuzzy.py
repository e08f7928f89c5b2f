"""Fuzzy correction: a misspelt query word is replaced by the closest indexed word."""

from __future__ import annotations

from collections.abc import Callable

from rapidfuzz.distance import OSA
from rapidfuzz.process import extract


def edit_distance(a: str, b: str, limit: int) -> int:
    """Damerau–Levenshtein (optimal string alignment) distance, `limit + 1` when past `limit`."""
    return int(OSA.distance(a, b, score_cutoff=limit))


def allowed_distance(word: str) -> int:
    return 1 if len(word) <= 5 else 2


def correct(word: str, candidates: Callable[[str, int, int], list[tuple[str, int]]],
            raw: str | None = None) -> str | None:
    """The closest indexed word (ties: the more frequent), or None if nothing is close enough.

    `candidates(first_letter, min_len, max_len)` lists (indexed word or stem, document frequency).
    Candidates sharing the first letter are tried first; then those sharing the second.
    `raw`, the word as typed when `word` is its stem, breaks ties between equally close stems: a
    misspelling can stem oddly (`analize` → `anal`, one edit from `angl`, two from `analyz`), and
    the typed word is far from `angl` and close to `analyz`.
    """
    if len(word) < 4:
        return None
    limit = allowed_distance(raw or word)
    best: tuple[int, bool, int, str] | None = None
    for first in dict.fromkeys([word[0], word[1]]):
        found = candidates(first, len(word) - limit, len(word) + limit + 2)
        terms = [term for term, _ in found]
        if word in terms:
            return None  # the word exists: nothing to correct
        # Only terms within `limit` of the stem or of the typed word can win: found in C++ over all
        # candidates (thousands), then ranked exactly as before.
        near = {i for _, _, i in extract(word, terms, scorer=OSA.distance, score_cutoff=limit, limit=None)}
        if raw:
            near |= {i for _, _, i in extract(raw, terms, scorer=OSA.distance, score_cutoff=limit, limit=None)}
        for i in sorted(near):
            term, df = found[i]
            dist = edit_distance(word, term, limit)
            typed = edit_distance(raw, term, limit + 2) if raw else dist
            rank = dist + typed
            # Ties: the one keeping the first letter (typos rarely touch it), the more frequent, then the
            # alphabetically first, whatever the order.
            key = (rank, term[0] != word[0], -df, term)
            if best is None or key < best:
                best = key
    return best[3] if best else None


LETTERS = "abcdefghijklmnopqrstuvwxyz"
# A longer "word" is not a misspelling (a pasted hash, a run of one letter): its ~54 × length
# neighbours would cost more than they could find.
MAX_RESPELLED = 24


def one_edit(word: str) -> set[str]:
    """Every string one deletion, transposition, substitution or insertion away from `word`."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return ({a + b[1:] for a, b in splits if b}
            | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
            | {a + c + b[1:] for a, b in splits if b for c in LETTERS}
            | {a + c + b for a, b in splits for c in LETTERS}) - {word}


def neighbours(word: str, stem: Callable[[str], str],
               frequencies: Callable[[list[str]], dict[str, int]]) -> list[tuple[str, int]]:
    """The words one edit from `word` as typed whose stems are indexed, with the stem's document
    frequency, most frequent first (ties: alphabetical, so the order is the same every time)."""
    if not 4 <= len(word) <= MAX_RESPELLED or not word.isalpha():
        return []
    stems = {w: stem(w) for w in one_edit(word)}
    found = frequencies(sorted({s for s in stems.values() if len(s) >= 3}))
    return sorted(((w, found[s]) for w, s in stems.items() if s in found), key=lambda item: (-item[1], item[0]))


def word_respelling(word: str, is_listed: Callable[[str], bool], stem: Callable[[str], str],
                    frequencies: Callable[[list[str]], dict[str, int]]) -> str | None:
    """The indexed stem of the most frequent English word one edit from `word` as typed, or None.

    Tried before the closest indexed stem: a typo is one edit from the word meant, which is a word.
    Stems lose what tells two candidates apart (`convetion` is one edit from `convertion` and from
    `convention`, both stemming to indexed stems; the more frequent, `convert`, won), and the word
    list keeps only the real one. Cheap: the ~500 one-edit strings are filtered by the list first.
    """
    if not 4 <= len(word) <= MAX_RESPELLED or not word.isalpha():
        return None
    real = sorted(w for w in one_edit(word.lower()) if is_listed(w))
    if not real:
        return None
    stems = {w: stem(w) for w in real}
    found = frequencies(sorted({s for s in stems.values() if len(s) >= 3}))
    # A typo rarely touches the first letter: `alocate` is `allocate` (a word the list lacks; the closest
    # indexed stem finds it), not the more frequent `locate`. Two letters swapped are a typo's commonest
    # form and leave every letter typed: `modle` is `model`, not the more frequent `module`.
    typed = word.lower()
    near = sorted((not _swapped(typed, w), -found[s], w) for w, s in stems.items()
                  if s in found and w[0] == typed[0])
    return stems[near[0][2]] if near else None


def _swapped(typed: str, word: str) -> bool:
    """`word` is `typed` with two neighbouring letters swapped."""
    diff = [i for i, (a, b) in enumerate(zip(typed, word, strict=False)) if a != b]
    return (len(typed) == len(word) and len(diff) == 2 and diff[1] == diff[0] + 1
            and typed[diff[0]] == word[diff[1]] and typed[diff[1]] == word[diff[0]])


def respell(word: str, stem: Callable[[str], str],
            frequencies: Callable[[list[str]], dict[str, int]]) -> str | None:
    """The indexed stem of the most frequent word one edit from `word` as typed, or None.

    What `correct` cannot see: it compares stems, and a misspelling can stem far from the word
    meant (`numric` stays `numric`, `numeric` becomes `numer`: three edits apart). Spelling the
    typed word's neighbours out and stemming them finds `numeric` by one inserted letter.
    """
    near = neighbours(word, stem, frequencies)
    return stem(near[0][0]) if near else None
