"""Hybrid search: the lexical ranking fused with the chunks nearest in meaning (semantic recall).

Convex score fusion by default: each side scaled to its best candidate (the cosine from a floor),
then mixed half and half. Scores, not ranks: reciprocal rank fusion gave a lexical winner far
ahead of the rest (the one chunk holding an SQLSTATE code or a setting's name) the same credit as
a semantic neighbour that merely talks about errors, and the neighbours that were in both lists
pushed it out of the top 2. Weighted RRF stays as `method="rrf"`. Chosen on bench/search_eval's
dev and test questions (docs/search.md).

Dense hits arrive already computed (semantic/service.py runs them on the same store thread), so
this module needs nothing of the semantic extra.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ..store.knowledge import ChunkRow, KnowledgeRepository
from .rank import diversify
from .search import Hit, LexicalRanking, SearchResult, finish, fold_identical, rank_lexical
from .snippets import MAX_SNIPPET_CHARS, Matcher, render, snippet, word_windows


class DenseHitLike(Protocol):
    @property
    def chunk_id(self) -> int: ...
    @property
    def score(self) -> float: ...
    @property
    def start(self) -> int: ...
    @property
    def stop(self) -> int: ...


BestWindows = Callable[[list[int]], Mapping[int, DenseHitLike]]
"""Chunk ids → each one's best window against the query (semantic/index.py `best_windows`)."""


@dataclass(frozen=True)
class Fusion:
    method: Literal["rrf", "convex", "adaptive"] = "adaptive"
    k: int = 60
    """rrf: each list gives weight / (k + rank)."""
    dense_weight: float = 1.0
    alpha: float = 0.5
    """convex: alpha · cosine (scaled from FLOOR to the best candidate's) + (1 - alpha) · lexical score / best."""
    depth: int = 30
    """How many of each list take part."""
    short: int = 200
    """A hit with less text than this scores in proportion to its length: a section that is a
    heading and one line (a reference page's name and summary) is close in meaning to a short
    query and matches its words in the title, yet answers nothing and takes one of few places."""
    window_snippets: bool = False
    """Show the text around the chunk's best window (where the model found the meaning), not the word matches."""
    words_share: float = 0.5
    """...and this share of a snippet's room for query words outside that text (window_snippet)."""
    sure: float = 0.7
    """adaptive: the words are sure of their best section when it holds this share of the query's weight
    (its rare words weigh more); then meaning only breaks near-ties (`leaning`), else it counts `unsure`."""
    leaning: float = 0.1
    unsure: float = 0.5


DEFAULT_FUSION = Fusion()
COSINE_FLOOR = 0.2


def hybrid_search(repo: KnowledgeRepository, query: str, dense: Sequence[DenseHitLike], *, limit: int = 5,
                  source: str | None = None, kind: str | None = None, sort: str = "relevance",
                  snippet_chars: int = MAX_SNIPPET_CHARS, fusion: Fusion | None = None,
                  best_windows: BestWindows | None = None, lexical: LexicalRanking | None = None) -> SearchResult:
    """`lexical`: the query's lexical ranking when the caller has it already (rank_lexical, same arguments)."""
    fusion = fusion or DEFAULT_FUSION
    result = SearchResult(query=query)
    if lexical is None:
        lexical = rank_lexical(repo, query, source=source, kind=kind)
    if lexical is not None:
        result.missing, result.matcher = lexical.missing, lexical.matcher
        if lexical.matcher is None:
            # Every word was an identifier nothing holds: the nearest meanings would be unrelated text.
            return result
    lex = lexical.ranked[:fusion.depth] if lexical is not None else []
    windows: dict[int, DenseHitLike] = {h.chunk_id: h for h in dense[:fusion.depth]}
    if fusion.method in ("convex", "adaptive") and best_windows is not None:
        windows.update({c: h for c, h in best_windows([c for c, _ in lex if c not in windows]).items()})
    chunks = dict(lexical.chunks) if lexical is not None else {}
    kept = _ranked(repo, _scores(lex, windows, dense, fusion, lexical), chunks, fusion, limit)
    matcher = lexical.matcher if lexical is not None else None
    if matcher is not None:
        kept = diversify(kept, chunks, matcher, limit)
    top = fold_identical(kept, chunks, limit)
    if fusion.window_snippets and best_windows is not None:
        unknown = [cid for cid, _, _ in top if cid not in windows]
        if unknown:
            windows.update(best_windows(unknown))
    hits = [_hit(chunks[cid], score, also, windows.get(cid), matcher, fusion, snippet_chars)
            for cid, score, also in top]
    finish(result, hits, lexical.corrections if lexical is not None else {}, sort)
    return result


def _scores(lex: list[tuple[int, float]], windows: Mapping[int, DenseHitLike], dense: Sequence[DenseHitLike],
            fusion: Fusion, lexical: LexicalRanking | None) -> dict[int, float]:
    if fusion.method == "adaptive":
        return _adaptive(lex, windows, fusion, _sureness(lexical) if lexical is not None else 0.0)
    if fusion.method == "convex":
        return _convex(lex, windows, fusion)
    return _rrf(lex, dense[:fusion.depth], fusion)


def _ranked(repo: KnowledgeRepository, scores: dict[int, float], chunks: dict[int, ChunkRow], fusion: Fusion,
            limit: int) -> list[tuple[int, float]]:
    """The best candidates with their chunks read (into `chunks`), short sections scaled down."""
    # More than asked: identical texts folded into one (search.fold_identical) must still leave `limit`,
    # and scaling short sections down (Fusion.short) reorders them.
    candidates = sorted(scores.items(), key=lambda item: -item[1])[:limit * 6]
    absent = [cid for cid, _ in candidates if cid not in chunks]
    if absent:
        chunks.update(repo.chunks(absent))
    kept = [(cid, score) for cid, score in candidates if cid in chunks]  # a chunk may be deleted meanwhile
    if fusion.short:
        kept = sorted(((cid, score * min(1.0, len(chunks[cid].content) / fusion.short)) for cid, score in kept),
                      key=lambda item: -item[1])
    return kept


def _hit(chunk: ChunkRow, score: float, also: tuple[str, ...], window: DenseHitLike | None, matcher: Matcher | None,
         fusion: Fusion, snippet_chars: int) -> Hit:
    """A hit with word matches is cut around them; one found by meaning alone around its best window."""
    lexical_match = matcher is not None and bool(matcher.positions(chunk.content[:20000]))
    if matcher is not None and lexical_match and not (fusion.window_snippets and window is not None):
        return Hit(chunk, score, snippet(chunk.content, matcher, snippet_chars), also)
    start, stop = (window.start, window.stop) if window else (0, 0)
    text = window_snippet(chunk.content, start, stop, snippet_chars, matcher, fusion.words_share)
    return Hit(chunk, score, text, also, (start, stop))


def _rrf(lex: list[tuple[int, float]], dense: Sequence[DenseHitLike], fusion: Fusion) -> dict[int, float]:
    scores: dict[int, float] = {}
    for rank, (cid, _) in enumerate(lex, start=1):
        scores[cid] = 1.0 / (fusion.k + rank)
    for rank, hit in enumerate(dense, start=1):
        scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + fusion.dense_weight / (fusion.k + rank)
    return scores


def _convex(lex: list[tuple[int, float]], windows: Mapping[int, DenseHitLike], fusion: Fusion) -> dict[int, float]:
    # Scores, not ranks: a chunk far ahead in one list keeps its lead. Each side is scaled to its
    # best candidate, the cosine from a floor below which MiniLM similarity means nothing.
    lexical = dict(lex)
    best_lex = max(lexical.values(), default=1.0) or 1.0
    best_cos = max((h.score for h in windows.values()), default=1.0)
    span = max(1e-6, best_cos - COSINE_FLOOR)
    return {cid: fusion.alpha * max(0.0, ((windows[cid].score if cid in windows else 0.0) - COSINE_FLOOR) / span)
            + (1 - fusion.alpha) * lexical.get(cid, 0.0) / best_lex
            for cid in set(lexical) | set(windows)}


def _sureness(lexical: LexicalRanking) -> float:
    """How much of the query's weight the best lexical section holds (title and text; rare words weigh more)."""
    matcher = lexical.matcher
    if matcher is None or not lexical.ranked or lexical.ranked[0][0] not in lexical.chunks:
        return 0.0
    if lexical.corrections or lexical.named:
        # A respelled word was found as a word of the index; the query's vector is the table's guess at
        # the misspelled text (typos lost 11 points on dev when meaning weighed as much as for paraphrases).
        # An error message naming its program is about that program's page, which the words found.
        return 1.0
    chunk = lexical.chunks[lexical.ranked[0][0]]
    found = {k for _, _, k in matcher.positions(chunk.title)}
    found |= {k for _, _, k in matcher.positions(chunk.content[:20000])}
    weight = {s: matcher.weights.get(s, 1.0) for s in matcher.stems}
    return math.fsum(weight.get(k, 0.0) for k in found) / (math.fsum(weight.values()) or 1.0)


def _adaptive(lex: list[tuple[int, float]], windows: Mapping[int, DenseHitLike], fusion: Fusion,
              sureness: float) -> dict[int, float]:
    """The lexical score (scaled to its best) plus the cosine (scaled from the floor to the best) at a weight
    set by how sure the words are. Chosen on bench/retrieval's dev questions of five corpora: a fixed
    half-and-half mix lost identifier and typo questions the words had right, while meaning is what finds a
    paraphrase, whose words match poorly everywhere (docs/search.md)."""
    lexical = dict(lex)
    best_lex = max(lexical.values(), default=1.0) or 1.0
    best_cos = max((h.score for h in windows.values()), default=1.0)
    span = max(1e-6, best_cos - COSINE_FLOOR)
    weight = fusion.leaning if sureness >= fusion.sure else fusion.unsure
    return {cid: lexical.get(cid, 0.0) / best_lex
            + weight * max(0.0, ((windows[cid].score if cid in windows else 0.0) - COSINE_FLOOR) / span)
            for cid in set(lexical) | set(windows)}


def window_snippet(content: str, start: int, stop: int, limit: int, matcher: Matcher | None = None,
                   words_share: float | None = None) -> str:
    """The text around a window the model found closest, line-aligned, up to `limit` characters.

    With a matcher, query words that fall outside that text also get `words_share` of the room,
    as word-match windows (snippets.word_windows): the model's window of a long table or list
    is where the meaning is, while the exact code or name asked for may sit lines away.
    """
    if len(content) <= limit:
        return content
    lo, hi = window_span(content, start, stop, limit)
    share = DEFAULT_FUSION.words_share if words_share is None else words_share
    outside = [h for h in matcher.positions(content[:20000]) if not lo <= h[0] < hi] if matcher and share else []
    if not outside:
        return render(content, [(lo, hi)])
    lo, hi = window_span(content, start, stop, max(stop - start, int(limit * (1 - share))))
    outside = [h for h in outside if not lo <= h[0] < hi]
    spans = [(lo, hi)]
    if outside:
        spans += word_windows(content, outside, limit - (hi - lo), matcher.weights if matcher else None)
    return render(content, _merged(spans))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def window_span(content: str, start: int, stop: int, limit: int) -> tuple[int, int]:
    """The line-aligned span of up to `limit` characters centred on a window."""
    if len(content) <= limit:
        return 0, len(content)
    spare = max(0, limit - (stop - start))
    lo = max(0, start - spare // 2)
    hi = min(len(content), lo + limit)
    lo = max(0, hi - limit)
    if lo > 0:
        nl = content.find("\n", lo, start + 1)
        lo = nl + 1 if nl != -1 else lo
    if hi < len(content):
        nl = content.rfind("\n", max(lo, stop - 1), hi)
        hi = nl if nl > lo else hi
    return lo, hi
