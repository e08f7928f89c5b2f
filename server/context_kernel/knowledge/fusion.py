"""Hybrid search: the lexical ranking fused with the chunks nearest in meaning (semantic recall).

Weighted reciprocal rank fusion: each list gives a chunk weight / (k + rank). Ranks, not scores,
because BM25-after-rerank and cosine live on scales that do not compare; the constants were chosen
on the dev split of bench/search_eval and confirmed on its test split (docs/search.md).

Dense hits arrive already computed (semantic/service.py runs them on the same store thread), so
this module needs nothing of the semantic extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..store.knowledge import KnowledgeRepository
from .search import Hit, SearchResult, finish, rank_lexical
from .snippets import MAX_SNIPPET_CHARS, snippet


class DenseHitLike(Protocol):
    @property
    def chunk_id(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def stop(self) -> int: ...


@dataclass(frozen=True)
class Fusion:
    k: int = 60
    dense_weight: float = 1.0
    depth: int = 30
    """How many of each list take part."""


DEFAULT_FUSION = Fusion()


def hybrid_search(repo: KnowledgeRepository, query: str, dense: Sequence[DenseHitLike], *, limit: int = 5,
                  source: str | None = None, kind: str | None = None, sort: str = "relevance",
                  snippet_chars: int = MAX_SNIPPET_CHARS, fusion: Fusion | None = None) -> SearchResult:
    fusion = fusion or DEFAULT_FUSION
    result = SearchResult(query=query)
    lexical = rank_lexical(repo, query, source=source, kind=kind)
    scores: dict[int, float] = {}
    if lexical is not None:
        for rank, (cid, _) in enumerate(lexical.ranked[:fusion.depth], start=1):
            scores[cid] = 1.0 / (fusion.k + rank)
    windows = {}
    for rank, hit in enumerate(dense[:fusion.depth], start=1):
        scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + fusion.dense_weight / (fusion.k + rank)
        windows[hit.chunk_id] = (hit.start, hit.stop)
    top = sorted(scores.items(), key=lambda item: -item[1])[:limit]
    chunks = dict(lexical.chunks) if lexical is not None else {}
    missing = [cid for cid, _ in top if cid not in chunks]
    if missing:
        chunks.update(repo.chunks(missing))
    hits = []
    for cid, score in top:
        chunk = chunks.get(cid)
        if chunk is None:  # deleted since its vector was loaded
            continue
        if lexical is not None and lexical.matcher.positions(chunk.content[:20000]):
            text = snippet(chunk.content, lexical.matcher, snippet_chars)
        else:
            start, stop = windows.get(cid, (0, 0))
            text = window_snippet(chunk.content, start, stop, snippet_chars)
        hits.append(Hit(chunk, score, text))
    finish(result, hits, lexical.corrections if lexical is not None else {}, sort)
    return result


def window_snippet(content: str, start: int, stop: int, limit: int) -> str:
    """The text around a window the model found closest, line-aligned, up to `limit` characters."""
    if len(content) <= limit:
        return content
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
    prefix = "…\n" if lo > 0 else ""
    suffix = "\n…" if hi < len(content) else ""
    return prefix + content[lo:hi].strip("\n") + suffix
