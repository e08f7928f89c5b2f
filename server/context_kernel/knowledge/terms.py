"""Words of queries and documents: tokenising, stop words and stems (the same porter FTS5 uses)."""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Splits camelCase and snake_case so `useEffect` also yields `use`, `effect`.
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

STOPWORDS = frozenset([
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do",
    "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having",
    "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on",
    "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so",
    "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these",
    "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    "yourself", "yourselves", "use", "using", "get", "show", "tell", "find", "want", "need", "way", "does", "do",
    "make", "give"
])

_stemmer = snowballstemmer.stemmer("porter")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_stemmer.stemWord(word.lower()))


# Endings tried, in order, to spell a stem as a word (`surface`): the commonest ones porter removes.
_ENDINGS = ("e", "s", "y", "es", "ing", "ed", "ion", "ive", "al", "er", "ly", "ation", "ment", "ity", "ize", "ous")


def surface(stemmed: str) -> str:
    """A word whose stem is `stemmed`, to search it by: the index's tokenizer stems what it is given again,
    and a stem is not always its own stem (`recursive` stems to `recurs`, `recurs` to `recur`, so a typo
    corrected to `recurs` found nothing). The stem itself when it is one, or when no common ending fits."""
    if stem(stemmed) == stemmed:
        return stemmed
    return next((stemmed + end for end in _ENDINGS if stem(stemmed + end) == stemmed), stemmed)


def words(text: str) -> list[str]:
    """Every word of `text`, lower-cased, in order (what unicode61 would index)."""
    return [w.lower() for w in WORD.findall(text)]


def query_terms(query: str) -> list[str]:
    """The words of a query worth searching for: no stop words, unless the query is only stop words."""
    all_words = words(query[:2000])
    kept = [w for w in all_words if w not in STOPWORDS]
    terms = kept or all_words
    seen: set[str] = set()
    unique = []
    for term in terms:
        if term not in seen:
            seen.add(term)
            unique.append(term)
    return unique[:32]


def sub_words(word: str) -> list[str]:
    """Parts of a camelCase / snake_case identifier, lower-cased."""
    return [p.lower() for p in _CAMEL.findall(word)] if word else []


def is_distinctive(word: str) -> bool:
    """A word, not a number, id or line reference: used for follow-up search suggestions."""
    return (len(word) >= 4 and word not in STOPWORDS and not any(ch.isdigit() for ch in word)
            and len(word) <= 30)
