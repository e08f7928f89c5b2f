"""routing_guide and resume_guide: what SessionStart injects stays small and points at real content."""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET

import claude_payloads as cc
from hypothesis import given, settings
from hypothesis import strategies as st

from context_kernel.hooks.extract import events_from
from context_kernel.hooks.guide import ROUTING_MAX, resume_guide, routing_guide
from context_kernel.hooks.model import CATEGORIES, Event
from context_kernel.hooks.snapshot import build_snapshot

TOOLS = ("ctx_execute", "ctx_execute_file", "ctx_batch_execute", "ctx_search", "ctx_fetch_and_index",
         "ctx_index", "ctx_export", "ctx_stats")


def session_events() -> list[Event]:
    payloads = [cc.session_start("startup"), cc.prompt("Let's use Decimal for all prices."), cc.READ_CLAUDE_MD,
                cc.READ, cc.EDIT, cc.WRITE, cc.TODO_WRITE, cc.BASH_COMMIT, cc.BASH_FAILED]
    return [Event(e.type, e.category, e.data, e.priority, float(i))
            for i, p in enumerate(payloads) for e in events_from(cc.as_call(p))]


def search_calls(guide: str) -> list[list[str]]:
    """The ctx_search lines, parsed as Python calls: each must name the session-events source."""
    calls = []
    for line in guide.splitlines():
        if line.startswith("ctx_search("):
            call = ast.parse(line, mode="eval").body
            assert isinstance(call, ast.Call)
            keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            assert keywords["source"] == "session-events"
            assert all(isinstance(q, str) and q for q in keywords["queries"])
            calls.append(keywords["queries"])
    return calls


def snapshot_part(guide: str) -> str:
    return guide[guide.index("<session_snapshot"):guide.index("</session_snapshot>") + len("</session_snapshot>")]


def test_the_routing_guide_is_short_and_names_every_ctx_tool() -> None:
    guide = routing_guide()
    assert len(guide.encode("utf-8")) <= ROUTING_MAX == 600
    for tool in TOOLS:
        assert f"{tool}(" in guide or f"{tool}:" in guide or f"{tool}." in guide or f"{tool} " in guide
    for replaced in ("Bash", "Read", "WebFetch"):
        assert replaced in guide


def test_the_resume_guide_is_a_header_the_snapshot_and_searches_built_from_the_session() -> None:
    events = session_events()
    snapshot = build_snapshot(events, session_id=cc.SESSION)
    guide = resume_guide(snapshot, events, session_id=cc.SESSION)
    assert len(guide.encode("utf-8")) <= 3072
    header = guide.splitlines()[0]
    assert cc.SESSION in header and "<" not in header
    assert snapshot_part(guide) == snapshot
    calls = search_calls(guide)
    assert 3 <= len(calls) <= 5
    flat = " ".join(q for queries in calls for q in queries)
    assert "totals.py" in flat and "test_totals.py" in flat  # the edited files
    assert "discounts" in flat and "changelog" in flat  # the open tasks
    assert "Fix rounding" not in flat  # a completed task is not something to resume
    assert "KeyError" in flat  # the last error


def test_an_oversized_or_missing_snapshot_is_rebuilt_within_2kb() -> None:
    events = session_events() + [Event("decision", "decisions", f"rule {i}: " + "r" * 200) for i in range(40)]
    for given_snapshot in ("", build_snapshot(events, session_id="s", budget=8192)):
        guide = resume_guide(given_snapshot, events, session_id="s")
        part = snapshot_part(guide)
        assert len(part.encode("utf-8")) <= 2048
        ET.fromstring(part)
        assert len(guide.encode("utf-8")) <= 3072


def test_an_empty_session_still_offers_three_searches() -> None:
    guide = resume_guide("", [], session_id="empty")
    assert len(search_calls(guide)) == 3
    assert ET.fromstring(snapshot_part(guide)).get("events") == "0"


_text = st.text(alphabet=st.sampled_from(list('ab "\\<>&é漢😀\n/.→[]')), max_size=400)


@settings(max_examples=100, deadline=None)
@given(events=st.lists(st.builds(
    Event, type=st.sampled_from(["file_edit", "file_read", "task", "task_done", "error", "decision",
                                 "correction", "prompt", "git"]),
    category=st.sampled_from(CATEGORIES), data=_text), max_size=60),
    session_id=st.text(max_size=300))
def test_the_resume_guide_never_exceeds_3kb_and_its_calls_always_parse(events: list[Event], session_id: str) -> None:
    guide = resume_guide("", events, session_id=session_id)
    assert len(guide.encode("utf-8")) <= 3072
    assert 3 <= len(search_calls(guide)) <= 5
    assert len(snapshot_part(guide).encode("utf-8")) <= 2048


@settings(max_examples=60, deadline=None)
@given(events=st.lists(st.builds(
    Event, type=st.sampled_from(["file_edit", "task", "error", "decision", "prompt"]),
    category=st.sampled_from(CATEGORIES), data=_text), max_size=60),
    budget=st.integers(1024, 3072))
def test_a_smaller_injection_budget_shrinks_the_snapshot_not_the_searches(events: list[Event], budget: int) -> None:
    guide = resume_guide(build_snapshot(events, session_id="s"), events, session_id="s", budget=budget)
    assert len(guide.encode("utf-8")) <= budget
    assert len(search_calls(guide)) >= 3
    ET.fromstring(snapshot_part(guide))


def test_the_real_session_fits_a_2kb_injection_with_its_searches() -> None:
    events = session_events() + [Event("prompt", "intent", f"ask {i} " + "p" * 100) for i in range(30)]
    guide = resume_guide(build_snapshot(events, session_id=cc.SESSION), events, session_id=cc.SESSION, budget=2048)
    assert len(guide.encode("utf-8")) <= 2048
    root = ET.fromstring(snapshot_part(guide))
    assert root.find("files") is not None and root.find("dropped") is not None
    assert any("totals.py" in q for queries in search_calls(guide) for q in queries)


def test_a_long_first_search_does_not_crowd_out_the_other_two() -> None:
    # Found by the property above: XML escaping makes '<' names 4x bigger in the snapshot, and a
    # long first search line used to take the room the other two searches' short forms needed.
    events = [Event(type="file_edit", category="files", data="<" * n) for n in range(1, 40)]
    guide = resume_guide(build_snapshot(events, session_id="s"), events, session_id="s", budget=1024)
    assert len(guide.encode("utf-8")) <= 1024
    assert len(search_calls(guide)) >= 3
