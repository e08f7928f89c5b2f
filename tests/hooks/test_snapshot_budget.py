"""build_snapshot: parseable XML within the byte budget, most important entries kept."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import claude_payloads as cc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from context_kernel.hooks.extract import events_from
from context_kernel.hooks.model import CATEGORIES, Event
from context_kernel.hooks.snapshot import MIN_BUDGET, build_snapshot

NOW = 1_700_000_000.0


def snap(events: list[Event], budget: int = 2048) -> ET.Element:
    xml = build_snapshot(events, session_id="s-1", budget=budget, now=NOW)
    assert len(xml.encode("utf-8")) <= budget
    return ET.fromstring(xml)


def texts(root: ET.Element, path: str) -> list[str]:
    return [e.text or "" for e in root.findall(path)]


# Text that breaks naive XML: markup characters, characters XML forbids, lone surrogates, astral plane.
_nasty = st.text(alphabet=st.sampled_from(list("<>&\"'] \n\t\x00\x0b\x1f\ud800\udfff\ufffe\uffffé漢😀a/.")),
                 max_size=40)
_huge = st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=4), st.integers(200, 3000))
_events = st.builds(
    Event,
    type=st.one_of(st.sampled_from(["file_edit", "file_read", "file_write", "task", "task_done", "rule",
                                    "decision", "error", "git", "prompt", "mcp_tool"]), _nasty),
    category=st.one_of(st.sampled_from(CATEGORIES), _nasty),
    data=st.one_of(st.text(max_size=60), _nasty, _huge),
    priority=st.integers(-3, 8),
    time=st.one_of(st.just(0.0), st.floats(allow_nan=True, allow_infinity=True)),
)


@settings(max_examples=300, deadline=None)
@given(events=st.lists(_events, max_size=80), budget=st.integers(MIN_BUDGET, 4096),
       session_id=st.one_of(st.text(), _nasty, _huge))
def test_the_snapshot_always_parses_and_fits_the_budget(events: list[Event], budget: int, session_id: str) -> None:
    xml = build_snapshot(events, session_id=session_id, budget=budget, now=NOW)
    assert len(xml.encode("utf-8")) <= budget
    root = ET.fromstring(xml)
    assert root.tag == "session_snapshot"
    assert root.get("events") == str(len(events))
    assert [child.tag for child in root if child.tag != "dropped"] == \
        [c for c in CATEGORIES if root.find(c) is not None]


def test_files_and_tasks_survive_a_flood_of_low_priority_events() -> None:
    flood = [Event("mcp_tool", "tools", f"mcp__browser__click selector=#button-{i} " + "x" * 40, time=100 + i)
             for i in range(300)]
    flood += [Event("prompt", "intent", f"prompt number {i} " + "y" * 60, time=500 + i) for i in range(50)]
    # The important events are the oldest: age must not beat priority.
    important = [Event("file_edit", "files", f"src/module_{i}.py", time=1 + i) for i in range(5)]
    important += [Event("task", "tasks", f"[pending] write part {i}", time=10 + i) for i in range(3)]
    root = snap(important + flood)
    assert sorted(texts(root, "files/file")) == [f"src/module_{i}.py" for i in range(5)]
    assert sorted(texts(root, "tasks/task")) == [f"write part {i}" for i in range(3)]
    dropped = root.find("dropped")
    assert dropped is not None
    assert int(dropped.get("count", "0")) > 250
    assert set(dropped.get("categories", "").split(",")) <= {"intent", "tools"}


def test_within_a_priority_the_oldest_entries_are_dropped_first() -> None:
    prompts = [Event("prompt", "intent", f"request {i:03d} " + "z" * 80, time=i) for i in range(100)]
    kept = texts(snap(prompts, budget=1024), "intent/prompt")
    numbers = [int(t.split()[1]) for t in kept]
    assert numbers == sorted(numbers, reverse=True)  # newest first
    assert numbers[0] == 99
    assert min(numbers) == 100 - len(numbers)  # a contiguous run of the newest


def test_a_file_edited_ten_times_is_one_entry_with_a_count() -> None:
    events = [Event("file_edit", "files", "src/app.py", time=i) for i in range(10)]
    [entry] = snap(events).findall("files/file")
    assert (entry.text, entry.get("op"), entry.get("n")) == ("src/app.py", "edit", "10")


def test_a_later_read_does_not_hide_that_a_file_was_edited() -> None:
    events = [Event("file_read", "files", "a.py", priority=2, time=1),
              Event("file_edit", "files", "a.py", time=2),
              Event("file_read", "files", "a.py", priority=2, time=3)]
    [entry] = snap(events).findall("files/file")
    assert (entry.get("op"), entry.get("n")) == ("edit", "3")


def test_repeated_errors_fold_into_one_counted_entry() -> None:
    error = "pytest -q → AssertionError: 3 != 4"
    events = [Event("error", "errors", error, time=i) for i in range(4)]
    events.append(Event("error", "errors", "make → fatal: no rule", time=9))
    root = snap(events)
    assert [(e.text, e.get("n")) for e in root.findall("errors/error")] == [
        ("make → fatal: no rule", None), (error, "4")]


def test_a_task_later_completed_shows_as_done() -> None:
    events = [Event("task", "tasks", "[pending] Write the parser", time=1),
              Event("task", "tasks", "[in_progress] Write the parser", time=2),
              Event("task_done", "tasks", "[completed] Write the parser", priority=2, time=3),
              Event("task", "tasks", "[pending] Ship it", time=4)]
    root = snap(events)
    assert [(t.text, t.get("status")) for t in root.findall("tasks/task")] == [
        ("Ship it", "pending"), ("Write the parser", "completed")]


def test_an_update_naming_only_the_task_id_completes_the_created_task() -> None:
    events = events_from(cc.as_call(cc.TASK_CREATE)) + events_from(cc.as_call(cc.TASK_UPDATE))
    [task] = snap(events).findall("tasks/task")
    assert (task.text, task.get("status")) == ("Migrate prices to Decimal (#4)", "completed")


def test_completed_tasks_are_dropped_before_pending_ones() -> None:
    done = [Event("task_done", "tasks", f"[completed] finished job {i} " + "d" * 60, time=100 + i)
            for i in range(40)]
    pending = [Event("task", "tasks", f"[pending] open job {i}", time=i) for i in range(5)]
    root = snap(pending + done, budget=1024)
    statuses = [t.get("status") for t in root.findall("tasks/task")]
    assert statuses.count("pending") == 5
    assert root.find("dropped") is not None


def test_markup_in_data_is_escaped_and_read_back_unchanged() -> None:
    nasty = 'if a < b && c > "d": <script>alert(1)</script> ]]> \u2603'
    root = snap([Event("decision", "decisions", nasty), Event("file_edit", "files", "src/<odd>&name.py")])
    assert texts(root, "decisions/decision") == [nasty]
    assert texts(root, "files/file") == ["src/<odd>&name.py"]


def test_characters_xml_forbids_are_removed() -> None:
    root = snap([Event("error", "errors", "bad\x00byte\x1b[31m red \ud800 end")])
    assert texts(root, "errors/error") == ["badbyte[31m red end"]


def test_categories_come_in_priority_order_and_entries_newest_first() -> None:
    events = [Event("prompt", "intent", "first ask", time=1), Event("git", "environment", "commit: x", time=2),
              Event("file_edit", "files", "old.py", time=3), Event("file_edit", "files", "new.py", time=4),
              Event("rule", "rules", "CLAUDE.md", time=5)]
    root = snap(events)
    assert [c.tag for c in root] == ["files", "rules", "environment", "intent"]
    assert texts(root, "files/file") == ["new.py", "old.py"]
    assert root.find("dropped") is None
    assert root.get("at") == "2023-11-14T22:13:20Z"


def test_huge_data_is_shortened_and_paths_keep_their_file_name() -> None:
    path = "src/" + "deep/" * 100 + "target_module.py"
    root = snap([Event("file_edit", "files", path), Event("decision", "decisions", "keep " * 500)])
    [file_text] = texts(root, "files/file")
    assert file_text.endswith("target_module.py") and "…" in file_text and len(file_text) <= 240
    [decision] = texts(root, "decisions/decision")
    assert decision.startswith("keep keep") and len(decision) <= 240


def test_a_budget_below_the_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="at least"):
        build_snapshot([], session_id="s", budget=MIN_BUDGET - 1)


def test_a_session_replayed_from_hook_payloads_keeps_its_working_state() -> None:
    payloads = [cc.session_start("startup"), cc.prompt("Let's use Decimal for all prices."), cc.READ_CLAUDE_MD,
                cc.READ, cc.EDIT, cc.EDIT, cc.WRITE, cc.TODO_WRITE, cc.BASH_FAILED, cc.BASH_COMMIT, cc.SUBAGENT]
    events = [Event(e.type, e.category, e.data, e.priority, float(i))
              for i, p in enumerate(payloads) for e in events_from(cc.as_call(p))]
    root = snap(events)
    assert [(f.text, f.get("op")) for f in root.findall("files/file")] == [
        ("tests/test_totals.py", "write"), ("src/cart/totals.py", "edit")]
    assert texts(root, "rules/rule") == ["CLAUDE.md"]
    assert texts(root, "decisions/decision") == ["Let's use Decimal for all prices."]
    assert texts(root, "errors/error") == ["python -m shop.import data/orders.csv → KeyError: 'order_id'"]
    assert "commit: Fix rounding in cart totals" in texts(root, "environment/git")
    assert {t.get("status") for t in root.findall("tasks/task")} == {"completed", "in_progress", "pending"}
