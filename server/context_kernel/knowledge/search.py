"""Search over the knowledge base: porter + trigram FTS5, fused, reranked, fuzzy-corrected, snipped.

Synchronous on purpose: the whole search runs on the store's worker thread in one hop.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..store.knowledge import ChunkRow, KnowledgeRepository, fts_quote
from .fuzzy import correct, neighbours, respell, word_respelling
from .lexicon import is_listed, is_word
from .rank import RRF_K, diversify, fuse, rerank
from .snippets import MAX_SNIPPET_CHARS, Matcher, snippet
from .terms import STOPWORDS, WORD, query_terms, stem, surface, words

CANDIDATES = 30
# Sections of the sources a query names (by file name) that join the candidates, and how few sources
# a word may name to count as naming them (`sort` names sort.1; `struct` names every rustdoc struct).
NAMED_CANDIDATES = 10
NAMED_MAX = 3
NAMED_SHARE = 0.01
# A word in more chunks than this is too common to OR into the porter query (see _candidates).
COMMON_DF = 1000
# A stem in at most this many chunks is rare enough to look for as a substring too.
RARE = 3
MAX_TRIGRAMS_PER_TERM = 8
# A term matching more chunks than this in the trigram index is not looked for there (see _candidates).
TRIGRAM_SELECTIVE = 300
# Chunks matching an identifier's trigrams whose text is checked for it, at most (_holds).
HOLDS_SCAN = 2000
# A query token holding `_`, a digit, an inner dot or a camelCase hump names something exact.
_TOKEN = re.compile(r"[\w.]+(?:-[\w.]+)*")  # `CVE-2023-40217` is one name
_IDENTIFIER = re.compile(r"_|\d|\w\.\w|[a-z][A-Z]")


@dataclass(frozen=True)
class Hit:
    chunk: ChunkRow
    score: float
    snippet: str
    also_in: tuple[str, ...] = ()
    """Other sources holding the very same text (a vendored file, a copied page): named, not repeated."""
    window: tuple[int, int] | None = None
    """The span of the chunk the model found closest (hybrid hits): the reply's snippet is cut around it."""


@dataclass
class SearchResult:
    query: str
    hits: list[Hit] = field(default_factory=list)
    corrections: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    """Query identifiers and words that no section (of the asked kind or source) holds."""
    matcher: Matcher | None = None
    """What matched, for the reply to cut snippets to the size it can give each hit."""


@dataclass
class LexicalRanking:
    """Every lexical candidate of a query, reranked, best first (what search and fusion start from)."""
    matcher: Matcher | None
    """None when every word of the query was an identifier nothing holds."""
    ranked: list[tuple[int, float]]
    chunks: dict[int, ChunkRow]
    corrections: dict[str, str] = field(default_factory=dict)
    """Original word → the stem searched instead."""
    missing: list[str] = field(default_factory=list)
    """Query identifiers and words that no section holds (said in the reply)."""
    named: bool = False
    """The query names a source (an error message's program: `umount: …`)."""


def search(repo: KnowledgeRepository, query: str, *, limit: int = 5, source: str | None = None,
           kind: str | None = None, sort: str = "relevance", snippet_chars: int = MAX_SNIPPET_CHARS,
           lexical: LexicalRanking | None = None) -> SearchResult:
    """`lexical`: the query's lexical ranking when the caller has it already (rank_lexical, same arguments)."""
    result = SearchResult(query=query)
    if lexical is None:
        lexical = rank_lexical(repo, query, source=source, kind=kind)
    if lexical is None:
        return result
    result.missing, result.matcher = lexical.missing, lexical.matcher
    matcher, chunks = lexical.matcher, lexical.chunks
    if matcher is None:
        return result
    hits = [Hit(chunks[cid], score, snippet(chunks[cid].content, matcher, snippet_chars), also)
            for cid, score, also in fold_identical(diversify(lexical.ranked, chunks, matcher, limit), chunks, limit)]
    finish(result, hits, lexical.corrections, sort)
    return result


def rank_lexical(repo: KnowledgeRepository, query: str, *, source: str | None = None,
                 kind: str | None = None) -> LexicalRanking | None:
    """None when the query has no searchable word."""
    if not query_terms(query):
        return None
    query, exact, missing, respelled = _identifiers_of(repo, query, source, kind)
    terms = query_terms(query)
    protected = {w for ident in exact for w in words(ident)}
    lost = {w for ident in missing for w in words(ident)} - _other_words(query, exact)
    terms = [t for t in terms if t not in lost]
    if not terms:
        return LexicalRanking(None, [], {}, {}, missing)
    known = repo.stem_frequencies(list({stem(t) for t in terms}))
    fixed, absent = _corrected(repo, terms, known, protected)
    missing += absent
    corrections: dict[str, str] = dict(respelled)
    if fixed:
        # A typo of a word too common to search (`wich`: `which`, `with`) is dropped as that word would be.
        corrections |= {t: f for t, f in zip(terms, fixed, strict=False) if t != f and f not in STOPWORDS}
        terms = [f for f in fixed if f not in STOPWORDS] or fixed
        # A corrected word is ranked as if typed right: `fucntion` → `function`, a word in most sections,
        # must go to the AND query and skip the trigram index as `function` itself does.
        known |= repo.stem_frequencies(list({stem(t) for t in fixed} - set(known)))
    matcher = Matcher(terms, rarity(repo, terms, known))
    named = _named_sources(repo, query)
    ranked = _candidates(repo, terms, source, kind, known, named)
    if not ranked:
        return LexicalRanking(matcher, [], {}, corrections, missing)
    chunks = repo.chunks(list(ranked))
    defined = [ident for ident in exact if ident not in missing]
    return LexicalRanking(matcher, rerank(ranked, chunks, matcher, defined, set(named)), chunks, corrections,
                          missing, named=bool(named))


def _identifiers_of(repo: KnowledgeRepository, query: str, source: str | None,
                    kind: str | None) -> tuple[str, list[str], list[str], dict[str, str]]:
    """(the query with misspelt identifiers respelled, its identifiers, those no section holds, the respellings).

    An identifier is looked for as itself: its parts are never "corrected" alone (`API_TOKEN` became
    `taken`), and when nothing holds it, its parts alone (`prep`, `cif`) only find unrelated text.
    It may be respelled whole, into an identifier the text holds (`autovacum_naptime`)."""
    exact = identifiers(query)
    missing = [ident for ident in exact if not _holds(repo, ident, source, kind)]
    respelled = {ident: respelt for ident in missing[:MAX_RESPELLS]
                 if (respelt := _respelled_identifier(repo, ident, source, kind)) is not None}
    for ident, respelt in respelled.items():
        query = query.replace(ident, respelt)
    if respelled:
        exact = identifiers(query)
        missing = [ident for ident in missing if ident not in respelled]
    return query, exact, missing, respelled


def rarity(repo: KnowledgeRepository, terms: list[str], known: dict[str, int]) -> dict[str, float]:
    """Stem → log(1 + chunks / chunks holding it): a word in every section says little about any."""
    total = max(1, repo.chunk_span())
    return {stem(t): math.log(1 + total / (1 + known.get(stem(t), 0))) for t in terms}


def finish(result: SearchResult, hits: list[Hit], corrections: dict[str, str], sort: str) -> None:
    """Spell corrections as words of the hits, order by time if asked, and set the hits."""
    if corrections:
        result.corrections = {orig: _spelled(stemmed, hits) for orig, stemmed in corrections.items()}
    if sort == "timeline":
        hits.sort(key=lambda h: (h.chunk.indexed_at, h.chunk.source_id, h.chunk.seq))
    result.hits = hits


def fold_identical(ranked: list[tuple[int, float]], chunks: dict[int, ChunkRow],
          limit: int) -> list[tuple[int, float, tuple[str, ...]]]:
    """The best `limit` hits with identical texts folded into the first, which names where else
    the text is: other sources by label, the same source's other sections by title."""
    kept: dict[str, tuple[int, float, list[str]]] = {}
    for cid, score in ranked:
        chunk = chunks[cid]
        key = chunk.content.strip()
        if key in kept:
            first = chunks[kept[key][0]]
            where = chunk.label if chunk.label != first.label else chunk.title
            if where not in kept[key][2] and where not in (first.label, first.title):
                kept[key][2].append(where)
        elif len(kept) < limit:
            kept[key] = (cid, score, [])
    return [(cid, score, tuple(also)) for cid, score, also in kept.values()]


def trigram_expression(term: str) -> str:
    """All of a term's trigrams (the index keeps no positions): a superset the reranker narrows."""
    grams = [term[i:i + 3] for i in range(len(term) - 2)]
    if len(grams) > MAX_TRIGRAMS_PER_TERM:
        step = (len(grams) - 1) / (MAX_TRIGRAMS_PER_TERM - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS_PER_TERM)]
    quoted = [fts_quote(g) for g in dict.fromkeys(grams)]
    return quoted[0] if len(quoted) == 1 else "(" + " AND ".join(quoted) + ")"


def _candidates(repo: KnowledgeRepository, terms: list[str], source: str | None,
                kind: str | None, known: dict[str, int], named: list[int]) -> dict[int, float]:
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
    # A term whose trigrams meet in hundreds of chunks (`hate`: "hat" AND "ate") names nothing in
    # particular there, and ranking all those matches cost 0.4 s at 100,000 chunks: it is left out.
    tri_terms = [t for t in terms if len(t) >= 3 and (stem(t) not in known or known[stem(t)] <= RARE)]
    if tri_terms:
        repo.catch_up_trigram()
        tri_terms = [t for t in tri_terms if not repo.trigram_matches_over(trigram_expression(t), TRIGRAM_SELECTIVE)]
    trigram = _trigram_match(repo, " OR ".join(trigram_expression(t) for t in tri_terms), limit=CANDIDATES,
                             source=source, kind=kind) if tri_terms else []
    fused = fuse(*lists, [cid for cid, _ in trigram])
    if named:
        # A query that names a page (`umount: target is busy`, `grep returned exit code 2`) is about
        # that page: its best sections become candidates even when other pages hold more of the other
        # words, at the weight of the lists' last places (the reranker's file-name boost decides).
        floor = 1.0 / (RRF_K + CANDIDATES)
        for cid, _ in repo.match("porter", " OR ".join(fts_quote(t) for t in terms), limit=NAMED_CANDIDATES,
                                 source=source, kind=kind, source_ids=named):
            fused.setdefault(cid, floor)
    return fused


_PROGRAM_PREFIX = re.compile(r"^\s*([A-Za-z][\w.+-]*):\s")


def _named_sources(repo: KnowledgeRepository, query: str) -> list[int]:
    """The sources named like the program an error message starts with (`umount: target is busy`,
    `tar: Removing leading '/'`), when that name is one of only a few sources' names.

    Only that form: any query word matching a file name (`path`, `string`, `options`) named pages of an
    API reference that questions merely mention, and cost more than it found (bench/retrieval, dev)."""
    prefix = _PROGRAM_PREFIX.match(query)
    if prefix is None:
        return []
    word = prefix[1].lower()
    names = repo.source_names()
    ids = names.get(word, [])
    total = len({sid for ids_ in names.values() for sid in ids_})
    return sorted(ids) if ids and len(ids) <= max(NAMED_MAX, total * NAMED_SHARE) else []


def _trigram_match(repo: KnowledgeRepository, expression: str, *, limit: int, source: str | None = None,
                   kind: str | None = None) -> list[tuple[int, float]]:
    # Indexing leaves the trigram index to a background pass (migration 004): a search that needs
    # it first adds what that pass has not reached yet, so it never misses freshly indexed text.
    repo.catch_up_trigram()
    return repo.match("trigram", expression, limit=limit, source=source, kind=kind)


MAX_RESPELLS = 2  # words of one query respelled by their one-edit neighbours (fuzzy.respell)
MAX_UNKNOWN_TO_RESPELL = 3  # a query with more words the index lacks is not a typo away from it
MAX_IDENTIFIER_TRIES = 5  # respellings of an identifier's word checked against the text, most frequent first


def _corrected(repo: KnowledgeRepository, terms: list[str], known: dict[str, int],
               protected: set[str]) -> tuple[list[str] | None, list[str]]:
    """Replace words found nowhere in the index (not as a stem, not as a substring) by the closest
    stem; also the words found nowhere that nothing is close to."""
    stems = {t: stem(t) for t in terms if len(t) >= 4}
    fixed = []
    absent = []
    # Respelling costs ~25 ms a word (hundreds of neighbours stemmed and looked up in the FTS
    # vocabulary): a typo is one or two words of a question, while a question in everyday words
    # has many the manual never uses, which respelling cannot help.
    unknown = [t for t in terms if t in stems and stems[t] not in known]
    respells = MAX_RESPELLS if len(unknown) <= MAX_UNKNOWN_TO_RESPELL else 0
    for term in terms:
        # "Found as a substring" is checked against the text: the trigram index holds no positions,
        # so `vacum` matched every chunk holding `vacuum` and `document` and was never corrected.
        if term not in stems or stems[term] in known or _holds(repo, term, None, None):
            fixed.append(term)
            continue
        if term in protected or is_word(term):
            # A word the index lacks is absent, not misspelt: named as found nowhere, never searched as a
            # lookalike (`defect` became `detect`, `three` became `there`).
            fixed.append(term)
            absent.append(term)
            continue
        near = word_respelling(term, is_listed, stem, repo.stem_frequencies) or correct(stems[term], repo.stems_near,
                                                                                    raw=term)
        if near is None and respells > 0:
            respells -= 1
            near = respell(term, stem, repo.stem_frequencies)
        if near is not None:
            near = surface(near)  # a stem, searched through a tokenizer that stems again
        if near is not None and not _in_scope(repo, near):
            near = None  # a word only another project's sections hold: neither searched nor named in the reply
        fixed.append(near or term)
        if near is None:
            absent.append(term)
    return (fixed if fixed != terms else None), absent


def _in_scope(repo: KnowledgeRepository, term: str) -> bool:
    """Whether a section the repository may show holds the word (the vocabulary's counts are shared by
    every project in the data dir; the sections are not)."""
    return repo.project is None or bool(repo.match("porter", fts_quote(term), limit=1))


def _respelled_identifier(repo: KnowledgeRepository, ident: str, source: str | None,
                          kind: str | None) -> str | None:
    """The identifier with its one misspelt word respelled (one edit), if the text holds the result.

    Only a whole identifier the index holds is accepted, so a name that is simply absent
    (`API_TOKEN`, `ffi_prep_cif`) is still said to be missing rather than bent into another word.
    """
    parts = [w for w in dict.fromkeys(words(ident)) if len(w) >= 4]
    known = repo.stem_frequencies([stem(w) for w in parts])
    unknown = [w for w in parts if stem(w) not in known]
    if len(unknown) != 1:
        return None
    part = re.compile(rf"(?<![^\W_]){re.escape(unknown[0])}(?![^\W_])", re.IGNORECASE)
    for word, _ in neighbours(unknown[0], stem, repo.stem_frequencies)[:MAX_IDENTIFIER_TRIES]:
        fixed = part.sub(word, ident, count=1)
        if fixed != ident and _holds(repo, fixed, source, kind):
            return fixed
    return None


def identifiers(query: str) -> list[str]:
    """The query's tokens that name something exactly: `API_TOKEN`, `useEffect`, `v2.1`, `os.path`."""
    found = []
    for token in _TOKEN.findall(query[:2000]):
        token = token.strip("._")
        if len(token) >= 3 and _IDENTIFIER.search(token) and any(ch.isalpha() for ch in token):
            found.append(token)
    return list(dict.fromkeys(found))


def _other_words(query: str, exact: list[str]) -> set[str]:
    """Words of the query outside its identifiers."""
    rest = query[:2000]
    for ident in exact:
        rest = rest.replace(ident, " ")
    return set(words(rest))


def _holds(repo: KnowledgeRepository, ident: str, source: str | None, kind: str | None) -> bool:
    """Whether a section (of the asked source and kind) holds the identifier, case aside."""
    if len(ident) < 3:
        return True
    low = ident.lower()
    if low.isascii():  # SQLite's lower() folds ASCII only
        repo.catch_up_trigram()
        return repo.holds_text(trigram_expression(low), low, scan=HOLDS_SCAN, source=source, kind=kind)
    # The trigram index keeps no positions: its hits are a superset, checked against the text.
    ids = [cid for cid, _ in _trigram_match(repo, trigram_expression(low), limit=20, source=source, kind=kind)]
    return any(low in (c.title + "\n" + c.content).lower() for c in repo.chunks(ids).values())


def _spelled(corrected: str, hits: list[Hit]) -> str:
    """Show a correction as a real word from the results (`kubernetes`), not its stem (`kubernet`)."""
    return _spelled_in(corrected, [hit.chunk.content for hit in hits[:3]])


def _spelled_in(corrected: str, texts: list[str]) -> str:
    target = stem(corrected)  # a correction is a stem or a word spelled for the tokenizer (`surface`)
    for content in texts:
        for word in WORD.findall(content):
            if stem(word) == target:
                return str(word).lower()
    return corrected


def spelled_query(query: str, lexical: LexicalRanking) -> str:
    """The query with its corrected words written as the best candidates spell them: what the model reads."""
    texts = [lexical.chunks[cid].content for cid, _ in lexical.ranked[:3] if cid in lexical.chunks]
    for typed, fixed in lexical.corrections.items():
        written = fixed if "_" in fixed or not fixed.isalpha() else _spelled_in(fixed, texts)
        query = re.sub(rf"(?<![^\W_]){re.escape(typed)}(?![^\W_])", written, query, flags=re.IGNORECASE)
    return query
