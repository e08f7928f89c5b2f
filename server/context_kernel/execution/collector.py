"""Collects one cell's IOPub messages: nbformat outputs for the record, bounded text for the agent.

Memory stays bounded whatever a cell prints: text for the reply lives in HeadTail buffers, and
recorded outputs are handed to the store in batches (`take_pending`) as they accumulate: at
256 KB, or once a second, so a server killed mid-cell leaves in the record what was printed up to
about a second before (the runner asks on each message and on its liveness tick; no timer).
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import Any

import nbformat

from ..activity import printed
from ..wording import size_text
from .text import HeadTail, strip_ansi

OUTPUT_TYPES = frozenset({"stream", "display_data", "execute_result", "error", "update_display_data"})
# Stream rows in the store are coalesced up to this size, so a flood is not a row per line.
STREAM_ROW_BYTES = 64 * 1024
FLUSH_BYTES = 256 * 1024
FLUSH_INTERVAL_S = 1.0


class OutputCollector:
    def __init__(self, return_budget: int, hard_cap: int) -> None:
        self.stdout = HeadTail(return_budget)
        self.stderr = HeadTail(max(return_budget // 2, 1024))
        self.hard_cap = hard_cap
        self.bytes_produced = 0
        self.capped = False
        self.error: dict[str, Any] | None = None
        self.shown_images: set[str] = set()
        # Bytes of displays the reply named instead of sending (a plot): kept out even when the text is whole.
        self.withheld_bytes = 0
        """Keys (image_key) of the images the cell displayed: a saved figure it also displayed is not recorded twice."""
        self._pending: list[dict[str, Any]] = []
        self._pending_bytes = 0
        self._flushed_at = time.monotonic()
        self._seq = 0
        self._dropped_after_cap = 0

    def feed(self, msg: dict[str, Any]) -> None:
        msg_type = msg["header"]["msg_type"]
        if msg_type not in OUTPUT_TYPES:
            return
        content = msg["content"]
        size = _content_size(msg_type, content)
        self.bytes_produced += size
        if self.capped:
            self._dropped_after_cap += size
            return
        if self.bytes_produced > self.hard_cap:
            self.capped = True
            self._dropped_after_cap += size
            self._record({
                "output_type": "stream", "name": "stderr",
                "text": f"\n[context-kernel: output cap of {size_text(self.hard_cap)} reached; "
                        "the cell was interrupted and later output dropped]\n",
            })
            return
        if msg_type == "stream":
            text = content.get("text", "")
            (self.stderr if content.get("name") == "stderr" else self.stdout).feed(text)
            self._record_stream(content.get("name", "stdout"), text)
            printed(text)  # the progress notification's "last line" (activity.py)
            return
        if msg_type == "error":
            self.error = content
            self._record(nbformat.v4.output_from_msg(msg))
            return
        if msg_type == "update_display_data":
            self._record({"output_type": "display_data", "data": content.get("data", {}),
                          "metadata": content.get("metadata", {})})
            return
        output = nbformat.v4.output_from_msg(msg)
        self._record(output)
        data = content.get("data", {})
        rich = sorted(m for m in data if m != "text/plain")
        self.shown_images |= {image_key(data[m]) for m in rich if m.startswith("image/") and isinstance(data[m], str)}
        if rich and (any(m.startswith("image/") for m in rich) or _says_nothing(data)):
            # A plot, or HTML whose text/plain is `<IPython.core.display.HTML object>`: a line saying what was
            # recorded, instead of base64 or a repr that reads as if the display had shown nothing.
            self.stdout.feed(f"[{', '.join(rich)} output recorded ({_human(size)}): not returned here; see the "
                             "session notebook]\n")
            self.withheld_bytes += size
            return
        text = _plain(data)
        if text:
            self.stdout.feed(text if text.endswith("\n") else text + "\n")

    def record(self, outputs: list[dict[str, Any]]) -> None:
        """Outputs for the record only (a figure the cell saved to a file): the reply names them itself."""
        for output in outputs:
            self._record(output)

    def note(self, text: str) -> None:
        """A line of ours in the reply and the record (not produced by the code)."""
        self.stdout.feed(text + "\n")
        self._record({"output_type": "stream", "name": "stderr", "text": text + "\n"})

    def _record_stream(self, name: str, text: str) -> None:
        last = self._pending[-1] if self._pending else None
        if last and last["output_type"] == "stream" and last["name"] == name and len(last["text"]) < STREAM_ROW_BYTES:
            last["text"] += text
        else:
            self._pending.append({"output_type": "stream", "name": name, "text": text})
        self._pending_bytes += len(text)

    def _record(self, output: dict[str, Any]) -> None:
        self._pending.append(dict(output))
        self._pending_bytes += 256

    @property
    def should_flush(self) -> bool:
        """A batch is due: 256 KB pending, or anything pending for a second since the last flush."""
        if self._pending_bytes >= FLUSH_BYTES:
            return True
        return bool(self._pending) and time.monotonic() - self._flushed_at >= FLUSH_INTERVAL_S

    def take_pending(self) -> tuple[int, list[dict[str, Any]]]:
        """(first sequence number, outputs) to append to the record; clears the batch."""
        batch = self._pending
        first = self._seq
        self._seq += len(batch)
        self._pending = []
        self._pending_bytes = 0
        self._flushed_at = time.monotonic()
        return first, batch

    @property
    def stderr_text(self) -> str:
        return strip_ansi(self.stderr.render(" of stderr"))

    @property
    def dropped_after_cap(self) -> int:
        return self._dropped_after_cap


def _content_size(msg_type: str, content: dict[str, Any]) -> int:
    if msg_type == "stream":
        return len(content.get("text", "").encode("utf-8", "replace"))
    if msg_type == "error":
        return sum(len(line) for line in content.get("traceback", [])) + len(content.get("evalue", ""))
    data = content.get("data", {})
    return sum(len(v) if isinstance(v, str) else len(str(v)) for v in data.values())


def _human(size: int) -> str:
    return f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} B"


# The text/plain of an object that has no text form of its own: `<IPython.core.display.HTML object>`.
_DEFAULT_REPR = re.compile(r"<[\w.]+ (object|at 0x[0-9a-f]+)( at 0x[0-9a-f]+)?>")
# Renderings of the same data as its text/plain (a DataFrame's table): the text says what they say.
_TEXT_RENDERINGS = frozenset({"text/plain", "text/html", "text/latex", "text/markdown"})


def _plain(data: dict[str, Any]) -> str:
    text = data.get("text/plain") or ""
    return "".join(text) if isinstance(text, list) else str(text)


def _says_nothing(data: dict[str, Any]) -> bool:
    plain = _plain(data).strip()
    return not plain or _DEFAULT_REPR.fullmatch(plain) is not None


def placeholder_types(data: dict[str, Any]) -> list[str]:
    """The MIME types of a rich output whose content the agent did not read: all of them beside a text/plain
    that says nothing (a default repr, or none); otherwise all but the HTML, LaTeX and markdown renderings of
    that text (a DataFrame's table)."""
    says_nothing = _says_nothing(data)
    return sorted(m for m in data if m != "text/plain" and (says_nothing or m not in _TEXT_RENDERINGS))


def image_key(data: str) -> str:
    """An image's identity, as displayed (base64) or read from its file (encoded alike), kept small."""
    return hashlib.sha256(data.strip().encode()).hexdigest()
