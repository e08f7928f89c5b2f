"""Which encoder a model's files make, which kinds of sections it embeds, and the id its vectors carry.

Shared by the server's recall, the embedder's child process and doctor, none of which may import
the others' machinery to learn it.
"""

from __future__ import annotations

from .encoder import WINDOW_TOKENS, Encoder
from .files import ModelFiles
from .static import WINDOW as STATIC_WINDOW
from .static import StaticEncoder

# With a transformer: prose and code that someone chose to index (files, directories, texts, fetched
# pages, batch results), not a cell's raw output log nor hook events: embedding a 100 MB log would keep
# it busy for hours.
EMBEDDED_KINDS = ("text", "file", "fetch", "batch")
# With the static table every kind: a section is never ranked by words alone next to sections ranked
# by words and meaning, and a 100 MB log takes seconds, not hours.
STATIC_KINDS = ("text", "file", "fetch", "batch", "execution", "session-events")


def make_encoder(files: ModelFiles, window_tokens: int = WINDOW_TOKENS) -> Encoder | StaticEncoder:
    return StaticEncoder(files) if files.kind == "static" else Encoder(files, window_tokens=window_tokens)


def kinds_for(files: ModelFiles) -> tuple[str, ...]:
    return STATIC_KINDS if files.kind == "static" else EMBEDDED_KINDS


def vector_model_id(files: ModelFiles, window_tokens: int | None = None) -> str:
    """Vectors of another model, or of other windows, are not comparable: the id stored with them says both."""
    if window_tokens is None:
        window_tokens = STATIC_WINDOW if files.kind == "static" else min(WINDOW_TOKENS, files.max_tokens)
    pinned = files.pinned.get(files.onnx.name)
    return files.name + (":" + pinned[:12] if pinned else f":{files.onnx.stat().st_size}") + f":w{window_tokens}"

