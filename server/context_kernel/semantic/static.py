"""Static embeddings: a text's vector is the normalised sum of its tokens' vectors (no network to run).

Why not only the transformer: all-MiniLM-L6-v2 embeds 3–6 KB/s on one core of a 2-core machine
(170–480 ms per 256-token window, measured while other work ran), so a 3.5 MB manual had vectors
after 19 minutes and an 8.8 MB tree after hours; until then search mixed sections that had
vectors with sections that had none, and ranked worse than words alone. A table lookup per token
embeds a few MB per second: the vectors are there seconds after `ctx_index` returns.

The table is WordLlama's `l2_supercat` (256 dimensions over the LLaMA-2 vocabulary of 32,000
tokens, MIT), trained for general-purpose embeddings from the token codebooks of large language
models; it ships in the PyPI package `wordllama`, whose code we do not import (its weights file is
read here, its tokenizer by the `tokenizers` library). On our dev questions it put the answering
section in the 30 nearest for 0.76–0.87 of the questions, ahead of a table distilled from MiniLM
(0.48–0.66) — docs/search.md has the comparison.

Windows as for the transformer: a chunk is cut into windows of WINDOW tokens overlapping by half,
each with the chunk's title; a chunk scores as its best window, which also places the snippet.
"""

from __future__ import annotations

import json
import struct
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import SemanticUnavailable
from .encoder import Window
from .files import STATIC_DISTRIBUTION, ModelFiles

# Tokens per window (LLaMA tokens: about 4 characters each) and how far the next window starts.
WINDOW = 96
STEP = 48
TITLE_TOKENS = 24

Vectors = npt.NDArray[np.float32]


def read_table(path: Path) -> npt.NDArray[np.float16]:
    """The one float16 tensor of a safetensors file (8-byte header length, JSON header, raw data)."""
    with path.open("rb") as handle:
        size = struct.unpack("<Q", handle.read(8))[0]
        header: dict[str, Any] = json.loads(handle.read(size))
        tensors = {k: v for k, v in header.items() if k != "__metadata__"}
        if len(tensors) != 1:
            raise SemanticUnavailable(f"{path} holds {len(tensors)} tensors, not one embedding table",
                                      state="broken", hint=f"pip install --force-reinstall '{STATIC_DISTRIBUTION}'")
        (info,) = tensors.values()
        if info.get("dtype") != "F16" or len(info.get("shape", ())) != 2:
            raise SemanticUnavailable(f"{path}: an embedding table of {info.get('dtype')} {info.get('shape')}, "
                                      "not a float16 matrix", state="broken",
                                      hint=f"pip install --force-reinstall '{STATIC_DISTRIBUTION}'")
        start, stop = info["data_offsets"]
        handle.seek(8 + size + start)
        data = handle.read(stop - start)
    rows, dim = info["shape"]
    return np.frombuffer(data, dtype=np.float16).reshape(rows, dim)


class StaticEncoder:
    """The Encoder interface (windows, embed, embed_query) over a token table. Loads lazily, once."""

    def __init__(self, files: ModelFiles, *, window_tokens: int = WINDOW, step: int = STEP) -> None:
        self.files = files
        self.window_tokens = window_tokens
        self._step = step
        self._lock = threading.Lock()
        self._table: npt.NDArray[np.float32] | None = None
        self._tokenizer: Any = None
        self.dim = 0

    def load(self) -> None:
        with self._lock:
            if self._table is not None:
                return
            from tokenizers import Tokenizer

            self.files.verify()
            tokenizer = Tokenizer.from_file(str(self.files.tokenizer))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            table = read_table(self.files.onnx).astype(np.float32)
            self._tokenizer = tokenizer
            self.dim = int(table.shape[1])
            self._table = table

    def windows(self, title: str, content: str) -> list[Window]:
        return self.windows_batch([(title, content)])[0]

    def windows_batch(self, chunks: Sequence[tuple[str, str]]) -> list[list[Window]]:
        """Each chunk's windows (title tokens, then WINDOW tokens of text, overlapping by half)."""
        self.load()
        encode = self._tokenizer.encode_batch
        titles = encode([t for t, _ in chunks], add_special_tokens=False)
        bodies = encode([c for _, c in chunks], add_special_tokens=False)
        out = []
        for title, body in zip(titles, bodies, strict=True):
            head = tuple(title.ids[:TITLE_TOKENS])
            ids, offsets = body.ids, body.offsets
            if not ids:
                out.append([Window(0, 0, head)])
                continue
            windows = []
            for lo in range(0, len(ids), self._step):
                hi = min(len(ids), lo + self.window_tokens)
                windows.append(Window(offsets[lo][0], offsets[hi - 1][1], head + tuple(ids[lo:hi])))
                if hi == len(ids):
                    break
            out.append(windows)
        return out

    def embed_chunks(self, chunks: Sequence[tuple[str, str]]) -> list[list[tuple[int, int, Vectors]]]:
        """Each chunk's windows as (start, stop, unit vector), computed from blocks of STEP tokens.

        Every token is gathered once: a window is two neighbouring blocks' sums plus the title's, where
        gathering each window's tokens read every token twice and the title once per window (2.5× the
        memory traffic, which is what this costs: 4.6 MB took 6.6 s that way).
        """
        self.load()
        assert self._table is not None
        encode = self._tokenizer.encode_batch
        titles = encode([t for t, _ in chunks], add_special_tokens=False)
        bodies = encode([c for _, c in chunks], add_special_tokens=False)
        step = self._step
        ids: list[int] = []
        starts: list[int] = []
        blocks_of: list[tuple[int, int]] = []  # per chunk: (first block, number of blocks)
        for body in bodies:
            n = len(body.ids)
            first = len(starts)
            starts.extend(range(len(ids), len(ids) + n, step))
            ids.extend(body.ids)
            blocks_of.append((first, len(starts) - first))
        title_ids: list[int] = []
        title_starts: list[int] = []
        for title in titles:
            title_starts.append(len(title_ids))
            title_ids.extend(title.ids[:TITLE_TOKENS])
        table = self._table
        blocks = np.add.reduceat(table[np.asarray(ids)], starts, axis=0) if ids else np.zeros((0, self.dim))
        heads = np.zeros((len(chunks), self.dim), dtype=np.float32)
        has_title = [i for i, t in enumerate(titles) if t.ids]
        if title_ids:
            sums = np.add.reduceat(table[np.asarray(title_ids)], [title_starts[i] for i in has_title], axis=0)
            heads[has_title] = sums
        out: list[list[tuple[int, int, Vectors]]] = []
        for c, (body, (first, count)) in enumerate(zip(bodies, blocks_of, strict=True)):
            offsets = body.offsets
            if not count:
                out.append([(0, 0, normalised(heads[c:c + 1])[0])])
                continue
            pairs = max(1, count - 1)
            vecs = blocks[first:first + pairs].copy()
            if count > 1:
                vecs += blocks[first + 1:first + count]
            vecs += heads[c]
            vecs = normalised(vecs)
            n = len(body.ids)
            out.append([(offsets[i * step][0], offsets[min(n, (i + 2) * step) - 1][1], vecs[i]) for i in range(pairs)])
        return out

    def embed(self, windows: Sequence[Window]) -> Vectors:
        """Unit vectors of the windows: one gather and one segmented sum for the whole batch."""
        self.load()
        assert self._table is not None
        lengths = np.fromiter((len(w.ids) for w in windows), dtype=np.int64, count=len(windows))
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        filled = lengths > 0
        if filled.any():
            ids = np.fromiter((i for w in windows for i in w.ids), dtype=np.int64, count=int(lengths.sum()))
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[filled]
            out[filled] = np.add.reduceat(self._table[ids], starts, axis=0)
        return normalised(out)

    def embed_query(self, text: str) -> Vectors:
        self.load()
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        vector: Vectors = self.embed([Window(0, len(text), tuple(ids))])[0]
        return vector


def normalised(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.clip(norms, 1e-12, None), dtype=np.float32)
