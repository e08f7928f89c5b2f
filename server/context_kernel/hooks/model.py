"""The shapes every hook client is translated into and out of (standard library only)."""

from __future__ import annotations

import heapq
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

# Normalised hook events. Each client adapter maps its own names onto these.
HookEvent = Literal["pre_tool", "post_tool", "prompt", "pre_compact", "session_start", "stop"]
HOOK_EVENTS: tuple[str, ...] = ("pre_tool", "post_tool", "prompt", "pre_compact", "session_start", "stop")

# Event categories in snapshot order; PRIORITY is the default priority of each (1 = kept longest).
CATEGORIES: tuple[str, ...] = ("files", "tasks", "rules", "decisions", "errors", "environment", "intent", "tools")
PRIORITY: dict[str, int] = {
    "files": 1, "tasks": 1, "rules": 1,
    "decisions": 2, "errors": 2, "environment": 2,
    "intent": 3, "tools": 3,
}

# The spool line that says where the client's transcript is (`transcript_path`): stored apart from the session's
# memory (store/transcripts.py), never in a snapshot, for the export's narration.
TRANSCRIPT_EVENT = "transcript"

# A session keeps at most this many events (the spec's cap); the least important, then the oldest,
# go first. One hook call cannot add more than that either.
MAX_EVENTS_PER_SESSION = 1000


def most_important(priorities: Sequence[int], cap: int) -> list[int]:
    """Positions of the `cap` items a cap keeps (lowest priority number, then the latest), in order.

    What evicting "priority DESC, then oldest" down to `cap` would leave, in O(n log cap): a batch
    of 50,000 events costs no more to store than its 1,000 survivors.
    """
    if len(priorities) <= cap:
        return list(range(len(priorities)))
    return sorted(heapq.nsmallest(cap, range(len(priorities)), key=lambda i: (priorities[i], -i)))


@dataclass(frozen=True)
class HookCall:
    """One hook invocation, whatever client sent it.

    Tool names are normalised to Claude Code's (`Bash`, `Read`, `Edit`, `Write`, `Grep`, `Glob`,
    `WebFetch`, `TodoWrite`, `Task`, `mcp__<server>__<tool>`) so routing and event extraction are
    written once; `raw_tool` keeps the client's own name.
    """

    client: str
    """claude-code | gemini | codex | cursor | copilot"""
    event: HookEvent
    session_id: str
    cwd: str | None = None
    tool: str | None = None
    raw_tool: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_response: Any = None
    prompt: str | None = None
    source: str | None = None
    """session_start: startup | resume | compact | clear"""
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    """One thing worth remembering about a session."""

    type: str
    """e.g. file_read, file_edit, file_write, task, task_done, rule, decision, correction, prompt,
    error, git, cwd, env, subagent, mcp_tool, intent"""
    category: str
    """one of CATEGORIES"""
    data: str
    """short human-readable text (a path, a task, the decision); secrets already redacted"""
    priority: int = 0
    """1 (most important) .. 4; 0 means the category's default"""
    time: float = 0.0

    def effective_priority(self) -> int:
        return self.priority or PRIORITY.get(self.category, 4)


@dataclass(frozen=True)
class HookAnswer:
    """What we tell the client. Neutral (all None) means: carry on, nothing to add."""

    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str | None = None
    """Shown to the agent (deny: what to use instead)."""
    context: str | None = None
    """Text injected into the agent's context (SessionStart guide, snapshot, a nudge)."""

    @property
    def neutral(self) -> bool:
        return self.decision is None and self.reason is None and self.context is None


NEUTRAL = HookAnswer()


def transcript_event(call: HookCall) -> list[Event]:
    """Where the client keeps the session's transcript (`transcript_path`), once per prompt and at start: the
    export reads the agent's words there (notebooks/narration.py). Stored apart from memory (store/transcripts.py)."""
    path = call.raw.get("transcript_path")
    if call.event not in ("prompt", "session_start") or not isinstance(path, str) or not os.path.isabs(path):
        return []
    return [Event(TRANSCRIPT_EVENT, "environment", path, priority=4)]
