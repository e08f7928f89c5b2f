"""Chunkers: documents cut into titled, size-bounded pieces for the knowledge base.

`chunk_document` picks the chunker from a file name (or URL) and a MIME type, else sniffs the
text. Every chunker is pure: text in, `Chunk`s out, in document order, none empty, none over
`max_bytes` except a fenced code block too large on its own (see `markdown`).
"""

from __future__ import annotations

from context_kernel.knowledge.chunking.code import chunk_code
from context_kernel.knowledge.chunking.dispatch import (
    JSON_EXTENSIONS,
    MARKDOWN_EXTENSIONS,
    NOTEBOOK_EXTENSIONS,
    SOURCE_EXTENSIONS,
    chunk_document,
    language_of,
)
from context_kernel.knowledge.chunking.json_ import chunk_json
from context_kernel.knowledge.chunking.markdown import chunk_markdown
from context_kernel.knowledge.chunking.plain import chunk_text

__all__ = [
    "JSON_EXTENSIONS", "MARKDOWN_EXTENSIONS", "NOTEBOOK_EXTENSIONS", "SOURCE_EXTENSIONS",
    "chunk_code", "chunk_document", "chunk_json", "chunk_markdown", "chunk_text", "language_of",
]
