"""The vectors of every embedded window, in memory, scored against a query.

Why not brute force in float32: at 100,000 chunks (about 160,000 windows) one query reads 250 MB
of floats and takes ~50 ms on one core, memory-bound. So each window also keeps its sign bits
(48 bytes for 384 dimensions): the Hamming distance to the query's bits (xor + popcount over 7 MB)
picks a few thousand candidate windows, and only those are scored, from int8 copies with a scale
per window (a quarter of float32's memory; off the float16 table's cosine by at most ~0.002, and
gathering and converting 3,000 of them takes 0.5 ms where float16 took 3.9 ms).
bench/semantic_speed.py measures both and how much of the exact top list the shortcut keeps.

Loaded from the vector table by row id (new rows are appended at each search), dropped and
reloaded when rows may have been deleted. Used only on the store's thread, so it needs no lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..store.vectors import VectorRepository, VectorRow

PAGE = 5000
# Exactly scored windows per query: at least this many, and a fiftieth of all windows beyond that
# (bench/semantic_speed.py reports how much of the exact top 10 the shortlist keeps, and the cost).
SHORTLIST = 1024
SHORTLIST_SHARE = 50

I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class DenseHit:
    chunk_id: int
    score: float
    """Cosine of the query with the chunk's best window."""
    start: int
    stop: int
    """That window's character span in the chunk's content."""


def sign_bits(vectors: F32) -> npt.NDArray[np.uint64]:
    packed = np.packbits(vectors > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


class VectorIndex:
    def __init__(self, repo: VectorRepository, dim: int) -> None:
        self._repo = repo
        self._dim = dim
        self._upto = 0
        self._deletions = -1
        self._reset()

    def _reset(self) -> None:
        self._rows: I64 = np.zeros(0, dtype=np.int64)
        self._chunks: I64 = np.zeros(0, dtype=np.int64)
        self._spans = np.zeros((0, 2), dtype=np.int32)
        # Per window: its largest component / 127, so that `_vecs[i] * _scale[i]` is the vector.
        self._vecs = np.zeros((0, self._dim), dtype=np.int8)
        self._scale = np.zeros(0, dtype=np.float32)
        # Word-major (words × windows): xor and popcount then run over long contiguous rows, which
        # is 5× faster than reducing six-word rows.
        self._codes = np.zeros(((self._dim + 63) // 64, 0), dtype=np.uint64)
        # chunk id -> its windows' positions: best_windows looks chunks up instead of a np.isin over
        # every window (1.5 ms at 160,000 windows, twice a hybrid search).
        self._where: dict[int, list[int]] = {}
        self._upto = 0

    def __len__(self) -> int:
        return len(self._rows)

    def sync(self) -> None:
        """Catch up with the table: new rows appended; after deletions, gone rows dropped."""
        upto, deletions = self._repo.state()
        if deletions != self._deletions:
            if self._deletions >= 0 and len(self._rows):
                alive = np.isin(self._rows, np.asarray(self._repo.ids_upto(self._upto), dtype=np.int64))
                self._keep(alive)
            self._deletions = deletions
        while upto > self._upto:
            page = self._repo.rows_after(self._upto, PAGE)
            if not page:
                break
            self._append(page)

    def _keep(self, mask: npt.NDArray[np.bool_]) -> None:
        self._rows, self._chunks, self._spans = self._rows[mask], self._chunks[mask], self._spans[mask]
        self._vecs, self._scale = self._vecs[mask], self._scale[mask]
        self._codes = np.ascontiguousarray(self._codes[:, mask])
        self._where = {}
        self._index_chunks(0)

    def _index_chunks(self, start: int) -> None:
        where = self._where
        for position, chunk in enumerate(self._chunks[start:].tolist(), start):
            where.setdefault(chunk, []).append(position)

    def _append(self, page: list[VectorRow]) -> None:
        start = len(self._chunks)
        vecs = np.frombuffer(b"".join(r.vec for r in page), dtype=np.float16).reshape(len(page), self._dim)
        wide = vecs.astype(np.float32)
        top = np.abs(wide).max(axis=1)
        top[top == 0] = 1.0
        self._rows = np.concatenate([self._rows, np.fromiter((r.id for r in page), np.int64, len(page))])
        self._chunks = np.concatenate([self._chunks, np.fromiter((r.chunk_id for r in page), np.int64, len(page))])
        spans = np.asarray([(r.start, r.stop) for r in page], dtype=np.int32).reshape(len(page), 2)
        self._spans = np.concatenate([self._spans, spans])
        self._vecs = np.concatenate([self._vecs, np.rint(wide * (127 / top)[:, None]).astype(np.int8)])
        self._scale = np.concatenate([self._scale, (top / 127).astype(np.float32)])
        self._codes = np.concatenate([self._codes, sign_bits(wide).T], axis=1)
        self._index_chunks(start)
        self._upto = page[-1].id

    def best_windows(self, query: F32, chunk_ids: list[int]) -> dict[int, DenseHit]:
        """Each given chunk's best window against the query (chunks without vectors left out)."""
        if not len(self._rows) or not chunk_ids:
            return {}
        rows = np.sort(np.fromiter((p for c in dict.fromkeys(chunk_ids) for p in self._where.get(c, ())),
                                   dtype=np.int64))  # in position order, as a mask over all windows gave them
        if not len(rows):
            return {}
        scores = self._scores(rows, query)
        best: dict[int, DenseHit] = {}
        for i in np.argsort(-scores):
            row = int(rows[i])
            chunk = int(self._chunks[row])
            if chunk not in best:
                best[chunk] = DenseHit(chunk, float(scores[i]), int(self._spans[row, 0]), int(self._spans[row, 1]))
        return best

    def _scores(self, positions: I64, query: F32) -> F32:
        scores: F32 = (self._vecs[positions].astype(np.float32) @ query) * self._scale[positions]
        return scores

    def embedded_chunks(self) -> set[int]:
        return {int(c) for c in np.unique(self._chunks)}

    def search(self, query: F32, k: int, allowed: Callable[[I64], npt.NDArray[np.bool_]] | None = None,
               shortlist: int | None = None) -> list[DenseHit]:
        """The k chunks whose best window is closest to the query (cosine), best first.

        `allowed` maps chunk ids to a mask of those a filter (source=, contentType=) lets through.
        """
        if not len(self._rows):
            return []
        shortlist = shortlist or max(SHORTLIST, len(self._rows) // SHORTLIST_SHARE)
        candidates: I64 | None = None if allowed is None else np.flatnonzero(allowed(self._chunks))
        size = len(self._rows) if candidates is None else len(candidates)
        if size > shortlist:
            codes = self._codes if candidates is None else self._codes[:, candidates]
            words = sign_bits(query[None, :])[0]
            distance = np.zeros(codes.shape[1], dtype=np.uint16)
            for w in range(codes.shape[0]):
                distance += np.bitwise_count(codes[w] ^ words[w])
            # Every window as near as the shortlist's farthest, ties included (a distance histogram:
            # a quarter of argpartition's time over 160,000 windows, and no arbitrary tie-breaking).
            reach = int(np.searchsorted(np.bincount(distance).cumsum(), shortlist))
            nearest = np.flatnonzero(distance <= reach)
            candidates = nearest if candidates is None else candidates[nearest]
        elif candidates is None:
            candidates = np.arange(len(self._rows), dtype=np.int64)
        if not len(candidates):
            return []
        scores = self._scores(candidates, query)
        order = np.argsort(-scores)
        best: dict[int, DenseHit] = {}
        for i in order:
            row = int(candidates[i])
            chunk = int(self._chunks[row])
            if chunk in best:
                continue
            best[chunk] = DenseHit(chunk, float(scores[i]), int(self._spans[row, 0]), int(self._spans[row, 1]))
            if len(best) == k:
                break
        return list(best.values())
