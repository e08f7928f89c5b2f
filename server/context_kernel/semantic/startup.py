"""Semantic recall's start with the server: in the background, and closed with the App however the two cross.

Needs nothing of the `semantic` extra: `status.probe` is asked first, and the modules that import
numpy are imported only once it said the extra is there.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import anyio

TYPE_CHECKING = False  # typing's constant: app.py imports this module on its build's worker thread
if TYPE_CHECKING:
    from ..settings import Settings
    from ..store.db import Database
    from .service import SemanticRecall

log = logging.getLogger(__name__)


class SemanticSlot:
    """The semantic recall started in the background, closed with the App even when it finishes starting
    after the App closed (an embedder process left running otherwise)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._semantic: SemanticRecall | None = None
        self._closed = False

    def keep(self, semantic: SemanticRecall) -> bool:
        with self._lock:
            if not self._closed:
                self._semantic = semantic
                return True
        semantic.close()
        return False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            semantic, self._semantic = self._semantic, None
        if semantic is not None:
            semantic.close()


def open_recall(settings: Settings, db: Database) -> SemanticRecall | None:
    """Semantic recall when the extra is installed and not switched off; else None (search by words)."""
    from .status import probe

    status = probe(settings.semantic, settings.semantic_model)
    if status.state != "on" or status.files is None:
        log.info("semantic search: %s %s", status.detail, status.hint)
        return None
    from .service import SemanticRecall

    semantic = SemanticRecall(db=db, files=status.files, nice=settings.semantic_nice)
    semantic.start()  # embeds what an earlier run left without vectors, in the background
    return semantic


async def start_recall(settings: Settings, db: Database, slot: SemanticSlot,
                       attach: Callable[[SemanticRecall | None], None]) -> None:
    """Start semantic recall and `attach` it (None: words only). Run as a task, off the App's build: numpy,
    the tokenizer and the table take a few hundred ms, and the first call (a search by words meanwhile)
    must not wait for them; nor for the stored vectors after."""

    def started() -> SemanticRecall | None:
        # Kept by the slot in this thread: a shutdown while it starts (its result would be dropped
        # with the cancelled task) still stops its embedder process.
        semantic = open_recall(settings, db)
        return semantic if semantic is not None and slot.keep(semantic) else None

    semantic = None
    try:
        semantic = await anyio.to_thread.run_sync(started)
        if semantic is not None:
            await anyio.to_thread.run_sync(semantic.warm)
    finally:
        attach(semantic)
    if semantic is not None:
        semantic.indexed()  # sections indexed while it started: embed them now, not at the next wake
