"""JSON chunks by key path: small subtrees whole, large objects by key, large arrays in batches.

Invariants (tested as properties):

* every chunk's content is pretty-printed JSON (indent 2) that parses on its own: a subtree, an
  object holding some consecutive keys of a larger object, or an array holding consecutive items
  of a larger array;
* parsing all chunks gives back every leaf of the document (scalars, empty objects and arrays)
  exactly once, in document order. The one exception is a string too long for a chunk: it is
  chunked as plain text (see `chunk_text`), its pieces titled by its key path;
* chunks are at most `max_bytes` UTF-8 bytes.

Titles are key paths, `config > servers > web`; a batch of keys lists them
(`config > port, host`), a batch of records is named by an identifying field
(`users > [id 3..7]`, `users > alice, bob`) or by index range (`users > [0-9]`).

Every chunk is kind "prose": JSON is data that an agent looks up by names and values, as it
does prose. The "code" filter is for finding source and examples to run or copy, and a config
file or API response answering "code only" searches would only crowd them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from context_kernel.knowledge.chunking.plain import (
    TITLE_CHARS,
    check_budget,
    chunk_text,
    split_bytes,
    utf8_len,
)
from context_kernel.knowledge.model import MAX_CHUNK_BYTES, Chunk, ChunkKind

KIND: ChunkKind = "prose"
ROOT_TITLE = "(root)"
IDENTIFYING_FIELDS = ("id", "name", "title", "key", "slug", "label")
# Names are more telling than opaque string ids, so a string `id` is the last resort.
_NAMING_FIELDS = ("name", "title", "label", "slug", "key", "id")
_LISTED_NAMES = 5
_NAME_CHARS = 40
# "{\n" + "\n}" (or the [ ] pair) around a batch, and ",\n" between its members.
_BRACKETS_BYTES = 4
_SEPARATOR_BYTES = 2


def chunk_json(text: str, max_bytes: int = MAX_CHUNK_BYTES) -> list[Chunk]:
    """Chunks of a JSON document; raises ValueError when `text` is not JSON.

    The caller is expected to fall back to plain text on ValueError. See the module docstring
    for the invariants and titles.
    """
    check_budget(max_bytes)
    try:
        value = json.loads(text)
        chunks: list[Chunk] = []
        _walk(value, (), max_bytes, chunks)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply to chunk by key path") from exc
    return chunks


def _dump(value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A "\ud800" escape would turn into a lone surrogate that the store cannot encode.
        text = json.dumps(value, indent=2)
    return text


def _indent(text: str) -> str:
    return "  " + text.replace("\n", "\n  ")


def _title(path: Sequence[str]) -> str:
    return " > ".join(path) or ROOT_TITLE


def _walk(value: Any, path: tuple[str, ...], max_bytes: int, out: list[Chunk]) -> None:
    text = _dump(value)
    if utf8_len(text) <= max_bytes:
        out.append(Chunk(_title(path), text, KIND))
    elif isinstance(value, dict):
        _walk_object(value, path, max_bytes, out)
    elif isinstance(value, list):
        _walk_array(value, path, max_bytes, out)
    elif isinstance(value, str):
        # A document inside a string (a README, a log): its words matter, not its quoting.
        for chunk in chunk_text(value, max_bytes):
            out.append(Chunk(f"{_title(path)} > {chunk.title}", chunk.content, KIND))
    else:
        pieces = split_bytes(text, max_bytes)
        for number, piece in enumerate(pieces, 1):
            out.append(Chunk(f"{_title(path)} (part {number})", piece, KIND))


def _walk_object(obj: dict[str, Any], path: tuple[str, ...], max_bytes: int, out: list[Chunk]) -> None:
    keys: list[str] = []
    items: list[str] = []
    size = 0

    def flush() -> None:
        if items:
            content = "{\n" + ",\n".join(items) + "\n}"
            out.append(Chunk(_title(path + (_listing(keys),)), content, KIND))
            keys.clear()
            items.clear()

    for key, child in obj.items():
        item = _indent(_dump(key) + ": " + _dump(child))
        item_size = utf8_len(item)
        if _BRACKETS_BYTES + item_size > max_bytes:
            flush()
            _walk(child, path + (_name(key),), max_bytes, out)
            continue
        if items and size + _SEPARATOR_BYTES + item_size > max_bytes:
            flush()
        size = (size + _SEPARATOR_BYTES if items else _BRACKETS_BYTES) + item_size
        keys.append(_name(key))
        items.append(item)
    flush()


def _walk_array(array: list[Any], path: tuple[str, ...], max_bytes: int, out: list[Chunk]) -> None:
    first = 0
    items: list[str] = []
    size = 0

    def flush() -> None:
        if items:
            content = "[\n" + ",\n".join(items) + "\n]"
            label = _label(array[first : first + len(items)], first)
            out.append(Chunk(_title(path + (label,)), content, KIND))
            items.clear()

    for index, child in enumerate(array):
        item = _indent(_dump(child))
        item_size = utf8_len(item)
        if _BRACKETS_BYTES + item_size > max_bytes:
            flush()
            _walk(child, path + (_label([child], index),), max_bytes, out)
            continue
        if items and size + _SEPARATOR_BYTES + item_size > max_bytes:
            flush()
        if not items:
            first, size = index, _BRACKETS_BYTES
        else:
            size += _SEPARATOR_BYTES
        size += item_size
        items.append(item)
    flush()


def _label(records: Sequence[Any], first: int) -> str:
    """How a batch of array items is named in a title: by id range, by names, by index range."""
    last = first + len(records) - 1
    if records and all(isinstance(record, dict) for record in records):
        ids = [record.get("id") for record in records]
        if all(type(value) is int for value in ids):
            return f"[id {ids[0]}]" if len(ids) == 1 else f"[id {ids[0]}..{ids[-1]}]"
        for field in _NAMING_FIELDS:
            names = [record.get(field) for record in records]
            if all(_is_name(value) for value in names):
                return _listing([_name(str(value)) for value in names])
    return f"[{first}]" if first == last else f"[{first}-{last}]"


def _is_name(value: object) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool) and bool(str(value).strip())


def _name(key: str) -> str:
    return key.strip()[:_NAME_CHARS] if key.strip() else json.dumps(key)


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_LISTED_NAMES])
    more = len(names) - _LISTED_NAMES
    return (shown + (f", … (+{more})" if more > 0 else ""))[: 2 * TITLE_CHARS]
