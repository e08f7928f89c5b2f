"""The agent's own words between its cells: the user's prompts and the agent's text, read from the client's
transcript (the `transcript_path` its hooks report, store/transcripts.py), for the exported notebook.

Read: Claude Code's transcript (JSON lines of `user` / `assistant` entries whose `message.content` is a string
or a list of blocks) and Codex's rollout (`response_item` lines whose payload is a `message`). Kept: the user's
prompts and the agent's `text` blocks. Left out: tool calls and their results (the cells and the conversation
cells show those), thinking, a subagent's side chain, and the client's own inserted lines (`isMeta`, command
echoes, system reminders, environment context). Each entry is redacted and capped. A transcript that cannot be
read, or is of another format, gives nothing: the export is then as it was without one.

Which transcript belongs to an MCP session: the hooks' session is the client's, not ours, so a transcript is
chosen by the project it was reported in and by time (it was in use while our session ran); when several
were, those whose tool results cite one of the session's executions (`[#N]`) win.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from ..security.redact import redact_text
from ..store.transcripts import TranscriptRow

# One transcript read at most this far (a client's transcript of a week-long session can be hundreds of MB).
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
# One entry's text in the notebook at most this long: narration, not a dump.
MAX_ENTRY_CHARS = 4000
# Lines of the client's own making, not the user's words.
_INSERTED = ("<command-", "<local-command", "<system-reminder", "<bash-", "<environment_context",
             "<user_instructions", "Caveat: ")
# A prompt that led to the session's first call came at most this long before it (a user who asks, then
# waits for the agent to read for an hour, is rare; an older prompt belongs to earlier work).
PROMPT_LEAD_S = 3600.0
_CITATION = re.compile(r"\[#(\d+)\]\s*$")


@dataclass(frozen=True)
class Narration:
    at: float
    """When it was said (epoch seconds, from the transcript's timestamp)."""
    role: Literal["user", "agent"]
    text: str


@dataclass
class _Read:
    said: list[Narration]
    cited: set[int]
    joins: bool = False


def narration(transcripts: Iterable[TranscriptRow], first: float, until: float, executions: set[int]
              ) -> list[Narration]:
    """What was said from the prompt that led to the session's first call (at `first`) until `until`, in the
    transcripts in use then: of those citing one of `executions`, if any does, else of all of them; in time
    order, redacted."""
    found = [_read(Path(t.path), until) for t in transcripts
             if t.last_seen >= first - PROMPT_LEAD_S and t.first_seen <= until]
    citing = [r for r in found if r.cited & executions]
    said = sorted((n for r in citing or found for n in r.said), key=lambda n: n.at)
    # From the last prompt before the first call: what came before it led to another session's work.
    start = max((i for i, n in enumerate(said) if n.role == "user" and n.at <= first), default=0)
    return [n for n in said[start:] if n.at >= first - PROMPT_LEAD_S]


def _read(path: Path, until: float) -> _Read:
    result = _Read([], set())
    for at, role, text, cites in _parsed(path):
        if at > until:
            continue
        result.cited.update(cites)
        if text.strip():
            _add(result.said, Narration(at, role, text), joined=result.joins)
        result.joins = bool(text.strip())
    return result


# Parsed transcripts by path, with the size and time they were parsed at: a live notebook exports after every
# call, and a long session's transcript is tens of MB (re-read only when it grew or changed).
_PARSED: OrderedDict[str, tuple[int, int, list[_Said]]] = OrderedDict()
PARSED_KEPT = 8
_PARSED_LOCK = threading.Lock()
_Said = tuple[float, Literal["user", "agent"], str, list[int]]


def _parsed(path: Path) -> list[_Said]:
    """Every (time, role, text, cited execution ids) of a transcript, in file order ('' text: a tool call)."""
    try:
        found = path.stat()
    except OSError:
        return []
    key = str(path)
    with _PARSED_LOCK:  # exports run on worker threads: a live notebook's and ctx_export's at once
        cached = _PARSED.get(key)
    if cached is not None and cached[:2] == (found.st_size, found.st_mtime_ns):
        return cached[2]
    try:
        with path.open("rb") as f:
            data = f.read(MAX_TRANSCRIPT_BYTES)
    except OSError:
        return []
    entries: list[_Said] = []
    for line in data.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line being written, or not JSON: the rest still counts
        at = _time(entry.get("timestamp")) if isinstance(entry, dict) else None
        if at is None:
            continue
        entries += [(at, role, text, cites) for role, text, cites in _entry(entry)]
    with _PARSED_LOCK:
        _PARSED[key] = (found.st_size, found.st_mtime_ns, entries)
        _PARSED.move_to_end(key)
        while len(_PARSED) > PARSED_KEPT:
            _PARSED.popitem(last=False)
    return entries


def _add(said: list[Narration], item: Narration, *, joined: bool) -> None:
    """The agent's consecutive text blocks are one cell (Claude Code writes each block of a reply as a line);
    `joined`: nothing (a tool call) came between it and the last one."""
    clean = redact_text(item.text.strip())
    if len(clean) > MAX_ENTRY_CHARS:
        clean = clean[:MAX_ENTRY_CHARS].rstrip() + f" … [{len(clean) - MAX_ENTRY_CHARS:,} more characters]"
    if joined and said and said[-1].role == item.role == "agent":
        said[-1] = Narration(said[-1].at, item.role, said[-1].text + "\n\n" + clean)
    else:
        said.append(Narration(item.at, item.role, clean))


def _entry(entry: dict[str, Any]) -> Iterator[tuple[Literal["user", "agent"], str, list[int]]]:
    """(role, text, execution ids its tool results cite) of one transcript line; text "" for a line that
    only separates (a tool call, a tool result)."""
    if entry.get("isSidechain") or entry.get("isMeta"):
        return
    if entry.get("type") == "response_item":  # Codex
        message = entry.get("payload")
    elif entry.get("type") in ("user", "assistant"):  # Claude Code
        message = entry.get("message")
    else:
        return
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        if isinstance(message, dict) and message.get("type") in ("function_call", "function_call_output"):
            yield "agent", "", _cites(message.get("output"))  # Codex's tool traffic separates text
        return
    role: Literal["user", "agent"] = "user" if message["role"] == "user" else "agent"
    content = message.get("content")
    if isinstance(content, str):
        if not content.lstrip().startswith(_INSERTED):
            yield role, content, []
        return
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            if not block["text"].lstrip().startswith(_INSERTED):
                yield role, block["text"], []
        elif kind in ("tool_use", "tool_result"):
            yield role, "", _cites(block.get("content"))


def _cites(content: Any) -> list[int]:
    """The execution ids a tool result ends with (`[#N]`, execution/reply.py's citation)."""
    texts = [content] if isinstance(content, str) else [
        b.get("text") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    found = []
    for t in texts:
        match = _CITATION.search(t) if isinstance(t, str) else None
        if match:
            found.append(int(match[1]))
    return found


def _time(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
