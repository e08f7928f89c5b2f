"""The snapshot under pressure: a flood of one category cannot push the others out (FLOORS).

The issue's case: 40 file edits, then one TodoWrite of 30 long tasks; the 2 KB snapshot kept 8
tasks and a `git clone` and dropped every file. Then floods of each category, mixed with one
event of every other kind, as a property.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from context_kernel.hooks.model import Event
from context_kernel.hooks.snapshot import ENTRY_CHARS, build_snapshot

NOW = 1_700_000_000.0
BUDGET = 2048


def snap(events: list[Event]) -> ET.Element:
    xml = build_snapshot(events, session_id="s-floors", budget=BUDGET, now=NOW)
    assert len(xml.encode("utf-8")) <= BUDGET
    return ET.fromstring(xml)


def long_task(i: int) -> str:
    return f"[pending] Task {i}: " + ("migrate the billing reports to the new warehouse schema and verify " * 3)


def test_forty_edits_then_thirty_long_tasks_keep_the_latest_files_and_open_tasks() -> None:
    events = [Event("file_edit", "files", f"src/module_{i:02d}.py", time=float(i)) for i in range(40)]
    events.append(Event("git", "environment", "git clone https://github.com/acme/app", time=40.0))
    events += [Event("task", "tasks", long_task(i), time=41.0) for i in range(30)]
    root = snap(events)
    files = [e.text for e in root.findall("files/file")]
    assert files[:3] == ["src/module_39.py", "src/module_38.py", "src/module_37.py"]
    assert len(files) >= 5
    assert len(root.findall("tasks/task")) >= 1
    assert root.find("dropped") is not None  # and the reader is told what went


def test_the_last_error_and_the_last_decision_survive_a_flood_of_tasks() -> None:
    events = [Event("decision", "decisions", "use SQLite, not Postgres, for the cache", time=1.0),
              Event("error", "errors", "pytest: 3 failed in tests/test_cache.py", time=2.0)]
    # Short tasks, newer and of a more important priority: without floors they fill every byte.
    events += [Event("task", "tasks", f"[pending] step {i} of the cache rewrite", time=3.0 + i) for i in range(90)]
    root = snap(events)
    assert [e.text for e in root.findall("decisions/*")] == ["use SQLite, not Postgres, for the cache"]
    assert [e.text for e in root.findall("errors/*")] == ["pytest: 3 failed in tests/test_cache.py"]


def test_only_files_read_get_no_floor_and_finished_tasks_neither() -> None:
    events = [Event("file_edit", "files", "src/edited.py", time=0.0)]
    events += [Event("file_read", "files", f"docs/read_{i}.md", time=1.0 + i) for i in range(200)]
    events += [Event("task", "tasks", "[completed] " + long_task(i)[10:], time=300.0 + i) for i in range(30)]
    events.append(Event("task", "tasks", "[in_progress] ship the fix", time=400.0))
    root = snap(events)
    assert "src/edited.py" in [e.text for e in root.findall("files/file")]
    assert "ship the fix" in [e.text for e in root.findall("tasks/task")]


FLOODS = {
    "files": lambda i, text: Event("file_edit", "files", f"src/pkg_{i}/{text}.py"),
    "tasks": lambda i, text: Event("task", "tasks", f"[pending] task {i} {text}"),
    "decisions": lambda i, text: Event("decision", "decisions", f"decision {i} {text}"),
    "errors": lambda i, text: Event("error", "errors", f"error {i} {text}"),
    "rules": lambda i, text: Event("rule", "rules", f"rule {i} {text}"),
    "environment": lambda i, text: Event("git", "environment", f"git checkout -b branch-{i} {text}"),
    "intent": lambda i, text: Event("prompt", "intent", f"prompt {i} {text}"),
    "tools": lambda i, text: Event("mcp_tool", "tools", f"tool {i} {text}"),
}
# One event of each kind, each at most an entry long: the floors of the first four always fit.
SINGLES = {
    "files": Event("file_edit", "files", "src/the_one_edit.py"),
    "tasks": Event("task", "tasks", "[in_progress] the one open task"),
    "decisions": Event("decision", "decisions", "the one decision"),
    "errors": Event("error", "errors", "the one error"),
}
GUARANTEED = {"files": "files/file", "tasks": "tasks/task", "decisions": "decisions/*", "errors": "errors/*"}

_words = st.text(alphabet=st.sampled_from(list("abcdefghij_ -<&é")), min_size=1, max_size=ENTRY_CHARS)


@settings(max_examples=150, deadline=None)
@given(flood=st.sampled_from(sorted(FLOODS)), size=st.integers(20, 400), texts=st.lists(_words, min_size=1,
       max_size=8), single_first=st.booleans(), filler=st.lists(st.sampled_from(sorted(FLOODS)), max_size=30))
def test_a_flood_of_any_category_leaves_the_floors_of_the_others(
        flood: str, size: int, texts: list[str], single_first: bool, filler: list[str]) -> None:
    flooded = [FLOODS[flood](i, texts[i % len(texts)]) for i in range(size)]
    mixed = [FLOODS[c](1000 + i, "x" * 200) for i, c in enumerate(filler)]
    singles = [e for c, e in SINGLES.items() if c != flood]
    ordered = [*singles, *mixed, *flooded] if single_first else [*mixed, *flooded, *singles]
    events = [Event(e.type, e.category, e.data, time=float(t)) for t, e in enumerate(ordered)]
    root = snap(events)
    for category, path in GUARANTEED.items():
        found = [e.text for e in root.findall(path)]
        assert found, f"{category} lost to a flood of {flood}"
        if category != flood and category != "tasks":
            # Its floor is the newest of its kind (filler of that kind may come after the single).
            newest = next(e for e in reversed(events) if e.category == category)
            assert " ".join(newest.data.split())[:60] in [f[:60] for f in found]
