"""Text → unit vectors with an ONNX sentence-embedding model (onnxruntime + the `tokenizers` library).

A chunk longer than the model's window (256 tokens for MiniLM) is not truncated: it is cut into
overlapping windows, each embedded on its own, and search scores the chunk by its best window.
Every window starts with the chunk's title (its heading path), which tells the model what the
window is about when its own text does not say.

One intra-op thread and no spinning: embedding runs in the background next to kernels on small
machines, and a second thread would take a core the user's code is waiting for.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .files import ModelFiles

# Tokens per window, special tokens included (queries may use the model's whole length).
WINDOW_TOKENS = 256
TITLE_TOKENS = 24
OVERLAP_TOKENS = 32
BATCH_WINDOWS = 16

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Window:
    start: int
    """Character offsets of the window's text in the chunk's content."""
    stop: int
    ids: tuple[int, ...]
    """Token ids with the special tokens, ready for the model."""


class Encoder:
    """Loads lazily (and once): constructing one opens no file."""

    def __init__(self, files: ModelFiles, *, threads: int = 1, window_tokens: int = WINDOW_TOKENS) -> None:
        self.files = files
        self.window_tokens = min(window_tokens, files.max_tokens)
        self._threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()
        self._cls = self._sep = 0
        self.dim = 0

    def load(self) -> None:
        """Verify the files' hashes, then open the tokenizer and the ONNX session (raises SemanticUnavailable)."""
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            self.files.verify()
            tokenizer = Tokenizer.from_file(str(self.files.tokenizer))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            # A spinning worker thread burns a core while waiting for work; we have none to spare.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = ort.InferenceSession(str(self.files.onnx), sess_options=options,
                                           providers=["CPUExecutionProvider"])
            self._inputs = tuple(i.name for i in session.get_inputs())
            self._cls = tokenizer.token_to_id("[CLS]") or tokenizer.token_to_id("<s>") or 101
            self._sep = tokenizer.token_to_id("[SEP]") or tokenizer.token_to_id("</s>") or 102
            self._tokenizer = tokenizer
            self._session = session
            self.dim = int(self._run([(self._cls, self._sep)]).shape[1])

    def windows(self, title: str, content: str) -> list[Window]:
        """The chunk's windows: title tokens, then up to the model's length of content, overlapping."""
        self.load()
        title_ids = list(self._tokenizer.encode(title, add_special_tokens=False).ids[:TITLE_TOKENS]) if title else []
        body = self._tokenizer.encode(content, add_special_tokens=False)
        ids, offsets = body.ids, body.offsets
        room = max(16, self.window_tokens - 2 - len(title_ids))
        if not ids:
            return [Window(0, 0, (self._cls, *title_ids, self._sep))]
        out = []
        step = max(1, room - OVERLAP_TOKENS)
        for lo in range(0, len(ids), step):
            hi = min(len(ids), lo + room)
            out.append(Window(offsets[lo][0], offsets[hi - 1][1], (self._cls, *title_ids, *ids[lo:hi], self._sep)))
            if hi == len(ids):
                break
        return out

    def embed(self, windows: Sequence[Window]) -> Vectors:
        """Unit vectors of the windows, in their order (batched by length so padding stays small)."""
        self.load()
        order = sorted(range(len(windows)), key=lambda i: len(windows[i].ids))
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        for lo in range(0, len(order), BATCH_WINDOWS):
            part = order[lo:lo + BATCH_WINDOWS]
            out[part] = self._run([windows[i].ids for i in part])
        return out

    def embed_query(self, text: str) -> Vectors:
        self.load()
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids[:self.files.max_tokens - 2]
        vector: Vectors = self._run([(self._cls, *ids, self._sep)])[0]
        return vector

    def _run(self, batch: Sequence[Sequence[int]]) -> Vectors:
        width = max(len(ids) for ids in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, :len(ids)] = ids
            mask[row, :len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        hidden = np.asarray(self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0],
                            dtype=np.float32)
        if hidden.ndim == 2:  # an export that pools itself
            pooled = hidden
        elif self.files.pooling == "cls":
            pooled = hidden[:, 0]
        else:  # mean over real tokens: sentence-transformers' Pooling(mean)
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.clip(norms, 1e-12, None), dtype=np.float32)
