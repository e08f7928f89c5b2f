"""The compaction snapshot: a session's events as at most `budget` bytes of XML, most important first.

Built at PreCompact and injected at SessionStart(compact|resume). context-mode keeps such a snapshot
under 2 KB, grouped by category and filled by priority (its README; the 1.0.169 release dropped the
budget, we keep it: spec §5). Standard library only; `xml.etree` must parse whatever we emit, so text is
escaped and characters XML 1.0 forbids are removed.

Shape::

    <session_snapshot session="…" events="57" at="2025-01-01T12:00:00Z">
    <files>
    <file op="edit" n="3">src/app.py</file>
    </files>
    <tasks>
    <task status="in_progress">Wire the parser</task>
    </tasks>
    …
    <dropped count="12" categories="intent,tools"/>
    </session_snapshot>

Categories come in `CATEGORIES` order, entries newest first, repeats folded into one entry with `n`.
When the budget is short, each category first gets its floor (`FLOORS`: the most recently edited
files, the open tasks, the last decision, the last error, …), taken one entry per category in
turn, so a flood of one kind (40 edits, then a TodoWrite of 30 long tasks) cannot push the others
out; the rest of the room is filled by priority, then recency. What does not fit goes, and
`<dropped>` says how many, so the reader knows to search the full history.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from .model import CATEGORIES, Event

MIN_BUDGET = 256
"""Below this not even the root element and one entry fit."""
ENTRY_CHARS = 240
"""Longest text of one entry; longer paths keep their end (the file name), other text its start."""
DONE_STATUSES = frozenset({"completed", "done", "deleted", "cancelled"})
FLOORS: dict[str, int] = {"files": 5, "tasks": 5, "decisions": 1, "errors": 1, "rules": 2, "environment": 1,
                          "intent": 1, "tools": 1}
"""Entries each category keeps before the rest is filled by priority: files edited or written
(newest first), open tasks (newest first), and elsewhere the newest. Taken in rounds, in this
order, one per category a round: the first four (one entry each, 240 characters at most) always
fit in the 2 KB snapshot."""

_ROOT = "session_snapshot"
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_TAG_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
_STATUS = re.compile(r"^\[([\w -]{1,20})\]\s*")
_TASK_ID = re.compile(r"#(\w+)\)?\s*$")
_FILE_OPS = {"file_read": "read", "file_edit": "edit", "file_write": "write"}


@dataclass
class _Entry:
    category: str
    tag: str
    text: str
    priority: int
    order: int
    """Position of the newest event folded in (higher is newer)."""
    count: int = 1
    attrs: dict[str, str] = field(default_factory=dict)
    xml: str = ""

    def render(self) -> str:
        attrs = dict(self.attrs)
        if self.count > 1:
            attrs["n"] = str(self.count)
        head = "".join(f' {k}="{_escape(v, quote=True)}"' for k, v in attrs.items())
        return f"<{self.tag}{head}>{_escape(self.text)}</{self.tag}>"


def build_snapshot(events: Sequence[Event], *, session_id: str, budget: int = 2048,
                   now: float | None = None) -> str:
    """XML of the session's state whose UTF-8 size never exceeds `budget` bytes.

    `events` in any order (sorted by `time`, then position); `now` stamps the `at` attribute (UTC,
    default: the current time). Raises ValueError for a budget below MIN_BUDGET.
    """
    if budget < MIN_BUDGET:
        raise ValueError(f"budget must be at least {MIN_BUDGET} bytes, got {budget}")
    entries = _entries(events)
    for entry in entries:
        entry.xml = entry.render()
    tail = f"</{_ROOT}>"
    bare = f'<{_ROOT} session="" events="{len(events)}"{_stamp(now)}>'
    # The root, the closing tag and a <dropped> line naming every category must always fit.
    skeleton = _size(bare) + 1 + _size(tail) + 1 + _size(_dropped_xml(len(events), list(CATEGORIES)))
    if skeleton > budget:
        raise ValueError(f"budget of {budget} bytes cannot hold even an empty snapshot")
    session = _fit_attr(session_id, min(80, budget - skeleton))
    head = bare.replace('session=""', f'session="{session}"', 1)
    chosen = _choose(entries, budget - _size(head) - 1 - _size(tail))
    xml = _render(head, tail, entries, chosen)
    while _size(xml) > budget and chosen:  # cannot happen by construction; the promise is absolute
        chosen.discard(max(chosen, key=lambda i: (entries[i].priority, -entries[i].order)))
        xml = _render(head, tail, entries, chosen)
    return xml


def newest_first(events: Sequence[Event]) -> list[Event]:
    """Events by time, newest first; events without a time keep their given order."""
    return [e for _, e in sorted(enumerate(events), key=lambda pair: (_time(pair[1]), pair[0]), reverse=True)]


def task_states(events: Sequence[Event]) -> list[tuple[str, str]]:
    """(task text, latest status) per task, newest first: the same folding the snapshot uses."""
    tasks = sorted((e for e in _entries(events) if e.category == "tasks"), key=lambda e: -e.order)
    return [(e.text, e.attrs["status"]) for e in tasks]


# --- grouping ------------------------------------------------------------------------------------

def _entries(events: Sequence[Event]) -> list[_Entry]:
    """Fold events into entries: one per file, per task, per distinct (type, text) elsewhere."""
    ordered = sorted(enumerate(events), key=lambda pair: (_time(pair[1]), pair[0]))
    groups: dict[tuple[str, ...], _Entry] = {}
    for order, (_, event) in enumerate(ordered):
        data = " ".join(_clean(str(event.data)).split())
        if not data:
            continue
        category = event.category if event.category in CATEGORIES else "tools"
        priority = event.effective_priority()
        if category == "files":
            _add_file(groups, event, data, priority, order)
        elif category == "tasks":
            _add_task(groups, event, data, priority, order)
        else:
            tag = _tag(event.type)
            key = (category, tag, data.casefold())
            entry = groups.get(key)
            if entry is None:
                groups[key] = _Entry(category, tag, _shorten(data), priority, order)
            else:
                entry.count += 1
                entry.order = order
                entry.priority = min(entry.priority, priority)
    return list(groups.values())


def _add_file(groups: dict[tuple[str, ...], _Entry], event: Event, path: str, priority: int,
              order: int) -> None:
    op = _FILE_OPS.get(event.type, _tag(event.type))
    entry = groups.get(("files", path))
    if entry is None:
        groups[("files", path)] = _Entry("files", "file", _shorten(path, keep_end=True), priority, order,
                                         attrs={"op": op})
        return
    entry.count += 1
    entry.order = order
    entry.priority = min(entry.priority, priority)
    if op != "read" or entry.attrs["op"] == "read":  # a later read does not hide that the file was edited
        entry.attrs["op"] = op


def _add_task(groups: dict[tuple[str, ...], _Entry], event: Event, data: str, priority: int,
              order: int) -> None:
    match = _STATUS.match(data)
    status = match.group(1).strip() if match else ("completed" if event.type == "task_done" else "pending")
    content = data[match.end():] if match else data
    done = event.type == "task_done" or status in DONE_STATUSES
    if done:
        priority = max(priority, 2)  # open work outranks finished work
    by_id = _TASK_ID.search(content)
    key = ("tasks", "#" + by_id.group(1)) if by_id else ("tasks", content.casefold())
    entry = groups.get(key)
    # The latest status wins: a task later completed shows as done, not pending.
    if entry is None:
        groups[key] = _Entry("tasks", "task", _shorten(content), priority, order, attrs={"status": status})
        return
    entry.count += 1
    entry.order = order
    entry.priority = priority
    entry.attrs["status"] = status
    if not re.fullmatch(r"task #\w+", content):  # keep the subject when an update names only the id
        entry.text = _shorten(content)


# --- choosing what fits --------------------------------------------------------------------------

def _choose(entries: list[_Entry], room: int) -> set[int]:
    """Indexes of the entries to keep in `room` bytes (root element excluded)."""
    costs = [_size(e.xml) + 1 for e in entries]
    containers = {c: _size(f"<{c}>") + _size(f"</{c}>") + 2 for c in CATEGORIES}
    everything = sum(costs) + sum(containers[c] for c in {e.category for e in entries})
    if everything <= room:
        return set(range(len(entries)))
    # Something will be dropped: keep room for the <dropped> line at its longest.
    room -= _size(_dropped_xml(len(entries), list(CATEGORIES))) + 1
    chosen: set[int] = set()
    opened: set[str] = set()
    used = 0

    def take(i: int) -> None:
        nonlocal used
        category = entries[i].category
        cost = costs[i] + (0 if category in opened else containers[category])
        if i not in chosen and used + cost <= room:  # one that does not fit leaves room for smaller ones
            chosen.add(i)
            opened.add(category)
            used += cost

    floors = _floors(entries)
    for turn in range(max(FLOORS.values())):
        for category in FLOORS:
            if turn < len(floors.get(category, [])):
                take(floors[category][turn])
    for i in sorted(range(len(entries)), key=lambda i: (entries[i].priority, -entries[i].order)):
        take(i)
    return chosen


def _floors(entries: list[_Entry]) -> dict[str, list[int]]:
    """Per category, the entries of its floor, in the order they are taken (FLOORS)."""
    newest = sorted(range(len(entries)), key=lambda i: -entries[i].order)
    floors: dict[str, list[int]] = {}
    for i in newest:
        entry = entries[i]
        if entry.category == "files" and entry.attrs.get("op") == "read":
            continue  # a file only read is not what the session changed
        if entry.category == "tasks" and entry.attrs.get("status") in DONE_STATUSES:
            continue
        picked = floors.setdefault(entry.category, [])
        if len(picked) < FLOORS.get(entry.category, 0):
            picked.append(i)
    return floors


def _render(head: str, tail: str, entries: list[_Entry], chosen: set[int]) -> str:
    lines = [head]
    for category in CATEGORIES:
        kept = sorted((entries[i] for i in chosen if entries[i].category == category), key=lambda e: -e.order)
        if kept:
            lines.append(f"<{category}>")
            lines.extend(e.xml for e in kept)
            lines.append(f"</{category}>")
    dropped = [e for i, e in enumerate(entries) if i not in chosen]
    if dropped:
        lines.append(_dropped_xml(len(dropped), [c for c in CATEGORIES if any(e.category == c for e in dropped)]))
    lines.append(tail)
    return "\n".join(lines)


def _dropped_xml(count: int, categories: list[str]) -> str:
    return f'<dropped count="{count}" categories="{",".join(categories)}"/>'


# --- text ----------------------------------------------------------------------------------------

def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _clean(text: str) -> str:
    return _ILLEGAL_XML.sub("", text)


def _escape(text: str, quote: bool = False) -> str:
    text = _clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


def _fit_attr(text: str, max_bytes: int) -> str:
    """`text` escaped for an attribute, cut so the escaped form stays within max_bytes."""
    text = " ".join(_clean(text).split())[:max_bytes]
    while _size(_escape(text, quote=True)) > max_bytes:
        text = text[: max(0, len(text) - max(1, len(text) // 8))]
    return _escape(text, quote=True)


def _shorten(text: str, *, keep_end: bool = False) -> str:
    if len(text) <= ENTRY_CHARS:
        return text
    if keep_end:  # a path: its end names the file
        return text[:60] + "…" + text[-(ENTRY_CHARS - 61):]
    return text[: ENTRY_CHARS - 1] + "…"


def _tag(event_type: str) -> str:
    tag = _TAG_CHARS.sub("_", event_type)[:32]
    if not tag or not (tag[0].isalpha() or tag[0] == "_"):
        tag = "event_" + tag if tag else "event"
    return tag[:38]


def _time(event: Event) -> float:
    value = event.time
    # NaN would make the sort order undefined: treat it as "no time".
    return float(value) if isinstance(value, (int, float)) and not math.isnan(value) else 0.0


def _stamp(now: float | None) -> str:
    try:
        moment = time.gmtime(time.time() if now is None else now)
    except (OverflowError, OSError, ValueError):
        return ""
    return time.strftime(' at="%Y-%m-%dT%H:%M:%SZ"', moment)
