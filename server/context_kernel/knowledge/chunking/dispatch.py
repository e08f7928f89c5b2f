"""Picking a chunker for a document: by file name (or URL), then MIME type, else by sniffing the text.

Notebooks are chunked here too, as the markdown of their cells.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from context_kernel.knowledge.chunking.code import chunk_code
from context_kernel.knowledge.chunking.json_ import chunk_json
from context_kernel.knowledge.chunking.markdown import chunk_markdown
from context_kernel.knowledge.chunking.outline import chunk_structured
from context_kernel.knowledge.chunking.plain import chunk_text
from context_kernel.knowledge.model import MAX_CHUNK_BYTES, Chunk

MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdx", ".mkd", ".mdown"})
JSON_EXTENSIONS = frozenset({".json", ".jsonc", ".geojson", ".webmanifest"})
NOTEBOOK_EXTENSIONS = frozenset({".ipynb"})
SOURCE_EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".rs": "rust", ".rb": "ruby", ".rake": "ruby",
    ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".swift": "swift",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".cs": "csharp", ".php": "php", ".pl": "perl", ".pm": "perl", ".lua": "lua",
    ".r": "r", ".jl": "julia", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang",
    ".hs": "haskell", ".ml": "ocaml", ".clj": "clojure", ".dart": "dart", ".zig": "zig",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".fish": "fish", ".ps1": "powershell",
    ".sql": "sql", ".css": "css", ".scss": "scss", ".vue": "vue", ".svelte": "svelte",
}
# Source files known by name rather than by extension.
_SOURCE_NAMES = {"makefile": "make", "dockerfile": "dockerfile", "rakefile": "ruby", "gemfile": "ruby"}
_SOURCE_MIMES = {
    "text/x-python": "python", "application/x-python-code": "python",
    "text/javascript": "javascript", "application/javascript": "javascript",
    "application/typescript": "typescript", "text/x-go": "go", "text/x-rust": "rust",
    "text/x-ruby": "ruby", "application/x-sh": "bash", "text/x-shellscript": "bash",
}
_SHEBANG = re.compile(r"#![^\n]*?\b(python|node|bash|sh|ruby|deno)\d*\b")
_SHEBANG_LANGUAGES = {"python": "python", "node": "javascript", "deno": "typescript",
                      "bash": "bash", "sh": "bash", "ruby": "ruby"}
_HEADING = re.compile(r"^#{1,4}[ \t]+\S", re.MULTILINE)


def language_of(name: str) -> str | None:
    """The source language a file name (or URL) suggests, or None."""
    path = PurePosixPath(urlsplit(name).path if "://" in name else name)
    return SOURCE_EXTENSIONS.get(path.suffix.lower()) or _SOURCE_NAMES.get(path.name.lower())


def chunk_document(
    text: str, *, name: str = "", mime: str | None = None, max_bytes: int = MAX_CHUNK_BYTES
) -> list[Chunk]:
    """Chunks of `text`, by the chunker its name's extension, its MIME type or its content asks for.

    Order of evidence: extension, then MIME type, then sniffing (JSON that parses, a shebang,
    markdown ATX headings). ReStructuredText and anything unknown is plain text. JSON that does
    not parse falls back to plain text; a notebook is chunked as the markdown of its cells.
    """
    path = PurePosixPath(urlsplit(name).path if "://" in name else name)
    suffix = path.suffix.lower()
    media = (mime or "").split(";")[0].strip().lower()
    if suffix in MARKDOWN_EXTENSIONS:
        return chunk_markdown(text, max_bytes)
    if suffix in NOTEBOOK_EXTENSIONS or media == "application/x-ipynb+json":
        return _chunk_notebook(text, max_bytes)
    if suffix in JSON_EXTENSIONS:
        return _json_or_text(text, max_bytes)
    if language := language_of(name):
        return chunk_code(text, language, max_bytes)
    if suffix in (".txt", ".log", ".jsonl", ".ndjson"):
        return _plain(text, max_bytes)
    if suffix in (".rst", ".csv", ".tsv"):
        return chunk_text(text, max_bytes)
    if media in ("text/markdown", "text/x-markdown"):
        return chunk_markdown(text, max_bytes)
    if media == "application/json" or media.endswith("+json"):
        return _json_or_text(text, max_bytes)
    if media in _SOURCE_MIMES:
        return chunk_code(text, _SOURCE_MIMES[media], max_bytes)
    return _sniff(text, max_bytes)


def _sniff(text: str, max_bytes: int) -> list[Chunk]:
    head = text.lstrip()
    if head.startswith(("{", "[")):
        try:
            return chunk_json(text, max_bytes)
        except ValueError:
            pass  # "[INFO] started" is a log, not JSON
    shebang = _SHEBANG.match(head)
    if shebang:
        return chunk_code(text, _SHEBANG_LANGUAGES[shebang[1]], max_bytes)
    if _HEADING.search(text):
        return chunk_markdown(text, max_bytes)
    return _plain(text, max_bytes)


def _plain(text: str, max_bytes: int) -> list[Chunk]:
    """Plain text by its own structure (an outline, a conversation) when it has one, else by sections."""
    return chunk_structured(text, max_bytes) or chunk_text(text, max_bytes)


def _json_or_text(text: str, max_bytes: int) -> list[Chunk]:
    try:
        return chunk_json(text, max_bytes)
    except ValueError:
        return chunk_text(text, max_bytes)


def _chunk_notebook(text: str, max_bytes: int) -> list[Chunk]:
    """A notebook as the markdown of its cells: headings give titles, code cells fenced blocks.

    Outputs are left out: they are kept (and searchable) where the execution recorded them, and
    an embedded image would be kilobytes of base64 noise. Not a notebook: chunked as JSON.
    """
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError):
        return chunk_text(text, max_bytes)
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return _json_or_text(text, max_bytes)
    language = _notebook_language(notebook.get("metadata"))
    parts: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(map(str, source)) if isinstance(source, list) else str(source)
        if cell.get("cell_type") == "code":
            # A fence longer than any backtick run at a line start, so the cell cannot close it.
            runs = [len(m[0]) for m in re.finditer(r"(?m)^ {0,3}`{3,}", source)]
            fence = "`" * max([3] + [run + 1 for run in runs])
            parts.append(f"{fence}{language}\n{source.rstrip()}\n{fence}")
        else:
            parts.append(source.rstrip())
    return chunk_markdown("\n\n".join(parts), max_bytes)


def _notebook_language(metadata: object) -> str:
    if not isinstance(metadata, dict):
        return ""
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field), str):
            return section[field].split()[0] if section[field].strip() else ""
    return ""
