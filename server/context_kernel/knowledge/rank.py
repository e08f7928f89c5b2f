"""Ranking: reciprocal rank fusion of the porter and trigram lists, then a proximity/phrase rerank."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection, Sequence

from ..store.knowledge import ChunkRow
from .snippets import Matcher
from .terms import stem

RRF_K = 60
LABEL_WEIGHT = 0.5
DEFINES_WEIGHT = 1.0
# A section of a page the query names (`umount: target is busy` → umount.8): the paste of an error
# message names its program first, and that page explains it.
NAMED_WEIGHT = 2.0
# A later hit may pass the ones ranked just above it by bringing the query's words the hits before it
# lack: a question naming two things gets a passage for each, not two for the first.
DIVERSITY_WINDOW = 3
DIVERSITY_WEIGHT = 1.0


def fuse(*ranked: list[int], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion: each list contributes 1 / (k + rank) for every id it holds."""
    scores: dict[int, float] = {}
    for ids in ranked:
        for rank, cid in enumerate(ids, start=1):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank)
    return scores


def rerank(fused: dict[int, float], chunks: dict[int, ChunkRow], matcher: Matcher,
           identifiers: Sequence[str] = (), named: Collection[int] = ()) -> list[tuple[int, float]]:
    """Boost chunks that hold more of the query's words, close together, in the title, or as a phrase,
    chunks that define one of the query's identifiers (see _line_heads), and chunks of the sources a
    query word names (`named`: source ids, see search._named_sources)."""
    wanted = matcher.stems
    heads = _line_heads(identifiers)
    phrase = [stem(t) for t in matcher.terms]
    out = []
    for cid, base in fused.items():
        chunk = chunks.get(cid)
        if chunk is None:
            continue
        title_hits = {k for _, _, k in matcher.positions(chunk.title)}
        # The source's name is the document's title when headings do not repeat it (a reference
        # page `sql-vacuum.md` whose sections are `Description`, `Parameters`...).
        label_hits = {k for _, _, k in matcher.positions(chunk.label.rsplit("/", 1)[-1])}
        body = matcher.positions(chunk.content[:20000])
        body_hits = {k for _, _, k in body}
        coverage = len(title_hits | body_hits) / max(1, len(wanted))
        title_cov = len(title_hits) / max(1, len(wanted))
        label_cov = len(label_hits - title_hits) / max(1, len(wanted))
        proximity = _proximity(body, len(wanted))
        phrase_bonus = _phrase(chunk.content, body, phrase) if len(phrase) > 1 else 0.0
        defines = 1.0 if heads is not None and heads.search(chunk.content[:20000]) else 0.0
        score = base * (1.0 + 2.0 * coverage + 1.0 * title_cov + LABEL_WEIGHT * label_cov + 0.8 * proximity
                        + 1.0 * phrase_bonus + DEFINES_WEIGHT * defines
                        + (NAMED_WEIGHT if chunk.source_id in named else 0.0))
        out.append((cid, score))
    out.sort(key=lambda item: -item[1])
    return out


def _line_heads(identifiers: Sequence[str]) -> re.Pattern[str] | None:
    """A line that opens with one of the identifiers (after list, quote or code marks): where
    reference text defines a name (`work_mem (integer)`, `fn(arg)`, `NAME: ...`), not where it is
    only mentioned."""
    if not identifiers:
        return None
    names = "|".join(re.escape(i) for i in sorted(identifiers, key=len, reverse=True))
    return re.compile(r"^[ \t>*#`+-]*(?:" + names + r")(?![\w.])", re.M | re.I)


def _proximity(hits: list[tuple[int, int, str]], wanted: int) -> float:
    """1.0 when all matched words sit within a short window; falls towards 0 as they spread out."""
    distinct = {k for _, _, k in hits}
    if len(distinct) < 2 or wanted < 2:
        return 0.0
    best = None
    last: dict[str, int] = {}
    for start, _, k in hits:
        last[k] = start
        if len(last) == len(distinct):
            span = start - min(last.values())
            best = span if best is None else min(best, span)
    if best is None:
        return 0.0
    return (len(distinct) / wanted) / (1.0 + best / 80.0)


def _phrase(text: str, hits: list[tuple[int, int, str]], phrase: list[str]) -> float:
    """Fraction of consecutive query-word pairs found next to each other (only spaces or punctuation between)."""
    wanted = set(itertools.pairwise(phrase))
    found = set()
    for (_, end, k1), (start, _, k2) in itertools.pairwise(hits):
        if (k1, k2) in wanted and start - end <= 3 and not text[end:start].strip(" -_./:"):
            found.add((k1, k2))
    return len(found) / len(wanted)


def diversify(ranked: list[tuple[int, float]], chunks: dict[int, ChunkRow], matcher: Matcher,
              limit: int) -> list[tuple[int, float]]:
    """The first `limit` hits chosen greedily: each next one among the DIVERSITY_WINDOW best left, by its
    score times (1 + DIVERSITY_WEIGHT × the rarity-weighted share of query words it adds to the hits
    before it). The rest keep their order."""
    if limit < 2 or len(ranked) < 2:
        return ranked
    weights = {k: matcher.weights.get(k, 1.0) for k in matcher.stems}
    total = math.fsum(weights.values()) or 1.0

    def words_of(cid: int) -> set[str]:
        chunk = chunks.get(cid)
        if chunk is None:
            return set()
        return {k for _, _, k in matcher.positions(chunk.title) + matcher.positions(chunk.content[:20000])}

    left = list(ranked)
    chosen = [left.pop(0)]
    covered = words_of(chosen[0][0])
    while left and len(chosen) < limit:
        gains = [score * (1.0 + DIVERSITY_WEIGHT * math.fsum(weights[k] for k in words_of(cid) - covered) / total)
                 for cid, score in left[:DIVERSITY_WINDOW]]
        pick = max(range(len(gains)), key=lambda i: (gains[i], -i))
        cid, score = left.pop(pick)
        chosen.append((cid, score))
        covered |= words_of(cid)
    return chosen + left
