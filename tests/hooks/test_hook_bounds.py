"""Hooks stay bounded whatever the client sends: a huge TodoWrite, a stdin that is never closed, a
payload over the size cap. Driven through the real `context-kernel hook` console script."""

from __future__ import annotations

import json
import random
import sqlite3
import time

from hookrun import TIMEOUT, Hooks

from context_kernel.hooks.hook_cli import STDIN_DEADLINE_S
from context_kernel.hooks.model import most_important


def _todo_write(hooks: Hooks, session: str, n: int) -> dict[str, object]:
    todos = [{"content": f"task number {i} of the big plan", "status": ("pending", "in_progress", "completed")[i % 3],
              "activeForm": f"working on {i}"} for i in range(n)]
    return {"session_id": session, "hook_event_name": "PostToolUse", "cwd": str(hooks.project),
            "tool_name": "TodoWrite",
            "tool_input": {"todos": todos}, "tool_response": {"oldTodos": [], "newTodos": todos}}


def _pre_compact_seconds(hooks: Hooks, session: str, todos: int) -> float:
    done = hooks.run("claude-code", "PostToolUse", _todo_write(hooks, session, todos))
    assert done.returncode == 0, done.stderr
    began = time.perf_counter()
    done = hooks.run("claude-code", "PreCompact", {"session_id": session, "hook_event_name": "PreCompact",
                                                   "cwd": str(hooks.project), "trigger": "auto"})
    elapsed = time.perf_counter() - began
    assert done.returncode == 0, done.stderr
    return elapsed


def test_a_pre_compact_after_a_todo_write_of_50000_todos_costs_about_what_one_after_5000_does(hooks: Hooks) -> None:
    small = _pre_compact_seconds(hooks, "small", 5_000)
    large = _pre_compact_seconds(hooks, "large", 50_000)
    print(f"PreCompact after 5,000 todos {small:.2f} s, after 50,000 todos {large:.2f} s")
    # Linear work would take ten times as long; what the store and the snapshot do is bounded by the cap.
    assert large < 2 * small + 0.5, (small, large)
    assert hooks.log_lines() == []
    with sqlite3.connect(hooks.home / "context-kernel.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM session_events WHERE session_id = 'large'").fetchone() == (1000,)
        snapshot = db.execute("SELECT snapshot FROM session_resume WHERE session_id = 'large'").fetchone()[0]
    assert "task number 49999 of the big plan" in snapshot  # the newest open work is what is kept


def test_the_cap_keeps_what_evicting_least_important_then_oldest_would() -> None:
    rng = random.Random(11)
    for _ in range(200):
        priorities = [rng.randint(1, 4) for _ in range(rng.randint(0, 60))]
        cap = rng.randint(1, 30)
        survivors = sorted(range(len(priorities)), key=lambda i: (priorities[i], -i))[:cap]
        assert most_important(priorities, cap) == sorted(survivors)


def test_a_hook_whose_stdin_is_never_closed_answers_neutrally_within_its_deadline(hooks: Hooks) -> None:
    proc = hooks.start("claude-code", "PreToolUse")
    assert proc.stdin is not None and proc.stdout is not None
    began = time.monotonic()
    try:
        proc.stdin.write('{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Ba')
        proc.stdin.flush()
        returncode = proc.wait(timeout=TIMEOUT)  # the stdin stays open all along
        elapsed = time.monotonic() - began
        stdout = proc.stdout.read()
    finally:
        proc.stdin.close()
        proc.kill()
        proc.wait()
        proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    assert returncode == 0 and stdout == ""
    assert STDIN_DEADLINE_S <= elapsed < STDIN_DEADLINE_S + 10
    lines = hooks.log_lines()
    assert len(lines) == 1 and "stdin was not closed within 5 s" in lines[0] and "answered neutrally" in lines[0]


def test_a_payload_over_the_size_cap_is_read_to_its_end_and_answered_neutrally(hooks: Hooks) -> None:
    huge = json.dumps({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Read",
                       "tool_input": {"file_path": "big.txt"}, "tool_response": "x" * (33 * 1024 * 1024)})
    done = hooks.run("claude-code", "PostToolUse", huge)
    assert (done.returncode, done.stdout) == (0, "")
    lines = hooks.log_lines()
    assert len(lines) == 1 and "stdin is over" in lines[0] and "answered neutrally" in lines[0]
    assert hooks.spool_rows() == []
