"""Freshness of file sources at search time: which indexed files changed on disk since, and which are gone."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..store.knowledge import SourceRow


def changed_files(rows: list[SourceRow]) -> tuple[list[tuple[SourceRow, str, float]], list[SourceRow]]:
    """File sources whose file changed since indexing, (row, new text, mtime), and those whose file
    no longer exists. Blocking: a worker thread."""
    changed = []
    gone = []
    for row in rows:
        assert row.origin is not None
        try:
            mtime = os.stat(row.origin).st_mtime
            if mtime == row.mtime:
                continue
            text = Path(row.origin).read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            gone.append(row)
            continue
        except OSError:
            continue  # unreadable for now (permissions, a busy network mount): keep what was indexed
        if "sha256:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest() != row.content_hash:
            changed.append((row, text, mtime))
    return changed, gone
