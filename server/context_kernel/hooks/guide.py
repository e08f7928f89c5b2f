"""What SessionStart injects: the routing guide (startup) and the resume guide (compact|resume).

Both are short on purpose: they are paid for in the agent's context on every session. The resume guide
is the snapshot plus ready-made `ctx_search` calls over the session's own events, so the agent pulls
back the details the snapshot had to leave out instead of having them pasted in (context-mode's
"Session Guide and search instructions", spec §5). Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from .model import Event
from .snapshot import DONE_STATUSES, MIN_BUDGET, build_snapshot, newest_first, task_states

EVENTS_SOURCE = "session-events"
"""The knowledge-base source label the session's events are indexed under."""
ROUTING_MAX = 600
RESUME_MAX = 3072
SNAPSHOT_MAX = 2048
MIN_RESUME = 1024
"""Smallest resume budget that still holds the header, a minimal snapshot and three searches."""
QUERY_CHARS = 60

_ROUTING = """\
context-kernel is on: keep big outputs out of this chat.
- Logs, tests, data, counting or parsing: ctx_execute(language, code), print only the answer. One file: \
ctx_execute_file(path, language, code). Several commands: ctx_batch_execute.
- Web pages, docs: ctx_fetch_and_index(url), not WebFetch.
- Big files/dirs to search: ctx_index(path).
- Then ctx_search(queries=[...]) for the parts you need.
- Read only files you will edit; Bash for short output (git, installs).
- ctx_stats: savings. ctx_export: session as a notebook."""

_WORD = re.compile(r"[\w][\w.+#/-]*", re.UNICODE)
_STOP = frozenset({
    "the", "a", "an", "and", "or", "to", "of", "in", "on", "for", "with", "from", "into", "by", "at", "is", "are",
    "be", "it", "this", "that", "these", "those", "then", "than", "please", "can", "could", "would", "should",
    "will", "we", "you", "i", "me", "my", "our", "your", "let's", "lets", "use", "using", "make", "sure", "also",
    "just", "now", "new", "add", "fix", "do", "does", "done", "all", "any", "some", "more",
})


def routing_guide() -> str:
    """Which ctx tool to use instead of Bash/Read/WebFetch when the output would be big (≤ 600 bytes)."""
    return _ROUTING


def resume_guide(snapshot_xml: str, events: Sequence[Event], *, session_id: str, budget: int = RESUME_MAX) -> str:
    """Header line, the snapshot and 3–5 `ctx_search` calls built from the session, ≤ `budget` bytes.

    The snapshot part stays ≤ 2 KB; when the given one (or none, "") does not leave room for the header
    and three searches, it is rebuilt from `events` with a smaller budget (least important out first).
    """
    if budget < MIN_RESUME:
        raise ValueError(f"budget must be at least {MIN_RESUME} bytes, got {budget}")
    short_id = " ".join(session_id.split())[:40]
    header = (f"[context-kernel] Session {short_id} resumed: its state before the context was cut is below; "
              f'ctx_search(source="{EVENTS_SOURCE}") finds the rest.')
    intro = "Search the session before asking the user again:"
    calls = [(_search_call(q), _search_call(q[:1])) for q in search_queries(events)]
    # Room for the first three searches, in their one-query form if need be, comes before the snapshot.
    # (+3: the newlines after header, snapshot and intro.)
    reserved = _size(header) + _size(intro) + sum(_size(short) + 1 for _, short in calls[:3]) + 3
    room = min(SNAPSHOT_MAX, budget - reserved)
    if not snapshot_xml.strip() or _size(snapshot_xml) > room:
        snapshot_xml = build_snapshot(events, session_id=session_id, budget=max(MIN_BUDGET, room))
    parts = [header, snapshot_xml, intro]
    used = sum(_size(p) + 1 for p in parts)
    for i, (full, short) in enumerate(calls[:5]):
        # A long first search must not crowd out the one-query forms still owed to the first three.
        owed = sum(_size(s) + 1 for _, s in calls[i + 1:3])
        for line in (full, short):  # one query still points the way
            if used + _size(line) + 1 + owed <= budget:
                parts.append(line)
                used += _size(line) + 1
                break
    return "\n".join(parts)


def search_queries(events: Sequence[Event]) -> list[list[str]]:
    """Query lists drawn from the session itself, most useful first, padded to at least three."""
    newest = newest_first(events)
    found: list[list[str]] = []

    edited = _unique(_file_name(e.data) for e in newest if e.type in ("file_edit", "file_write"))
    if edited:
        found.append(edited[:3])
    pending = [text for text, status in task_states(events) if status not in DONE_STATUSES]
    if pending:
        found.append([_keywords(re.sub(r"\s*\(#\w+\)$", "", t)) for t in pending[:2]])
    for kinds in (("error",), ("decision", "correction"), ("prompt",)):
        # An error reads "command → error line"; the error line is what to search for.
        words = next((w for e in newest if e.type in kinds and (w := _keywords(e.data.rsplit("→", 1)[-1]))), "")
        found.append([words])
    read = _unique(_file_name(e.data) for e in newest if e.type == "file_read")
    found.append(read[:3])
    unique: list[list[str]] = []
    for queries in found:
        queries = [q for q in queries if q]
        if queries and queries not in unique:
            unique.append(queries)
    for fallback in (["decision", "correction"], ["error"], ["task", "todo"]):
        if len(unique) >= 3:
            break
        if fallback not in unique:
            unique.append(fallback)
    return unique[:5]


def _search_call(queries: list[str]) -> str:
    return f"ctx_search(queries={json.dumps(queries, ensure_ascii=False)}, source=\"{EVENTS_SOURCE}\")"


def _keywords(text: str, limit: int = 6) -> str:
    """The first content words of a text: what a person would type into a search box."""
    words = [w.rstrip(".,:;") for w in _WORD.findall(text)]
    words = [w for w in words if w.casefold() not in _STOP and len(w) > 1]
    return " ".join(words[:limit])[:QUERY_CHARS]


def _file_name(path: str) -> str:
    return (PurePosixPath(path.replace("\\", "/")).name or path)[:QUERY_CHARS]


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return list(seen)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
