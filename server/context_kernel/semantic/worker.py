"""The background embedder: one low-priority thread that embeds whatever was indexed and has no vectors.

It never blocks indexing or a kernel: ctx_index only wakes it; it runs at the lowest CPU priority
(nice 19 for this thread alone on Linux) with one onnxruntime thread, so a kernel's warm call
still finds a core. Reads and writes go through the store's thread like every statement, in short
hops between batches, so a search waits at most for one small write.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import ContextKernelError, SemanticUnavailable
from ..store.vectors import PendingChunk, VectorRepository
from .encoder import Encoder
from .static import StaticEncoder

log = logging.getLogger(__name__)

# Small batches: stopping waits for the batch in hand, and a search waits at most for one write.
BATCH_CHUNKS = 4
IDLE_WAIT_S = 60.0
STOP_WAIT_S = 10.0
# A smoothed throughput, so one slow batch (a page of CJK, say) does not swing the estimate.
RATE_SMOOTHING = 0.3

RunSync = Callable[..., object]


@dataclass(frozen=True)
class Progress:
    state: str
    """`idle`, `embedding`, `failed` (see `failure`), or `stopped`."""
    cursor: int
    """Every embeddable chunk with an id up to this one has its vectors."""
    bytes_per_s: float | None
    failure: str | None = None


class EmbeddingWorker:
    def __init__(self, *, run_sync: Callable[..., object], repo: VectorRepository, encoder: Encoder | StaticEncoder,
                 batch_chunks: int = BATCH_CHUNKS, nice: int = 19, pause: float = 0.0) -> None:
        self._run_sync = run_sync
        self._repo = repo
        self._encoder = encoder
        self._batch = batch_chunks
        self._nice = nice
        # Nice lowers the thread's share of the CPU, not its share of the GIL: between batches it sleeps
        # this long, so the event loop (a kernel's warm call) never waits behind a run of batches.
        self._pause = pause
        self._thread: threading.Thread | None = None
        self._cond = threading.Condition()
        self._requested = 0
        self._done = 0
        self._stopping = False
        self._state = "idle"
        self._cursor = 0
        self._rate: float | None = None
        self._failure: SemanticUnavailable | None = None
        self.embedded_bytes = 0
        self.busy_seconds = 0.0

    def wake(self) -> None:
        """New chunks may be there: embed them (starts the thread on first use)."""
        with self._cond:
            if self._stopping:
                return
            self._requested += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._main, name="ck-embedder", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Block until everything queued before this call is embedded (or the worker failed); bounded."""
        deadline = time.monotonic() + timeout
        with self._cond:
            target = self._requested
            while self._done < target and self._failure is None and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def stop(self, timeout: float = STOP_WAIT_S) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    @property
    def failure(self) -> SemanticUnavailable | None:
        return self._failure

    @property
    def done(self) -> int:
        """How many wakes are fully served (everything queued before them is embedded)."""
        with self._cond:
            return self._done

    def progress(self) -> Progress:
        with self._cond:
            return Progress(self._state, self._cursor, self._rate, self._failure.message if self._failure else None)

    # -- the thread ------------------------------------------------------------------------------

    def _main(self) -> None:
        try:
            self._loop()
        except RuntimeError as exc:  # the store was closed under us (shutdown): nothing left to do
            log.info("embedder stopped: %s", exc)
        finally:
            with self._cond:
                self._state = "stopped" if self._failure is None else self._state
                self._cond.notify_all()

    def _loop(self) -> None:
        try:
            # Loaded before the priority drops: creating the ONNX session holds the GIL, and a
            # nice-19 thread holding it on a busy machine stalls the event loop for seconds.
            self._encoder.load()
            self._lower_priority()
            self._run_sync(self._repo.drop_other_models)
        except SemanticUnavailable as exc:
            log.warning("semantic search is off: %s", exc.message)
            with self._cond:
                self._failure, self._state = exc, "failed"
                self._cond.notify_all()
            return
        while True:
            with self._cond:
                if self._stopping:
                    return
                seen = self._requested
            batch = self._next_batch()
            if batch is None:  # the store failed: try again at the next wake
                self._idle(seen)
                continue
            if not batch:
                self._idle(seen)
                continue
            with self._cond:
                self._state = "embedding"
            if not self._embed(batch):
                self._idle(seen)
            elif self._pause:
                time.sleep(self._pause)  # the GIL free for the event loop between batches (see __init__)

    def _idle(self, seen: int) -> None:
        with self._cond:
            self._done = max(self._done, seen)
            self._state = "idle"
            self._cond.notify_all()
            if self._requested == seen and not self._stopping:
                self._cond.wait(IDLE_WAIT_S)

    def _next_batch(self) -> list[PendingChunk] | None:
        try:
            return self._run_sync(self._repo.pending, self._cursor, self._batch)  # type: ignore[return-value]
        except ContextKernelError as exc:
            log.warning("embedder: cannot read the backlog: %s", exc)
            return None

    def _embed(self, batch: list[PendingChunk]) -> bool:
        """Embed and store one batch; False when the store refused it (the batch waits for the next wake)."""
        started = time.perf_counter()
        try:
            if isinstance(self._encoder, StaticEncoder):  # one tokenizer call and one gather for the batch
                embedded = self._encoder.embed_chunks([(c.title, c.content) for c in batch])
                rows = [(c.id, lo, hi, v.astype(np.float16).tobytes())
                        for c, windows in zip(batch, embedded, strict=True) for lo, hi, v in windows]
            else:
                spans = [(c.id, w) for c in batch for w in self._encoder.windows(c.title, c.content)]
                vectors = self._encoder.embed([w for _, w in spans]).astype(np.float16)
                rows = [(cid, w.start, w.stop, vectors[i].tobytes()) for i, (cid, w) in enumerate(spans)]
            self._run_sync(self._repo.add, rows)
        except ContextKernelError as exc:  # a full disk, say: these chunks wait for the next pass
            log.warning("embedder: could not store vectors: %s", exc)
            return False
        except Exception:  # a chunk the model chokes on must not stop the embedder for good
            log.exception("embedder: a batch failed; its %d chunks stay lexical-only", len(batch))
        elapsed = max(1e-6, time.perf_counter() - started)
        size = sum(len(c.content.encode("utf-8", "replace")) for c in batch)
        with self._cond:
            self._cursor = batch[-1].id
            rate = size / elapsed
            self._rate = rate if self._rate is None else (1 - RATE_SMOOTHING) * self._rate + RATE_SMOOTHING * rate
            self.embedded_bytes += size
            self.busy_seconds += elapsed
        return True

    def _lower_priority(self) -> None:
        # On Linux a thread is its own scheduling entity: this lowers the embedder alone, not the
        # server's event loop. Elsewhere the call would lower the whole process, so it is skipped.
        if sys.platform.startswith("linux") and self._nice:
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self._nice)
            except OSError as exc:
                log.info("embedder runs at normal priority: %s", exc)
