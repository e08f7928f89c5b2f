"""Is it a word? A general English word list, for not "correcting" words that are simply absent.

A word the index lacks is corrected into the closest indexed word only when it is no word at all:
`defect` became `detect`, `stop` became `step`, `three` became `there`, each searched as the other
word and announced as a correction. The list is the whole words of the WordPiece vocabulary of
BERT base uncased (Apache-2.0, 21,358 lower-case words of three letters or more), which every
sentence-transformers MiniLM ships; words glued from two of them (`readline`, `dataframe`) count too.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

WORDS_FILE = Path(__file__).with_name("english_words.txt")
MIN_PART = 3


@cache
def _words() -> frozenset[str]:
    return frozenset(WORDS_FILE.read_text(encoding="utf-8").split())


def is_listed(word: str) -> bool:
    """A word of the list itself (not two glued together)."""
    return word.lower() in _words()


def is_word(word: str) -> bool:
    """A known English word, or two glued together (`readline`, `filesystem`)."""
    low = word.lower()
    known = _words()
    if low in known:
        return True
    return any(low[:i] in known and low[i:] in known for i in range(MIN_PART, len(low) - MIN_PART + 1))
