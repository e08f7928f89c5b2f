"""How replay compares a cell's recorded outputs with its replayed ones: the text a reader would compare (each
stream whole, plain-text results, the types of rich ones, errors), with what varies from run to run taken out
(addresses, times, durations, temporary paths, execution counts), and raster images pixel by pixel."""

from __future__ import annotations

import re
from typing import Any

from ..execution.provenance import WRITTEN_FILE_KEY
from ..execution.text import strip_ansi
from .images import RASTER_TYPES, image_difference

_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0xADDR"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "TIMESTAMP"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|seconds)\b"), "DURATION"),
    (re.compile(r"/tmp/[\w./-]+"), "/tmp/PATH"),
    (re.compile(r"(Cell In\[|In \[|Out\[)\d+\]"), r"\1N]"),
]
_ANNOTATION = "[context-kernel:"


def normalise(text: str) -> str:
    text = strip_ansi(text)
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text.rstrip()


def comparable(outputs: list[dict[str, Any]]) -> str:
    """What a reader would compare: each stream whole, plain-text results, rich types, errors."""
    streams: dict[str, str] = {}
    rest = []
    for out in outputs:
        if _written_file(out):
            continue  # a figure the cell saved, recorded by the server: not the code's output
        kind = out.get("output_type")
        if kind == "stream":
            text = "".join(out.get("text", ""))
            if text.lstrip().startswith(_ANNOTATION):
                continue  # our annotation, not the code's output
            name = str(out.get("name"))
            streams[name] = streams.get(name, "") + text
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            plain = data.get("text/plain", "")
            rest.append("[result] " + ("".join(plain) if isinstance(plain, list) else plain))
            rest += [f"[{mime}]" for mime in sorted(data) if mime != "text/plain"]
        elif kind == "error":
            rest.append(f"[error] {out.get('ename')}: {out.get('evalue')}")
    parts = [f"[{name}] {streams[name]}" for name in sorted(streams) if streams[name]]
    return normalise("\n".join(parts + rest))


def _images(outputs: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    shown = [out for out in outputs
             if out.get("output_type") in ("execute_result", "display_data") and not _written_file(out)]
    return [(mime, data[mime]) for out in shown for data in [out.get("data", {})] for mime in sorted(data)
            if mime in RASTER_TYPES]


def _written_file(output: dict[str, Any]) -> bool:
    return bool(output.get("metadata", {}).get("context_kernel", {}).get(WRITTEN_FILE_KEY))


def image_changes(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> list[str]:
    """A line per raster image whose pixels changed (the text comparison only sees its MIME type)."""
    pairs = zip(_images(recorded), _images(replayed), strict=False)
    return [f"image {n} ({mime}): {change}" for n, ((mime, old), (_, new)) in enumerate(pairs, 1)
            if (change := image_difference(old, new)) is not None]
