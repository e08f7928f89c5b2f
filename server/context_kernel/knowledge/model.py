"""Values shared by the chunkers, the index and search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ChunkKind = Literal["code", "prose"]

# Chunks stay under this size so one search hit never floods the reply.
MAX_CHUNK_BYTES = 4096


@dataclass(frozen=True)
class Chunk:
    title: str
    """Where the chunk sits: a heading breadcrumb `A > B > C`, a JSON key path, `lines 21-40`."""
    content: str
    kind: ChunkKind
    """`code` when the chunk is (mostly) code: a fenced block, a source file's definition."""
