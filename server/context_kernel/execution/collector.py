"""Collects one cell's IOPub messages: nbformat outputs for the record, bounded text for the agent.

Memory stays bounded whatever a cell prints: text for the reply lives in HeadTail buffers, and
recorded outputs are handed to the store in batches (`take_pending`) as they accumulate: at
256 KB, or once a second, so a server killed mid-cell leaves in the record what was printed up to
about a second before (the runner asks on each message and on its liveness tick; no timer).
"""

from __future__ import annotations

import time
from typing import Any

import nbformat

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
        self.rich: list[str] = []
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
                "text": f"\n[context-kernel: output cap of {self.hard_cap // (1024 * 1024)} MB reached; "
                        "the cell was interrupted and later output dropped]\n",
            })
            return
        if msg_type == "stream":
            text = content.get("text", "")
            (self.stderr if content.get("name") == "stderr" else self.stdout).feed(text)
            self._record_stream(content.get("name", "stdout"), text)
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
        text = data.get("text/plain")
        non_text = [m for m in data if m not in ("text/plain",)]
        if non_text:
            kinds = ", ".join(sorted(non_text))
            label = f"[{kinds} output recorded ({_human(size)}): not returned here; see the session notebook]"
            self.rich.append(label)
            if any(m.startswith("image/") for m in non_text):
                self.stdout.feed(label + "\n")
                return
        if isinstance(text, list):
            text = "".join(text)
        if text:
            self.stdout.feed(text if text.endswith("\n") else text + "\n")

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
