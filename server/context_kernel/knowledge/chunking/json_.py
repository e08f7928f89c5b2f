"""JSON chunks by key path: small subtrees whole, large objects by key, large arrays by record.

Invariants (tested as properties):

* every chunk's content is pretty-printed JSON (indent 2) that parses on its own: a subtree, an
  object holding some consecutive keys of a larger object, or an array holding consecutive items
  of a larger array;
* parsing all chunks gives back every leaf of the document (scalars, empty objects and arrays)
  exactly once, in document order. The one exception is a string too long for a chunk: it is
  chunked as plain text (see `chunk_text`), its pieces titled by its key path;
* chunks are at most `max_bytes` UTF-8 bytes.

In a large array, a record (an object) of at least `RECORD_BYTES` pretty-printed is a chunk of its
own, so that a search for one record returns that record; smaller items are packed in batches of
consecutive items up to `max_bytes`, so that a table of tiny rows does not become a chunk per row.

Titles are key paths, `config > servers > web`; a batch of keys lists them
(`config > port, host`). A record alone is named by its integer id and its name, as many as it
has (`issues > [id 42] Fix login redirect`, `issues > Fix login redirect`, `issues > [id 42]`);
a batch of records by an identifying field (`users > [id 3..7]`, `users > alice, bob`); anything
else by index (`users > [7]`, `users > [0-9]`).

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
# An object in an array this large pretty-printed is a record worth a chunk of its own: a search
# for one issue returns that issue whole, titled by its name, where a batch's hit was a cut-off
# window of neighbours (a snippet shows about 240 characters either side of a match, so a record
# past ~500 bytes was no longer seen whole). Below it records batch up to `max_bytes`: a smaller
# batch target doubled the chunks of a table of tiny rows without returning fewer bytes per hit.
# Measured on 5 MB arrays: 79 B and 304 B rows unchanged (1,672 and 1,605 chunks), 1 KB records
# 1,832 -> 5,494 chunks, the worst case (records just past the threshold) 1,419 -> 9,931.
RECORD_BYTES = 512


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
        text = _dump(child)
        item = _indent(text)
        item_size = utf8_len(item)
        alone = isinstance(child, dict) and utf8_len(text) >= RECORD_BYTES
        if alone or _BRACKETS_BYTES + item_size > max_bytes:
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
    """How array items are named in a title: one record by itself, a batch of records by id range
    or names, anything else by index range."""
    last = first + len(records) - 1
    if len(records) == 1 and isinstance(records[0], dict):
        return _record_label(records[0], first)
    if records and all(isinstance(record, dict) for record in records):
        ids = [record.get("id") for record in records]
        if all(type(value) is int for value in ids):
            return f"[id {ids[0]}..{ids[-1]}]"
        for field in _NAMING_FIELDS:
            names = [record.get(field) for record in records]
            if all(_is_name(value) for value in names):
                return _listing([_name(str(value)) for value in names])
    return f"[{first}]" if first == last else f"[{first}-{last}]"


def _record_label(record: dict[str, Any], index: int) -> str:
    """`[id 42] Fix login redirect`, or whichever of the two the record has, else its index.

    The name is kept whole up to `TITLE_CHARS`, not cut like a batch's listing: a title's words
    weigh in the ranking, and it is what an agent reads in the list of hits.
    """
    key = record.get("id")
    number = f"[id {key}]" if type(key) is int else ""
    names = (record.get(field) for field in _NAMING_FIELDS if not (number and field == "id"))
    name = next((" ".join(str(value).split())[:TITLE_CHARS] for value in names if _is_name(value)), "")
    return " ".join(part for part in (number, name) if part) or f"[{index}]"


def _is_name(value: object) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool) and bool(str(value).strip())


def _name(key: str) -> str:
    return key.strip()[:_NAME_CHARS] if key.strip() else json.dumps(key)


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_LISTED_NAMES])
    more = len(names) - _LISTED_NAMES
    return (shown + (f", … (+{more})" if more > 0 else ""))[: 2 * TITLE_CHARS]
