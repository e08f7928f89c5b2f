"""Search over the knowledge base: porter + trigram FTS5, fused, reranked, fuzzy-corrected, snipped.

Synchronous on purpose: the whole search runs on the store's worker thread in one hop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store.knowledge import ChunkRow, KnowledgeRepository, fts_quote
from .fuzzy import correct
from .rank import fuse, rerank
from .snippets import MAX_SNIPPET_CHARS, Matcher, snippet
from .terms import WORD, query_terms, stem

CANDIDATES = 30
# A word in more chunks than this is too common to OR into the porter query (see _candidates).
COMMON_DF = 1000
# A stem in at most this many chunks is rare enough to look for as a substring too.
RARE = 3
MAX_TRIGRAMS_PER_TERM = 8


@dataclass(frozen=True)
class Hit:
    chunk: ChunkRow
    score: float
    snippet: str


@dataclass
class SearchResult:
    query: str
    hits: list[Hit] = field(default_factory=list)
    corrections: dict[str, str] = field(default_factory=dict)


@dataclass
class LexicalRanking:
    """Every lexical candidate of a query, reranked, best first (what search and fusion start from)."""
    matcher: Matcher
    ranked: list[tuple[int, float]]
    chunks: dict[int, ChunkRow]
    corrections: dict[str, str] = field(default_factory=dict)
    """Original word → the stem searched instead."""


def search(repo: KnowledgeRepository, query: str, *, limit: int = 5, source: str | None = None,
           kind: str | None = None, sort: str = "relevance", snippet_chars: int = MAX_SNIPPET_CHARS) -> SearchResult:
    result = SearchResult(query=query)
    lexical = rank_lexical(repo, query, source=source, kind=kind)
    if lexical is None:
        return result
    matcher, chunks = lexical.matcher, lexical.chunks
    hits = [Hit(chunks[cid], score, snippet(chunks[cid].content, matcher, snippet_chars))
            for cid, score in lexical.ranked[:limit]]
    finish(result, hits, lexical.corrections, sort)
    return result


def rank_lexical(repo: KnowledgeRepository, query: str, *, source: str | None = None,
                 kind: str | None = None) -> LexicalRanking | None:
    """None when the query has no searchable word."""
    terms = query_terms(query)
    if not terms:
        return None
    known = repo.stem_frequencies(list({stem(t) for t in terms}))
    fixed = _corrected(repo, terms, known)
    corrections: dict[str, str] = {}
    if fixed:
        corrections = {t: f for t, f in zip(terms, fixed, strict=False) if t != f}
        terms = fixed
    matcher = Matcher(terms)
    ranked = _candidates(repo, terms, source, kind, known)
    if not ranked:
        return LexicalRanking(matcher, [], {}, corrections)
    chunks = repo.chunks(list(ranked))
    return LexicalRanking(matcher, rerank(ranked, chunks, matcher), chunks, corrections)


def finish(result: SearchResult, hits: list[Hit], corrections: dict[str, str], sort: str) -> None:
    """Spell corrections as words of the hits, order by time if asked, and set the hits."""
    if corrections:
        result.corrections = {orig: _spelled(stemmed, hits) for orig, stemmed in corrections.items()}
    if sort == "timeline":
        hits.sort(key=lambda h: (h.chunk.indexed_at, h.chunk.source_id, h.chunk.seq))
    result.hits = hits


def trigram_expression(term: str) -> str:
    """All of a term's trigrams (the index keeps no positions): a superset the reranker narrows."""
    grams = [term[i:i + 3] for i in range(len(term) - 2)]
    if len(grams) > MAX_TRIGRAMS_PER_TERM:
        step = (len(grams) - 1) / (MAX_TRIGRAMS_PER_TERM - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS_PER_TERM)]
    quoted = [fts_quote(g) for g in dict.fromkeys(grams)]
    return quoted[0] if len(quoted) == 1 else "(" + " AND ".join(quoted) + ")"


def _candidates(repo: KnowledgeRepository, terms: list[str], source: str | None,
                kind: str | None, known: dict[str, int]) -> dict[int, float]:
    # BM25 over an OR of words scores every chunk holding any of them: a word in tens of thousands
    # of chunks made that 45 ms at 100,000 chunks while adding little to the ranking. Such common
    # words are left to an AND query (posting lists intersect, cheap) and to the reranker.
    uncommon = [t for t in terms if known.get(stem(t), 0) <= COMMON_DF]
    lists: list[list[int]] = []
    if uncommon:
        lists.append([cid for cid, _ in repo.match("porter", " OR ".join(fts_quote(t) for t in uncommon),
                                                   limit=CANDIDATES, source=source, kind=kind)])
    if len(uncommon) < len(terms):
        lists.append([cid for cid, _ in repo.match("porter", " AND ".join(fts_quote(t) for t in terms),
                                                   limit=CANDIDATES, source=source, kind=kind)])
    # The trigram index answers what porter cannot: parts of identifiers (`useEff`), words glued
    # together, rare spellings. Whole words porter already knows would only make it slow.
    tri_terms = [t for t in terms if len(t) >= 3 and (stem(t) not in known or known[stem(t)] <= RARE)]
    trigram = _trigram_match(repo, " OR ".join(trigram_expression(t) for t in tri_terms), limit=CANDIDATES,
                             source=source, kind=kind) if tri_terms else []
    return fuse(*lists, [cid for cid, _ in trigram])


def _trigram_match(repo: KnowledgeRepository, expression: str, *, limit: int, source: str | None = None,
                   kind: str | None = None) -> list[tuple[int, float]]:
    # Indexing leaves the trigram index to a background pass (migration 004): a search that needs
    # it first adds what that pass has not reached yet, so it never misses freshly indexed text.
    repo.catch_up_trigram()
    return repo.match("trigram", expression, limit=limit, source=source, kind=kind)


def _corrected(repo: KnowledgeRepository, terms: list[str], known: dict[str, int]) -> list[str] | None:
    """Replace words found nowhere in the index (not as a stem, not as a substring) by the closest stem."""
    stems = {t: stem(t) for t in terms if len(t) >= 4}
    fixed = []
    for term in terms:
        if term not in stems or stems[term] in known or _trigram_match(repo, trigram_expression(term), limit=1):
            fixed.append(term)
        else:
            fixed.append(correct(stems[term], repo.stems_near) or term)
    return fixed if fixed != terms else None


def _spelled(stemmed: str, hits: list[Hit]) -> str:
    """Show a correction as a real word from the results (`kubernetes`), not its stem (`kubernet`)."""
    for hit in hits[:3]:
        for word in WORD.findall(hit.chunk.content):
            if stem(word) == stemmed:
                return str(word).lower()
    return stemmed
